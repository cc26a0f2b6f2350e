"""Time-slicing helpers: turn timestamps into ordered slice labels by year, month, or custom bins."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .errors import DataError, data_error


def _as_utc(timestamps) -> pd.Series:
    """Parse anything datetime-like to a UTC Series, naming rows that fail."""
    s = pd.Series(timestamps).reset_index(drop=True)
    parsed = pd.to_datetime(s, utc=True, errors="coerce", format="mixed") if not pd.api.types.is_numeric_dtype(s) \
        else None
    if parsed is None:
        raise DataError("slice_times by year/month needs datetimes, got numbers. Fix: convert them "
                        "(e.g. pd.to_datetime(x, unit='s')) or slice numbers with bins=.")
    bad = np.flatnonzero(parsed.isna().to_numpy())
    if len(bad):
        raise data_error("timestamp", "missing or unparseable timestamps", "fill or drop these rows", rows=bad.tolist())
    return parsed


def slice_times(timestamps, by: str | None = "year", bins=None, labels=None) -> tuple[pd.Series, list]:
    """Slice labels per timestamp and their order.

    ``by="year"`` gives int years, ``by="month"`` gives ``"YYYY-MM"`` strings. With ``bins`` (edges,
    datetimes or numbers, left-closed ``[a, b)``) the labels are ``labels`` or ``"a–b"`` strings;
    a value outside all bins is an error naming its row.
    """
    if bins is not None:
        edges = list(bins)
        if len(edges) < 2:
            raise DataError("bins needs at least two edges. Fix: pass e.g. bins=[1990, 2000, 2010].")
        s = pd.Series(timestamps).reset_index(drop=True)
        datelike = not pd.api.types.is_numeric_dtype(s)
        values = _as_utc(s) if datelike else s.astype(float)
        edge_vals = [pd.Timestamp(e).tz_localize("UTC") if datelike and pd.Timestamp(e).tzinfo is None
                     else (pd.Timestamp(e) if datelike else float(e)) for e in edges]
        if any(b <= a for a, b in zip(edge_vals, edge_vals[1:])):
            raise DataError(f"bins must be strictly increasing, got {edges}.")
        names = list(labels) if labels is not None else [f"{a}–{b}" for a, b in zip(edges, edges[1:])]
        if len(names) != len(edges) - 1:
            raise DataError(f"labels has {len(names)} names for {len(edges) - 1} bins. Fix: give one label per bin.")
        cut = pd.cut(values, bins=edge_vals, labels=False, right=False)
        bad = np.flatnonzero(pd.isna(cut))
        if len(bad):
            raise data_error("timestamp", f"values outside the bins {edges[0]}..{edges[-1]}",
                             "widen the bins or drop these rows", rows=bad.tolist())
        return pd.Series([names[int(i)] for i in cut]), names
    if by not in ("year", "month"):
        raise DataError(f"by={by!r} is not supported. Fix: use by='year', by='month', or bins=[...].")
    ts = _as_utc(timestamps)
    if by == "year":
        out = ts.dt.year.astype(int)
        return out, sorted(out.unique().tolist())
    out = ts.dt.strftime("%Y-%m")
    return out, sorted(out.unique().tolist())
