"""Timelines: streams of timestamped posts, and the windows of the w most recent posts.

A timeline is an ordered stream of posts (a Twitter thread, a user's history, a conversation).
Every post is the *current* post of exactly one window: the w most recent posts of its timeline
up to and including itself, oldest first, current post last, left-padded. Each window carries
the time gap from every post to the current post, and an explicit padding mask. Time 0 is a
real gap (the current post, or a post at the same second) and is never a padding marker.

Ordering policy: with ``sort=True`` (default) posts are stably sorted by timestamp within each
timeline and a warning says how many timelines were reordered; with ``sort=False`` unsorted input
is refused with a :class:`DataError` naming the timeline and row.

Timestamps: datetimes, ISO 8601 strings (naive = UTC), or numbers with a declared ``time_unit``
(one of ``TIME_UNITS``). Order-only data (conversations with turn order only): with
``time_unit="position"``, or when there is no ``timestamp`` column at all (then with an
``OrderOnlyWarning``), each post's time is its index in its timeline as given (0, 1, 2, ...,
read as seconds), so a window's gaps count posts; a timestamp column, if any, is kept as
``timestamp_original``. A column that mixes numbers with strings is refused (a number there
would otherwise be read as nanoseconds since 1970); numbers beyond the years 1677-2262 are refused
as a wrong unit. ``text`` must be strings (a numeric column is usually the wrong column).
"""

from __future__ import annotations

import re

import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .digest import frame_digest
from .errors import (DataError, data_error, in_cli_terms, read_frame, require_columns, require_ids, require_scalars,
                     require_texts, require_unique)

REQUIRED = ("timeline_id", "post_id", "timestamp", "text")
TIME_UNITS = {"s": 1.0, "ms": 1e-3, "min": 60.0, "h": 3600.0, "D": 86400.0}
POSITION = "position"  # time_unit for order-only data: a post's index in its timeline is its time


class OrderOnlyWarning(UserWarning):
    """The input has no timestamp column: each post's position in its timeline is its time."""


# words pandas reads as the current date or time: a timestamp that changes each time the file is read
_RELATIVE_DAYS = {"now", "today", "yesterday", "tomorrow"}
# '03/02/2023', '3.2.23', '03-02-2023 09:00': day and month in an order the text does not say
_NUMERIC_DATE = re.compile(r"^\s*(\d{1,2})([/.-])(\d{1,2})\2(\d{2}|\d{4})(?=$|[\sT,])")
# '9:00', '21:30:05', '9:00 pm': a time of day without a date (pandas would give it today's date)
_TIME_ONLY = re.compile(r"^\s*\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?\s*([aApP][mM])?\s*$")


def _order_only(df: pd.DataFrame, time_unit: str | None) -> tuple[pd.DataFrame, str | None]:
    """Positions as times for order-only input (see the module docstring); other input unchanged."""
    if time_unit != POSITION and ("timestamp" in df.columns or time_unit is not None):
        return df, time_unit
    if "timeline_id" not in df.columns:
        return df, "s"  # require_columns reports it
    df = df.copy()
    if "timestamp" in df.columns:
        df = df.rename(columns={"timestamp": "timestamp_original"})
    else:
        warnings.warn("Timelines: no 'timestamp' column; each post's position in its timeline (0, 1, 2, ... in "
                      f"the input's order) is its time. Pass {_unit('position')} to say so.", OrderOnlyWarning,
                      stacklevel=3)
    df["timestamp"] = df.groupby("timeline_id", sort=False, dropna=False).cumcount().astype("float64")
    return df, "s"


def check_labels_seen(train: "Timelines", other: "Timelines", what: str = "test") -> None:
    """Raise a DataError naming the posts of `other` whose label no training post has."""
    if "label" not in other.df:
        return
    seen = set(train.df["label"].dropna()) if "label" in train.df else set()
    lab = other.df["label"]
    bad = lab.notna() & ~lab.isin(seen)
    if bad.any():
        raise data_error("label", f"{what} labels {sorted(set(lab[bad]))} never occur in training "
                         f"(training has {sorted(seen)})",
                         "use folds in which every label occurs in training (fewer folds, or more data), or drop "
                         "these posts' labels", ids=other.df.loc[bad, "post_id"].tolist(), id_name="post_id",
                         rows=np.flatnonzero(bad.to_numpy()).tolist())


