"""Semantic change scorers over target vectors from two periods.

Every scorer takes the usage vectors of one word in the earlier period (``A``, ``[n_a, D]``) and the
later period (``B``, ``[n_b, D]``) and returns a change score (higher = more change):

- ``cosine`` -- the paper's Algorithm 1: mean vector per period, **cosine distance** between the
  two means (the reference code said cosine but computed Euclidean distance).
- ``prt`` -- prototype distance: each usage vector is L2-normalised first, so every usage counts
  equally whatever its norm; cosine distance between the two prototypes.
- ``apd`` -- average pairwise cosine distance between the periods' usages. ``apd-within`` subtracts
  the mean of the two within-period APDs (a word that is just polysemous in both periods is not
  "changed"; this beat raw APD in our MiniLM measurements).
- ``jsd`` -- k-means over both periods' usages; Jensen-Shannon divergence (base 2) between the two
  cluster distributions. Seeded.

Shared knobs of :func:`score_words`: ``layers`` (an int h = average of the last h encoder layers, the
paper's AvgHiddenLayers; or an explicit list of hidden-state indices, 0 = embedding output),
``zscore`` (standardise each dimension over the pooled usages of *all* words before scoring; removes
the shared anisotropic direction), ``n`` (seeded subsample of at most n usages per word and period).
A word with no usage in a period scores NaN, with a ``note`` saying which period is missing
(``correlate`` drops NaN words and reports how many it dropped).
"""
from __future__ import annotations

import warnings
import zlib

import numpy as np
import pandas as pd


def word_seed(seed: int, word: str, period) -> np.random.Generator:
    """A generator for one (word, period): the sample of a word never depends on the other targets."""
    return np.random.default_rng([int(seed), zlib.crc32(str(word).encode()), zlib.crc32(repr(period).encode())])


SCORERS = ("cosine", "prt", "apd", "apd-within", "jsd")


def cosine_distance(a: np.ndarray, b: np.ndarray) -> float:
    """1 - cos(a, b) for two vectors (0 for identical directions, 2 for opposite)."""
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    if na == 0 or nb == 0:
        return float("nan")
    return float(1.0 - np.dot(a, b) / (na * nb))


def _unit(X):
    return X / np.clip(np.linalg.norm(X, axis=1, keepdims=True), 1e-12, None)


def _mean_pairwise(X, Y, same=False):
    S = _unit(X) @ _unit(Y).T
    if same:
        n = len(X)
        if n < 2:
            return 0.0
        return float((n * n - S.sum()) / (n * (n - 1)))  # diagonal distances are 0: exclude them
    return float(1.0 - S.mean())


def score_cosine(A, B, **_):
    """Algorithm 1: cosine distance between the period means."""
    return cosine_distance(A.mean(0), B.mean(0))


def score_prt(A, B, **_):
    """Cosine distance between prototypes of unit-normalised usage vectors."""
    return cosine_distance(_unit(A).mean(0), _unit(B).mean(0))


def score_apd(A, B, **_):
    """Average pairwise cosine distance across periods."""
    return _mean_pairwise(A, B)


def score_apd_within(A, B, **_):
    """APD across periods minus the mean of the two within-period APDs."""
    return _mean_pairwise(A, B) - 0.5 * (_mean_pairwise(A, A, True) + _mean_pairwise(B, B, True))


def score_jsd(A, B, *, k=None, seed=0, **_):
    """JSD between k-means cluster distributions of the two periods (k=None: best silhouette in 2..5)."""
    from scipy.spatial.distance import jensenshannon
    from sklearn.cluster import KMeans
    from sklearn.metrics import silhouette_score

    X = _unit(np.vstack([A, B]))
    ks = [k] if k else [c for c in range(2, 6) if c < len(X)]
    if not ks:
        return float("nan")
    best, best_s = None, -np.inf
    for c in ks:
        lab = KMeans(c, n_init=4, random_state=seed).fit_predict(X)
        s = silhouette_score(X, lab) if len(set(lab)) > 1 else -1.0
        if s > best_s:
            best, best_s = lab, s
    c = best.max() + 1
    p = np.bincount(best[: len(A)], minlength=c) / len(A)
    q = np.bincount(best[len(A):], minlength=c) / len(B)
    return float(jensenshannon(p, q, base=2) ** 2)


_FUNCS = {"cosine": score_cosine, "prt": score_prt, "apd": score_apd, "apd-within": score_apd_within,
          "jsd": score_jsd}


