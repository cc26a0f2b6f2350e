"""The steps of semantic change ranking, and their settings: method model -> post-training -> usages.

* :class:`RankConfig` -- everything one ranking depends on (the CLI flags, the notebook's
  parameters), with the shared defaults: :data:`DEFAULT` (CLI and library), :func:`notebook_config`
  (notebook 02 on the planted world, and its test) and :func:`cli_config` (CLI flags onto
  :data:`DEFAULT`).
* :class:`ChangeModel` / :func:`build_model` -- a method's model by name (``METHODS``), built from a
  pretrained encoder with its weights kept; :func:`add_target_tokens` makes targets that the
  tokenizer splits whole tokens; :func:`train_model` post-trains on the period-tagged corpus.
* :func:`sample_usages` -- a seeded sample of usages per target and compared period.
* :func:`evaluate_scores` -- Spearman/Pearson (+ bootstrap CI) and binary accuracy (oracle and
  unsupervised thresholds) against the truth.

:class:`~tempo_analysis.semantic_change.ranker.SemanticChangeRanker` runs them in order.
"""
from __future__ import annotations

import re
import warnings
from dataclasses import asdict, dataclass, field, fields, replace

import numpy as np
import pandas as pd
from tokenizers import AddedToken

from ..data import DataError, TargetUsage
from ..data.change import ChangeData
from ..evaluation.ranking import binary_accuracy, correlate, spearman_ci
from .baselines import plain_model, scaled_attention_model, time_token_model
from .extraction import PRECISIONS, TargetVectors, extract_target_vectors
from .model import TemporalAttentionForMaskedLM
from .scoring import word_seed  # noqa: F401 (part of this module's API)
from .training import PostTrainConfig, post_train

METHODS = ("temporal-attention", "time-token", "both", "no-time", "scaled-linear", "scaled-exp", "scaled-doc",
           "plain")
TIME_BLIND = {"plain", "no-time"}     # methods whose model never sees the period
SCORER_CHOICES = ("cosine", "apd", "prt", "apd-within", "jsd")


def sample_usages(data: ChangeData, n: int | None, seed: int = 0) -> tuple[list[TargetUsage], list[str]]:
    """A seeded sample of at most ``n`` usages per target and compared period; also the missing report.

    Each (word, period) draws from its own generator (:func:`word_seed`), so a word's sample is the same
    whatever the target list."""
    out, missing = [], []
    by_key = None
    if data.usages is not None:
        by_key = {}
        for u in data.usages:
            by_key.setdefault((u.word, u.period), []).append(u)
    for w in data.targets:
        for p in data.compared:
            rng = word_seed(seed, w, p)
            if by_key is not None:
                pool = by_key.get((w, p), [])
                if n is not None and len(pool) > n:
                    pool = [pool[i] for i in np.sort(rng.choice(len(pool), n, replace=False))]
            else:
                pool = data.corpus.find_usages(w, periods=[p], max_per_period=n,
                                               seed=int(rng.integers(2 ** 31)))
            if not pool:
                missing.append(f"{w!r} has no usage in period {p!r}")
            out.extend(pool)
    return out, missing


# ---------------------------------------------------------------------------------------------
# method models
# ---------------------------------------------------------------------------------------------
@dataclass
class ChangeModel:
    """A method's model + tokenizer + how it is fed time (period index and/or time-token prefix)."""

    method: str
    model: TemporalAttentionForMaskedLM
    tokenizer: object
    periods: list
    time_token_ids: list[int] | None = None
    train_report: dict | None = None
    added_targets: list[str] = field(default_factory=list)
    time_blind: bool = False          # no-time control: every period is fed as period index 0

    def period_index(self, period) -> int:
        try:
            i = self.periods.index(period)
        except ValueError:
            raise DataError(f"period {period!r} is not one of the model's periods {self.periods}.") from None
        return 0 if self.time_blind else i

    def prefix(self, periods):
        if self.time_token_ids is None:
            return None
        return [[self.time_token_ids[self.period_index(p)]] for p in periods]

    def embed(self, usages, *, layers=None, batch_size=64, max_length=128, precision="fp32",
              progress=False) -> TargetVectors:
        """Target vectors for usages, each run with its own period."""
        periods = [u.period for u in usages]
        return extract_target_vectors(self.model, self.tokenizer, usages,
                                      time=[self.period_index(p) for p in periods], layers=layers,
                                      batch_size=batch_size, max_length=max_length,
                                      prefix_ids=self.prefix(periods), precision=precision, progress=progress)


