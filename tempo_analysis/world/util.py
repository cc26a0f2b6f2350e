"""Small shared helpers for the world generators: seeded picking, template filling, word spans."""

from __future__ import annotations

import re
from typing import Sequence

import numpy as np


def pick(rng: np.random.Generator, items: Sequence):
    """One item, uniformly (uses exactly one draw from `rng`)."""
    return items[int(rng.integers(len(items)))]


def capitalise(text: str) -> str:
    """Upper-case the first character only (keeps the rest, unlike str.capitalize)."""
    return text[:1].upper() + text[1:]


def fill(template: str, rng: np.random.Generator, slots: dict) -> str:
    """Fill every {slot} of `template` with a seeded choice from `slots[slot]`; capitalise."""
    names = sorted(set(re.findall(r"\{(\w+)\}", template)))
    values = {name: pick(rng, slots[name]) for name in names}
    return capitalise(template.format(**values))


class Cycler:
    """Draws items without replacement, reshuffling when exhausted: spreads template use evenly."""

    def __init__(self, items: Sequence, rng: np.random.Generator):
        self.items, self.rng, self.queue = list(items), rng, []

    def next(self):
        if not self.queue:
            self.queue = [self.items[i] for i in self.rng.permutation(len(self.items))]
        return self.queue.pop()


def word_span(text: str, word: str) -> tuple[int, int]:
    """(start, end) of the single whole-word, case-insensitive occurrence of `word` in `text`."""
    hits = [m.span() for m in re.finditer(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text, flags=re.IGNORECASE)]
    if len(hits) != 1:
        raise ValueError(f"expected exactly one whole-word {word!r} in {text!r}, found {len(hits)}; "
                         "fix the template in tempo_analysis/world/text_*.py")
    return hits[0]


def count_word(text: str, word: str) -> int:
    """Whole-word, case-insensitive occurrences of `word` in `text`."""
    return len(re.findall(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text, flags=re.IGNORECASE))
