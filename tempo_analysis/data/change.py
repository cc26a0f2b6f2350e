"""ChangeData: what semantic change ranking reads.

A two-or-more-period :class:`~tempo_analysis.data.PeriodCorpus`, the target words to rank, an
optional truth table (``word`` and ``graded`` and/or ``binary``), and optional given usages
(DWUG and the planted world give each usage's character offsets; otherwise usages are searched
in the corpus). Ranking compares the first and the last period.

Built from a ``--data`` spec by :func:`tempo_analysis.resolve.load_change_data`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from .digest import frame_digest
from .periods import PeriodCorpus, TargetUsage

__all__ = ["ChangeData"]


@dataclass
class ChangeData:
    """A two-or-more-period corpus, its targets, optional truth, and optional given usages (DWUG)."""

    name: str
    corpus: PeriodCorpus
    targets: list[str]
    truth: pd.DataFrame | None = None
    usages: list[TargetUsage] | None = None      # given usages (DWUG, planted world); else searched
    notes: list[str] = field(default_factory=list)
    # sentences each period's corpus stands for, where the loader kept only some (SemEval keeps the
    # target-bearing sentences); None = the corpus's own sentence counts. Frequencies divide by these.
    period_sizes: dict | None = None

    @property
    def periods(self):
        return list(self.corpus.periods)

    @property
    def compared(self):
        """The two periods Algorithm 1 compares: the first and the last."""
        return [self.periods[0], self.periods[-1]]

    def fingerprint(self) -> str:
        """A digest of what a ranking reads: the corpus (periods and texts, in order), the targets, the
        given usages and the truth. Two ChangeData with the same name but other contents (a world from
        another folder, another sentence cap) differ here; caches key on it."""
        usages = None if self.usages is None else [(u.word, u.period, u.text, u.start, u.end) for u in self.usages]
        truth = None if self.truth is None else self.truth.to_csv(index=False)
        return frame_digest(self.corpus.df, ["period", "text"], list(self.targets), usages, truth, self.period_sizes)

    def sentences_per_period(self) -> dict:
        """{period: sentences it stands for}: ``period_sizes`` where the loader set them, else the corpus's counts."""
        counts = self.corpus.df["period"].value_counts()
        return {p: float(self.period_sizes[p]) if self.period_sizes and p in self.period_sizes
                else float(counts.get(p, 0)) for p in self.periods}

    @classmethod
    def from_usage_corpus(cls, name: str, corpus: PeriodCorpus, truth: pd.DataFrame, *,
                          part: str = "usages") -> "ChangeData":
        """One usage per corpus row (columns ``word``, ``start``, ``end``: the planted world's
        ``periods.csv``); every word of ``truth`` is a target; every row stays in the corpus.

        ``part``: which rows are the usages to rank when a ``probe`` column marks some rows.
        ``"usages"`` (the default): the unmarked rows, whose own words carry their sense, as in real
        text. ``"probes"``: the marked rows, the same sentences in both periods, so that only a model
        that reads time can tell the periods apart. Without marked rows every row is a usage."""
        if part not in ("usages", "probes"):
            raise ValueError(f"part={part!r}: give 'usages' (the sense-bearing sentences) or 'probes' "
                             "(the sentences repeated in both periods).")
        df = corpus.df
        if "probe" in df and (df["probe"] == 1).any():
            df = df[df["probe"] == 1] if part == "probes" else df[df["probe"] != 1]
        elif part == "probes":
            raise ValueError(f"{name}: no row is marked as a probe (column 'probe' = 1); rank part='usages'.")
        usages = [TargetUsage.checked(w, p, t, s, e, surface=w, doc_id=d)
                  for w, p, t, s, e, d in zip(df["word"], df["period"], df["text"], df["start"], df["end"],
                                              df["doc_id"])]
        return cls(name if part == "usages" else f"{name}:probes", corpus, truth["word"].tolist(), truth.copy(),
                   usages)

    def probe_part(self) -> "ChangeData":
        """The same corpus and truth, ranked on its probes (the planted world's sentences that read the
        same in both periods): what only time can tell apart. A ``DataError`` when no row is a probe."""
        from .errors import DataError
        df = self.corpus.df
        if "probe" not in df or not (df["probe"] == 1).any():
            raise DataError(f"{self.name}: no probe sentences (column 'probe' = 1); only the planted world has them.")
        base = self.name[: -len(":probes")] if self.name.endswith(":probes") else self.name
        return ChangeData.from_usage_corpus(base, self.corpus, self.truth, part="probes")
