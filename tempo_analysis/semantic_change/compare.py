"""Several methods on one dataset: fit one ranker per method, compare their rankings and what time adds.

    from tempo_analysis.semantic_change import (NOTEBOOK_METHODS, comparison_table, fit_methods,
                                                notebook_config, time_ablation, time_effect)
    rankers = fit_methods(data, {m: notebook_config(m) for m in NOTEBOOK_METHODS})
    table = time_ablation(rankers, data)       # Spearman [95% CI] per method, + the frequency baseline
    time_effect(table)                         # temporal attention minus its time-blind control
    comparison_table(rankers, scorers=("cosine", "prt", "apd-within"))

:func:`fit_methods` memoises each fit with :func:`tempo_analysis.notebook.cached` (a no-op unless
``TEMPO_ANALYSIS_CACHE`` is set).
"""
from __future__ import annotations

import pandas as pd

from ..data.change import ChangeData
from ..notebook import cached
from .baselines import frequency_change
from .config import TIME_BLIND, RankConfig
from .estimator import SemanticChangeRanker
from .pipeline import evaluate_scores


def _fit_cached(data: ChangeData, config: RankConfig, *, cache_name: str = "02-semantic-change") -> SemanticChangeRanker:
    """``SemanticChangeRanker(config).fit(data)``, memoised by (data name, its contents' fingerprint,
    targets, settings): the same name over other contents (another world folder, another sentence
    cap) is fitted anew."""
    params = {"data": data.name, "data_fingerprint": data.fingerprint(), "targets": list(data.targets),
              "config": config.to_dict()}
    return cached(f"{cache_name}-{config.method}", params, lambda: SemanticChangeRanker(config).fit(data),
                  save=lambda ranker, folder: ranker.save(folder), load=SemanticChangeRanker.load)


# the methods of the lesson's headline: temporal attention, its time-blind control, the untrained encoder
HEADLINE_METHODS = ("plain", "no-time", "temporal-attention")


def fit_methods(data: ChangeData, configs: dict[str, RankConfig], *, progress=None,
                cache: bool = True) -> dict[str, SemanticChangeRanker]:
    """{method: fitted ranker} for each method's config (in order); ``progress(method)`` before each.
    ``cache=False`` always fits (a seed study's worlds are never seen twice)."""
    out = {}
    for method, config in configs.items():
        if progress:
            progress(method)
        out[method] = _fit_cached(data, config) if cache else SemanticChangeRanker(config).fit(data)
    return out


def score_probes(rankers: dict[str, SemanticChangeRanker], data: ChangeData) -> dict[str, SemanticChangeRanker]:
    """{method: ranker} of the same trained models, scored on the planted world's probes (the sentences
    that read the same in both periods): nothing is trained again, only the probes are embedded."""
    probes = data.probe_part()
    return {m: SemanticChangeRanker(r.config_).fit(probes, model=r.model_) for m, r in rankers.items()}


def headline_numbers(rankers: dict[str, SemanticChangeRanker],
                     probe_rankers: dict[str, SemanticChangeRanker] | None = None) -> dict:
    """The lesson's headline: ``spearman`` (temporal attention), ``control_spearman`` (no-time),
    ``plain_spearman``, ``time_effect`` (their difference), and ``probe_time_effect`` (the same
    difference on the probes) when ``probe_rankers`` are given."""
    def rho(rs, m):
        return float(rs[m].metrics_.get("spearman", float("nan"))) if m in rs else float("nan")

    out = {"spearman": rho(rankers, "temporal-attention"), "control_spearman": rho(rankers, "no-time"),
           "plain_spearman": rho(rankers, "plain")}
    out["time_effect"] = out["spearman"] - out["control_spearman"]
    if probe_rankers is not None:
        # the control reads identical probes in both periods: its change scores are all ~0 and its
        # Spearman is undefined (NaN); it ranks nothing, which counts as 0
        control = rho(probe_rankers, "no-time")
        out["probe_spearman"] = rho(probe_rankers, "temporal-attention")
        out["probe_time_effect"] = out["probe_spearman"] - (0.0 if control != control else control)
    return out


def comparison_table(rankers: dict[str, SemanticChangeRanker], scorers=("cosine", "prt", "apd-within"),
                     *, layers=None, zscore=None) -> pd.DataFrame:
    """One row per (method, scorer): Spearman, Pearson, their p-values and the settings used."""
    rows = []
    for method, r in rankers.items():
        for scorer in scorers:
            L = r.config_.layers if layers is None else layers
            z = r.config_.zscore if zscore is None else zscore
            m = r.evaluate(r.rescore(scorer=scorer, layers=L, zscore=z))
            rows.append({"method": method, "scorer": scorer, "spearman": m.get("spearman", float("nan")),
                         "spearman_p": m.get("spearman_p", float("nan")), "pearson": m.get("pearson", float("nan")),
                         "pearson_p": m.get("pearson_p", float("nan")), "layers": str(L), "zscore": z,
                         "samples": r.config_.samples})
    return pd.DataFrame(rows)


def time_ablation(rankers: dict[str, SemanticChangeRanker], data: ChangeData | None = None) -> pd.DataFrame:
    """One row per method: Spearman with its bootstrap 95% CI over targets, Pearson, whether the model sees
    time; plus the ``frequency`` baseline when ``data`` is given (no model: the change of each target's
    relative frequency). ``time_effect(table)`` reads temporal attention minus its time-blind control."""
    rows = []
    for method, r in rankers.items():
        m = r.metrics_
        rows.append({"method": method, "sees_time": method not in TIME_BLIND,
                     "trained": bool(r.model_.train_report), "spearman": m.get("spearman", float("nan")),
                     "ci_low": m.get("spearman_ci_low", float("nan")), "ci_high": m.get("spearman_ci_high", float("nan")),
                     "pearson": m.get("pearson", float("nan")), "scorer": r.config_.scorer, "layers": str(r.config_.layers)})
    if data is not None and data.truth is not None and "graded" in data.truth:
        m = evaluate_scores(frequency_change(data), data.truth)
        rows.append({"method": "frequency", "sees_time": False, "trained": False,
                     "spearman": m.get("spearman", float("nan")), "ci_low": m.get("spearman_ci_low", float("nan")),
                     "ci_high": m.get("spearman_ci_high", float("nan")), "pearson": m.get("pearson", float("nan")),
                     "scorer": "|log2 freq ratio|", "layers": ""})
    return pd.DataFrame(rows)


def time_effect(table: pd.DataFrame, method: str = "temporal-attention", control: str = "no-time") -> float:
    """Spearman of ``method`` minus that of its time-blind ``control`` (NaN when either is missing)."""
    s = table.set_index("method")["spearman"]
    return float(s[method] - s[control]) if method in s and control in s else float("nan")