class LabelWhitespaceWarning(UserWarning):
    """Labels with spaces around them were stripped."""


class UnsortedTimestampsWarning(UserWarning):
    """Posts were reordered by timestamp within their timelines."""


def _day_order(values: list) -> bool | None:
    """For dates written with numbers only ('03/02/2023'): True when the column is day-first, False when
    month-first, None when it holds no such dates. The order is read from the column as a whole (a
    first field above 12 is a day, a second one a day too); a column that cannot tell, or mixes both,
    is refused: one value at a time, '03/02' and '13/02' would be read in two different orders."""
    rows, first, second = [], [], []
    for i, v in enumerate(values):
        m = _NUMERIC_DATE.match(v) if isinstance(v, str) else None
        if m:
            rows.append(i)
            first.append(int(m.group(1)))
            second.append(int(m.group(3)))
    if not rows:
        return None
    day_first = any(a > 12 for a in first)
    month_first = any(b > 12 for b in second)
    if day_first and month_first:
        raise data_error("timestamp", "dates written day-first and month-first in one column",
                         "write every date as ISO 8601 (YYYY-MM-DD, e.g. '2023-02-03')", rows=rows)
    if not (day_first or month_first):
        sample = [values[i] for i in rows[:3]]
        raise data_error("timestamp", f"dates such as {sample!r} can be read day-first or month-first, and no "
                         "value in the column tells which", "write the dates as ISO 8601 (YYYY-MM-DD, e.g. "
                         "'2023-02-03'), so that nothing is guessed", rows=rows)
    return day_first


def _unit(value: str | None = None) -> str:
    """The time-unit setting as a message names it: ``time_unit`` / ``time_unit='ms'`` in Python, the
    command's ``--time-unit`` / ``--time-unit ms`` at the command line."""
    if value is None:
        return in_cli_terms("time_unit", "{option}", option="time_unit")
    return in_cli_terms(f"time_unit={value!r}", f"{{option}} {value}", option="time_unit")


