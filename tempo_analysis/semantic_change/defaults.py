"""Default settings, in one place, shared by the CLI, notebook 02 and the tests.

``notebook_config(method)`` is what notebook 02 runs at its defaults on the planted world (and
what ``tests/semantic_change/test_world_ranking.py`` asserts Spearman >= 0.8 for). It is sized
for <= ~3 minutes on 2 CPU cores for the whole notebook: 30 usages per word and period, half an
epoch of gentle post-training (the planted world's ranking does not need more; see the method page). ``cli_config`` fills the CLI's unset flags with the full-size defaults.
"""
from __future__ import annotations

from dataclasses import replace

from .pipeline import RankConfig
from .training import PostTrainConfig

TEMPORAL_FORM = "faithful"           # the paper's form (per-example, gated residual) is the default

# full-size defaults: the CLI and library users
# one epoch over at most 16k sentences (a SemEval corpus has far more): ~46 targets x 200 usages with
# post-training stays within ~10 CPU minutes
DEFAULT_TRAIN = PostTrainConfig(head_steps=150, epochs=1.0, body_lr=1e-5, time_lr=1e-3, batch_size=32,
                                max_length=64, max_sentences=16000, seed=0, progress=False)
DEFAULT = RankConfig(method="temporal-attention", form=TEMPORAL_FORM, scorer="cosine", layers=4, zscore=False,
                     samples=200, seed=0, train=DEFAULT_TRAIN)

# notebook 02 on the planted world (and its test)
NOTEBOOK_SEED = 0
NOTEBOOK_TRAIN = replace(DEFAULT_TRAIN, head_steps=60, epochs=0.5, max_length=48, batch_size=32)
NOTEBOOK = replace(DEFAULT, samples=30, train=NOTEBOOK_TRAIN, seed=NOTEBOOK_SEED)
NOTEBOOK_METHODS = ("temporal-attention", "plain", "time-token")   # + "scaled-linear", "scaled-exp", "scaled-doc"


def notebook_config(method: str = "temporal-attention", **overrides) -> RankConfig:
    """The notebook's RankConfig for ``method`` (plain: no post-training, the pretrained encoder)."""
    cfg = replace(NOTEBOOK, method=method, **overrides)
    if method == "plain" and "train" not in overrides:
        cfg = replace(cfg, train=None)
    return cfg


def cli_config(*, method="temporal-attention", form=None, scorer="cosine", encoder="default", train_epochs=None,
               layers=None, samples=None, zscore=False, seed=0, progress=False) -> RankConfig:
    """A RankConfig from CLI flags; unset flags take :data:`DEFAULT`'s values."""
    train = replace(DEFAULT_TRAIN, seed=seed, progress=progress)
    if train_epochs is not None:
        if train_epochs < 0:
            raise ValueError(f"--train-epochs {train_epochs}: use 0 (no post-training) or a positive number.")
        train = replace(train, epochs=float(train_epochs)) if train_epochs > 0 else None
    elif method == "plain":
        train = None                       # plain = the pretrained encoder unless epochs are asked for
    return replace(DEFAULT, method=method, form=form or TEMPORAL_FORM, scorer=scorer, encoder=encoder, train=train,
                   layers=layers if layers is not None else DEFAULT.layers,
                   samples=samples if samples is not None else DEFAULT.samples, zscore=zscore, seed=seed,
                   progress=progress)
