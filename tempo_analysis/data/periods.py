"""Period corpora: documents with a time (a date, or a period label with an order), and target usages.

A :class:`PeriodCorpus` holds one document (usually a sentence) per row with its period. Periods
are ordered: by the ``order=`` you give, else by a ``period_order`` column, else numerically or
chronologically when the labels are numbers or dates (or text that spells numbers), else by
first appearance, with a warning. Labels that mix types (``1`` and ``"late"``, or ``"1990"`` and
``"late"`` from a file) have no inferable order and are refused unless ``order=`` is given. A
:class:`TargetUsage` is one occurrence of a target word, given by character offsets
``text[start:end]`` (0-based, end exclusive) into its sentence.
"""

from __future__ import annotations

import re
from collections.abc import Hashable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .errors import (DOC_ID_FIX, DOC_ID_UNIQUE_FIX, DataError, data_error, infer_label_order, read_frame,
                     require_columns, require_ids, require_scalars, require_texts, require_unique)


@dataclass(frozen=True)
class TargetUsage:
    """One usage of ``word`` in ``text`` at ``text[start:end]``, from ``period``."""

    word: str
    period: object
    text: str
    start: int
    end: int
    doc_id: str | None = None

    def __post_init__(self):
        if not isinstance(self.text, str) or not self.text:
            raise data_error("text", "a target usage needs a non-empty sentence", "drop the usage or fill its text",
                             ids=[self.doc_id or self.word], id_name="usage")
        if not (0 <= int(self.start) < int(self.end) <= len(self.text)):
            raise data_error("start/end", f"offsets {self.start}:{self.end} are outside the sentence of length "
                             f"{len(self.text)}", "give 0-based character offsets with start < end <= len(text)",
                             ids=[self.doc_id or self.word], id_name="usage")

    @property
    def surface(self) -> str:
        """The span of the sentence the offsets point at."""
        return self.text[self.start:self.end]

    @classmethod
    def checked(cls, word, period, text, start, end, *, surface: str | None = None, doc_id=None) -> "TargetUsage":
        """Build a usage and verify that its span reads ``surface`` (case-insensitive)."""
        u = cls(word, period, text, int(start), int(end), doc_id)
        if surface is not None and u.surface.lower() != str(surface).lower():
            raise data_error("start/end", f"offsets {start}:{end} point at {u.surface!r}, not at {surface!r} in "
                             f"{text[:80]!r}", "offsets must be character offsets into this exact sentence "
                             "(0-based, end exclusive); recompute them after any text normalisation",
                             ids=[doc_id or word], id_name="usage")
        return u


def usages_frame(usages) -> pd.DataFrame:
    """A DataFrame with one row per usage: word, period, text, start, end, doc_id."""
    return pd.DataFrame([asdict(u) for u in usages], columns=["word", "period", "text", "start", "end", "doc_id"])


