"""The two-period corpus: planted shares, graded/binary truth, offsets, clean usages, knobs."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from tempo_analysis.world import ChangeWorldConfig, change_frames, generate_change_corpus
from tempo_analysis.world.text_cues import CUES, cue_templates
from tempo_analysis.world.text_senses import ADJECTIVES, CONTROLS, TARGETS, TEMPLATES, vague_templates
from tempo_analysis.world.util import count_word


@pytest.fixture(scope="module")
def frames():
    return change_frames(ChangeWorldConfig())


def test_default_sizes(frames):
    usages, truth = frames
    assert 10 <= (truth.kind != "stable").sum() <= 16 and (truth.kind == "stable").sum() >= 4
    counts = usages[usages.probe == 0].groupby(["word", "period"]).size()
    assert counts.between(40, 80).all()
    assert set(usages.period) == {"old", "new"}


def test_probes_are_the_same_vague_sentences_in_both_periods(frames):
    usages, truth = frames
    probes = usages[usages.probe == 1]
    assert (probes.sense == "probe").all() and set(probes.word) == set(truth.word)
    n = ChangeWorldConfig().n_probes_per_word
    for word, part in probes.groupby("word"):
        old, new = (part[part.period == p].text.tolist() for p in ("old", "new"))
        assert len(old) == len(new) == n and sorted(old) == sorted(new)
        # vague wording: no sense-revealing template of the word appears among them
        senses = {t for ts in TEMPLATES.get(word, {}).values() for t in ts}
        assert not any(t in senses for t in old)
    none, _ = change_frames(ChangeWorldConfig(n_probes_per_word=0))
    assert (none.probe == 0).all()


def test_truth_matches_the_realised_sense_shares(frames):
    usages, truth = frames
    n = ChangeWorldConfig().n_sentences_per_word_period
    for r in truth.itertuples():
        assert 0.0 <= r.graded <= 1.0 and r.binary == int(r.graded > 0.3)
        assert r.graded == pytest.approx(abs(r.share_new - r.share_old), abs=1e-6)
        assert r.kind in ("gain", "loss", "stable")
        if r.kind == "gain":
            assert r.share_new > r.share_old
        if r.kind == "loss":
            assert r.share_new < r.share_old
        if r.kind == "stable":
            assert r.graded == 0 and r.jsd == 0
        assert r.changing_sense in r.senses.split("|")
        # every usage's planted sense is recorded unless it is a vague one ("unclear")
        u = usages[(usages.word == r.word) & (usages.probe == 0)]
        for period, share in (("old", r.share_old), ("new", r.share_new)):
            up = u[u.period == period]
            clear = up[up.sense != "unclear"]
            assert set(clear.sense) <= set(r.senses.split("|"))
            got = (clear.sense == r.changing_sense).sum()
            vague = (up.sense == "unclear").sum()
            assert got <= round(share * n) <= got + vague


def test_cue_usages_name_their_sense_by_one_cue_word_in_a_neutral_frame(frames):
    """A cue usage is a probe-like neutral frame plus one cue word of its planted sense: masking the cue
    leaves only the word and the period to predict it (what a time-aware MLM can learn)."""
    usages, truth = frames
    share = ChangeWorldConfig().cue_share
    assert 0 < share < 1
    clear = usages[(usages.probe == 0) & (usages.sense != "unclear")]
    is_cue = [_cue_usage(r.text, r.word, CUES[r.word][r.sense]) for r in clear.itertuples()]
    assert sum(is_cue) == pytest.approx(share * len(clear), rel=0.1)
    # never a cue of the word's other sense
    wrong = [_cue_usage(r.text, r.word, [c for s, cs in CUES[r.word].items() if s != r.sense for c in cs])
             for r in clear.itertuples()]
    assert not any(wrong)
    # the cue words of a word's two senses differ, and none is a word of the change world
    words = set(truth.word)
    for senses in CUES.values():
        lists = list(senses.values())
        assert all(not (set(a) & set(b)) for i, a in enumerate(lists) for b in lists[i + 1:])
        assert not any(c in words for cs in lists for c in cs)
    none, _ = change_frames(ChangeWorldConfig(cue_share=0.0, n_probes_per_word=0))
    none = none[none.sense != "unclear"]
    assert not any(_cue_usage(r.text, r.word, [c for cs in CUES[r.word].values() for c in cs])
                   for r in none.itertuples())


def _cue_usage(text: str, word: str, cues) -> bool:
    """``text`` is one of ``word``'s cue frames with one of ``cues`` and its {who}/{when} slots filled."""
    for frame_ in cue_templates(word, word in ADJECTIVES):
        for cue in cues:
            t = frame_.replace("{cue}", cue)
            pattern = re.escape(t[:1].upper() + t[1:]).replace(re.escape("{who}"), ".+").replace(
                re.escape("{when}"), ".+")
            if re.fullmatch(pattern, text, flags=re.IGNORECASE):
                return True
    return False


