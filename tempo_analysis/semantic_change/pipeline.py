"""The steps of semantic change ranking: method model -> post-training -> usages -> evaluation.

* :class:`ChangeModel` / :func:`build_model` -- a method's model by name (``config.METHODS``), built from a
  pretrained encoder with its weights kept; :func:`add_target_tokens` makes targets that the
  tokenizer splits whole tokens; :func:`train_model` post-trains on the period-tagged corpus.
* :func:`sample_usages` -- a seeded sample of usages per target and compared period.
* :func:`evaluate_scores` -- Spearman/Pearson (+ bootstrap CI) and binary accuracy (oracle and
  unsupervised thresholds) against the truth.

The settings are :mod:`.config`'s; :class:`~tempo_analysis.semantic_change.estimator.SemanticChangeRanker`
runs these steps in order.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from tokenizers import AddedToken

from ..data import DataError, TargetUsage
from ..data.change import ChangeData
from ..evaluation.ranking import binary_accuracy, correlate, spearman_ci
from .baselines import plain_model, scaled_attention_model, time_token_model
from .config import METHODS, PostTrainConfig
from .extraction import TargetVectors, extract_target_vectors
from .model import TemporalAttentionForMaskedLM
from .scoring import word_seed
from .training import post_train

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
                time_residual=True, seed=0, time_norm="all_heads") -> ChangeModel:
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
            time_residual=time_residual, seed=seed, time_norm=time_norm)
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
