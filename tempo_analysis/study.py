"""Seed studies: a lesson's headline numbers, recomputed once per seed on a freshly planted world.

One seed is one draw. A seed study reruns the computation behind a lesson's headline at the
notebook's settings, once per seed: each seed regenerates the planted world with that seed (in
memory, never over ``data/``) and is also the model seed. Every row holds the same names as the
lesson's ``build/summary.json`` keys, without the wing prefix::

    from tempo_analysis.study import run_study, study_table
    study = run_study("02", seeds=[3, 4, 5, 6, 7])     # or tempo-analysis study 02 --seeds 3 4 5 6 7
    study_table(study)                                  # one row per seed, then mean and std

The numbers (per lesson, in :data:`KEYS`):

- 01: ``time_effect`` (TempoFormer's test macro-F1 minus its time-blind control's),
  ``tempoformer_macro_f1``, ``control_macro_f1``.
- 02: ``spearman`` (temporal attention against the planted change), ``control_spearman`` (the
  time-blind control), ``plain_spearman`` (the pretrained encoder, untrained), ``time_effect``
  (spearman − control_spearman), and ``probe_time_effect``: the same difference on the probes,
  sentences that read the same in both periods.
- 03: for each of ``walk`` and ``flight``: ``planted_mode``, ``recovered_mode`` (DCWE's map),
  ``cwe_recovered_mode`` (the control's), ``map_cells_held`` (cells with r̂ > 0); and
  ``dcwe_gain``, ``sigma_precision_at_k``.
- 04: ``control_content_ppl``, ``freq_content_ppl``, ``gain`` (relative, positive when the
  frequency model is lower), ``trend_response``.

:data:`HOLDS` says, per lesson, what "the result holds at a seed" means; :func:`holds` counts the
seeds where it does. The lessons show a recorded study from ``tempo_analysis/assets/recorded/``
(:func:`recorded_seed_study`), with the command that regenerated it.
"""
from __future__ import annotations

import json
import math
import operator
import platform
import subprocess
import time
from importlib import resources
from pathlib import Path
from typing import Callable

import pandas as pd
from tqdm.auto import tqdm

__all__ = ["LESSONS", "KEYS", "HOLDS", "CHOSEN_ON", "lesson_id", "headline", "run_study", "study_table", "holds",
           "recorded_seed_study", "summary_keys"]

LESSONS = {"01": "01_stream_classification", "02": "02_semantic_change", "03": "03_social_diffusion",
           "04": "04_future_text"}
PREFIX = {"01": "stream", "02": "semantic_change", "03": "diffusion", "04": "future_text"}
MODES = ("walk", "flight")
KEYS = {
    "01": ("time_effect", "tempoformer_macro_f1", "control_macro_f1"),
    "02": ("spearman", "control_spearman", "plain_spearman", "time_effect", "probe_time_effect"),
    "03": tuple(f"{m}.{k}" for m in MODES for k in ("planted_mode", "recovered_mode", "cwe_recovered_mode",
                                                    "map_cells_held")) + ("dcwe_gain", "sigma_precision_at_k"),
    "04": ("control_content_ppl", "freq_content_ppl", "gain", "trend_response"),
}
# what "the result holds at this seed" means: (key, comparison, value, in words)
HOLDS = {
    "01": [("time_effect", ">=", 0.10, "time adds at least 0.10 macro-F1")],
    "02": [("spearman", ">=", 0.6, "temporal attention's Spearman is at least 0.6")],
    "03": [("walk.recovered_mode", "==", "walk", "DCWE's map reads a walk in the walk world"),
           ("flight.recovered_mode", "==", "flight", "DCWE's map reads a flight in the flight world")],
    "04": [("gain", ">=", 0.03, "the frequency model's content perplexity is at least 3% below the control's"),
           ("trend_response", ">=", 2.0, "an injected trend at least doubles how often the words are written")],
}
# the world seeds the lessons' settings were chosen on; every other seed only reports
CHOSEN_ON = (0, 1, 2)
_OPS = {">=": operator.ge, "==": operator.eq, ">": operator.gt}


