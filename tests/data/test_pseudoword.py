"""The pseudoword change benchmark (``--data pseudoword``): built from the real corpora in shared/data;
skipped when that folder is absent."""
from collections import Counter

import numpy as np
import pytest

from tempo_analysis.data.locations import shared_data_dir
from tempo_analysis.data.specs import load_change_data

pytestmark = pytest.mark.skipif(
    shared_data_dir() is None or not (shared_data_dir() / "nltk_data" / "corpora" / "brown").is_dir(),
    reason="shared/data with nltk_data/corpora is not here")


@pytest.fixture(scope="module")
def bench():
    return load_change_data("pseudoword", seed=0)


def test_truth_is_the_injected_share_and_frequency_does_not_move(bench):
    t = bench.truth.set_index("word")
    assert len(t) == 48 and (t["graded"] == 0).sum() == 12 and t["graded"].max() == pytest.approx(0.8)
    assert ((t["graded"] > 0) == (t["donor"] != "")).all() and not set(t["donor"]) & set(t.index)
    n = Counter((u.word, u.period) for u in bench.usages)
    for w, r in t.iterrows():
        assert r["n_injected"] == int(round(r["graded"] * r["n_late"]))
        assert n[(w, "early")] <= r["n_early"] and n[(w, "late")] <= r["n_late"]   # shared sentences may drop
    for u in bench.usages:                      # every given usage points at its target
        assert u.surface.lower() == u.word


def test_injected_usages_are_donor_sentences_in_the_later_period_only(bench):
    t = bench.truth.set_index("word")
    w = t[t["graded"] > 0.5].index[0]
    donor = t.loc[w, "donor"]
    early = [u for u in bench.usages if u.word == w and u.period == "early"]
    late = [u for u in bench.usages if u.word == w and u.period == "late"]
    assert len(late) >= t.loc[w, "n_injected"] > 0 and early
    assert all(donor not in u.text.lower().split() for u in early)


def test_frequency_cannot_see_p_and_targets_subset(bench):
    from tempo_analysis.semantic_change.baselines import frequency_change
    from tempo_analysis.semantic_change.pipeline import evaluate_scores
    m = evaluate_scores(frequency_change(bench), bench.truth)
    assert abs(m["spearman"]) < 0.4
    from tempo_analysis.data.specs import _subset
    sub = _subset(bench, list(bench.targets[:2]))
    assert sub.targets == bench.targets[:2] and {u.word for u in sub.usages} == set(bench.targets[:2])
