"""Yearly text: validated ``doc_id, year (int), text`` rows (future-text generation's input).

- ``yearly_frame(df)``: any frame with a year and a text column becomes the canonical frame
  (integer years, string texts, blank texts dropped with a warning, sorted by year).
- ``yearly_from_corpus(corpus)``: a :class:`~tempo_analysis.data.PeriodCorpus` whose periods
  are int years (the planted world's ``yearly`` part) as a yearly frame.

The ``--data`` resolver for yearly text is ``tempo_analysis.resolve.load_yearly``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from tempo_analysis.data.errors import DataError, in_cli_terms, require_columns

__all__ = ["YEAR_RANGE", "check_year_range", "yearly_frame", "yearly_from_corpus"]

YEAR_RANGE = (1000, 2100)   # plausible calendar years; a typo such as 20061 falls outside


def check_year_range(years, year_range=YEAR_RANGE, column: str = "year", rows=None) -> None:
    """Reject years outside ``year_range`` (inclusive): a typo (20061) would otherwise make a history
    table of ~18,000 mostly empty years. Widen ``year_range`` for other calendars or time units."""
    lo, hi = year_range
    arr = np.asarray(list(years), dtype=np.int64)
    bad = np.flatnonzero((arr < lo) | (arr > hi))
    if bad.size:
        where = [rows[i] for i in bad[:5]] if rows is not None else bad[:5].tolist()
        fix = in_cli_terms(f"correct those rows, or widen the allowed range (year_range=({lo}, {hi}) -> e.g. "
                           "(0, 3000)) if such years are meant", f"correct those rows (the command line reads years "
                           f"{lo}-{hi})")
        raise DataError(f"column '{column}' at rows {where}: year(s) {sorted(set(arr[bad].tolist()))[:5]} are outside "
                        f"{lo}-{hi} (a typo such as 20061?). Fix: {fix}")


def yearly_frame(df: pd.DataFrame, year_col: str = "year", text_col: str = "text",
                 year_range: tuple[int, int] = YEAR_RANGE) -> pd.DataFrame:
    """Validate (year, text) rows: integer years inside ``year_range``, string texts; blank texts
    are dropped with a warning. The input's ``attrs`` (a loader's counts and notes, e.g. the ACL
    loader's ``cumulative_years``) are kept."""
    require_columns(df, [year_col, text_col], "yearly text")
    years = pd.to_numeric(df[year_col], errors="coerce")
    bad = df.index[years.isna() | ~np.isfinite(years) | (years != years.round())].tolist()
    if bad:
        raise DataError(f"column '{year_col}' at rows {bad[:5]}: year must be an integer (e.g. 2019). "
                        "Fix: convert dates to years or drop those rows")
    check_year_range(years.astype(np.int64), year_range, year_col, rows=df.index.tolist())
    text = df[text_col].astype("string")
    blank = text.isna() | (text.str.strip() == "")
    if blank.any():
        warnings.warn(f"yearly text: dropping {int(blank.sum())} row(s) with an empty '{text_col}' "
                      f"(rows {df.index[blank].tolist()[:5]})", stacklevel=2)
    if "doc_id" in df.columns:
        ids = df["doc_id"].astype("string").str.strip()
        blank_id = ids.isna() | (ids == "")
        if blank_id.any():
            raise DataError(f"column 'doc_id' at rows {df.index[blank_id].tolist()[:5]}: empty id. Fix: give every "
                            "row an id, or drop the doc_id column to number the rows")
        dup = ids[ids.duplicated(keep=False)]
        if len(dup):
            raise DataError(f"column 'doc_id': ids {sorted(set(dup))[:5]} are used by more than one row (rows "
                            f"{dup.index.tolist()[:5]}). Fix: give each document its own id")
    out = pd.DataFrame({
        "doc_id": (df["doc_id"].astype(str).str.strip().values if "doc_id" in df.columns
                   else pd.Series(np.arange(len(df))).astype(str).values),
        "year": years.astype(int).values,
        "text": text.astype(str).values,
    })[~blank.values]
    if out.empty:
        raise DataError(f"column '{text_col}': no non-empty texts. Fix: give at least one (year, text) row")
    out = out.sort_values("year", kind="stable").reset_index(drop=True)
    out.attrs.update(df.attrs)
    return out


def yearly_from_corpus(corpus) -> pd.DataFrame:
    """A PeriodCorpus with int-year periods (e.g. ``world.yearly``) as a yearly frame."""
    df = corpus.df
    return yearly_frame(pd.DataFrame({"doc_id": df["doc_id"], "year": df["period"].astype(int), "text": df["text"]}))
