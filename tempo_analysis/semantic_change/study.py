"""The recorded pseudoword study: the time ablation on real text, read back for notebook 02 and the docs.

``scripts/semantic_change_study.py`` fits every method on the pseudoword benchmark (several CPU minutes
each) and writes ``docs/results/semantic_change/pseudoword_study.json``; :func:`recorded_study` turns
that file into the same table as :func:`~tempo_analysis.semantic_change.ranker.time_ablation`.

The same script with ``--model-seeds`` fits each method once per model seed (``RankConfig.seed``) and
writes ``world_seeds.json`` for the planted world at notebook 02's settings; :func:`seed_spread` reads
how far one method's Spearman moves from seed to seed, which a single run cannot show.
"""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from ..data.locations import project_root
from .pipeline import TIME_BLIND

STUDY_FILE = Path("docs") / "results" / "semantic_change" / "pseudoword_study.json"
WORLD_SEEDS_FILE = Path("docs") / "results" / "semantic_change" / "world_seeds.json"


def _runs(path, default: Path) -> list | None:
    path = Path(path) if path is not None else project_root() / default
    return json.loads(path.read_text())["runs"] if path.is_file() else None


def _sees_time(method: str) -> bool:
    return method not in TIME_BLIND and method != "frequency"


def recorded_study(path=None, *, data_seed: int | None = None, model_seed: int | None = None) -> pd.DataFrame | None:
    """method, sees_time, spearman, ci_low, ci_high, pearson, scorer, layers, zscore of the recorded run at the
    library defaults (data seed ``data_seed``, model seed ``model_seed``; None: the first the file holds);
    None when the file is absent."""
    runs = _runs(path, STUDY_FILE)
    if runs is None:
        return None
    if data_seed is None and runs:
        data_seed = runs[0]["data_seed"]
    if model_seed is None and runs:
        model_seed = runs[0].get("model_seed", 0)
    rows = []
    for r in runs:
        if r["data_seed"] != data_seed or (r.get("model_seed", 0) != model_seed and r["method"] != "frequency"):
            continue
        m = r["metrics"]
        rows.append({"method": r["method"], "sees_time": _sees_time(r["method"]),
                     "spearman": m.get("spearman"), "ci_low": m.get("spearman_ci_low"),
                     "ci_high": m.get("spearman_ci_high"), "pearson": m.get("pearson"),
                     "scorer": r.get("scorer", ""), "layers": str(r.get("layers", "")),
                     "zscore": r.get("zscore"), "wall_s": r.get("wall_s")})   # None: no vectors to z-score
    return pd.DataFrame(rows) if rows else None


def seed_spread(path=None, *, data_seed: int | None = None) -> pd.DataFrame | None:
    """One row per method of a study run at several model seeds (default: ``world_seeds.json``) on one
    data seed (None: the first the file holds): method, sees_time, seeds, mean, std (n - 1), min, max
    and the per-seed Spearman (``by_seed``, in seed order). The frequency baseline has no model seed
    and is left out. None when the file is absent."""
    runs = _runs(path, WORLD_SEEDS_FILE)
    if runs is None:
        return None
    if data_seed is None and runs:
        data_seed = runs[0]["data_seed"]
    per = {}
    for r in runs:
        if r["method"] == "frequency" or r["data_seed"] != data_seed:
            continue
        per.setdefault(r["method"], []).append((r.get("model_seed", 0), r["metrics"].get("spearman")))
    rows = []
    for method, pairs in per.items():
        values = pd.Series([v for _, v in sorted(pairs)], dtype=float)
        rows.append({"method": method, "sees_time": _sees_time(method), "seeds": len(values),
                     "mean": values.mean(), "std": values.std() if len(values) > 1 else float("nan"),
                     "min": values.min(), "max": values.max(), "by_seed": [round(v, 3) for v in values]})
    return pd.DataFrame(rows) if rows else None