def test_graded_values_are_spread(frames):
    _, truth = frames
    changing = truth[truth.kind != "stable"].graded
    assert changing.nunique() >= 8 and changing.min() < 0.2 and changing.max() > 0.8
    assert 0 < truth.binary.sum() < len(truth)
    # JSD orders the words much like graded does
    assert spearmanr(truth.graded, truth.jsd).statistic > 0.9


def test_offsets_point_at_the_word_and_no_other_truth_word_appears(frames):
    usages, truth = frames
    words = list(truth.word)
    for r in usages.itertuples():
        assert r.text[r.start:r.end].lower() == r.word
        assert count_word(r.text, r.word) == 1
        assert not any(count_word(r.text, w) for w in words if w != r.word), r.text


def test_every_template_is_clean():
    """Each template holds its own word once and no other word of the change world."""
    words = list(TARGETS) + list(CONTROLS)
    for word, senses in TEMPLATES.items():
        for sense, templates in senses.items():
            assert len(templates) >= 10, (word, sense)
            assert len(set(templates)) == len(templates)
            for t in templates + vague_templates(word):
                assert count_word(t, word) == 1, t
                assert not any(count_word(t, w) for w in words if w != word), t


def test_sentences_are_natural_and_short(frames):
    usages, _ = frames
    lengths = usages.text.str.split().str.len()
    assert lengths.max() < 30
    assert usages.text.str.match(r"^[A-Z]").all() and usages.text.str.contains(r"[.!?]$").all()
    assert not usages.text.str.contains(r"\{|\}|  ").any()
    assert usages.text.nunique() > 0.4 * len(usages)


def test_change_strength_scales_graded():
    _, full = change_frames(ChangeWorldConfig())
    _, half = change_frames(ChangeWorldConfig(change_strength=0.5))
    _, none = change_frames(ChangeWorldConfig(change_strength=0.0))
    assert (none.graded == 0).all() and none.binary.sum() == 0
    n = ChangeWorldConfig().n_sentences_per_word_period
    np.testing.assert_allclose(half.graded, 0.5 * full.graded, atol=1.0 / n)
    assert half.binary.sum() < full.binary.sum()


def test_noise_controls_vague_usages():
    clean, _ = change_frames(ChangeWorldConfig(noise=0.0, n_probes_per_word=0))
    noisy, _ = change_frames(ChangeWorldConfig(noise=0.5, n_probes_per_word=0))
    assert (clean.sense == "unclear").sum() == 0
    assert (noisy.sense == "unclear").mean() == pytest.approx(0.5, abs=0.02)


def test_word_choice_and_size_knobs():
    usages, truth = change_frames(ChangeWorldConfig(targets=("cell", "tape"), controls=("bread",),
                                                    n_sentences_per_word_period=10, threshold=0.6,
                                                    n_probes_per_word=4))
    assert list(truth.word) == ["cell", "tape", "bread"]
    assert list(truth.binary) == [1, 0, 0]
    assert (usages.probe == 0).sum() == 3 * 2 * 10 and (usages.probe == 1).sum() == 3 * 2 * 4


def test_seeds():
    a, _ = change_frames(ChangeWorldConfig(seed=1))
    b, _ = change_frames(ChangeWorldConfig(seed=1))
    c, _ = change_frames(ChangeWorldConfig(seed=2))
    pd.testing.assert_frame_equal(a, b)
    assert not a.text.equals(c.text)


def test_generate_change_corpus_returns_period_corpus():
    corpus, truth = generate_change_corpus(ChangeWorldConfig(n_sentences_per_word_period=8, n_probes_per_word=3))
    assert corpus.periods == ["old", "new"]
    usages = corpus.find_usages("cell")
    assert len(usages) == 16 + 2 * 3
    assert all(u.text[u.start:u.end].lower() == "cell" for u in usages)
    assert "graded" in truth


@pytest.mark.parametrize("kw,field", [({"targets": ("cell", "blorp")}, "targets"),
                                      ({"change_strength": 2.0}, "change_strength"),
                                      ({"n_sentences_per_word_period": 1}, "n_sentences_per_word_period")])
def test_bad_config_names_the_field(kw, field):
    with pytest.raises(ValueError, match=field):
        change_frames(ChangeWorldConfig(**kw))