def check_layers(layers, num_layers: int) -> None:
    """Refuse a ``layers`` setting that an encoder of ``num_layers`` layers cannot give (before any work):
    an int counts the last layers (1..num_layers); a list names hidden states (0 = embeddings)."""
    if isinstance(layers, (int, np.integer)):
        if not 1 <= layers <= num_layers:
            raise ValueError(f"layers={layers} must be between 1 and the encoder's {num_layers} layers. "
                             f"Fix: e.g. --layers 4 (the last four), or a range such as 2-{num_layers}.")
        return
    bad = [int(x) for x in layers if not 0 <= int(x) <= num_layers]
    if bad:
        raise ValueError(f"layers {bad}: the encoder's hidden states are numbered 0 (embeddings) to {num_layers}. "
                         f"Fix: name layers in 0-{num_layers}.")


def layer_average(vectors: np.ndarray, kept_layers: list[int], layers=4) -> np.ndarray:
    """[N, L, D] -> [N, D]: mean over the last ``layers`` encoder layers (int) or the listed hidden states."""
    kept = list(kept_layers)
    if isinstance(layers, (int, np.integer)):
        top = max(kept)
        if not 1 <= layers <= top:
            raise ValueError(f"layers={layers} must be between 1 and the encoder's {top} layers.")
        want = list(range(top - layers + 1, top + 1))
    else:
        want = [int(l) for l in layers]
    missing = [l for l in want if l not in kept]
    if missing:
        raise ValueError(f"hidden layers {missing} were not extracted (have {kept}); extract with layers=None.")
    pos = [kept.index(l) for l in want]
    return vectors[:, pos, :].mean(axis=1)


def zscore(X: np.ndarray, ref: np.ndarray | None = None) -> np.ndarray:
    """Standardise each dimension with the mean/std of ``ref`` (default X)."""
    ref = X if ref is None else ref
    mu, sd = ref.mean(0), ref.std(0)
    return (X - mu) / np.where(sd > 0, sd, 1.0)


def score_pair(A, B, scorer="cosine", **kw) -> float:
    """One word's change score from its two periods' vectors."""
    if scorer not in _FUNCS:
        raise ValueError(f"scorer={scorer!r} is not one of {SCORERS}.")
    if len(A) == 0 or len(B) == 0:
        return float("nan")
    return _FUNCS[scorer](np.asarray(A, float), np.asarray(B, float), **kw)


def score_words(tv, periods: list, *, scorer="cosine", layers=4, zscore_vectors=False, n=None, seed=0,
                words=None, jsd_k=None) -> pd.DataFrame:
    """Score every word in a :class:`~tempo_analysis.semantic_change.extraction.TargetVectors` between two periods.

    Returns a frame sorted by score (descending): word, score, rank (1 = most changed), n_<period>
    per period, note (why a score is NaN). Settings used are stored in ``frame.attrs``.
    """
    if len(periods) != 2:
        raise ValueError(f"periods must list exactly two periods (earlier, later), got {periods!r}.")
    X = layer_average(tv.vectors, tv.layers, layers)
    if zscore_vectors:
        X = zscore(X)
    word_of = np.array([u.word for u in tv.usages], dtype=object)
    period_of = np.array([u.period for u in tv.usages], dtype=object)
    words = list(dict.fromkeys(word_of)) if words is None else list(words)
    rows, missing = [], []
    for w in words:
        parts = []
        for p in periods:
            idx = np.flatnonzero((word_of == w) & (period_of == p))
            if n is not None and len(idx) > n:   # one generator per (word, period): see word_seed
                idx = np.sort(word_seed(seed, w, p).choice(idx, size=n, replace=False))
            parts.append(idx)
        note = ""
        absent = [str(p) for p, idx in zip(periods, parts) if len(idx) == 0]
        if absent:
            note = f"no usages in period(s) {absent}"
            missing.append(w)
        s = score_pair(X[parts[0]], X[parts[1]], scorer, k=jsd_k, seed=seed) if not absent else float("nan")
        rows.append({"word": w, "score": s, **{f"n_{p}": len(idx) for p, idx in zip(periods, parts)}, "note": note})
    if missing:
        warnings.warn(f"{len(missing)} target(s) have no usages in one period and score NaN: {missing[:10]}",
                      stacklevel=2)
    df = pd.DataFrame(rows).sort_values("score", ascending=False, na_position="last").reset_index(drop=True)
    df.insert(2, "rank", df["score"].rank(ascending=False, method="average"))
    df.attrs.update(scorer=scorer, layers=layers, zscore=bool(zscore_vectors), n=n, seed=seed,
                    periods=[str(p) for p in periods])
    return df


def nearest_period(vector: np.ndarray, A: np.ndarray, B: np.ndarray, periods: list) -> tuple[object, float, float]:
    """Which period's mean a new usage vector is closer to (cosine): (period, dist_A, dist_B)."""
    da, db = cosine_distance(vector, A.mean(0)), cosine_distance(vector, B.mean(0))
    return (periods[0] if da <= db else periods[1]), da, db
