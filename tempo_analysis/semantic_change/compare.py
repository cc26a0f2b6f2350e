"""Run several methods on one dataset and compare them across scorers (notebook 02's comparison).

Each method is trained and embedded once; scorers re-score its stored vectors. Results are
memoised with :func:`tempo_analysis.notebook.cached` (a no-op unless ``TEMPO_ANALYSIS_CACHE`` is set).
"""
from __future__ import annotations

import pandas as pd

from ..evaluation.semantic_change import score_words
from .pipeline import ChangeData, RankConfig, RankResult, evaluate_scores, run_rank
from .store import load_result, save_result


def run_cached(data: ChangeData, cfg: RankConfig, *, cache_name: str = "02-semantic-change") -> RankResult:
    """``run_rank`` memoised by (data name, settings)."""
    from ..notebook import cached

    params = {"data": data.name, "targets": list(data.targets), "config": cfg.to_dict()}
    return cached(f"{cache_name}-{cfg.method}", params, lambda: run_rank(data, cfg), save=save_result,
                  load=load_result)


def run_methods(data: ChangeData, configs: dict[str, RankConfig], *, progress=None) -> dict[str, RankResult]:
    """{method: RankResult} for each method's config (in order)."""
    out = {}
    for method, cfg in configs.items():
        if progress:
            progress(method)
        out[method] = run_cached(data, cfg)
    return out


def comparison_table(results: dict[str, RankResult], data: ChangeData, scorers=("cosine", "prt", "apd-within"),
                     *, layers=None, zscore=None) -> pd.DataFrame:
    """One row per (method, scorer): Spearman, Pearson, their p-values and the settings used."""
    rows = []
    for method, r in results.items():
        for scorer in scorers:
            L = r.config.layers if layers is None else layers
            z = r.config.zscore if zscore is None else zscore
            df = score_words(r.vectors, data.compared, scorer=scorer, layers=L, zscore_vectors=z,
                             seed=r.config.seed, words=data.targets)
            m = evaluate_scores(df, data.truth)
            rows.append({"method": method, "scorer": scorer, "spearman": m.get("spearman", float("nan")),
                         "spearman_p": m.get("spearman_p", float("nan")), "pearson": m.get("pearson", float("nan")),
                         "pearson_p": m.get("pearson_p", float("nan")), "layers": str(L), "zscore": z,
                         "samples": r.config.samples})
    return pd.DataFrame(rows)
