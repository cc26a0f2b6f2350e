"""The recorded studies notebook 02 shows: runs too long for a lesson, read back as tables.

One small file ships with the package (``tempo_analysis/assets/recorded/``), with the command that
regenerates it, the machine and the wall time:

* ``semantic_change_pseudoword_study.json`` -- every method on the pseudoword benchmark at the CLI's
  defaults (several CPU minutes each); :func:`recorded_study` turns it into the same table as
  :func:`~tempo_analysis.semantic_change.compare.time_ablation`.

:func:`seed_spread` reads a study file of the same shape run at several model seeds (``path``): how
far one method's Spearman moves from seed to seed. Lesson 02's own seed study, where each seed also
plants a new world, is :func:`tempo_analysis.study.recorded_seed_study`.
"""
from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pandas as pd

from .config import TIME_BLIND

STUDY_FILE = "semantic_change_pseudoword_study.json"


def recorded(name: str) -> dict:
    """One recorded-run file of the package (``tempo_analysis/assets/recorded/NAME``): its runs, the
    ``command`` that regenerates it, the ``machine`` and ``wall_s`` when known."""
    return json.loads(resources.files("tempo_analysis").joinpath("assets", "recorded", name).read_text("utf-8"))


def _read(path, default: str | None) -> dict | None:
    if path is None:
        if default is None:
            raise ValueError("give the study file's path")
        return recorded(default)
    path = Path(path)
    return json.loads(path.read_text()) if path.is_file() else None


def _table(rows: list, study: dict) -> pd.DataFrame | None:
    """The rows as a frame whose ``attrs`` say how the study was made (``command``, ``machine``, ``wall_s``)."""
    if not rows:
        return None
    out = pd.DataFrame(rows)
    out.attrs.update({k: study[k] for k in ("command", "machine", "wall_s") if k in study})
    return out


def _sees_time(method: str) -> bool:
    return method not in TIME_BLIND and method != "frequency"


def recorded_study(path=None, *, data_seed: int | None = None, model_seed: int | None = None) -> pd.DataFrame | None:
    """method, sees_time, spearman, ci_low, ci_high, pearson, scorer, layers, zscore, wall_s of the recorded
    pseudoword study (or the study file ``path``) at data seed ``data_seed`` and model seed ``model_seed``
    (None: the first the file holds); None when a ``path`` given is absent. ``attrs``: the file's
    ``command``, ``machine`` and ``wall_s``."""
    study = _read(path, STUDY_FILE)
    if study is None:
        return None
    runs = study["runs"]
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
    return _table(rows, study)


def seed_spread(path, *, data_seed: int | None = None) -> pd.DataFrame | None:
    """One row per method of a study run at several model seeds (default: the recorded world seed study) on
    one data seed (None: the first the file holds): method, sees_time, seeds, mean, std (n - 1), min, max
    and the per-seed Spearman (``by_seed``, in seed order). The frequency baseline has no model seed
    and is left out. None when the file is absent. ``attrs``: as :func:`recorded_study`'s."""
    study = _read(path, None)
    if study is None:
        return None
    runs = study["runs"]
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
    return _table(rows, study)
