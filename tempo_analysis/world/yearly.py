"""Yearly abstract-like documents whose trend words follow planted rate curves (future-text world).

For each year y and trend word w the planted `rate` is the share of that year's documents that
use w (once each): rate = m + strength * (curve(x) - m) [+ N(0, noise)], clipped to [0, 0.95],
where x runs 0..1 over the years and m is the curve's mean over the years (so `strength` 0
flattens every trend to its mean). Exactly round(rate * docs_per_year) documents of year y carry
w (`n_docs`), chosen at random; trend words appear nowhere else. Trends are "rise", "fall",
"flat" and "burst" (a bump that rises and falls back).
"""

from __future__ import annotations

from typing import Optional

import numpy as np
import pandas as pd

from tempo_analysis.data.periods import PeriodCorpus

from .config import YearlyWorldConfig
from .text_yearly import (DATASETS, DOMAINS, INTROS, METHODS, NUMBERS, RESULTS, TASKS, TREND_FRAMES, TREND_PHRASES,
                          TRENDS, trend_sentence)
from .util import Cycler, fill, pick

SLOTS = {"task": TASKS, "dataset": DATASETS, "domain": DOMAINS, "number": NUMBERS}


def planted_rates(cfg: YearlyWorldConfig, rng: Optional[np.random.Generator] = None) -> pd.DataFrame:
    """word, year, trend, rate: the planted document share per word and year."""
    first, last = cfg.years
    years = list(range(first, last + 1))
    xs = np.linspace(0.0, 1.0, len(years))
    words = list(cfg.trend_words) if cfg.trend_words else list(TRENDS)
    rows = []
    for w in words:
        trend, curve = TRENDS[w]
        c = np.array([curve(x) for x in xs])
        r = c.mean() + cfg.strength * (c - c.mean())
        if cfg.noise > 0 and rng is not None:
            r = r + cfg.noise * rng.standard_normal(len(r))
        r = np.clip(r, 0.0, 0.95)
        rows += [dict(word=w, year=y, trend=trend, rate=round(float(v), 6)) for y, v in zip(years, r)]
    return pd.DataFrame(rows, columns=["word", "year", "trend", "rate"])


def yearly_frames(cfg: YearlyWorldConfig) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(docs, truth). docs: doc_id, period (int year), text. truth: word, year, trend, rate,
    n_docs (documents that carry the word), doc_share (n_docs / docs_per_year)."""
    cfg.validate()
    rng = np.random.default_rng(cfg.seed)
    truth = planted_rates(cfg, rng)
    D = cfg.docs_per_year
    truth["n_docs"] = [int(round(r * D)) for r in truth.rate]
    truth["doc_share"] = (truth.n_docs / D).round(6)
    intros, methods, results = Cycler(INTROS, rng), Cycler(METHODS, rng), Cycler(RESULTS, rng)
    frames = Cycler(TREND_FRAMES, rng)
    trend_cyc = {w: Cycler(TREND_PHRASES[w], rng) for w in truth.word.unique()}
    rows = []
    for year, part in truth.groupby("year", sort=True):
        carried: list[list[str]] = [[] for _ in range(D)]
        for w, n in zip(part.word, part.n_docs):
            for i in rng.permutation(D)[:n]:
                carried[int(i)].append(w)
        for k in range(D):
            task = pick(rng, TASKS)
            slots = {**SLOTS, "task": [task]}
            middle = [fill(trend_sentence(frames.next(), trend_cyc[w].next()), rng, slots) for w in carried[k]]
            middle += [fill(methods.next(), rng, slots) for _ in range(1 + int(rng.random() < 0.4))]
            middle = [middle[i] for i in rng.permutation(len(middle))]
            sents = [fill(intros.next(), rng, slots)] + middle + [fill(results.next(), rng, slots)]
            rows.append(dict(doc_id=f"y{year}-{k:03d}", period=int(year), text=" ".join(sents)))
    docs = pd.DataFrame(rows, columns=["doc_id", "period", "text"])
    truth = truth[["word", "year", "trend", "rate", "n_docs", "doc_share"]]
    return docs, truth.reset_index(drop=True)


def generate_yearly(cfg: Optional[YearlyWorldConfig] = None):
    """(PeriodCorpus with int-year periods in order, trend_truth DataFrame)."""
    cfg = cfg or YearlyWorldConfig()
    docs, truth = yearly_frames(cfg)
    years = sorted(docs.period.unique().tolist())
    return PeriodCorpus.from_frame(docs, order=years, periods=years), truth
