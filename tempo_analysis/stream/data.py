"""Where stream timelines come from: the planted world, RumourEval-2017 (LRS), or a CSV/JSONL file.

`load_stream_data(spec)` understands the CLI's `--data` strings:
    world                   the committed planted-truth world (data/world), generated if absent
    world:DIR               a world folder written by `tempo-analysis world --out DIR`
    rumoureval2017:DIR      RumourEval-2017 threads with LRS switch labels
    csv:FILE / jsonl:FILE   timeline_id, post_id, timestamp, text[, label, author]
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tempo_analysis.data import DataError, Timelines

SPECS = ("world", "world:DIR", "rumoureval2017:DIR", "csv:FILE", "jsonl:FILE")


def world_timelines(directory=None) -> Timelines:
    """The planted world's timelines (labels "O", "IS", "IE"): data/world if present, else generated."""
    from tempo_analysis import world as w

    if directory is not None:
        return w.load_world(directory).timelines
    try:
        return w.load_world(None).timelines
    except (FileNotFoundError, OSError, ValueError):
        return w.generate_timelines(w.StreamWorldConfig())


def subsample_timelines(timelines: Timelines, max_timelines: int | None, seed: int = 0) -> Timelines:
    """A seeded random subset of whole timelines (original order kept); None = all."""
    ids = timelines.timeline_ids
    if max_timelines is None or max_timelines >= len(ids):
        return timelines
    if max_timelines < 2:
        raise ValueError(f"max_timelines={max_timelines} must be >= 2")
    keep = set(np.random.default_rng(seed).choice(len(ids), size=max_timelines, replace=False).tolist())
    return timelines.subset([t for i, t in enumerate(ids) if i in keep])


def load_stream_data(spec: str, *, time_unit: str | None = None, max_timelines: int | None = None,
                     seed: int = 0) -> Timelines:
    """Timelines for a `--data` spec (see module docstring)."""
    kind, _, arg = str(spec).partition(":")
    if kind == "world":
        tl = world_timelines(arg or None)
    elif kind in ("rumoureval2017", "rumoureval"):
        if not arg:
            raise ValueError("--data rumoureval2017 needs the folder: rumoureval2017:../shared/data/rumoureval2017")
        from tempo_analysis.data.loaders.rumoureval import load_rumoureval

        tl = load_rumoureval(arg)
    elif kind in ("csv", "jsonl"):
        if not arg or not Path(arg).is_file():
            raise DataError(f"--data {spec!r}: file {arg!r} not found. Fix: give an existing {kind} file path.")
        reader = Timelines.from_csv if kind == "csv" else Timelines.from_jsonl
        tl = reader(arg, time_unit=time_unit, min_posts=1)
    else:
        raise ValueError(f"--data {spec!r} is not understood; use one of {', '.join(SPECS)}")
    return subsample_timelines(tl, max_timelines, seed)


__all__ = ["SPECS", "load_stream_data", "subsample_timelines", "world_timelines"]
