"""Errors for bad input: each one names the column, the offending rows or ids, and the fix."""

from __future__ import annotations

from collections.abc import Iterable


class DataError(ValueError):
    """Bad input data. Subclasses ``ValueError`` so callers can catch either."""


def _preview(items: Iterable, limit: int = 5) -> str:
    """Show at most ``limit`` items, then how many more there are."""
    items = list(items)
    head = ", ".join(repr(x) for x in items[:limit])
    more = f" (+{len(items) - limit} more)" if len(items) > limit else ""
    return f"[{head}]{more}"


def data_error(column: str, problem: str, fix: str, *, rows: Iterable | None = None, ids: Iterable | None = None,
               id_name: str = "id") -> DataError:
    """Build a :class:`DataError` with a uniform message: column, where, what, and what to do."""
    where = []
    if ids is not None:
        where.append(f"{id_name}s {_preview(ids)}")
    if rows is not None:
        where.append(f"rows {_preview(rows)}")
    loc = f" at {' / '.join(where)}" if where else ""
    return DataError(f"column '{column}'{loc}: {problem}. Fix: {fix}")


def require_columns(df, required: Iterable[str], what: str) -> None:
    """Raise a DataError listing the missing columns and the ones that are present."""
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise DataError(
            f"{what} input is missing column(s) {missing}; it has {list(df.columns)}. "
            f"Fix: rename your columns to {list(required)} (extra columns are kept)."
        )
