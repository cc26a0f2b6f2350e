"""time_effect's machinery on tiny models: gap what-ifs, the time-blind control, recall per kind."""

import copy

import numpy as np
import pandas as pd
import pytest

from tempo_analysis.data import Timelines
from tempo_analysis.encoders import tiny_encoder
from tempo_analysis.stream import time_effect as te
from tempo_analysis.stream.estimator import TempoFormerClassifier
from tempo_analysis.stream.time_effect import what_if


@pytest.fixture(scope="module")
def tiny():
    return tiny_encoder(hidden=32, layers=3, heads=2, seed=0)


def gap_timelines(n_timelines: int = 8, seed: int = 0) -> Timelines:
    """Timelines whose labels only the gaps tell: "IS" after a day-long silence, else "O"; the
    words are drawn from one bag whatever the label (a time-blind model cannot do better than guess)."""
    rng = np.random.default_rng(seed)
    words = ["good", "bad", "news", "today", "really", "not", "happy", "sad", "again", "wow"]
    rows = []
    for k in range(n_timelines):
        t = 1.5e9 + 1e6 * k
        for i in range(8):
            long = i > 0 and rng.random() < 0.35
            if i:
                t += float(rng.uniform(1e5, 3e5) if long else rng.uniform(5, 600))
            rows.append(dict(timeline_id=f"tl{k}", post_id=f"tl{k}-{i}", timestamp=t,
                             text=" ".join(rng.choice(words, size=4)), label="IS" if long else "O"))
    return Timelines.from_frame(pd.DataFrame(rows), time_unit="s")


@pytest.fixture(scope="module")
def data():
    tl = gap_timelines()
    return tl.subset(tl.timeline_ids[:6]), tl.subset(tl.timeline_ids[6:])


@pytest.fixture(scope="module")
def models(tiny, data):
    train, _ = data
    kw = dict(window=3, epochs=25, batch_size=8, head_lr=3e-3, progress=False, device="cpu", seed=0)
    return {"tempoformer": TempoFormerClassifier(encoder=tiny, **kw).fit(train),
            "control": TempoFormerClassifier(encoder=tiny, **te.time_blind(dict(kw, epochs=2))).fit(train)}


def _later_post(test):
    """A switch (it has a previous post in its timeline, so its gap can move)."""
    return test.df.loc[test.df["label"] == "IS", "post_id"].iloc[0]


def test_gap_sweep_is_flat_without_time_and_moves_with_time(models, data):
    _, test = data
    post = _later_post(test)
    gaps = np.geomspace(1, 4 * 86400, 9)
    blind = te.gap_sweep(models["control"], test, post, gaps)["p_change"].to_numpy()
    timed = te.gap_sweep(models["tempoformer"], test, post, gaps)["p_change"].to_numpy()
    assert np.ptp(blind) < 1e-6          # the control never sees the gap
    assert np.ptp(timed) > 0.3           # TempoFormer learnt to read it
    assert te.gap_sensitivity(models["control"], test) < 1e-6
    assert te.gap_sensitivity(models["tempoformer"], test) > 0.3
    default = te.gap_sweep(models["tempoformer"], test, post)        # the notebook's sweep: 1 s .. 4 days
    np.testing.assert_allclose(default["gap_s"], np.geomspace(1, 4 * 86400, 41))
    np.testing.assert_allclose(default["p_change"].iloc[::5], timed, atol=1e-5)


def test_gap_what_if_agrees_with_what_if_and_keeps_the_first_post_fixed(models, data):
    _, test = data
    clf = models["tempoformer"]
    post = _later_post(test)
    batched = te.gap_what_if(clf, test, [post, post], [5.0, 7200.0])
    for j, g in enumerate((5.0, 7200.0)):
        one = te.change_probability(what_if(clf, test, post, gap_seconds=g), clf.label_names_)
        np.testing.assert_allclose(batched[:, j], one, atol=1e-5)
    first = test.df.groupby("timeline_id")["post_id"].first().iloc[0]
    p = te.gap_what_if(clf, test, [first], [1.0, 86400.0])
    assert p[0, 0] == pytest.approx(p[0, 1])
    with pytest.raises(ValueError, match="not in these timelines"):
        te.gap_what_if(clf, test, ["nope"], [1.0])
    with pytest.raises(ValueError, match=">= 0"):
        te.gap_what_if(clf, test, [post], [-1.0])
    with pytest.raises(ValueError, match=">= 0"):
        te.gap_what_if(clf, test, [post], [5.0, -1.0])          # one negative gap among others
    assert te.gap_what_if(clf, test, [post], [0.0]).shape == (1, 1)   # two posts at the same second


