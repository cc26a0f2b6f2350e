"""Notebook 00's key numbers: the planted world's facts under their ``build/summary.json`` names.

    from tempo_analysis.overview import key_numbers
    record_summary(key_numbers(world.summary(), median_gap_h), notebook="00_overview")
"""
from __future__ import annotations

import math
from typing import Mapping

GAP_LABELS = ("O", "IS", "IE")   # ordinary posts, switches, escalations


def key_numbers(summary: Mapping, median_gap_h: Mapping) -> dict:
    """``world.<fact>`` for each fact of ``summary`` (``World.summary()``), then
    ``world.median_gap_h.<label>``: the median gap before a post of each label, in hours (NaN for a
    label the timelines lack; ``record_summary`` writes it as null)."""
    numbers = {f"world.{key}": value for key, value in summary.items()}
    numbers.update({f"world.median_gap_h.{label}": float(median_gap_h.get(label, math.nan)) for label in GAP_LABELS})
    return numbers
