"""Metrics, timeline-level folds and the cross-validation protocol."""

import re

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


def test_a_class_missing_from_the_test_fold_is_not_counted_as_zero():
    """A perfect classifier scores 1 on a fold without one of the classes; the absent class is
    listed, and left out of that class's mean over runs (but a class predicted and absent counts)."""
    s = classification_scores(np.array([0, 0, 1, 1]), np.array([0, 0, 1, 1]), ["a", "b", "rare"])
    assert s["macro_f1"] == 1.0 and s["absent"] == ["rare"]
    wrong = classification_scores(np.array([0, 0, 1, 1]), np.array([0, 2, 1, 1]), ["a", "b", "rare"])
    assert wrong["absent"] == [] and wrong["macro_f1"] == pytest.approx((2 / 3 + 1 + 0) / 3)
    full = classification_scores(np.array([0, 1, 2]), np.array([0, 1, 1]), ["a", "b", "rare"])
    runs = [dict(s, seed=0), dict(full, seed=0)]
    agg = aggregate(runs, ["a", "b", "rare"])
    assert agg["f1"]["rare"]["mean"] == 0.0 and agg["f1"]["a"]["mean"] == 1.0
    assert aggregate([dict(s, seed=0)], ["a", "b", "rare"])["f1"]["rare"] == {"mean": None, "std": None}
    assert "–" in format_table({"m": {"summary": aggregate([dict(s, seed=0)], ["a", "b", "rare"])}}, ["a", "b", "rare"])


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


def test_fold_settings_at_their_bounds():
    tl = make_timelines(n_timelines=4, n_posts=(3, 4))
    one_each = timeline_folds(tl, k=4, dev_fraction=0.5)              # as many folds as timelines
    assert [len(sp.test) for sp in one_each] == [1, 1, 1, 1]
    assert all(sp.dev and sp.train for sp in one_each)                # dev never takes the whole rest
    assert all(len(sp.train) == 1 for sp in timeline_folds(tl, k=2, dev_fraction=0.9))
    assert all(sp.dev == [] for sp in timeline_folds(tl, k=2, dev_fraction=0.0))   # 0: no dev split
    for k in (1, 2.5):
        with pytest.raises(ValueError, match="integer >= 2"):
            timeline_folds(tl, k)
    for bad in (1.0, -0.1):
        with pytest.raises(ValueError, match=r"must be in \[0, 1\)"):
            timeline_folds(tl, 2, dev_fraction=bad)


def test_cross_validate_runs_only_the_listed_folds():
    tl = make_timelines(n_timelines=6, n_posts=(4, 5))
    run = lambda ids: cross_validate(lambda s: PriorRandomClassifier(seed=s), tl, folds=3, fold_ids=ids,  # noqa: E731
                                     progress=False)
    assert [r["fold"] for r in run([0])["runs"]] == [0]                # fold 0 is a fold like any other
    assert [r["fold"] for r in run([2, 0])["runs"]] == [0, 2]
    for bad in ([], [-1], [3]):
        with pytest.raises(ValueError, match=r"folds are numbered 0\.\.2"):
            run(bad)


def test_cross_validate_refuses_a_test_label_that_no_training_fold_has():
    """A label found in one timeline only: the fold that tests that timeline has never trained on it,
    so cross-validation stops with a DataError naming the posts, instead of scoring an unlearnable class."""
    from tempo_analysis.data import DataError
    from tempo_analysis.data.timelines import Timelines

    tl = make_timelines(n_timelines=8, n_posts=(5, 6), labels=("no", "yes"))
    df = tl.df.drop(columns="seconds")
    df.loc[df["timeline_id"] == "tl3", "label"] = "rare"
    tl = Timelines.from_frame(df, time_unit="s", min_posts=1)
    with pytest.raises(DataError, match=r"labels \['rare'\] never occur in training"):
        cross_validate(lambda seed: PriorRandomClassifier(seed=seed), tl, folds=4, progress=False)


def test_cross_validate_refuses_a_fold_whose_dev_split_has_no_labelled_post():
    """Partly labelled data can leave a fold's dev timelines without any label; the fold is named, with the
    fix a command-line user can apply, before any model trains on it."""
    from tempo_analysis.data import DataError
    from tempo_analysis.data.timelines import Timelines

    tl = make_timelines(n_timelines=8, n_posts=(5, 6), labels=("no", "yes"))
    dev_ids = timeline_folds(tl, 4, 0.25, 0)[1].dev
    df = tl.df.drop(columns="seconds")
    df.loc[df["timeline_id"].isin(dev_ids), "label"] = None
    tl = Timelines.from_frame(df, time_unit="s", min_posts=1)
    fitted = []

    def make(seed):
        fitted.append(seed)
        return PriorRandomClassifier(seed=seed)

    with pytest.raises(DataError, match=r"fold 1's dev split \(\d timelines?\) has no labelled post.*--split-seed"):
        cross_validate(make, tl, folds=4, fold_ids=[1], progress=False)
    assert fitted == []
    assert cross_validate(make, tl, folds=4, fold_ids=[1], dev_fraction=0, progress=False)["runs"]


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
    assert f"{100 * s['macro_f1']['mean']:.1f} ± {100 * s['macro_f1']['std']:.1f}" in table
    single = format_table({"random": one}, ["no", "yes"])             # one run has no std to show
    assert f"{100 * one['macro_f1']['mean']:.1f} (1 run)" in single and "±" not in single
    lines = table.splitlines()                                         # each column as wide as its widest cell
    cells = [re.split(r"\s{2,}", line.strip()) for line in (lines[0], lines[2])]
    assert [len(d) for d in lines[1].split()] == [max(len(a), len(b)) for a, b in zip(*cells)]


def test_aggregate_over_seeds_averages_each_seeds_folds_first():
    f1 = {"no": 0.5, "yes": 0.5}
    runs = [dict(seed=s, fold=f, macro_f1=m, f1=f1, confusion=[[1, 0], [0, 1]])
            for s, f, m in [(0, 0, 0.2), (0, 1, 0.4), (1, 0, 0.6), (1, 1, 1.0)]]
    over = aggregate(runs, ["no", "yes"])["macro_f1_over_seeds"]
    assert over["mean"] == pytest.approx(0.55) and over["std"] == pytest.approx(np.std([0.3, 0.8], ddof=1))


def test_cross_validate_needs_labels():
    tl = make_timelines(n_timelines=4, n_posts=(4, 5))
    tl.df = tl.df.drop(columns="label")
    with pytest.raises(ValueError, match="needs labelled timelines"):
        cross_validate(lambda s: PriorRandomClassifier(seed=s), tl, folds=2, progress=False)