class PeriodCorpus:
    """Documents tagged with an ordered period: ``doc_id, period, period_order, text[, date]``."""

    def __init__(self, df: pd.DataFrame, periods: list):
        self.df = df
        self.periods = list(periods)

    @classmethod
    def from_frame(cls, df: pd.DataFrame, *, order: list | None = None, periods: list | None = None) -> "PeriodCorpus":
        """Validate documents. ``order`` lists the period labels in time order; every listed period needs documents."""
        if not isinstance(df, pd.DataFrame):
            raise DataError(f"PeriodCorpus.from_frame expects a pandas DataFrame, got {type(df).__name__}.")
        require_columns(df, ("period", "text"), "PeriodCorpus")
        require_scalars(df, ("period", "text", "doc_id", "period_order"), "PeriodCorpus")
        if df.empty:
            raise DataError("PeriodCorpus input has no rows. Fix: pass at least one document.")
        if order is not None and (isinstance(order, (str, bytes)) or not hasattr(order, "__iter__")):
            raise DataError(f"order= must be a list of period labels in time order, got {order!r}.")
        if periods is not None and (isinstance(periods, (str, bytes)) or not hasattr(periods, "__iter__")):
            raise DataError(f"periods= must be a list of period labels, got {periods!r}.")
        df = df.reset_index(drop=True).copy()
        if "doc_id" not in df:
            df["doc_id"] = [f"d{i}" for i in range(len(df))]
        require_ids(df, "doc_id", "missing document ids", DOC_ID_FIX)
        require_unique(df, "doc_id", "duplicate document ids", DOC_ID_UNIQUE_FIX)
        if df["period"].isna().any():
            raise data_error("period", "documents without a period", "give every document a period or drop it",
                             rows=np.flatnonzero(df["period"].isna().to_numpy()).tolist())
        require_texts(df, "doc_id", "documents")

        if order is None and "period_order" in df:
            rank = pd.to_numeric(df["period_order"], errors="coerce")
            bad = rank.isna() | ~np.isfinite(rank.astype(float))
            if bad.any():
                raise data_error("period_order", "values that are not numbers", "give each period a number "
                                 "(its position in time), or drop the column", rows=np.flatnonzero(bad.to_numpy()).tolist())
            per = pd.DataFrame({"period": df["period"], "rank": rank}).drop_duplicates()
            clash = per["period"].duplicated(keep=False)
            if clash.any():
                raise data_error("period_order", f"period(s) {sorted(per.loc[clash, 'period'].unique().tolist(), key=str)[:5]} "
                                 "have more than one period_order", "give every row of a period the same period_order")
            order = per.sort_values("rank", kind="stable")["period"].tolist()
        elif order is None:
            order = infer_label_order(df["period"], "period", "use one type for every period label (all numbers, "
                                      "or all strings), or pass order=[...]", "order=[...]")
        order = list(order)
        if not all(isinstance(p, Hashable) for p in [*order, *(periods or [])]):
            raise DataError(f"order=/periods= must list period labels (numbers or strings), got {order!r}.")
        if len(set(order)) != len(order):
            raise DataError(f"order= lists a period twice: {order}. Fix: list every period once, in time order.")
        unknown = sorted(set(df["period"]) - set(order), key=str)
        if unknown:
            raise data_error("period", f"periods {unknown} are not in order={order}", "add them to order= or drop them")
        declared = list(periods) if periods is not None else order
        counts = df["period"].value_counts()
        empty_periods = [p for p in declared if counts.get(p, 0) == 0]
        if empty_periods:
            raise data_error("period", f"period(s) {empty_periods} have no documents",
                             "add documents for them, or remove them from order=/periods=")
        rank = {p: i for i, p in enumerate(order)}
        df["period_order"] = df["period"].map(rank).astype(np.int64)
        cols = ["doc_id", "period", "period_order", "text"] + [c for c in df.columns
                                                               if c not in ("doc_id", "period", "period_order", "text")]
        return cls(df[cols], [p for p in order if counts.get(p, 0) > 0])

    @classmethod
    def from_csv(cls, path: str | Path, **kwargs) -> "PeriodCorpus":
        """Read a CSV with columns period, text (and optionally doc_id, date, period_order)."""
        return cls.from_frame(read_frame(pd.read_csv, path, what="period corpus CSV",
                                         dtype={"doc_id": str, "text": str}), **kwargs)

    def __len__(self) -> int:
        return len(self.df)

    def require_periods(self, n: int = 2, what: str = "this analysis") -> "PeriodCorpus":
        """Raise a DataError unless the corpus has at least ``n`` periods (e.g. semantic change needs 2)."""
        if len(self.periods) < n:
            raise DataError(f"{what} needs at least {n} periods, but the corpus has {len(self.periods)} "
                            f"({self.periods}). Fix: give documents from {n} or more periods (column 'period').")
        return self

    def __repr__(self) -> str:
        sizes = self.df["period"].value_counts()
        return "PeriodCorpus(" + ", ".join(f"{p}: {sizes.get(p, 0)} docs" for p in self.periods) + ")"

    def sentences(self, period) -> list[str]:
        """All documents of one period, in corpus order."""
        if period not in self.periods:
            raise DataError(f"period {period!r} is not in this corpus. Fix: use one of {self.periods}.")
        return self.df.loc[self.df["period"] == period, "text"].tolist()

    def find_usages(self, word: str, periods: list | None = None, max_per_period: int | None = None,
                    seed: int = 0) -> list[TargetUsage]:
        """Whole-word, case-insensitive occurrences of ``word``; a seeded sample of at most ``max_per_period`` per period."""
        if not isinstance(word, str) or not word.strip():
            raise DataError(f"target word must be a non-empty string, got {word!r}.")
        pattern = re.compile(rf"(?<!\w){re.escape(word.strip())}(?!\w)", re.IGNORECASE)
        rng = np.random.default_rng(seed)
        out: list[TargetUsage] = []
        for period in (self.periods if periods is None else periods):
            sub = self.df[self.df["period"] == period]
            found = [TargetUsage(word, period, text, m.start(), m.end(), doc_id)
                     for doc_id, text in zip(sub["doc_id"], sub["text"]) for m in pattern.finditer(text)]
            if max_per_period is not None and len(found) > max_per_period:
                keep = np.sort(rng.choice(len(found), size=max_per_period, replace=False))
                found = [found[i] for i in keep]
            out.extend(found)
        return out