def _parse_timestamps(col: pd.Series, time_unit: str | None) -> tuple[pd.Series, np.ndarray]:
    """Return (UTC timestamps, seconds as float64) or raise naming the bad rows."""
    if pd.api.types.is_bool_dtype(col):
        raise data_error("timestamp", "booleans are not timestamps", f"pass datetimes or numbers with {_unit()}")
    if col.dtype == object:
        # JSON lines and hand-built frames can mix numbers with date strings in one column: a
        # number there would otherwise be read as nanoseconds since 1970.
        is_num = col.map(lambda v: isinstance(v, (int, float, np.integer, np.floating))
                         and not isinstance(v, (bool, np.bool_)))
        if is_num.all():
            col = col.astype("float64")
        elif is_num.any():
            rows = np.flatnonzero(is_num.to_numpy()).tolist()
            raise data_error("timestamp", "numbers mixed with other timestamp values",
                             f"use one kind: ISO 8601 strings for every row, or numbers with {_unit()}", rows=rows)
    if pd.api.types.is_numeric_dtype(col):
        if time_unit is None:
            raise data_error("timestamp", "numeric timestamps need a declared unit",
                             in_cli_terms(f"pass time_unit= one of {list(TIME_UNITS)} (e.g. time_unit='s' for epoch "
                                          "seconds)", f"pass {{option}} one of {', '.join(TIME_UNITS)} (e.g. "
                                          "{option} s for epoch seconds)", option="time_unit"))
        if time_unit not in TIME_UNITS:
            raise DataError(f"time_unit={time_unit!r} is not known. Fix: use one of {list(TIME_UNITS)}.")
        values = col.astype("float64")
        bad = np.flatnonzero(~np.isfinite(values.to_numpy()))
        if len(bad):
            raise data_error("timestamp", "NaN or infinite timestamps", "fill or drop these rows", rows=bad.tolist())
        seconds = values.to_numpy() * TIME_UNITS[time_unit]
        # pandas datetimes span the years 1677-2262; beyond that a unit is almost surely wrong
        out = np.flatnonzero(np.abs(seconds) > 9.2e9)
        if len(out):
            raise data_error("timestamp", f"values {values.iloc[out[:3]].tolist()} with {_unit(time_unit)} lie "
                             "outside the years 1677-2262",
                             in_cli_terms("check time_unit (e.g. 'ms' for epoch milliseconds)",
                                          "check {option} (e.g. {option} ms for epoch milliseconds)",
                                          option="time_unit"), rows=out.tolist())
        stamps = pd.to_datetime(seconds, unit="s", utc=True)
        return pd.Series(stamps, index=col.index), seconds
    # Datetimes or strings: naive values are taken as UTC; aware ones are converted to UTC.
    if col.isna().any():
        bad = np.flatnonzero(col.isna().to_numpy())
        raise data_error("timestamp", "missing (NaN/NaT) timestamps", "fill or drop these rows", rows=bad.tolist())
    if pd.api.types.is_datetime64_any_dtype(col):
        stamps = pd.to_datetime(col, utc=True)
    else:
        values = col.tolist()
        dayfirst = _day_order(values)
        parsed = []
        bad = []
        for i, v in enumerate(values):
            try:
                if isinstance(v, str) and (v.strip().lower() in _RELATIVE_DAYS or _TIME_ONLY.match(v)):
                    raise ValueError("relative to the moment of loading")   # 'now', '9:00': no date of the post
                ts = (pd.to_datetime(v, dayfirst=dayfirst) if dayfirst is not None and isinstance(v, str)
                      and _NUMERIC_DATE.match(v) else pd.Timestamp(v))
                if pd.isna(ts):
                    raise ValueError
                parsed.append(ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC"))
            except (ValueError, TypeError):
                bad.append(i)
        if bad:
            vals = [col.iloc[i] for i in bad]
            raise data_error("timestamp", f"unparseable timestamps {vals[:3]!r} (a time of day needs its date)",
                             "use ISO 8601 strings (e.g. '2017-03-01T12:00:00Z'), datetimes, or numbers with "
                             + _unit(), rows=bad)
        stamps = pd.Series(pd.DatetimeIndex(parsed), index=col.index)
    lo, hi = pd.Timestamp.min.tz_localize("UTC"), pd.Timestamp.max.tz_localize("UTC")
    out = np.flatnonzero(((stamps < lo) | (stamps > hi)).to_numpy())
    if len(out):
        raise data_error("timestamp", f"dates {[str(col.iloc[i]) for i in out[:3]]} lie outside the years 1677-2262",
                         "correct these dates (a typo in the year?) or drop the rows", rows=out.tolist())
    stamps = stamps.dt.as_unit("ns")
    return stamps, stamps.astype("int64").to_numpy() / 1e9


@dataclass
class Windows:
    """Windows of the w most recent posts: one row per current post, slots oldest -> newest."""

    post_index: np.ndarray  # [N, w] int64 row ids into Timelines.df, -1 for padding (left-padded)
    mask: np.ndarray  # [N, w] bool, True for a real post
    gaps: np.ndarray  # [N, w] float64 seconds from each post to the current post (pads: 0, masked)
    target_index: np.ndarray  # [N] row id of the current post (== post_index[:, -1])
    timeline_id: np.ndarray  # [N] object
    labels: np.ndarray  # [N] int label code of the current post, -1 if unknown

    def __len__(self) -> int:
        return len(self.target_index)

    @property
    def width(self) -> int:
        """Window size w."""
        return self.post_index.shape[1]

    def select(self, idx) -> "Windows":
        """A subset of windows (by integer positions or a boolean mask)."""
        return Windows(*(getattr(self, f)[idx] for f in
                         ("post_index", "mask", "gaps", "target_index", "timeline_id", "labels")))


class Timelines:
    """Validated, time-sorted posts grouped into timelines (``timeline_id, post_id, timestamp, text[, label, author]``)."""

    def __init__(self, df: pd.DataFrame, label_names: list[str] | None = None):
        # Use the constructors (from_frame/from_csv/from_jsonl): they validate.
        self.df = df
        self.label_names = label_names if label_names is not None else (
            sorted(df["label"].dropna().unique().tolist()) if "label" in df else [])

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_frame(cls, df: pd.DataFrame, *, time_unit: str | None = None, sort: bool = True,
                   min_posts: int = 2, label_names: list[str] | None = None) -> "Timelines":
        """Validate a DataFrame of posts. See the module docstring for the ordering policy."""
        if not isinstance(df, pd.DataFrame):
            raise DataError(f"Timelines.from_frame expects a pandas DataFrame, got {type(df).__name__}.")
        if time_unit is not None and time_unit not in TIME_UNITS and time_unit != POSITION:
            raise DataError(f"time_unit={time_unit!r} is not known. Fix: use one of {list(TIME_UNITS)}, "
                            f"or {POSITION!r} for order-only data.")
        require_scalars(df, (*REQUIRED, "label", "author"), "Timelines")   # (JSON lines may nest values)
        df, time_unit = _order_only(df, time_unit)
        if isinstance(min_posts, bool) or not isinstance(min_posts, (int, np.integer)) or min_posts < 1:
            raise DataError(f"min_posts must be a positive integer, got {min_posts!r}. Fix: use min_posts=2 "
                            "(the default) or min_posts=1 to keep single-post timelines.")
        require_columns(df, REQUIRED, "Timelines")
        require_scalars(df, (*REQUIRED, "label", "author"), "Timelines")
        df = df.reset_index(drop=True).copy()
        if df.empty:
            raise DataError("Timelines input has no rows. Fix: pass at least one timeline with posts.")
        for c in ("timeline_id", "post_id"):
            require_ids(df, c, "missing ids", "give every post a timeline_id and a post_id")
        require_unique(df, "post_id", "duplicate post ids (each post must be unique)",
                       "deduplicate the rows, or make ids unique, e.g. prefix them with the timeline id")
        require_texts(df, "post_id", "posts")
        df["text"] = df["text"].astype(str)
        df["timestamp"], df["seconds"] = _parse_timestamps(df["timestamp"], time_unit)
        if "label" in df:
            # a whole-number float is an int label that a missing value upcast (JSON lines [0, 1, null]):
            # "1", as the CSV reader gives, not "1.0"
            df["label"] = df["label"].map(lambda v: None if pd.isna(v) else str(int(v)) if isinstance(v, float)
                                          and v.is_integer() else str(v)).astype(object)
            # 'IS' and 'IS ' are one class: strip, and say how many labels it touched
            padded = df["label"].map(lambda v: isinstance(v, str) and v != v.strip())
            if padded.any():
                shown = sorted({repr(v) for v in df.loc[padded, "label"]})[:3]
                warnings.warn(f"Timelines: {int(padded.sum())} label(s) had spaces around them ({', '.join(shown)}) "
                              "and were stripped, so that each names one class.", LabelWhitespaceWarning, stacklevel=2)
                df["label"] = df["label"].map(lambda v: v.strip() if isinstance(v, str) else v)
                if (df["label"] == "").any():
                    rows = np.flatnonzero((df["label"] == "").to_numpy()).tolist()
                    raise data_error("label", "labels made only of spaces", "leave the cell empty for an unlabelled "
                                     "post, or give the label", rows=rows)

        # Timelines keep the order in which they first appear; posts are ordered by time.
        first_seen = {t: i for i, t in enumerate(pd.unique(df["timeline_id"]))}
        df["_tl_order"] = df["timeline_id"].map(first_seen)
        df["_row"] = np.arange(len(df))
        back = df.groupby("_tl_order", sort=False)["seconds"].diff() < 0
        if back.any():
            bad_tl = df.loc[back, "timeline_id"].unique().tolist()
            if not sort:
                raise data_error("timestamp", "timestamps go backwards within timeline(s)",
                                 "sort each timeline by time, or pass sort=True to sort for you",
                                 ids=bad_tl, id_name="timeline_id", rows=np.flatnonzero(back.to_numpy()).tolist())
            warnings.warn(f"Timelines: sorted posts by timestamp in {len(bad_tl)} timeline(s) whose input was "
                          f"unsorted (first: {bad_tl[0]!r}).", UnsortedTimestampsWarning, stacklevel=2)
        df = df.sort_values(["_tl_order", "seconds", "_row"], kind="mergesort").drop(columns=["_tl_order", "_row"])
        df = df.reset_index(drop=True)

        sizes = df.groupby("timeline_id", sort=False).size()
        small = sizes[sizes < min_posts]
        if len(small):
            raise data_error("timeline_id", "timeline(s) with fewer than "
                             + in_cli_terms(f"min_posts={min_posts} posts", f"{min_posts} posts"),
                             in_cli_terms("drop them, or pass min_posts=1 to keep them (their windows hold only the "
                                          "current post)", "drop them from the file: the command line reads "
                                          "timelines of 2 or more posts (in Python, Timelines.from_csv(path, "
                                          "min_posts=1) keeps them)"),
                             ids=small.index.tolist(), id_name="timeline_id")
        cols = list(REQUIRED) + ["seconds"] + [c for c in df.columns if c not in REQUIRED and c != "seconds"]
        return cls(df[cols], label_names=label_names)

    @classmethod
    def from_csv(cls, path: str | Path, **kwargs) -> "Timelines":
        """Read a CSV with the columns of :meth:`from_frame`."""
        # index_col=False: a row with a field too many is an error, not a shifted table; labels stay text.
        # Only a blank cell is missing: "NA", "None", "null" or "nan" is a label or a post's text, as written
        # (pandas would read them as missing, so labelled posts would silently become unlabelled).
        blank = {c: [""] for c in ("timeline_id", "post_id", "timestamp", "text", "label")}
        return cls.from_frame(read_frame(pd.read_csv, path, what="timelines CSV", index_col=False,
                                         keep_default_na=False, na_values=blank,
                                         dtype={"timeline_id": str, "post_id": str, "text": str, "label": str}),
                              **kwargs)

    @classmethod
    def from_jsonl(cls, path: str | Path, **kwargs) -> "Timelines":
        """Read JSON lines with the fields of :meth:`from_frame`."""
        return cls.from_frame(read_frame(pd.read_json, path, what="timelines JSON-lines file",
                                         fix="write one JSON object per line with the Timelines fields",
                                         # dtype=False: values as written (the time unit decides what a
                                         # numeric timestamp means; pandas never guesses dates); a BOM is allowed
                                         lines=True, dtype=False, encoding="utf-8-sig"),
                              **kwargs)

    # ------------------------------------------------------------------ views
    def __len__(self) -> int:
        return len(self.df)

    def __repr__(self) -> str:
        return f"Timelines({len(self.timeline_ids)} timelines, {len(self)} posts, labels={self.label_names})"

    def fingerprint(self) -> str:
        """A digest of what the models read: every post's timeline, id, time, text and label, in order, and
        the label names (:mod:`tempo_analysis.data.digest`). An edited file under the same name differs."""
        cols = ["timeline_id", "post_id", "seconds", "text"] + (["label"] if "label" in self.df else [])
        return frame_digest(self.df, cols, list(self.label_names))

    @property
    def timeline_ids(self) -> list[str]:
        """Timeline ids in order of first appearance."""
        return pd.unique(self.df["timeline_id"]).tolist()

    def timeline(self, timeline_id: str) -> pd.DataFrame:
        """The posts of one timeline, oldest first."""
        out = self.df[self.df["timeline_id"] == str(timeline_id)]
        if out.empty:
            raise DataError(f"timeline_id {timeline_id!r} is not in these timelines. Fix: pick one of "
                            f"{self.timeline_ids[:5]}...")
        return out

    def subset(self, timeline_ids) -> "Timelines":
        """A new Timelines with only the given timelines (order kept as given)."""
        ids = [str(t) for t in timeline_ids]
        unknown = sorted(set(ids) - set(self.df["timeline_id"]))
        if unknown:
            raise data_error("timeline_id", "unknown timeline ids", "pass ids from .timeline_ids",
                             ids=unknown, id_name="timeline_id")
        order = {t: i for i, t in enumerate(ids)}
        sub = self.df[self.df["timeline_id"].isin(order)].copy()
        sub["_o"] = sub["timeline_id"].map(order)
        sub = sub.sort_values(["_o", "seconds"], kind="mergesort").drop(columns="_o").reset_index(drop=True)
        return Timelines(sub, label_names=self.label_names)

    def label_codes(self, names: list[str] | None = None) -> np.ndarray:
        """Integer label per post (index into ``names`` or ``label_names``); -1 where the label is missing."""
        names = self.label_names if names is None else names
        if "label" not in self.df:
            return np.full(len(self), -1, dtype=np.int64)
        lookup = {n: i for i, n in enumerate(names)}
        unknown = sorted(set(self.df["label"].dropna()) - set(lookup))
        if unknown:
            raise data_error("label", f"labels {unknown} are not in label names {names}",
                             "pass names= that include every label")
        return np.array([lookup.get(v, -1) if v is not None else -1 for v in self.df["label"]], dtype=np.int64)

    def has_labelled_post(self, names: list[str] | None = None) -> bool:
        """True when at least one post carries a label (from ``names`` or ``label_names``)."""
        return bool((self.label_codes(names) >= 0).any())

    def windows(self, w: int, label_names: list[str] | None = None) -> Windows:
        """One window per post: its w most recent posts (itself last), left-padded with an explicit mask."""
        if not isinstance(w, (int, np.integer)) or w < 1:
            raise DataError(f"window size w must be a positive integer, got {w!r}. Fix: use e.g. w=5, 10 or 20.")
        n = len(self.df)
        seconds = self.df["seconds"].to_numpy()
        # Position of each post inside its timeline (the df is grouped and time-sorted).
        tl = self.df["timeline_id"].to_numpy()
        starts = np.r_[0, np.flatnonzero(tl[1:] != tl[:-1]) + 1]
        first_row = np.repeat(starts, np.diff(np.r_[starts, n]))
        rows = np.arange(n)
        idx = rows[:, None] - (w - 1) + np.arange(w)[None, :]  # [N, w] candidate rows, oldest first
        mask = idx >= first_row[:, None]  # real posts of the same timeline
        post_index = np.where(mask, idx, -1).astype(np.int64)
        gaps = np.where(mask, seconds[:, None] - seconds[np.clip(idx, 0, None)], 0.0)
        return Windows(post_index=post_index, mask=mask, gaps=gaps.astype(np.float64), target_index=rows.astype(np.int64),
                       timeline_id=tl.astype(object), labels=self.label_codes(label_names))


def subsample_timelines(timelines: Timelines, max_timelines: int | None, seed: int = 0) -> Timelines:
    """A seeded random subset of whole timelines (original order kept); None = all."""
    ids = timelines.timeline_ids
    if max_timelines is None or max_timelines >= len(ids):
        return timelines
    if max_timelines < 2:
        raise ValueError(f"max_timelines={max_timelines} must be >= 2")
    keep = set(np.random.default_rng(seed).choice(len(ids), size=max_timelines, replace=False).tolist())
    return timelines.subset([t for i, t in enumerate(ids) if i in keep])