def build_model(method: str, periods, *, encoder="default", doc_counts=None, form="faithful",
                time_residual=True, seed=0) -> ChangeModel:
    """A freshly converted model for ``method`` (pretrained weights kept).

    ``no-time`` is the temporal-attention model itself (same weights, same seed) with its time input
    held at period 0; ``both`` is temporal attention plus a time token per period.
    """
    if method not in METHODS:
        raise ValueError(f"method {method!r} is not one of {METHODS}.")
    periods = list(periods)
    names = [str(p) for p in periods]
    if method in ("temporal-attention", "no-time", "both"):
        model, tok = TemporalAttentionForMaskedLM.from_pretrained_encoder(
            encoder, num_periods=len(periods), period_names=names, time_attention=form,
            time_residual=time_residual, seed=seed)
        if method == "both":
            model, tok, ids = time_token_model(encoder, names, seed, base=(model, tok))
            return ChangeModel(method, model, tok, periods, time_token_ids=ids)
        return ChangeModel(method, model, tok, periods, time_blind=method == "no-time")
    if method == "time-token":
        model, tok, ids = time_token_model(encoder, names, seed)
        return ChangeModel(method, model, tok, periods, time_token_ids=ids)
    if method.startswith("scaled-"):
        model, tok = scaled_attention_model(encoder, names, method.split("-", 1)[1], doc_counts, seed)
        return ChangeModel(method, model, tok, periods)
    model, tok = plain_model(encoder, names, seed)
    return ChangeModel(method, model, tok, periods)


def add_target_tokens(cm: ChangeModel, words) -> list[str]:
    """Add targets the tokenizer splits as whole tokens (init: mean of their pieces). Returns those added.

    The new rows sit at the tokenizer's new ids, which in a padded vocabulary (an embedding larger than
    the tokenizer) are not the embedding size."""
    tok, split = cm.tokenizer, []
    for w in words:
        pieces = tok(w, add_special_tokens=False)["input_ids"]
        if len(pieces) > 1:
            split.append((w, pieces))
    if not split:
        return []
    tok.add_tokens([AddedToken(w, single_word=True, normalized=True) for w, _ in split])
    ids = tok.convert_tokens_to_ids([w for w, _ in split])   # below the embedding size in a padded vocabulary
    cm.model.grow_vocab([p for _, p in split], new_ids=ids)
    return [w for w, _ in split]


def train_model(cm: ChangeModel, data: ChangeData, cfg: PostTrainConfig, general_text=None) -> dict:
    """MLM post-training on the period-tagged corpus (all periods).

    ``general_text``: sentences the head warm-up also sees; None = ``cfg.general_sentences`` Brown and
    Gutenberg sentences from ``shared/data`` (none, with a warning, when that folder is absent and the
    head needs a warm-up)."""
    if general_text is None:
        general_text = []
        if cfg.general_sentences > 0 and not cm.model.config.head_from_checkpoint and cfg.head_steps > 0:
            from ..data.loaders.nltk_corpora import general_text as load_general
            general_text = load_general(cfg.general_sentences, cfg.seed)
            if not general_text:
                warnings.warn("no shared/data NLTK corpora found: the MLM head warm-up sees the target corpus "
                              "only (set TEMPO_ANALYSIS_SHARED_DATA or pass general_text=)", stacklevel=2)
    df = data.corpus.df
    texts, times = df["text"].tolist(), [cm.period_index(p) for p in df["period"]]
    prefix = cm.prefix(df["period"].tolist())
    target_ids = None
    if cfg.target_mask_prob is not None:   # every piece of every target (one id each once they are whole tokens)
        pieces = cm.tokenizer([str(w) for w in data.targets], add_special_tokens=False)["input_ids"]
        target_ids = sorted({i for ids in pieces for i in ids})
    rep = post_train(cm.model, cm.tokenizer, texts, times, cfg, general_text=general_text, prefix_ids=prefix,
                     has_time_token=cm.time_token_ids is not None, target_ids=target_ids)
    cm.train_report = rep
    return rep


