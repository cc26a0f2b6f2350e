"""Metrics, timeline-level folds and the cross-validation protocol."""

import numpy as np
import pytest

from tempo_analysis.evaluation.classification import (
    aggregate, classification_scores, cross_validate, format_table, timeline_folds,
)
from tempo_analysis.stream.baselines import PriorRandomClassifier

from .conftest import make_timelines


def test_scores_per_class_macro_and_confusion():
    y = np.array([0, 0, 1, 1, 2, -1])
    p = np.array([0, 1, 1, 1, 0, 2])  # the unlabelled last row is skipped
    s = classification_scores(y, p, ["a", "b", "c"])
    assert s["f1"]["a"] == pytest.approx(0.5) and s["f1"]["b"] == pytest.approx(0.8) and s["f1"]["c"] == 0.0
    assert s["macro_f1"] == pytest.approx((0.5 + 0.8 + 0.0) / 3)
    assert s["confusion"] == [[1, 1, 0], [0, 2, 0], [1, 0, 0]]
    with pytest.raises(ValueError, match="one prediction per post"):
        classification_scores(y, p[:3], ["a", "b", "c"])


def test_folds_never_split_a_timeline():
    tl = make_timelines(n_timelines=12, n_posts=(3, 7, 5, 2))
    splits = timeline_folds(tl, k=4, dev_fraction=0.25, seed=0)
    tests = [t for sp in splits for t in sp.test]
    assert sorted(tests) == sorted(tl.timeline_ids)  # every timeline is tested exactly once
    for sp in splits:
        a, b, c = set(sp.train), set(sp.dev), set(sp.test)
        assert not (a & b or a & c or b & c) and (a | b | c) == set(tl.timeline_ids)
        assert len(sp.dev) == round(0.25 * (len(sp.train) + len(sp.dev)))
    sizes = [tl.subset(sp.test).df.shape[0] for sp in splits]
    assert max(sizes) - min(sizes) <= 7  # balanced by post count (greedy)
    assert timeline_folds(tl, 4, seed=0)[1].test == splits[1].test  # deterministic
    with pytest.raises(ValueError, match="cannot make k=20 folds"):
        timeline_folds(tl, 20)


def test_cross_validate_and_aggregate():
    tl = make_timelines(n_timelines=8, n_posts=(5, 6), labels=("no", "yes"))
    res = cross_validate(lambda seed: PriorRandomClassifier(seed=seed), tl, folds=4, seeds=(0, 1),
                         max_folds=2, progress=False)
    assert res["folds_run"] == 2 and len(res["runs"]) == 4 and res["label_names"] == ["no", "yes"]
    s = res["summary"]
    macro = [r["macro_f1"] for r in res["runs"]]
    assert s["macro_f1"]["mean"] == pytest.approx(np.mean(macro))
    assert s["macro_f1"]["std"] == pytest.approx(np.std(macro, ddof=1))
    assert np.sum(s["confusion"]) == sum(r["n_test"] for r in res["runs"])
    table = format_table({"random": res}, ["no", "yes"])
    assert "macro-F1" in table and "random" in table
    one = aggregate(res["runs"][:1], ["no", "yes"])
    assert one["macro_f1"]["std"] == 0.0