def test_gap_what_if_at_each_posts_real_gap_is_the_models_own_prediction(models, data):
    """The window copy a what-if edits is the window the model reads: for every post (a timeline's
    first posts, the window's edges, the first post of a later timeline), setting its gap to the real
    one must give the model's own p(change)."""
    _, test = data
    clf = models["tempoformer"]
    df = test.df.reset_index(drop=True)
    own = te.change_probability(clf.predict_proba(test), clf.label_names_)
    real = df.groupby("timeline_id", sort=False)["seconds"].diff().fillna(0.0).to_numpy()
    moved = [te.gap_what_if(clf, test, [pid], [real[i]])[0, 0] for i, pid in enumerate(df["post_id"])]
    np.testing.assert_allclose(moved, own, atol=1e-5)


def test_gap_what_if_on_a_single_timeline_reads_the_models_own_window(models, data):
    """With one timeline, a window that reaches its first post must stop there (no wrap-around to
    the end of the table)."""
    _, test = data
    clf = models["tempoformer"]
    one = test.subset(test.timeline_ids[-1:])
    df = one.df.reset_index(drop=True)
    own = te.change_probability(clf.predict_proba(one), clf.label_names_)
    real = df["seconds"].diff().fillna(0.0).to_numpy()
    moved = [te.gap_what_if(clf, one, [pid], [real[i]])[0, 0] for i, pid in enumerate(df["post_id"][:3])]
    np.testing.assert_allclose(moved, own[:3], atol=1e-5)


def test_the_window_copy_holds_the_posts_the_model_reads_and_no_more(data):
    _, test = data
    df = test.df.reset_index(drop=True)
    second = df.index[df["timeline_id"] == df["timeline_id"].iloc[-1]][0]   # the later timeline's first post
    for window in (1, 3, 5):
        assert te._window_copy(df, 5, window)["post_id"].tolist() == df["post_id"][6 - window : 6].tolist()
        assert te._window_copy(df, second + 1, window)["post_id"].tolist() == \
            df["post_id"][max(second, second + 2 - window) : second + 2].tolist()


def test_change_posts_are_the_labelled_switches(data):
    _, test = data
    assert te.change_posts(test) == test.df.loc[test.df["label"] == "IS", "post_id"].tolist()
    assert te.change_posts(test)                                       # the fixture has some


def test_world_change_kinds_needs_the_worlds_change_kind_column():
    truth = pd.DataFrame({"post_id": [1, 2], "change_kind": ["none", "time"]})
    assert te.world_change_kinds(truth).to_dict() == {"1": "none", "2": "time"}
    with pytest.raises(ValueError, match="regenerate it"):
        te.world_change_kinds(truth.drop(columns="change_kind"))


def test_change_probability_and_no_change_label():
    proba = np.array([[0.2, 0.1, 0.7], [0.5, 0.4, 0.1]])
    np.testing.assert_allclose(te.change_probability(proba, ["IE", "IS", "O"]), [0.3, 0.9])
    assert te.no_change_index(["no_switch", "switch"]) == 0
    with pytest.raises(ValueError, match="no-change label.*no_change="):
        te.no_change_index(["a", "b"])
    # a data set's own no-change label, named
    assert te.no_change_index(["calm", "shift"], "calm") == 0 and te.no_change_index(["IS", "O"], "IS") == 0
    np.testing.assert_allclose(te.change_probability(proba, ["x", "y", "z"], no_change="y"), [0.9, 0.6])
    with pytest.raises(ValueError, match="no_change='O' is not one of the labels"):
        te.no_change_index(["calm", "shift"], "O")


def test_kind_recall_counts_each_kind_on_its_own(data):
    _, test = data
    names = ["IS", "O"]
    y = test.label_codes(names)
    ids = test.df["post_id"].tolist()
    kinds = {ids[0]: "time", ids[1]: "time", ids[2]: "text", ids[3]: "none"}
    pred = y.copy()
    pred[0] = 1 - y[0]                # one of the two time posts wrong
    out = te.kind_recall(pred, test, pd.Series(kinds), names)
    assert out == {"text": {"recall": 1.0, "n": 1}, "time": {"recall": 0.5, "n": 2}}