# ---------------------------------------------------------------------------------------------
# settings
# ---------------------------------------------------------------------------------------------
@dataclass
class RankConfig:
    """Everything one ranking depends on (the CLI flags, the notebook's parameters)."""

    method: str = "temporal-attention"  # one of METHODS
    form: str = "faithful"  # temporal-attention form: faithful (the paper's) | modulated
    time_residual: bool = True  # faithful: gate the time term onto the pretrained scores; False = the paper's pure formula
    scorer: str = "apd-within"  # one of SCORER_CHOICES (see .scoring); chosen on the pseudoword benchmark
    layers: int | list[int] = 4  # last h layers averaged, or a list of hidden-state indices
    zscore: bool = True  # standardise each dimension over all words' usages before scoring (chosen with the scorer)
    samples: int | None = 60  # n usages per word and period (seeded); None = all
    seed: int = 0  # seeds everything: the model's new parameters, post-training (train.seed follows it), sampling
    encoder: str = "default"  # "default" (embedded MiniLM), an HF name or a local path
    add_targets: bool = True  # with post-training: targets the tokenizer splits become whole tokens
    train: PostTrainConfig | None = field(default_factory=PostTrainConfig)  # None = no post-training
    batch_size: int = 64  # extraction batch
    max_length: int = 128  # extraction: tokens per usage, a window centred on the target
    precision: str = "auto"  # extraction: auto (bf16 where the device has it natively, else fp32) | fp32 (exact) | bf16
    progress: bool = False

    def __post_init__(self):
        if self.method not in METHODS:
            raise ValueError(f"method {self.method!r} is not one of {METHODS}.")
        if self.scorer not in SCORER_CHOICES:
            raise ValueError(f"scorer {self.scorer!r} is not one of {SCORER_CHOICES}.")
        if self.precision not in PRECISIONS:
            raise ValueError(f"precision {self.precision!r} is not one of {PRECISIONS}. Fix: fp32 (exact), bf16, "
                             "or auto (bf16 where the device multiplies it natively).")
        self.layers = parse_layers(self.layers)
        if self.train is not None and self.train.seed != self.seed:
            # one seed for the whole ranking: RankConfig(seed=1) (or the notebook's SEED) must reseed the
            # post-training's masks and order too, not only the new parameters and the usage sample
            self.train = replace(self.train, seed=self.seed)

    def train_config(self) -> PostTrainConfig | None:
        """The post-training settings with ``max_length`` resolved: None = the extraction ``max_length``."""
        if self.train is None or self.train.max_length is not None:
            return self.train
        return replace(self.train, max_length=self.max_length)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["train"] = self.train.to_dict() if self.train is not None else None
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "RankConfig":
        """The inverse of :meth:`to_dict` (unknown keys are ignored)."""
        d = dict(d)
        train = d.pop("train", None)
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in known},
                   train=PostTrainConfig(**train) if train is not None else None)


def parse_layers(layers) -> int | list[int]:
    """``4`` (the last 4 layers), ``[1, 2, 3]`` or the strings ``"4"``, ``"1,2,3"``, ``"1-3"`` (a range,
    inclusive) and mixes like ``"1-3,6"`` -> an int or a sorted list of hidden-state indices."""
    if isinstance(layers, (int, np.integer)) and not isinstance(layers, bool):
        return int(layers)
    if isinstance(layers, str):
        text = layers.replace(" ", "")
        if re.fullmatch(r"\d+", text):
            return int(text)
        if not re.fullmatch(r"\d+(-\d+)?(,\d+(-\d+)?)*", text):
            raise ValueError(f"layers {layers!r}: give a count (4), a list (8,9,10) or a range (7-12) of "
                             "hidden-state indices (0 = the embedding output).")
        out = []
        for part in text.split(","):
            a, _, b = part.partition("-")
            lo, hi = int(a), int(b or a)
            if hi < lo:
                raise ValueError(f"layers {layers!r}: the range {part} runs backwards; write {hi}-{lo}.")
            out.extend(range(lo, hi + 1))
        return sorted(set(out))
    try:
        out = sorted({int(x) for x in layers})
    except (TypeError, ValueError):
        raise ValueError(f"layers={layers!r}: give an int or a list of hidden-state indices.") from None
    if not out:
        raise ValueError("layers=[]: give at least one hidden-state index.")
    return out


