"""Configuration dataclasses for the planted-truth world: one per part, plus the whole world.

Every field is a documented knob that a notebook can expose as a "what if the world were
different" widget. Defaults are sized so the whole committed world stays well under 2 MB and a
notebook trains on any part of it in a couple of minutes on a 2-core CPU.
Invalid values raise `ValueError` naming the field and the fix (`validate()` is called by every
generator).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Optional


def _check(cond: bool, cls: str, name: str, value: Any, fix: str) -> None:
    """Raise a ValueError naming the config field, its bad value, and the fix."""
    if not cond:
        raise ValueError(f"{cls}.{name}={value!r} is invalid: {fix}")


def _prob(obj: Any, name: str) -> None:
    v = getattr(obj, name)
    _check(isinstance(v, (int, float)) and 0.0 <= v <= 1.0, type(obj).__name__, name, v,
           "give a probability in [0, 1]")


def _pos_int(obj: Any, name: str, minimum: int = 1) -> None:
    v = getattr(obj, name)
    _check(isinstance(v, int) and not isinstance(v, bool) and v >= minimum,
           type(obj).__name__, name, v, f"give an integer >= {minimum}")


def _range(obj: Any, name: str, minimum: int) -> None:
    v = getattr(obj, name)
    ok = (isinstance(v, (tuple, list)) and len(v) == 2 and all(isinstance(x, int) for x in v)
          and minimum <= v[0] <= v[1])
    _check(ok, type(obj).__name__, name, v, f"give (low, high) integers with {minimum} <= low <= high")


def _seed(obj: Any) -> None:
    v = obj.seed
    _check(isinstance(v, int) and not isinstance(v, bool) and v >= 0, type(obj).__name__, "seed", v,
           "give a non-negative integer seed")


# --------------------------------------------------------------------------------------------
# 1. timelines of posts (stream classification)
# --------------------------------------------------------------------------------------------
@dataclass
class StreamWorldConfig:
    """Timelines of mood posts with planted switches ("IS") and escalations ("IE")."""

    n_timelines: int = 120                     # number of timelines (one author each)
    posts_per_timeline: tuple = (10, 25)       # (min, max) posts per timeline, inclusive
    switch_rate: float = 0.10                  # per post: chance the mood flips (label "IS", kind "text")
    time_switch_rate: float = 0.16             # per post: chance of a switch only the time gap shows
                                               # (label "IS", kind "time": the text continues the mood
                                               # as an "O" post would; the author returns after days
                                               # of silence, a gap no ordinary post has)
    escalation_rate: float = 0.08              # per post: chance an escalation run starts ("IE")
    escalation_length: tuple = (2, 3)          # (min, max) posts in one escalation run
    burstiness: float = 0.6                    # share of ordinary gaps that are bursts (s-min)
    time_signal: float = 0.8                   # how strongly the gaps of text-told switches and
                                               # escalations track their labels (0 = not at all):
                                               # switches follow silences, escalations bursts; the
                                               # time switches (time_switch_rate) keep their return gap
    cue_rate: float = 0.6                      # share of IS/IE posts with an explicit cue phrase
    noise: float = 0.05                        # share of neutral small-talk posts (label "O")
    start: str = "2023-01-01"                  # first possible timeline start (UTC date)
    span_days: int = 300                       # timelines start uniformly within this span
    seed: int = 0

    def validate(self) -> "StreamWorldConfig":
        _pos_int(self, "n_timelines", 2)
        _range(self, "posts_per_timeline", 2)
        _range(self, "escalation_length", 1)
        for name in ("switch_rate", "time_switch_rate", "escalation_rate", "burstiness", "time_signal",
                     "cue_rate", "noise"):
            _prob(self, name)
        total = self.switch_rate + self.time_switch_rate + self.escalation_rate
        _check(total <= 0.9, "StreamWorldConfig", "switch_rate+time_switch_rate+escalation_rate", total,
               "keep switch_rate + time_switch_rate + escalation_rate <= 0.9 so ordinary posts remain")
        # one uniform draw per post picks small talk (noise) first, then the switch kinds: past 1 the
        # time switches would be cut silently
        _check(self.noise + total <= 1.0, "StreamWorldConfig", "noise+switch_rate+time_switch_rate+escalation_rate",
               self.noise + total, "keep noise + switch_rate + time_switch_rate + escalation_rate <= 1 (lower noise)")
        _pos_int(self, "span_days", 1)
        try:
            import pandas as pd
            pd.Timestamp(self.start)
        except Exception:  # noqa: BLE001 - any parse failure is the user's input
            _check(False, "StreamWorldConfig", "start", self.start, "give an ISO date like '2023-01-01'")
        _seed(self)
        return self


# --------------------------------------------------------------------------------------------
# 2. two-period corpus (semantic change)
# --------------------------------------------------------------------------------------------
DEFAULT_TARGETS = ("tweet", "cell", "mouse", "troll", "stream", "cloud", "viral", "spam",
                   "tablet", "web", "tape", "film", "letter")
DEFAULT_CONTROLS = ("table", "river", "bread", "window", "chair", "garden")


@dataclass
class ChangeWorldConfig:
    """Two periods, "old" < "new"; target words gain or lose a sense by planted amounts."""

    targets: tuple = DEFAULT_TARGETS           # changing words (see text_senses.TARGETS)
    controls: tuple = DEFAULT_CONTROLS         # stable single-sense control words
    change_strength: float = 1.0               # scales every planted share change (0 = none)
    n_sentences_per_word_period: int = 60      # usages per word and period
    threshold: float = 0.3                     # binary = graded > threshold
    noise: float = 0.05                        # share of usages in vague, sense-ambiguous wording
    n_probes_per_word: int = 30                # vague probe sentences per word, the same ones in both periods
    cue_share: float = 0.5                     # share of usages written as a neutral frame + one sense cue word
    seed: int = 0

    def validate(self) -> "ChangeWorldConfig":
        from .text_senses import CONTROLS, TARGETS

        for name, table in (("targets", TARGETS), ("controls", CONTROLS)):
            words = getattr(self, name)
            _check(isinstance(words, (tuple, list)) and all(isinstance(w, str) for w in words),
                   "ChangeWorldConfig", name, words, "give a tuple of words")
            bad = [w for w in words if w not in table]
            _check(not bad, "ChangeWorldConfig", name, tuple(bad),
                   f"unknown word(s); choose from {sorted(table)}")
            _check(len(set(words)) == len(words), "ChangeWorldConfig", name, words, "remove duplicates")
        _check(len(self.targets) + len(self.controls) >= 2, "ChangeWorldConfig", "targets", self.targets,
               "give at least two words in targets + controls")
        _check(isinstance(self.change_strength, (int, float)) and 0.0 <= self.change_strength <= 1.5,
               "ChangeWorldConfig", "change_strength", self.change_strength, "give a number in [0, 1.5]")
        _pos_int(self, "n_sentences_per_word_period", 4)
        _check(isinstance(self.n_probes_per_word, int) and self.n_probes_per_word >= 0, "ChangeWorldConfig",
               "n_probes_per_word", self.n_probes_per_word, "give an integer >= 0 (0 = rank on the usages themselves)")
        _prob(self, "threshold")
        _prob(self, "noise")
        _prob(self, "cue_share")
        _seed(self)
        return self


# --------------------------------------------------------------------------------------------
# 3. social graph over time slices (diffusion)
# --------------------------------------------------------------------------------------------
@dataclass
class SocialWorldConfig:
    """Units on a community graph; a new sense of `word` spreads by walk or by flight."""

    n_units: int = 24                          # units "u00".."u23"
    n_communities: int = 3                     # stochastic-block-model communities (equal sizes)
    n_slices: int = 5                          # time slices 0..n_slices-1
    mode: str = "walk"                         # "walk": to neighbours of adopters;
                                               # "flight": jumps to units with no adopting neighbour
    speed: int = 3                             # new adopters per slice after slice 0
    n_seeds: int = 3                           # adopters at slice 0
    p_in: float = 0.3                          # edge probability inside a community
    p_out: float = 0.01                        # edge probability between communities
    word: str = "cloud"                        # the first changing word (text_social.PAIRS); the
                                               # notebook's default word, its `anchor` the new companion
    n_changing: int = 4                        # changing words: `word`, then the next in PAIR_ORDER;
                                               # each spreads by `mode` from its own seeds
    n_stable: int = 2                          # unchanged words (text_social.STABLE): companions 50/50
    docs_per_word: int = 3                     # "paired" documents per (unit, slice): every target word
                                               # once, each with its companion
    paired_layout: str = "senses"              # "senses": each usage document writes ONE changing word in
                                               # a sentence of its sense (new where the unit has adopted,
                                               # old elsewhere; varied context words, as real text) and
                                               # names its companion; "all": each paired document lists
                                               # every changing word next to a bare companion; "one": as
                                               # "all" with ONE changing word per document
    held_out_cells: float = 0.1                # "senses": share of (unit, slice) cells, per changing
                                               # word, where the word is never written (what only a
                                               # model with unit and time input can fill in)
    bare_docs: int = 1                         # companion-free usages per (unit, slice, changing word)
    chatter_docs: int = 1                      # community-topic documents per (unit, slice)
    noise: float = 0.0                         # chance a usage takes the other companion than planted
    seed: int = 0

    def validate(self) -> "SocialWorldConfig":
        from .text_social import PAIRS, STABLE

        _pos_int(self, "n_units", 4)
        _pos_int(self, "n_communities", 1)
        _check(self.n_communities <= self.n_units, "SocialWorldConfig", "n_communities",
               self.n_communities, "use at most n_units communities")
        _pos_int(self, "n_slices", 2)
        _check(self.mode in ("walk", "flight"), "SocialWorldConfig", "mode", self.mode,
               "use 'walk' or 'flight'")
        _check(self.paired_layout in ("senses", "all", "one"), "SocialWorldConfig", "paired_layout",
               self.paired_layout, "use 'senses' (one word per document, in a sentence of its sense), 'all' "
               "(every changing word in each paired document) or 'one' (one per document)")
        _prob(self, "held_out_cells")
        _pos_int(self, "speed", 0)
        _pos_int(self, "n_seeds", 1)
        _check(self.n_seeds <= self.n_units, "SocialWorldConfig", "n_seeds", self.n_seeds,
               "use at most n_units seeds")
        _prob(self, "p_in")
        _prob(self, "p_out")
        _check(self.word in PAIRS, "SocialWorldConfig", "word", self.word, f"choose from {sorted(PAIRS)}")
        _pos_int(self, "n_changing", 1)
        _check(self.n_changing <= len(PAIRS), "SocialWorldConfig", "n_changing", self.n_changing,
               f"use at most {len(PAIRS)} (text_social.PAIRS)")
        _pos_int(self, "n_stable", 0)
        _check(self.n_stable <= len(STABLE), "SocialWorldConfig", "n_stable", self.n_stable,
               f"use at most {len(STABLE)} (text_social.STABLE)")
        _pos_int(self, "docs_per_word", 1)
        _pos_int(self, "bare_docs", 0)
        _pos_int(self, "chatter_docs", 0)
        _prob(self, "noise")
        _seed(self)
        return self


# --------------------------------------------------------------------------------------------
# 4. yearly documents (future text)
# --------------------------------------------------------------------------------------------
@dataclass
class YearlyWorldConfig:
    """Abstract-like documents per year; trend words follow planted rate curves."""

    years: tuple = (2010, 2021)                # (first, last) year, inclusive
    docs_per_year: int = 60                    # documents per year
    trend_words: Optional[tuple] = None        # words from text_yearly.TRENDS (None = all)
    strength: float = 1.0                      # scales each curve's swing around its mean rate
    noise: float = 0.0                         # std of random jitter added to each planted rate
    seed: int = 0

    def validate(self) -> "YearlyWorldConfig":
        from .text_yearly import TRENDS

        _range(self, "years", 1900)
        _check(self.years[1] - self.years[0] >= 2, "YearlyWorldConfig", "years", self.years,
               "give at least three years")
        _pos_int(self, "docs_per_year", 5)
        if self.trend_words is not None:
            bad = [w for w in self.trend_words if w not in TRENDS]
            _check(not bad and len(self.trend_words) > 0, "YearlyWorldConfig", "trend_words",
                   self.trend_words, f"choose one or more of {sorted(TRENDS)}")
            _check(len(set(self.trend_words)) == len(self.trend_words), "YearlyWorldConfig", "trend_words",
                   self.trend_words, "remove duplicates (each word is planted once)")
        _check(isinstance(self.strength, (int, float)) and 0.0 <= self.strength <= 1.5,
               "YearlyWorldConfig", "strength", self.strength, "give a number in [0, 1.5]")
        _check(isinstance(self.noise, (int, float)) and 0.0 <= self.noise <= 0.2,
               "YearlyWorldConfig", "noise", self.noise, "give a jitter std in [0, 0.2]")
        _seed(self)
        return self


# --------------------------------------------------------------------------------------------
# the whole world
# --------------------------------------------------------------------------------------------
@dataclass
class WorldConfig:
    """All four parts. `seed`, when not None, overrides every part's own seed."""

    seed: Optional[int] = 0
    stream: StreamWorldConfig = field(default_factory=StreamWorldConfig)
    change: ChangeWorldConfig = field(default_factory=ChangeWorldConfig)
    social: SocialWorldConfig = field(default_factory=SocialWorldConfig)
    yearly: YearlyWorldConfig = field(default_factory=YearlyWorldConfig)

    def resolved(self) -> "WorldConfig":
        """The config with the world seed copied into every part (what `generate_world` runs)."""
        if self.seed is None:
            return dataclasses.replace(self)
        _check(isinstance(self.seed, int) and self.seed >= 0, "WorldConfig", "seed", self.seed,
               "give a non-negative integer seed or None")
        return WorldConfig(
            seed=self.seed,
            stream=dataclasses.replace(self.stream, seed=self.seed),
            change=dataclasses.replace(self.change, seed=self.seed),
            social=dataclasses.replace(self.social, seed=self.seed),
            yearly=dataclasses.replace(self.yearly, seed=self.seed),
        )

    def to_dict(self) -> dict:
        """Plain JSON-able dict (tuples become lists)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "WorldConfig":
        """Inverse of `to_dict`; lists become tuples again; unknown keys are an error."""
        parts = {"stream": StreamWorldConfig, "change": ChangeWorldConfig,
                 "social": SocialWorldConfig, "yearly": YearlyWorldConfig}
        unknown = set(d) - {"seed", *parts}
        if unknown:
            raise ValueError(f"WorldConfig: unknown key(s) {sorted(unknown)} in config; "
                             f"expected seed, {', '.join(parts)}")
        kw: dict = {"seed": d.get("seed")}
        for name, sub in parts.items():
            if name in d:
                kw[name] = _sub_from_dict(sub, d[name])
        return cls(**kw)


def _sub_from_dict(cls: type, d: dict) -> Any:
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = set(d) - names
    if unknown:
        raise ValueError(f"{cls.__name__}: unknown key(s) {sorted(unknown)}; expected {sorted(names)}")
    return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in d.items()})