def lesson_id(name) -> str:
    """``"02"`` for ``2``, ``"02"``, ``"02_semantic_change"`` or ``"semantic_change"``; a ValueError
    naming the choices otherwise."""
    text = str(name).strip().lower().removesuffix(".ipynb").removesuffix(".py")
    text = Path(text).name
    for key, notebook in LESSONS.items():
        if text in (key, key.lstrip("0"), notebook, notebook[3:]):
            return key
    choices = ", ".join(f"{k} ({v})" for k, v in LESSONS.items())
    raise ValueError(f"unknown lesson {name!r}. Fix: give one of {choices}.")


def summary_keys(lesson, numbers: dict) -> dict:
    """The numbers under the lesson's ``build/summary.json`` names (``stream.time_effect``, ...)."""
    prefix = PREFIX[lesson_id(lesson)]
    return {f"{prefix}.{k}": v for k, v in numbers.items()}


# ----------------------------------------------------------------------------------------------
# one seed of each lesson
# ----------------------------------------------------------------------------------------------
def _stream(seed: int, progress: bool) -> tuple[dict, dict]:
    from .resolve import planted_world
    from .stream.config import NOTEBOOK_EXPERIMENT, preset
    from .stream.experiment import split_timelines
    from .stream.time_effect import headline_numbers, time_effect, world_change_kinds

    world = planted_world("timelines", seed)
    config = preset("notebook")
    settings = dict(config.to_dict(), seed=seed, progress=progress)
    train, dev, test = split_timelines(world.data, NOTEBOOK_EXPERIMENT.folds, NOTEBOOK_EXPERIMENT.fold, seed)
    te = time_effect(train, dev, test, settings, kinds=world_change_kinds(world.truth))
    return headline_numbers(te), {"window": config.window, "epochs": config.epochs, "split_seed": seed}


def _semantic_change(seed: int, progress: bool) -> tuple[dict, dict]:
    from .resolve import planted_world
    from .semantic_change.compare import HEADLINE_METHODS, fit_methods, headline_numbers, score_probes
    from .semantic_change.config import notebook_config

    data = planted_world("change", seed).data
    configs = {m: notebook_config(m, seed=seed, progress=progress) for m in HEADLINE_METHODS}
    rankers = fit_methods(data, configs, cache=False)
    numbers = headline_numbers(rankers, score_probes(rankers, data))
    cfg = configs["temporal-attention"]
    return numbers, {"methods": list(HEADLINE_METHODS), "samples": cfg.samples, "scorer": cfg.scorer,
                     "layers": cfg.layers, "train_epochs": cfg.train_config().epochs}


def _diffusion(seed: int, progress: bool) -> tuple[dict, dict]:
    from .diffusion.lesson import headline_numbers, fit_worlds

    fitted = fit_worlds(seed, progress=progress, cache=False)
    return headline_numbers(fitted), fitted["settings"]


def _future_text(seed: int, progress: bool) -> tuple[dict, dict]:
    from .future_text.lesson import fit_lesson, headline_numbers
    from .resolve import planted_world

    loaded = planted_world("yearly", seed)
    fitted = fit_lesson(loaded.data, seed=seed, progress=progress, cache=False)
    return headline_numbers(fitted), fitted["settings"]


_RUNNERS: dict[str, Callable[[int, bool], tuple[dict, dict]]] = {
    "01": _stream, "02": _semantic_change, "03": _diffusion, "04": _future_text}


def _check_seed(seed) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed {seed!r}: give a non-negative integer (world seed and model seed).")
    return seed


def headline(lesson, seed: int, *, progress: bool = False) -> dict:
    """The lesson's headline numbers at world and model seed ``seed`` (the names of :data:`KEYS`,
    then any other number the lesson reads beside them), with ``seed``, ``settings`` and ``seconds``."""
    key, seed = lesson_id(lesson), _check_seed(seed)
    t0 = time.perf_counter()
    numbers, settings = _RUNNERS[key](seed, progress)
    missing = [k for k in KEYS[key] if k not in numbers]
    if missing:
        raise RuntimeError(f"lesson {key}: the headline did not give {missing}")
    extra = {k: _clean(v) for k, v in numbers.items()
             if k not in KEYS[key] and (v is None or isinstance(v, (bool, int, float, str)))}
    return {"seed": seed, **{k: _clean(numbers[k]) for k in KEYS[key]}, **extra, "settings": settings,
            "seconds": round(time.perf_counter() - t0, 1)}