TEMPORAL_FORM = "faithful"           # the paper's form (per-example, gated residual) is the default

# full-size defaults: the CLI and library users.
# One epoch over at most 16k sentences (a SemEval corpus has far more): ~46 targets x 200 usages with
# post-training stays within ~10 CPU minutes.
DEFAULT_TRAIN = PostTrainConfig(head_steps=150, epochs=1.0, body_lr=1e-5, time_lr=1e-3, batch_size=32,
                                max_length=None, max_sentences=16000, seed=0, progress=False)
# scorer, layers and z-scoring chosen on the pseudoword benchmark with the plain encoder, data seeds 0 and 1
# (docs/results/semantic_change/README.md, section 1): APD-within beat cosine/PRT/APD at every layer choice;
# the last 4 layers are within noise of the best middle-layer ranges and stay meaningful for any encoder
# depth; z-scoring was at least as good as none at every layer choice of every scorer (APD-within, last 4:
# 0.800 vs 0.798), as it was on a held-out real benchmark with graded truth (+0.04 to +0.13 Spearman).
DEFAULT = RankConfig(method="temporal-attention", form=TEMPORAL_FORM, scorer="apd-within", layers=4, zscore=True,
                     samples=200, seed=0, train=DEFAULT_TRAIN)

# notebook 02 on the planted world (and tests/semantic_change/test_world_ranking.py, which asserts that
# temporal attention ranks the world and the same model with its time input broken does not): 30 probes
# per word and period, half an epoch of gentle post-training (see docs/methods/semantic_change.md)
NOTEBOOK_SEED = 0
# time_lr 1e-2: at the CLI's 1e-3 the time gates open only to |g| ~ 0.015 and the probes' period shift is
# noise (Spearman -0.29 on the world); at 1e-2 they reach ~0.1 and the shift follows the planted change.
# 3e-2 overshoots: a word-blind shift swamps it. One epoch (~108 steps): with the stronger MLM adapter
# (top-5 0.408) half an epoch no longer suffices (world Spearman -0.003; one epoch 0.474, 2e-2 for half an
# epoch -0.093; measured, docs/results/semantic_change/README.md)
NOTEBOOK_TRAIN = replace(DEFAULT_TRAIN, head_steps=60, epochs=1.0, batch_size=32, time_lr=1e-2)
# scorer: Algorithm 1's cosine, not the pseudoword-chosen APD-within. The world's probes are the same
# sentences in both periods, so APD's across-period pairs include every probe paired with itself (distance
# ~0 for any model): APD-within then measures the probes' spread, not their change (-0.46 for temporal
# attention, measured once; see docs/results/semantic_change/README.md). Cosine compares the period means.
# No z-scoring: the world's recorded numbers (tests, docs, the seed study) are without it; the notebook's
# "z-score" box turns it on.
NOTEBOOK = replace(DEFAULT, samples=30, train=NOTEBOOK_TRAIN, seed=NOTEBOOK_SEED, scorer="cosine", zscore=False)
NOTEBOOK_METHODS = ("temporal-attention", "no-time", "plain", "time-token", "both")   # + "scaled-linear", ...


def notebook_config(method: str = "temporal-attention", *, data: str = "world", train_epochs: float | None = None,
                    **overrides) -> RankConfig:
    """The notebook's RankConfig for ``method`` (plain: no post-training, the pretrained encoder).

    ``data``: the notebook's data spec. The planted world (``world``, ``world:DIR``) is ranked with
    Algorithm 1's cosine and no z-scoring (see :data:`NOTEBOOK`); real text (``pseudoword``, ``dwug:DIR``,
    ...) with the library's scorer and z-scoring (:data:`DEFAULT`, chosen on the pseudoword benchmark).
    ``train_epochs``: post-training epochs instead of the notebook's (0 = none; a method without
    post-training stays without). ``overrides``: other RankConfig fields (they win over both).
    """
    from ..data.specs import CHANGE_SPECS, parse_spec   # the --data rule (case, aliases, a clear error)

    world = parse_spec(data, CHANGE_SPECS).kind == "world"
    scoring = {} if world else {"scorer": DEFAULT.scorer, "zscore": DEFAULT.zscore}
    cfg = replace(NOTEBOOK, method=method, **{**scoring, **overrides})
    if method == "plain" and "train" not in overrides:
        cfg = replace(cfg, train=None)
    if train_epochs is not None and train_epochs < 0:
        raise ValueError(f"train_epochs={train_epochs}: use 0 (no post-training) or a positive number.")
    if train_epochs is not None and cfg.train is not None:
        cfg = replace(cfg, train=replace(cfg.train, epochs=train_epochs) if train_epochs > 0 else None)
    return cfg


