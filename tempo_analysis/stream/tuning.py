"""Hyper-parameters chosen on dev: `DevTunedClassifier` fits every grid point, keeps the best on dev.

Baselines get the same care as the model: inside each fold the grid (e.g. the paper appendix's
BiLSTM grid, hidden {200, 300, 400} x lr {1e-3, 5e-4, 1e-4}) is searched on the DEV timelines
only, and the model with the best dev macro-F1 is the one scored on test. The test fold is never
seen while choosing. `tempo-analysis stream evaluate --tune hidden=200,300 lr=1e-3,1e-4` wraps
any model in it; the chosen point of every run is recorded in the results JSON. TempoFormer's time
settings (`time_scale`, `rope_theta`, `time_transform`) can be searched too, for the models that
take them (`tempoformer`, `tempoformer_vectors`).
"""

from __future__ import annotations

import itertools

import numpy as np

from tempo_analysis.evaluation.classification import classification_scores


def parse_grid(items) -> dict[str, list]:
    """["hidden=200,300", "lr=1e-3,1e-4"] -> {"hidden": [200, 300], "lr": [0.001, 0.0001]} (numbers parsed).

    A value of integers joined by ``x`` is a tuple: ``hidden=32x32,128x128`` gives the two-layer FFN
    sizes ``[(32, 32), (128, 128)]`` that ffn_history, swnu and seq_sig_net take.
    """
    grid = {}
    for item in items:
        key, sep, values = str(item).partition("=")
        if not sep or not key or not values:
            raise ValueError(f"--tune {item!r}: write KEY=V1,V2 (e.g. hidden=200,300 or lr=1e-3,1e-4)")
        grid[key.replace("-", "_")] = [_parse_value(v) for v in values.split(",")]
    return grid


# TempoFormer's time settings (config fields given in `model_kwargs`) that a grid may name too
TIME_SETTINGS = ("time_transform", "time_scale", "rope_theta")


def grid_point_settings(point: dict, model_kwargs: dict | None = None) -> dict:
    """A grid point as model settings: time settings move into `model_kwargs`, merged over the given ones.

    {"lr": 1e-3, "time_scale": 2.0} with model_kwargs {"time_unit": 60.0} ->
    {"lr": 1e-3, "model_kwargs": {"time_unit": 60.0, "time_scale": 2.0}}.
    """
    point = dict(point)
    time = {k: point.pop(k) for k in list(point) if k in TIME_SETTINGS}
    if time:
        point["model_kwargs"] = {**(model_kwargs or {}), **time}
    return point


def _parse_value(v: str):
    """'200' -> 200, '1e-3' -> 0.001, '32x32' -> (32, 32); anything else stays a string."""
    parts = v.split("x")
    if len(parts) > 1 and all(p.isdigit() for p in parts):
        return tuple(int(p) for p in parts)
    for kind in (int, float):
        try:
            return kind(v)
        except ValueError:
            pass
    return v


class DevTunedClassifier:
    """Fit `make(**point)` for every grid point on train; keep the best dev macro-F1 (ties: first)."""

    def __init__(self, make, grid: dict[str, list]):
        if not grid or any(not v for v in grid.values()):
            raise ValueError("the tuning grid is empty; give at least one value per key")
        self.make, self.grid = make, dict(grid)

    def points(self) -> list[dict]:
        keys = list(self.grid)
        return [dict(zip(keys, vals)) for vals in itertools.product(*(self.grid[k] for k in keys))]

    def fit(self, train, dev=None) -> "DevTunedClassifier":
        if dev is None or not len(dev):
            raise ValueError("tuning needs dev timelines (dev_fraction > 0): hyper-parameters are chosen on dev")
        best = None
        self.tuning_ = []
        for point in self.points():
            est = self.make(**point).fit(train, dev)
            names = list(est.label_names_)
            score = classification_scores(dev.label_codes(names), np.asarray(est.predict(dev)), names)["macro_f1"]
            self.tuning_.append({**point, "dev_macro_f1": round(float(score), 4)})
            if best is None or score > best[0]:
                best = (score, point, est)
        self.dev_macro_f1_, self.best_params_, self.best_ = best
        self.label_names_ = self.best_.label_names_
        return self

    @property
    def window(self):
        """The chosen model's window (what the gap what-if and other window readers ask for)."""
        return self.best_.window

    def predict_proba(self, timelines):
        return self.best_.predict_proba(timelines)

    def predict(self, timelines):
        return self.best_.predict(timelines)


__all__ = ["TIME_SETTINGS", "DevTunedClassifier", "grid_point_settings", "parse_grid"]