def test_time_effect_reports_both_models_and_time_only_recall(models, data):
    train, test = data
    ids = test.df["post_id"].tolist()
    switch = test.df.index[test.df["label"] == "IS"].tolist()
    kinds = pd.Series({ids[i]: "time" for i in switch})
    def no_training(name, settings):
        raise AssertionError(f"time_effect trained {name!r} although it was given fitted models")

    out = te.time_effect(train, None, test, {}, kinds=kinds, models=dict(models), fit=no_training)
    assert out["time_effect"] == pytest.approx(out["tempoformer"]["macro_f1"] - out["control"]["macro_f1"])
    assert out["gap_sensitivity"] == out["tempoformer"]["gap_sensitivity"]
    assert out["control"]["gap_sensitivity"] < 1e-6
    r = out["time_only_recall"]
    assert r["n"] == len(switch)
    assert r["tempoformer"] >= 0.8 and r["control"] <= 0.5  # only the gaps tell these switches
    # chance = the training share of the label the time switches carry ("IS")
    assert r["chance"] == pytest.approx((train.df["label"] == "IS").mean())
    # ... among the labelled training posts: unlabelled posts are not part of the class prior
    half = train.df.index[train.df["label"] != "IS"][::2]
    unlabelled = copy.copy(train)
    unlabelled.df = train.df.assign(label=train.df["label"].where(~train.df.index.isin(half)))
    r2 = te.time_effect(unlabelled, None, test, {}, kinds=kinds, models=dict(models), fit=no_training)["time_only_recall"]
    assert r2["chance"] == pytest.approx((unlabelled.df["label"].dropna() == "IS").mean()) and r2["chance"] > r["chance"]
    assert out["models"]["control"].model_.config.ablation == "vanilla_mha"


def test_time_effect_trains_only_the_missing_model_and_the_control_without_time(models, data):
    train, test = data
    trained = []

    def fit(name, settings):
        trained.append((name, settings.get("ablation")))
        return models["control"]

    out = te.time_effect(train, None, test, {"window": 3}, models={"tempoformer": models["tempoformer"]}, fit=fit)
    assert trained == [("control", "vanilla_mha")]
    assert out["models"]["tempoformer"] is models["tempoformer"]


def test_describe_time_effect_names_both_models_and_their_own_numbers():
    res = {"time_effect": 0.25, "gap_sensitivity": 0.6, "control": {"gap_sensitivity": 0.0},
           "time_only_recall": {"tempoformer": 1.0, "control": 0.125, "chance": 0.234, "n": 62}}
    lines = te.describe_time_effect(res, names=("with time", "blind")).splitlines()
    assert lines[0].endswith("+0.250")
    assert lines[1].endswith("with time 0.600 · blind 0.000") and "10 s → 1 day" in lines[1]
    assert lines[2] == "recall on the 62 time-only switches: with time 1.000 · blind 0.125 · chance (the switch prior) 0.234"
    assert len(te.describe_time_effect(dict(res, time_only_recall=None)).splitlines()) == 2



def test_what_if_edits_only_the_chosen_posts_text_and_time(models, data, monkeypatch):
    """what_if is the notebook's what-if panel: it reads the post's own timeline cut after the post, with the
    edited text on that post (not the one before), the post moved to the previous post's time plus the gap
    (zero and sub-second gaps allowed), and a timeline's first post has no gap to move."""
    _, test = data
    clf = models["tempoformer"]
    df = test.df.reset_index(drop=True)
    post = _later_post(test)
    i = int(np.flatnonzero(df["post_id"] == post)[0])
    own = df[(df["timeline_id"] == df.loc[i, "timeline_id"]) & (df.index <= i)].reset_index(drop=True)
    seen = []
    real = type(clf).predict_proba
    monkeypatch.setattr(type(clf), "predict_proba", lambda self, tl, **kw: seen.append(tl.df.copy()) or real(self, tl, **kw))

    what_if(clf, test, post, text="a whole new text")
    got = seen.pop()
    assert got["post_id"].tolist() == own["post_id"].tolist()
    assert got["text"].tolist() == own["text"].tolist()[:-1] + ["a whole new text"]
    assert got["seconds"].tolist() == own["seconds"].tolist()
    for gap in (0.0, 0.5, 7200.0):
        what_if(clf, test, post, gap_seconds=gap)
        got = seen.pop()
        want = own["seconds"].tolist()[:-1] + [own["seconds"].iloc[-2] + gap]
        assert got["seconds"].tolist() == want and got["text"].tolist() == own["text"].tolist()
        assert got["timestamp"].iloc[-1] == pd.Timestamp(want[-1], unit="s", tz="UTC")
        assert got["timestamp"].iloc[:-1].tolist() == own["timestamp"].iloc[:-1].tolist()
    first = df["post_id"].iloc[0]
    np.testing.assert_allclose(what_if(clf, test, first, gap_seconds=86400.0), real(clf, test)[0], atol=1e-5)
    assert seen.pop()["seconds"].tolist() == [df["seconds"].iloc[0]]
    with pytest.raises(ValueError, match="gap_seconds=-1 must be >= 0"):
        what_if(clf, test, post, gap_seconds=-1)
    with pytest.raises(ValueError, match="text must not be empty"):
        what_if(clf, test, post, text="  ")
