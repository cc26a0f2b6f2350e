"""The yearly world: planted trend curves, exact document counts, knobs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tempo_analysis.world import YearlyWorldConfig, generate_yearly, yearly_frames
from tempo_analysis.world.text_yearly import (DATASETS, DOMAINS, INTROS, METHODS, RESULTS, TASKS,
                                              TREND_FRAMES, TREND_PHRASES, TRENDS, trend_sentence)
from tempo_analysis.world.util import count_word


@pytest.fixture(scope="module")
def frames():
    return yearly_frames(YearlyWorldConfig())


def test_default_sizes(frames):
    docs, truth = frames
    assert sorted(docs.period.unique()) == list(range(2010, 2022))
    assert (docs.groupby("period").size() == 60).all()
    assert set(truth.trend) == {"rise", "fall", "flat", "burst"}
    assert (truth.word.str.len() > 4).all()      # content words for the future-text metrics


def test_trend_directions(frames):
    _, truth = frames
    for word, t in truth.groupby("word"):
        r = t.sort_values("year").rate.to_numpy()
        kind = t.trend.iloc[0]
        if kind == "rise":
            assert r[-1] - r[0] > 0.2 and (np.diff(r) >= -1e-9).all()
        elif kind == "fall":
            assert r[0] - r[-1] > 0.2 and (np.diff(r) <= 1e-9).all()
        elif kind == "flat":
            assert np.ptp(r) < 1e-9
        else:
            peak = int(np.argmax(r))
            assert 0 < peak < len(r) - 1 and r[peak] - max(r[0], r[-1]) > 0.2


def test_trends_are_smooth(frames):
    _, truth = frames
    for _, t in truth.groupby("word"):
        r = t.sort_values("year").rate.to_numpy()
        assert np.abs(np.diff(r)).max() < 0.2


def test_document_counts_match_truth(frames):
    docs, truth = frames
    for r in truth.itertuples():
        texts = docs[docs.period == r.year].text
        carrying = texts.map(lambda s: count_word(s, r.word))
        assert carrying.max() <= 1
        assert carrying.sum() == r.n_docs == round(r.rate * 60)
        assert r.doc_share == pytest.approx(r.n_docs / 60, abs=1e-6)


def test_trend_words_appear_only_in_their_own_sentences():
    words = list(TRENDS)
    generic = INTROS + METHODS + RESULTS + TASKS + DATASETS + DOMAINS
    for t in generic:
        assert not any(w in t.lower() for w in words), t
    for t in TREND_FRAMES:
        assert not any(w in t.lower() for w in words), t
    for word, phrases in TREND_PHRASES.items():
        for p in phrases:
            assert p.startswith(word + " "), p       # the word comes right after the shared frame
            s = trend_sentence(TREND_FRAMES[0], p)
            assert count_word(s, word) == 1 and s.lower().count(word) == 1, s
            assert not any(w in s.lower() for w in words if w != word), s


def test_the_frame_leaves_the_trend_word_open(frames):
    """Every trend sentence starts with a shared frame, and each frame goes on with many trend
    words: the word is chosen right after the frame, where its forecast bias acts."""
    docs, _ = frames
    sents = [s.strip() for t in docs.text for s in t.split(".") if s.strip()]
    after = {f: {w for s in sents if s.startswith(f + " ") for w in TRENDS if s[len(f) + 1:].startswith(w + " ")}
             for f in TREND_FRAMES}
    assert all(len(ws) >= 8 for ws in after.values()), {f: len(ws) for f, ws in after.items()}


def test_abstracts_are_sentences(frames):
    docs, _ = frames
    assert docs.text.str.match(r"^[A-Z]").all() and docs.text.str.endswith(".").all()
    assert not docs.text.str.contains(r"\{|\}|  ").any()
    lengths = docs.text.str.split().str.len()
    assert lengths.mean() > 30 and lengths.max() < 150


def test_strength_zero_flattens_and_noise_jitters():
    _, flat = yearly_frames(YearlyWorldConfig(strength=0.0))
    assert (flat.groupby("word").rate.agg(np.ptp) < 1e-9).all()
    _, base = yearly_frames(YearlyWorldConfig())
    _, noisy = yearly_frames(YearlyWorldConfig(noise=0.05))
    assert not np.allclose(base.rate, noisy.rate)


def test_years_docs_and_words_knobs():
    docs, truth = yearly_frames(YearlyWorldConfig(years=(2000, 2004), docs_per_year=10,
                                                  trend_words=("transformer", "kernel")))
    assert sorted(docs.period.unique()) == [2000, 2001, 2002, 2003, 2004]
    assert len(docs) == 50 and set(truth.word) == {"transformer", "kernel"}


def test_seeds():
    a, _ = yearly_frames(YearlyWorldConfig(seed=7))
    b, _ = yearly_frames(YearlyWorldConfig(seed=7))
    c, _ = yearly_frames(YearlyWorldConfig(seed=8))
    pd.testing.assert_frame_equal(a, b)
    assert not a.text.equals(c.text)


def test_generate_yearly_returns_period_corpus():
    corpus, truth = generate_yearly(YearlyWorldConfig(docs_per_year=10))
    assert corpus.periods == list(range(2010, 2022))
    assert {"word", "year", "rate", "trend"} <= set(truth.columns)


@pytest.mark.parametrize("kw,field", [({"years": (2010, 2011)}, "years"), ({"trend_words": ("blorp",)}, "trend_words"),
                                      ({"docs_per_year": 0}, "docs_per_year"), ({"strength": -1}, "strength"),
                                      ({"trend_words": ("kernel", "kernel")}, "trend_words.*remove duplicates")])
def test_bad_config_names_the_field(kw, field):
    with pytest.raises(ValueError, match=field):
        yearly_frames(YearlyWorldConfig(**kw))


def test_recent_history_forecasts_the_test_year_better_than_all_years(frames):
    """What the frequency model exploits: last year's rate predicts 2021 far better than the
    all-years average (the baseline's view), measured on realised log document frequencies."""
    _, truth = frames
    f = truth.assign(logf=np.log((truth.n_docs + 1) / (60 + 2))).pivot(index="word", columns="year", values="logf")
    target = f[2021]
    persistence = np.abs(f[2020] - target).mean()
    all_years = np.abs(f.loc[:, 2010:2020].mean(axis=1) - target).mean()
    assert persistence < 0.5 * all_years