def cli_config(*, method="temporal-attention", form=None, scorer=None, encoder="default", train_epochs=None,
               layers=None, samples=None, zscore=None, seed=0, progress=False, time_residual=True,
               precision=None, head_steps=None, time_lr=None, body_lr=None) -> RankConfig:
    """A RankConfig from CLI flags; unset flags take :data:`DEFAULT`'s values (``head_steps``, ``time_lr``,
    ``body_lr``: :data:`DEFAULT_TRAIN`'s; they apply only when the method is post-trained)."""
    knobs = {k: v for k, v in (("head_steps", head_steps), ("time_lr", time_lr), ("body_lr", body_lr))
             if v is not None}
    train = replace(DEFAULT_TRAIN, seed=seed, progress=progress, **knobs)
    if train_epochs is not None:
        if train_epochs < 0:
            raise ValueError(f"--train-epochs {train_epochs}: use 0 (no post-training) or a positive number.")
        train = replace(train, epochs=float(train_epochs)) if train_epochs > 0 else None
    elif method == "plain":
        train = None                       # plain = the pretrained encoder unless epochs are asked for
    return replace(DEFAULT, method=method, form=form or TEMPORAL_FORM, scorer=scorer or DEFAULT.scorer,
                   encoder=encoder, train=train, layers=layers if layers is not None else DEFAULT.layers,
                   samples=samples if samples is not None else DEFAULT.samples,
                   zscore=DEFAULT.zscore if zscore is None else zscore, seed=seed, progress=progress,
                   time_residual=time_residual, precision=precision or DEFAULT.precision)


# ---------------------------------------------------------------------------------------------
# evaluation
# ---------------------------------------------------------------------------------------------
CONSTANT_TOL = 1e-9   # scores that all lie within this of each other are equal (floating-point noise)


def evaluate_scores(scores: pd.DataFrame, truth: pd.DataFrame | None, *, ci: bool = True) -> dict:
    """Spearman/Pearson (+p, + a bootstrap 95% CI of Spearman over targets) against graded truth (scores that
    are all equal, up to ``CONSTANT_TOL``, rank nothing: rho = r = 0, flagged ``constant_scores``); binary
    accuracy against binary truth at two thresholds, when present:

    * ``binary_accuracy_oracle`` (``binary_threshold_oracle``): the top k words called changed, k taken
      from the truth -- an oracle, an upper reference, not a result;
    * ``binary_accuracy`` (``binary_threshold``): unsupervised, score > mean + 1 std of the scores.
    """
    if truth is None:
        return {}
    out = {}
    if "graded" in truth:
        out.update(correlate(scores, truth))
        s = pd.to_numeric(scores["score"], errors="coerce").dropna() if isinstance(scores, pd.DataFrame) else None
        if s is not None and len(s) >= 3 and float(s.max() - s.min()) <= CONSTANT_TOL:
            # every word scored alike, up to floating-point noise (a time-blind model on the world's probes
            # reads the same text twice: its scores are ~1e-16): it ranks nothing, rho = 0
            out.update(spearman=0.0, pearson=0.0, spearman_p=1.0, pearson_p=1.0, constant_scores=True)
        if ci:
            lo, hi = (0.0, 0.0) if out.get("constant_scores") else spearman_ci(scores, truth)
            out.update(spearman_ci_low=lo, spearman_ci_high=hi)
    if "binary" in truth and truth["binary"].notna().any():
        oracle = binary_accuracy(scores, truth, threshold="truth-rate")
        unsup = binary_accuracy(scores, truth, threshold="mean+1std")
        out.update(binary_accuracy_oracle=oracle["accuracy"], binary_threshold_oracle=oracle["threshold"],
                   binary_accuracy=unsup["accuracy"], binary_threshold=unsup["threshold"])
    return out
