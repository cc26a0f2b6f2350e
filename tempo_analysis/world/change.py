"""Two-period corpus with planted sense change (the semantic-change world).

Each word has one or two senses. For a changing word, the share of its *changing* sense moves
from `share_old` (period "old") to `share_old + change_strength * (share_new - share_old)`
(period "new"); usages are exact counts, so the realised shares equal the planted ones up to
rounding to 1/n. The truth per word:
  graded = |realised share_new - realised share_old|   (total variation between the periods'
           sense distributions; in [0, 1], linear in change_strength)
  jsd    = Jensen-Shannon divergence (base 2) of the two sense distributions (SemEval-style)
  binary = graded > threshold
  kind   = "gain" (a new sense appears), "loss" (an old sense fades), "stable" (controls)
A `noise` share of usages is written in vague wording that hides the sense (their rows carry
sense "unclear"); they still count towards their planted sense in the truth.

**Probes: change that only time can see.** Besides the usages, every word gets
`n_probes_per_word` vague sentences ("I keep thinking about that cell.") that appear *word for
word in both periods* (rows with `probe = 1`, sense "probe"). Ranking embeds the probes (see
`ChangeData.from_usage_corpus`), so a time-blind model reads the same text twice and scores every
word 0: the planted change is recoverable only by a model that post-trains on the period corpus
(the sense-revealing usages, in the planted shares) and reads the probes under their period.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tempo_analysis.data.periods import PeriodCorpus

from .config import ChangeWorldConfig
from .text_cues import CUES, cue_templates
from .text_senses import (ADJECTIVES, CONTROLS, FRAMES, TARGETS, TEMPLATES, WHEN, WHO, frame, is_imperative,
                          vague_templates)
from .util import Cycler, fill, pick, word_span

FRAME_SHARE = 0.3   # share of (declarative) usages wrapped in a reporting frame, for variety

PERIODS = ("old", "new")


def _jsd(p: np.ndarray, q: np.ndarray) -> float:
    """Jensen-Shannon divergence, base 2, of two distributions over the same senses."""
    m = 0.5 * (p + q)

    def kl(a: np.ndarray, b: np.ndarray) -> float:
        nz = a > 0
        return float(np.sum(a[nz] * np.log2(a[nz] / b[nz])))

    return 0.5 * kl(p, m) + 0.5 * kl(q, m)


def planted_shares(word: str, change_strength: float) -> tuple[float, float]:
    """(old, new) planted share of `word`'s changing sense at this change strength."""
    _, _, _, s_old, s_new = {**TARGETS, **CONTROLS}[word]
    return s_old, float(np.clip(s_old + change_strength * (s_new - s_old), 0.0, 1.0))


def change_frames(cfg: ChangeWorldConfig) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(usages, truth). usages: doc_id, period, word, sense, start, end, text, probe (one usage per
    sentence, offsets into text; probe = 1 for the probe sentences). truth: one row per word (see
    module docstring)."""
    cfg.validate()
    rng = np.random.default_rng(cfg.seed)
    n = cfg.n_sentences_per_word_period
    slots = {"who": WHO, "when": WHEN}
    rows, truth = [], []
    for word in list(cfg.targets) + list(cfg.controls):
        kind, senses, changing, _, _ = {**TARGETS, **CONTROLS}[word]
        shares = planted_shares(word, cfg.change_strength)
        cyclers = {s: Cycler(TEMPLATES[word][s], rng) for s in senses}
        vague = Cycler(vague_templates(word), rng)
        cue_frames = Cycler(cue_templates(word, word in ADJECTIVES), rng)
        cues = {s: Cycler(CUES[word][s], rng) for s in senses}
        realised = []
        for period, share in zip(PERIODS, shares):
            n_change = int(round(share * n)) if len(senses) == 2 else n
            other = [s for s in senses if s != changing]
            labels = [changing] * n_change + [other[0] if other else changing] * (n - n_change)
            is_vague = np.zeros(n, dtype=bool)
            is_vague[rng.permutation(n)[: int(round(cfg.noise * n))]] = True
            is_cue = np.zeros(n, dtype=bool)
            is_cue[rng.permutation(n)[: int(round(cfg.cue_share * n))]] = True
            for lab, v, c in zip(labels, is_vague, is_cue):
                if v:
                    template = vague.next()
                elif c:     # a neutral frame + one cue word of the sense: only word and period predict the cue
                    template = cue_frames.next().replace("{cue}", cues[lab].next())
                else:
                    template = cyclers[lab].next()
                text = fill(template, rng, slots)
                if not v and not c and rng.random() < FRAME_SHARE and not is_imperative(text):
                    text = frame(text, pick(rng, FRAMES), pick(rng, WHO))
                start, end = word_span(text, word)
                rows.append(dict(period=period, word=word, sense="unclear" if v else lab,
                                 start=start, end=end, text=text))
            realised.append(n_change / n)
        # probes: the same vague sentences in both periods (what the ranking embeds)
        probe_texts = [fill(vague.next(), rng, slots) for _ in range(cfg.n_probes_per_word)]
        for period in PERIODS:
            for text in probe_texts:
                start, end = word_span(text, word)
                rows.append(dict(period=period, word=word, sense="probe", start=start, end=end, text=text, probe=1))
        s_old, s_new = realised
        dist = [np.array([1 - s, s]) for s in realised]
        graded = abs(s_new - s_old)
        truth.append(dict(word=word, graded=round(graded, 6), binary=int(graded > cfg.threshold),
                          kind=kind, senses="|".join(senses), changing_sense=changing,
                          share_old=round(s_old, 6), share_new=round(s_new, 6),
                          jsd=round(_jsd(*dist), 6) if len(senses) == 2 else 0.0))
    usages = pd.DataFrame(rows)
    usages["probe"] = usages["probe"].fillna(0).astype(int) if "probe" in usages else 0
    # shuffle within each period so words are interleaved, then number the documents
    parts = []
    for period in PERIODS:
        part = usages[usages.period == period]
        parts.append(part.iloc[rng.permutation(len(part))])
    usages = pd.concat(parts, ignore_index=True)
    usages.insert(0, "doc_id", [f"{p}-{i:04d}" for p, i in zip(usages.period, usages.groupby("period").cumcount())])
    usages = usages[["doc_id", "period", "word", "sense", "start", "end", "text", "probe"]]
    truth_df = pd.DataFrame(truth, columns=["word", "graded", "binary", "kind", "senses", "changing_sense",
                                            "share_old", "share_new", "jsd"])
    return usages, truth_df


def generate_change_corpus(cfg: ChangeWorldConfig | None = None):
    """(PeriodCorpus with periods "old" < "new", truth DataFrame) for the semantic-change world."""
    usages, truth = change_frames(cfg or ChangeWorldConfig())
    return PeriodCorpus.from_frame(usages, order=list(PERIODS)), truth
