"""Per-year token counts and the frequency feature ``log((c + 1) / (N + |V|))`` of the paper.

``FrequencyTable`` holds counts ``[Y, V]`` for a contiguous run of years (int), counted with one
tokenizer. Rules (each documented where it applies):

- Zero counts: add-one smoothing in the feature, so every token has a finite value.
- A year missing from the data inside the range gets a *carry-forward* fill: it copies the
  previous year's counts (no information from later years leaks backwards). A warning names it.
- The feature table is tied to the tokenizer that counted it: using another vocabulary is an
  error (``check_tokenizer``), because token ids would silently point at other words.
- ``with_trend`` makes a what-if copy where some tokens' counts rise over the last years.
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np
import torch
from safetensors import safe_open
from safetensors.torch import save_file
from tqdm.auto import tqdm

from tempo_analysis.data.errors import DataError
from tempo_analysis.data.yearly import YEAR_RANGE, check_year_range
from tempo_analysis.future_text.tokenizer import vocab_fingerprint


@dataclass
class FrequencyTable:
    """Token counts per year. ``years`` contiguous ints; ``counts[i, v]`` = count of v in years[i]."""

    years: list[int]
    counts: np.ndarray                     # [Y, V] float64 (float so what-if trends can scale)
    fingerprint: str                       # vocab_fingerprint of the counting tokenizer
    filled_years: list[int] = field(default_factory=list)  # years carried forward (no documents)

    # ------------------------------------------------------------------------------------------
    @classmethod
    def from_texts(cls, texts: Sequence[str], years: Sequence[int], tokenizer, *, year_range=None,
                   allowed_years=YEAR_RANGE, progress: bool = False) -> "FrequencyTable":
        """Count tokens per year. ``year_range=(first, last)`` declares the years to cover (default:
        min..max of ``years``; years need not be contiguous: gaps get the documented fill). Years
        outside ``allowed_years`` (1000-2100) are rejected as typos unless the range is widened."""
        years = [int(y) for y in years]
        check_year_range(years, allowed_years)
        if year_range is not None:
            check_year_range(year_range, allowed_years, column="year_range")
        if len(texts) != len(years):
            raise DataError(f"column 'year': {len(years)} years for {len(texts)} texts. Fix: give one year per text")
        if not years:
            raise DataError("column 'text': no documents to count. Fix: give at least one (year, text) row")
        first, last = year_range if year_range is not None else (min(years), max(years))
        outside = sorted({y for y in years if not first <= y <= last})
        if outside:
            raise DataError(f"column 'year': years {outside[:5]} fall outside year_range=({first}, {last}). "
                            "Fix: widen year_range or drop those rows")
        V = len(tokenizer)
        counts = np.zeros((last - first + 1, V), dtype=np.float64)
        seen = np.zeros(last - first + 1, dtype=bool)
        batch = 256
        for s in tqdm(range(0, len(texts), batch), disable=not progress, desc="counting tokens"):
            enc = tokenizer(list(texts[s:s + batch]), add_special_tokens=False)["input_ids"]
            for ids, y in zip(enc, years[s:s + batch]):
                np.add.at(counts[y - first], np.asarray(ids, dtype=np.int64), 1.0)
                seen[y - first] = True
        return cls._with_fill(list(range(first, last + 1)), counts, seen, vocab_fingerprint(tokenizer))

    @classmethod
    def _with_fill(cls, years, counts, seen, fingerprint) -> "FrequencyTable":
        """Carry-forward fill for years without documents (documented rule, with a warning)."""
        if not seen.any():
            raise DataError("column 'year': no year in the range has documents. Fix: pass texts for these years")
        filled = [y for y, s in zip(years, seen) if not s]
        if filled:
            first_seen = int(np.argmax(seen))
            lead = [y for y in filled if y < years[first_seen]]
            if lead:
                raise DataError(f"column 'year': the history starts with year(s) {lead} that have no documents. "
                                "Fix: start year_range at the first year with documents")
            for i, s in enumerate(seen):
                if not s:
                    counts[i] = counts[i - 1]
            warnings.warn(f"FrequencyTable: no documents for year(s) {filled}; carrying the previous year's "
                          "counts forward (documented fill). Add documents for those years to avoid it.",
                          stacklevel=3)
        return cls(years=list(years), counts=counts, fingerprint=fingerprint, filled_years=filled)

    # ------------------------------------------------------------------------------------------
    @property
    def vocab_size(self) -> int:
        return self.counts.shape[1]

    def features(self) -> np.ndarray:
        """``log((c + 1) / (N + |V|))`` per year and token, float32 ``[Y, V]`` (add-one smoothing)."""
        n = self.counts.sum(axis=1, keepdims=True)
        return np.log((self.counts + 1.0) / (n + self.vocab_size)).astype(np.float32)

    def relative(self) -> np.ndarray:
        """Unsmoothed relative frequency ``c / N`` ``[Y, V]`` (for plots)."""
        n = np.maximum(self.counts.sum(axis=1, keepdims=True), 1.0)
        return self.counts / n

    def year_index(self, year: int) -> int:
        if year not in self.years:
            raise DataError(f"column 'year': year {year} is not in the frequency table ({self.years[0]}-"
                            f"{self.years[-1]}). Fix: count texts for that year or pick a year in the range")
        return self.years.index(year)

    def check_tokenizer(self, tokenizer) -> None:
        """Error when ``tokenizer`` is not the one that counted this table (different vocabulary)."""
        fp, V = vocab_fingerprint(tokenizer), len(tokenizer)
        if fp != self.fingerprint or V != self.vocab_size:
            raise DataError(
                f"tokenizer: vocabulary (size {V}, fingerprint {fp}) differs from the frequency table's "
                f"(size {self.vocab_size}, fingerprint {self.fingerprint}); token ids would point at other "
                "words. Fix: rebuild the table with FrequencyTable.from_texts(..., tokenizer) using this "
                "tokenizer, or load the tokenizer saved with the model")

    def check_window(self, window: int) -> None:
        """A window of W previous years needs at least W + 1 years in the table (W inputs + 1 target)."""
        if not isinstance(window, int) or window < 1:
            raise DataError(f"window={window!r}: use a positive integer number of previous years")
        if window + 1 > len(self.years):
            raise DataError(
                f"window={window} needs {window + 1} years (W previous years + the year predicted) but the "
                f"history has {len(self.years)} ({self.years[0]}-{self.years[-1]}). Fix: use window <= "
                f"{len(self.years) - 1} or give more years")

    # ------------------------------------------------------------------------------------------
    def with_trend(self, token_ids: Sequence[int], last: int = 3, factor: float = 3.0) -> "FrequencyTable":
        """What-if copy: multiply the counts of ``token_ids`` by factor^(k/last) over the last ``last`` years.

        Year ``-last`` gets factor^(1/last), ..., the final year factor^1: a steady rise. Tokens with
        zero counts are first given one occurrence so the rise is visible; ``factor=1`` returns the
        counts unchanged (the as-trained table).
        """
        if last < 1 or last > len(self.years):
            raise DataError(f"last={last}: the table has {len(self.years)} years; use 1 <= last <= {len(self.years)}")
        ids = np.asarray(sorted(set(int(t) for t in token_ids)), dtype=np.int64)
        if ids.size == 0 or ids.min() < 0 or ids.max() >= self.vocab_size:
            raise DataError(f"token_ids={list(token_ids)[:5]}: give ids in [0, {self.vocab_size})")
        counts = self.counts.copy()
        Y = len(self.years)
        for k in range(1, last + 1):
            row = Y - last - 1 + k
            if factor != 1:
                counts[row, ids] = np.maximum(counts[row, ids], 1.0) * factor ** (k / last)
        return FrequencyTable(list(self.years), counts, self.fingerprint, list(self.filled_years))

    def truncate(self, last_year: int) -> "FrequencyTable":
        """The table up to and including ``last_year``."""
        i = self.year_index(last_year)
        return FrequencyTable(self.years[:i + 1], self.counts[:i + 1].copy(), self.fingerprint,
                              [y for y in self.filled_years if y <= last_year])

    # ------------------------------------------------------------------------------------------
    def save(self, path) -> None:
        """safetensors (counts) with the years and fingerprint in the metadata."""
        meta = {"years": json.dumps(self.years), "fingerprint": self.fingerprint,
                "filled_years": json.dumps(self.filled_years)}
        # a table restricted to some tokens is a strided view: safetensors stores contiguous tensors only
        save_file({"counts": torch.from_numpy(np.ascontiguousarray(self.counts))}, str(path), metadata=meta)

    @classmethod
    def load(cls, path) -> "FrequencyTable":
        with safe_open(str(Path(path)), framework="np") as f:
            meta = f.metadata()
            counts = f.get_tensor("counts")
        return cls(json.loads(meta["years"]), counts, meta["fingerprint"], json.loads(meta["filled_years"]))
