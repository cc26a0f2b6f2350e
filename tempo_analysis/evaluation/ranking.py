"""Ranking evaluation: Spearman and Pearson with p-values and a bootstrap CI, and binary accuracy at a
threshold (oracle or unsupervised).

Inputs are word -> score mappings (a ``score_words`` frame, a Series, or a dict) and a truth table
with ``word`` and ``graded`` and/or ``binary`` columns. Words are aligned by name; words without a
score (NaN: absent from a period) or without truth are dropped and *counted* (``n_dropped``,
``dropped``) -- never silently.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats


def _as_series(x, value="score") -> pd.Series:
    if isinstance(x, pd.DataFrame):
        if "word" not in x or value not in x:
            raise ValueError(f"expected columns 'word' and {value!r}, got {list(x.columns)}.")
        return pd.Series(x[value].to_numpy(dtype=float), index=x["word"].astype(str))
    if isinstance(x, dict):
        return pd.Series({str(k): float(v) for k, v in x.items()}, dtype=float)
    if isinstance(x, pd.Series):
        return x.astype(float).rename(index=str)
    raise TypeError(f"expected a DataFrame, Series or dict of word -> {value}, got {type(x).__name__}.")


def align(scores, truth, value="graded") -> tuple[pd.DataFrame, list[str]]:
    """Inner-join scores and truth on word; return (frame[word, score, truth], dropped words)."""
    s, t = _as_series(scores, "score"), _as_series(truth, value)
    both = pd.DataFrame({"score": s}).join(pd.DataFrame({"truth": t}), how="outer")
    ok = both["score"].notna() & both["truth"].notna()
    dropped = sorted(both.index[~ok].tolist())
    return both[ok].rename_axis("word").reset_index(), dropped


def correlate(scores, truth) -> dict:
    """Spearman rho and Pearson r (each with a two-sided p-value) against graded truth."""
    df, dropped = align(scores, truth, "graded")
    n = len(df)
    out = {"n": n, "n_dropped": len(dropped), "dropped": dropped}
    if n < 3 or df["score"].nunique() < 2 or df["truth"].nunique() < 2:
        out.update(spearman=float("nan"), spearman_p=float("nan"), pearson=float("nan"), pearson_p=float("nan"))
        return out
    rho, rp = stats.spearmanr(df["score"], df["truth"])
    r, pp = stats.pearsonr(df["score"], df["truth"])
    out.update(spearman=float(rho), spearman_p=float(rp), pearson=float(r), pearson_p=float(pp))
    return out


def binary_accuracy(scores, truth, threshold="truth-rate") -> dict:
    """Accuracy of ``score > threshold`` against binary truth (1 = changed).

    ``threshold``: a number, ``"median"`` of the scores, ``"mean+1std"`` (unsupervised: the scores'
    mean plus one standard deviation, knowing nothing of the truth), or ``"truth-rate"`` (default, an
    **oracle**: label the top k words as changed, where k is the number of changed words in the
    truth -- it peeks at the truth, so report it as oracle accuracy).
    """
    df, dropped = align(scores, truth, "binary")
    if df.empty:
        return {"accuracy": float("nan"), "threshold": float("nan"), "n": 0, "n_dropped": len(dropped)}
    s, y = df["score"].to_numpy(), df["truth"].to_numpy().astype(int)
    if isinstance(threshold, str):
        if threshold == "median":
            thr = float(np.median(s))
        elif threshold == "mean+1std":
            thr = float(np.mean(s) + np.std(s))
        elif threshold == "truth-rate":
            k = int(y.sum())
            thr = float(np.sort(s)[::-1][k - 1]) - 1e-12 if k > 0 else float(s.max())
        else:
            raise ValueError(f"threshold={threshold!r}: use a number, 'median', 'mean+1std' or 'truth-rate'.")
    else:
        thr = float(threshold)
    pred = (s > thr).astype(int)
    return {"accuracy": float((pred == y).mean()), "threshold": thr, "n": len(y), "n_dropped": len(dropped),
            "precision": float(((pred == 1) & (y == 1)).sum() / max(1, pred.sum())),
            "recall": float(((pred == 1) & (y == 1)).sum() / max(1, y.sum()))}


def spearman_ci(scores, truth, *, n_boot: int = 2000, level: float = 0.95, seed: int = 0) -> tuple[float, float]:
    """Bootstrap confidence interval of Spearman's rho over targets (percentile method, seeded).

    Targets are resampled with replacement ``n_boot`` times; resamples with a constant side are skipped.
    With a few dozen targets the interval is wide: report it next to rho.
    """
    df, _ = align(scores, truth, "graded")
    if len(df) < 3:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    x = df["score"].to_numpy(float)
    y = df["truth"].to_numpy(float)
    idx = rng.integers(0, len(x), (n_boot, len(x)))
    rx, ry = stats.rankdata(x[idx], axis=1), stats.rankdata(y[idx], axis=1)   # ties: average ranks
    rx, ry = rx - rx.mean(1, keepdims=True), ry - ry.mean(1, keepdims=True)
    den = np.sqrt((rx ** 2).sum(1) * (ry ** 2).sum(1))
    ok = den > 0                                      # a resample with a constant side has no rho
    if not ok.any():
        return float("nan"), float("nan")
    rhos = (rx * ry).sum(1)[ok] / den[ok]
    a = (1.0 - level) / 2
    lo, hi = np.quantile(rhos, [a, 1 - a])
    return float(lo), float(hi)


def rank_table(scores, truth=None) -> pd.DataFrame:
    """word, score, pred_rank (1 = most changed) and, with truth, graded and true_rank."""
    s = _as_series(scores, "score")
    df = pd.DataFrame({"word": s.index, "score": s.to_numpy()})
    df["pred_rank"] = df["score"].rank(ascending=False)
    if truth is not None:
        t = _as_series(truth, "graded")
        df["graded"] = df["word"].map(t)
        df["true_rank"] = df["graded"].rank(ascending=False)
    return df.sort_values("pred_rank").reset_index(drop=True)
