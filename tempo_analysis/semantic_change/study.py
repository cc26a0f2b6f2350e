"""The recorded pseudoword study: the time ablation on real text, read back for notebook 02 and the docs.

``scripts/semantic_change_study.py`` fits every method on the pseudoword benchmark (several CPU minutes
each) and writes ``docs/results/semantic_change/pseudoword_study.json``; :func:`recorded_study` turns
that file into the same table as :func:`~tempo_analysis.semantic_change.ranker.time_ablation`.
"""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from ..data.locations import project_root
from .pipeline import TIME_BLIND

STUDY_FILE = Path("docs") / "results" / "semantic_change" / "pseudoword_study.json"


def recorded_study(path=None, *, data_seed: int | None = None) -> pd.DataFrame | None:
    """method, sees_time, spearman, ci_low, ci_high, pearson, scorer, layers of the recorded run at the
    library defaults (data seed ``data_seed``; None: the first seed the file holds); None when the file
    is absent."""
    path = Path(path) if path is not None else project_root() / STUDY_FILE
    if not path.is_file():
        return None
    runs = json.loads(path.read_text())["runs"]
    if data_seed is None and runs:
        data_seed = runs[0]["data_seed"]
    rows = []
    for r in runs:
        if r["data_seed"] != data_seed:
            continue
        m = r["metrics"]
        rows.append({"method": r["method"], "sees_time": r["method"] not in TIME_BLIND and r["method"] != "frequency",
                     "spearman": m.get("spearman"), "ci_low": m.get("spearman_ci_low"),
                     "ci_high": m.get("spearman_ci_high"), "pearson": m.get("pearson"),
                     "scorer": r.get("scorer", ""), "layers": str(r.get("layers", "")), "wall_s": r.get("wall_s")})
    return pd.DataFrame(rows) if rows else None