def _clean(value):
    if isinstance(value, float):
        return None if math.isnan(value) else round(value, 4)
    return value


def code_version() -> str:
    """``git describe`` of the checkout when there is one, else the package version."""
    root = Path(__file__).resolve().parents[1]
    try:
        out = subprocess.run(["git", "-C", str(root), "describe", "--always", "--dirty"], capture_output=True,
                             text=True, timeout=10)
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("tempo_analysis")
    except PackageNotFoundError:
        return "unknown"


def run_study(lesson, seeds, *, progress: bool = True, on_row: Callable[[dict], None] | None = None) -> dict:
    """One :func:`headline` row per seed (in order; a tqdm bar over the seeds with ``progress``).

    Returns ``{"lesson", "notebook", "seeds", "chosen_on", "rows", "code_version", "machine",
    "wall_s", "command"}``; ``on_row(row)`` is called after each seed (the CLI writes its file there)."""
    key = lesson_id(lesson)
    seeds = [_check_seed(s) for s in seeds]
    if not seeds:
        raise ValueError("seeds: give at least one seed.")
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds {seeds}: a seed is given twice; give each seed once.")
    study = {"lesson": key, "notebook": LESSONS[key], "seeds": seeds, "chosen_on": list(CHOSEN_ON), "rows": [],
             "code_version": code_version(), "machine": f"{platform.machine()}, {_cores()} cores",
             "command": f"tempo-analysis study {key} --seeds {' '.join(map(str, seeds))} --out FILE.json"}
    t0 = time.perf_counter()
    for seed in tqdm(seeds, desc=f"study {key}", unit="seed", disable=not progress):
        study["rows"].append(headline(key, seed, progress=False))
        study["wall_s"] = round(time.perf_counter() - t0, 1)
        if on_row is not None:
            on_row(study)
    return study


def _cores() -> int:
    import os
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def study_table(study: dict) -> pd.DataFrame:
    """One row per seed with the lesson's numbers, then ``mean`` and ``std`` rows for the numeric
    columns; ``attrs`` hold the study's ``command``, ``machine``, ``wall_s`` and ``chosen_on``."""
    key = lesson_id(study["lesson"])
    rows = pd.DataFrame([{k: r.get(k) for k in ("seed", *KEYS[key])} for r in study["rows"]]).set_index("seed")
    numeric = rows.apply(pd.to_numeric, errors="coerce").dropna(axis=1, how="all")
    numeric = numeric[[c for c in numeric.columns if not rows[c].map(lambda v: isinstance(v, str)).any()]]
    out = rows.astype(object)
    if len(numeric.columns):
        stats = pd.DataFrame({"mean": numeric.mean(), "std": numeric.std(ddof=0)}).T.astype(object)
        out = pd.concat([out, stats])
    out.index.name = "seed"
    out.attrs.update({k: study[k] for k in ("command", "machine", "wall_s", "chosen_on") if k in study})
    return out


def holds(study: dict) -> pd.DataFrame:
    """Per criterion of :data:`HOLDS`: at how many of the study's seeds it holds (``held``/``of``)."""
    key = lesson_id(study["lesson"])
    rows = []
    for name, op, value, words in HOLDS[key]:
        got = [r.get(name) for r in study["rows"]]
        held = sum(1 for g in got if g is not None and _OPS[op](g, value))
        rows.append({"criterion": words, "key": name, "held": held, "of": len(got),
                     "seeds": ", ".join(str(r["seed"]) for r in study["rows"])})
    return pd.DataFrame(rows)


def recorded_seed_study(lesson) -> dict:
    """The seed study recorded for the lesson (``tempo_analysis/assets/recorded/study_NN.json``),
    with the ``command`` that regenerated it."""
    key = lesson_id(lesson)
    path = resources.files("tempo_analysis").joinpath("assets", "recorded", f"study_{key}.json")
    return json.loads(path.read_text("utf-8"))
