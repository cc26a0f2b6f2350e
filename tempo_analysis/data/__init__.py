"""One data model for time, shared by all four methods.

- :class:`Timelines` — timestamped posts in streams, and their windows (stream classification).
- :class:`PeriodCorpus` and :class:`TargetUsage` — documents tagged with ordered periods, and
  target-word usages with character offsets (semantic change, future text).
- :class:`SocialCorpus` — documents by social units in time slices, with a graph over units
  (social diffusion).
- :func:`slice_times` — by year, month or custom bins.

Bad input raises :class:`DataError` (a ``ValueError``) naming the column, the rows or ids, and the fix.

The names are imported lazily (PEP 562): ``import tempo_analysis.data.errors`` stays cheap (no
pandas, no networkx), which keeps the CLI's start fast.
"""

from __future__ import annotations

import importlib

_LAZY = {
    "DataError": "errors", "DataPathError": "errors",
    "PeriodCorpus": "periods", "TargetUsage": "periods", "usages_frame": "periods",
    "slice_times": "slicing",
    "SocialCorpus": "social",
    "Timelines": "timelines", "UnsortedTimestampsWarning": "timelines", "Windows": "timelines",
    "OrderOnlyWarning": "timelines",
}

__all__ = ["DataError", "DataPathError", "OrderOnlyWarning", "PeriodCorpus", "SocialCorpus", "TargetUsage", "Timelines",
           "UnsortedTimestampsWarning", "Windows", "slice_times", "usages_frame"]


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
