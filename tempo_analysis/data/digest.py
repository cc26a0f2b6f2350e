"""Content digests of loaded data, which notebook caches key on: the same name over other contents is computed anew.

A notebook memoises its training under its parameters (``tempo_analysis.notebook.cached``). A data
spec such as ``csv:posts.csv`` or ``world`` names where the data came from, not what it holds: after
the file is edited or the world regenerated, the name is the same and a cache keyed on it would hand
back a model trained on the old data. Each data class's ``fingerprint()`` hashes what its models
read, in order, with :func:`frame_digest`.
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterable

import pandas as pd

__all__ = ["frame_digest"]


def frame_digest(df: pd.DataFrame, columns: Iterable[str], *extra) -> str:
    """16 hex digits of sha256 over ``df[columns]`` (row order and values, read as strings) and the
    ``repr`` of each of ``extra`` (label names, an edge list, ...). A missing column is a KeyError."""
    h = hashlib.sha256()
    cols = list(columns)
    h.update(repr(cols).encode())
    h.update(pd.util.hash_pandas_object(df[cols].astype(str), index=False).to_numpy().tobytes())
    for item in extra:
        h.update(b"\0" + repr(item).encode())
    return h.hexdigest()[:16]
