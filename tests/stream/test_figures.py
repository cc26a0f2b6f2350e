"""Stream figures (asserted on fig.to_dict()), what-if edits and the notebook widgets."""

import base64

import numpy as np
import pytest
import torch

from tempo_analysis.encoders import tiny_encoder
from tempo_analysis.evaluation.classification import cross_validate
from tempo_analysis.figures import stream as figs
from tempo_analysis.stream.baselines import PriorRandomClassifier
from tempo_analysis.stream.estimator import TempoFormerClassifier
from tempo_analysis.stream.time_effect import what_if
from tempo_analysis.widgets.stream import timeline_viewer, what_if_panel

from .conftest import make_timelines


def arr(v) -> np.ndarray:
    """A figure dict's array: plotly 6 stores numpy arrays as {"dtype", "bdata"(, "shape")}."""
    if isinstance(v, dict) and "bdata" in v:
        a = np.frombuffer(base64.b64decode(v["bdata"]), dtype=v["dtype"])
        return a.reshape([int(n) for n in str(v["shape"]).split(",")]) if "shape" in v else a
    return np.asarray(v)


@pytest.fixture(scope="module")
def fitted():
    tl = make_timelines(n_timelines=4, n_posts=(6, 5), labels=("O", "IS", "IE"), seed=5)
    clf = TempoFormerClassifier(encoder=tiny_encoder(hidden=32, layers=3, heads=2), window=3, epochs=1,
                                progress=False, device="cpu").fit(tl)
    with torch.no_grad():  # a barely trained tiny model hardly looks at time: make its stream modules loud
        torch.manual_seed(0)
        for p in [*clf.model_.temporal.parameters(), *clf.model_.head.parameters()]:
            p.normal_(0, 0.3)
    return clf, tl


def test_timeline_and_probability_plots(fitted):
    clf, tl = fitted
    d = figs.timeline_plot(tl).to_dict()
    assert {t["name"] for t in d["data"]} <= {"O", "IS", "IE"}
    assert sum(len(arr(t["x"])) for t in d["data"]) == len(tl.df)
    change = [t for t in d["data"] if t["name"] != "O"]
    assert all(t["marker"]["symbol"] == "diamond" for t in change)
    tid = tl.timeline_ids[1]
    proba = clf.predict_proba(tl)
    d = figs.probability_plot(tl, tid, proba, clf.label_names_).to_dict()
    lines = {t["name"]: t for t in d["data"]}
    assert set(lines) >= {"P(IS)", "P(IE)"} and "P(O)" not in lines
    rows = tl.timeline(tid).index.to_numpy()
    np.testing.assert_allclose(arr(lines["P(IS)"]["y"]), proba[rows, clf.label_names_.index("IS")])
    # what a FigureWidget sends on a redraw (timeline_viewer): dates, not datetime64[ns] as integers
    from plotly.serializers import _py_to_js
    import copy
    for ts in (tl.df["timestamp"], tl.df["timestamp"].dt.tz_convert(None).astype("datetime64[ns]")):
        tl_ts = copy.copy(tl)
        tl_ts.df = tl.df.assign(timestamp=ts)
        fig = figs.probability_plot(tl_ts, tid, proba, clf.label_names_)
        sent = _py_to_js(fig.data[0]._props, None)["x"]
        assert all(isinstance(v, str) for v in sent), sent[:2]
        assert sent[0].startswith(str(tl.timeline(tid)["timestamp"].iloc[0].date()))
        assert fig.layout.xaxis.type == "date"


def test_comparison_table_confusion_and_window_charts():
    # every label occurs in every training fold (an unseen test label is a DataError)
    tl = make_timelines(n_timelines=6, n_posts=(6, 5), labels=("O", "IS", "IE"), seed=5)
    names = tl.label_names
    res = {m: cross_validate(lambda s: PriorRandomClassifier(seed=s), tl, folds=2, seeds=(0, 1), progress=False)
           for m in ("a", "b")}
    d = figs.comparison_chart(res, names).to_dict()
    assert [t["name"] for t in d["data"]] == ["a", "b"]
    assert list(d["data"][0]["x"]) == names + ["macro-F1"]
    assert d["data"][0]["y"][-1] == pytest.approx(res["a"]["summary"]["macro_f1"]["mean"])
    t = figs.results_table(res, names, reference="a").to_dict()["data"][0]
    assert t["header"]["values"][-1] == "Δ macro" and list(t["cells"]["values"][0]) == ["a", "b"]
    c = figs.confusion_heatmap(res["a"]["summary"]["confusion"], names).to_dict()["data"][0]
    assert arr(c["z"]).sum() == 2 * len(tl.df)
    w = figs.window_chart({"5": res["a"], "10": res["b"]}, names).to_dict()
    assert list(arr(w["data"][0]["x"])) == [5, 10]


def test_attention_heatmap(fitted):
    clf, tl = fitted
    pid = tl.timeline(tl.timeline_ids[0])["post_id"].iloc[4]
    att = clf.temporal_attention(tl, pid)
    d = figs.attention_heatmap(att, texts=tl.df.set_index("post_id").loc[att["post_ids"], "text"].tolist()).to_dict()
    z = arr(d["data"][0]["z"])
    assert z.shape == (3, 3) and np.allclose(z.sum(1), 1, atol=1e-5)
    assert d["data"][0]["x"][-1] == "2: now"


def test_classifier_visualize_methods_delegate_to_the_figures(fitted):
    clf, tl = fitted
    pid = tl.timeline(tl.timeline_ids[0])["post_id"].iloc[4]
    att = clf.temporal_attention(tl, pid)
    texts = tl.df.set_index("post_id").loc[att["post_ids"], "text"].tolist()
    assert clf.visualize_attention(tl, pid, layer=0).to_json() == figs.attention_heatmap(att, layer=0, texts=texts).to_json()
    proba = clf.predict_proba(tl)
    tid = tl.timeline_ids[1]
    got = clf.visualize_probabilities(tl, tid).to_json()
    assert got == figs.probability_plot(tl, tid, proba, clf.label_names_).to_json()
    assert tl.timeline_ids[0] in clf.visualize_probabilities(tl, proba=proba).layout.title.text
    z = arr(clf.visualize_confusion(tl).to_dict()["data"][0]["z"])
    assert z.shape == (3, 3) and z.sum() == len(tl.df)


def test_what_if_edits_text_gap_and_window(fitted):
    clf, tl = fitted
    df = tl.timeline(tl.timeline_ids[0])
    pid = df["post_id"].iloc[3]
    base = what_if(clf, tl, pid)
    np.testing.assert_allclose(base, clf.predict_proba(tl)[df.index[3]], atol=1e-6)
    assert not np.allclose(what_if(clf, tl, pid, text="wow wow wow totally new words here"), base, atol=1e-7)
    far = what_if(clf, tl, pid, gap_seconds=3 * 86400.0)
    assert far.shape == base.shape and np.isclose(far.sum(), 1, atol=1e-5)
    assert not np.allclose(far, base, atol=1e-7)
    assert what_if(clf, tl, pid, window=1).shape == base.shape
    with pytest.raises(ValueError, match="gap_seconds"):
        what_if(clf, tl, pid, gap_seconds=-5)


def test_widgets_build_and_react(fitted):
    clf, tl = fitted
    viewer = timeline_viewer(clf, tl)
    pick, fig = viewer.children
    pick.value = tl.timeline_ids[2]
    assert tl.timeline_ids[2] in fig.layout.title.text
    panel = what_if_panel(clf, tl, max_window=6)
    picks, text, sliders, status, bars = panel.children
    gap, window = sliders.children
    assert np.isclose(sum(bars.data[0].y), 1, atol=1e-3) and "true label" in status.value
    gap.value = 2 * 86400.0
    window.value = 2
    text.value = "Out of nowhere, everything changed."
    want = what_if(clf, tl, picks.children[1].value, text=text.value, gap_seconds=gap.value, window=2)
    np.testing.assert_allclose(bars.data[0].y, np.round(want, 4), atol=1e-4)


def test_gap_sweep_chart_draws_one_curve_per_model_and_the_marker():
    import pandas as pd

    gaps = np.geomspace(1, 86400, 5)
    sweeps = {"TempoFormer": pd.DataFrame({"gap_s": gaps, "p_change": [0.1, 0.1, 0.2, 0.8, 0.9]}),
              "control": pd.DataFrame({"gap_s": gaps, "p_change": [0.3] * 5})}
    fig = figs.gap_sweep_chart(sweeps, marker=gaps[3], actual=120.0)
    lines = [t for t in fig.data if t.mode == "lines"]
    assert [t.name for t in lines] == ["TempoFormer", "control"]
    markers = [t for t in fig.data if t.mode == "markers"]
    assert [round(float(t.y[0]), 6) for t in markers] == [0.8, 0.3]  # the curves' values at the marker
    between = figs.gap_sweep_chart(sweeps, marker=1000.0, marker_y={"TempoFormer": 0.95})
    assert [round(float(t.y[0]), 6) for t in between.data if t.mode == "markers"][0] == 0.95   # given, not interpolated
    assert fig.layout.xaxis.type == "log" and len(fig.layout.shapes) == 1


def test_time_control_chart_shows_macro_f1_and_recall_per_kind():
    rows = {"TempoFormer": {"macro_f1": 0.8, "recall_by_kind": {"text": {"recall": 0.9, "n": 5},
                                                                 "time": {"recall": 0.7, "n": 4}}},
            "control": {"macro_f1": 0.6, "recall_by_kind": {"text": {"recall": 0.85, "n": 5},
                                                             "time": {"recall": 0.1, "n": 4}}}}
    fig = figs.time_control_chart(rows)
    assert [t.name for t in fig.data] == ["TempoFormer", "control"]
    assert list(fig.data[1].x) == ["macro-F1", "recall: text changes", "recall: time switches"]
    assert list(fig.data[1].y) == [0.6, 0.85, 0.1]


def test_gap_sweep_panel_builds_and_its_slider_moves_the_markers(fitted):
    from tempo_analysis.widgets.stream import gap_sweep_panel

    clf, tl = fitted
    post = tl.timeline(tl.timeline_ids[0])["post_id"].iloc[3]
    panel = gap_sweep_panel({"TempoFormer": clf}, tl, post_ids=[post])
    (pick, gap), status, fig = panel.children[0].children, panel.children[1], panel.children[2]
    assert pick.value == post and "p(change)" in status.value
    before = [t for t in fig.data if t.mode == "markers"][0].x[0]
    gap.value = 86400.0
    after = [t for t in fig.data if t.mode == "markers"][0].x[0]
    assert before == pytest.approx(10.0) and after == pytest.approx(86400.0)
    assert "86,400" in status.value
    # the marker sits at the model's computed prediction for that gap, the number the status line gives
    from tempo_analysis.stream.time_effect import gap_what_if
    gap.value = 3000.0                       # between two of the sweep's gaps
    computed = float(gap_what_if(clf, tl, [post], [gap.value])[0, 0])
    assert [t for t in fig.data if t.mode == "markers"][0].y[0] == pytest.approx(computed, abs=1e-7)
    assert f"{computed:.3f}" in status.value


def test_what_if_panel_starts_from_the_posts_real_gap_even_past_four_days():
    """The gap slider reaches the longest gap in the data: a post written 10 days after the previous
    one is shown at 10 days (a slider clamps its value, so a 4-day cap showed another gap's prediction)."""
    import pandas as pd

    from tempo_analysis.data.timelines import Timelines

    t0 = pd.Timestamp("2023-01-01", tz="UTC")
    stamps = [t0, t0 + pd.Timedelta("1min"), t0 + pd.Timedelta("2min"), t0 + pd.Timedelta(days=10, minutes=2)]
    tl = Timelines.from_frame(pd.DataFrame(dict(timeline_id="a", post_id=["a0", "a1", "a2", "a3"], timestamp=stamps,
                                                label=["O", "O", "O", "IS"], text=["x y", "y z", "z w", "w v"])))

    class GapReader:              # p(IS) = the post's gap in days / 20: the bars show the gap the model saw
        window, label_names_ = 3, ["O", "IS"]

        def predict_proba(self, timelines, window=None):
            s = timelines.df["seconds"].to_numpy()
            g = np.r_[0, np.diff(s)] / 86400 / 20
            return np.c_[1 - g, g]

    panel = what_if_panel(GapReader(), tl)
    picks, text, sliders, status, bars = panel.children
    gap = sliders.children[0]
    assert picks.children[1].value == "a3" and gap.value == pytest.approx(10 * 86400, rel=1e-3)
    assert bars.data[0].y[1] == pytest.approx(0.5, abs=1e-3)


def test_what_if_panel_opens_at_the_fourth_post_reads_each_posts_own_gap_and_predicts_once_per_move():
    import pandas as pd

    from tempo_analysis.data.timelines import Timelines

    t0 = pd.Timestamp("2023-01-01", tz="UTC")
    offsets = [0, 60, 3660, 3670, 90000, 90060]                   # gaps 1 min, 1 h, 10 s, ~1 day, 1 min
    rows = [dict(timeline_id="a", post_id=f"a{i}", timestamp=t0 + pd.Timedelta(seconds=o), label="O", text=f"x{i}")
            for i, o in enumerate(offsets)]
    rows += [dict(timeline_id="b", post_id=f"b{i}", timestamp=t0 + pd.Timedelta(days=9, minutes=i), label="O",
                  text=f"y{i}") for i in range(2)]
    tl = Timelines.from_frame(pd.DataFrame(rows))
    calls = []

    class Reader:
        window, label_names_ = 3, ["O", "IS"]

        def predict_proba(self, timelines, window=None):
            calls.append(1)
            return np.tile([0.7, 0.3], (len(timelines.df), 1))

    panel = what_if_panel(Reader(), tl)
    (tl_pick, post_pick, _), gap, window = panel.children[0].children, *panel.children[2].children
    assert tl_pick.value == "a" and post_pick.value == "a3" and gap.value == pytest.approx(10.0)   # the 4th post
    assert window.min == 1 and window.max == 20 and window.value == 3
    for post, seconds in (("a2", 3600.0), ("a4", 86330.0), ("a1", 60.0)):
        calls.clear()
        post_pick.value = post
        assert gap.value == pytest.approx(seconds, rel=0.01) and len(calls) == 1, post   # one prediction a move
    calls.clear()
    tl_pick.value = "b"                                            # two posts: the last one is picked
    assert post_pick.value == "b1" and gap.value == pytest.approx(60.0, rel=0.01) and len(calls) == 1
    calls.clear()
    post_pick.value = "b0"                                         # a first post has no gap: the slider is off
    assert gap.disabled and len(calls) == 1


def test_timeline_viewer_opens_at_the_first_timeline(fitted):
    clf, tl = fitted
    pick, fig = timeline_viewer(clf, tl).children
    assert pick.value == tl.timeline_ids[0] and str(tl.timeline_ids[0]) in fig.layout.title.text


def test_the_gap_sweep_reaches_the_longest_gap_in_the_data():
    import math

    import pandas as pd

    from tempo_analysis.data.timelines import Timelines
    from tempo_analysis.stream.time_effect import longest_gap
    from tempo_analysis.widgets.stream import gap_sweep_panel

    t0 = pd.Timestamp("2023-01-01", tz="UTC")
    # timeline a: a 10-day silence before its last post; b starts 30 days after a ends (not a gap)
    stamps = [t0, t0 + pd.Timedelta("1min"), t0 + pd.Timedelta(days=10, minutes=1),
              t0 + pd.Timedelta(days=40), t0 + pd.Timedelta(days=40, hours=1)]
    tl = Timelines.from_frame(pd.DataFrame(dict(timeline_id=["a", "a", "a", "b", "b"],
                                                post_id=["a0", "a1", "a2", "b0", "b1"], timestamp=stamps,
                                                label=["O", "O", "IS", "O", "IS"], text=["x y"] * 5)))
    assert longest_gap(tl) == pytest.approx(10 * 86400)
    assert longest_gap(tl, at_least=20 * 86400) == 20 * 86400
    short = Timelines.from_frame(tl.df[tl.df["timeline_id"] == "b"].drop(columns="seconds"))
    assert longest_gap(short) == 4 * 86400                                # at least 4 days by default

    class GapReader:              # p(IS) = the post's gap in days / 20
        window, label_names_ = 3, ["O", "IS"]

        def predict_proba(self, timelines, window=None):
            s = timelines.df["seconds"].to_numpy()
            g = np.r_[0, np.diff(s)] / 86400 / 20
            return np.c_[1 - g, g]

    panel = gap_sweep_panel({"reader": GapReader()}, tl, post_ids=["a2"])
    gap, fig = panel.children[0].children[1], panel.children[2]
    assert gap.max == pytest.approx(math.log10(10 * 86400))
    curve = next(t for t in fig.data if t.mode == "lines")
    assert curve.x[-1] == pytest.approx(10 * 86400) and curve.y[-1] == pytest.approx(0.5)


def _scores(macro: float, std: float, per_class: dict) -> dict:
    return {"summary": {"f1": {n: {"mean": v, "std": 0.0} for n, v in per_class.items()},
                        "macro_f1": {"mean": macro, "std": std}}}


def test_results_table_gives_each_model_its_difference_from_the_reference():
    res = {"control": _scores(0.60, 0.02, {"O": 0.9, "IS": 0.3}),
           "TempoFormer": _scores(0.75, 0.05, {"O": 0.92, "IS": None})}
    cells = [list(c) for c in figs.results_table(res, ["O", "IS"], reference="control").to_dict()["data"][0]["cells"]["values"]]
    assert cells[0] == ["control", "TempoFormer"]
    assert cells[1:3] == [["90.0", "92.0"], ["30.0", "–"]]               # a class never scored reads "–"
    assert cells[3] == ["60.0 ± 2.0", "75.0 ± 5.0"]
    assert cells[4] == ["", "+15.0"]                                     # the reference row has no difference
    header = figs.results_table(res, ["O", "IS"]).to_dict()["data"][0]["header"]["values"]
    assert "Δ macro" not in header                                       # no reference, no difference column


def test_comparison_chart_draws_error_bars_on_a_zero_to_one_axis():
    res = {"m": _scores(0.5, 0.1, {"O": 0.8, "IS": 0.2})}
    d = figs.comparison_chart(res, ["O", "IS"]).to_dict()
    assert d["data"][0]["error_y"]["visible"] is True and list(d["data"][0]["error_y"]["array"]) == [0.0, 0.0, 0.1]
    assert list(d["layout"]["yaxis"]["range"]) == [0, 1]


def test_probability_plot_marks_the_true_changes_at_their_posts():
    tl = make_timelines(n_timelines=2, n_posts=(8,), labels=("O", "IS", "IE"), seed=3)
    tid = tl.timeline_ids[0]
    posts = tl.timeline(tid)
    proba = np.full((len(tl.df), 3), 1 / 3)
    d = figs.probability_plot(tl, tid, proba, ["O", "IS", "IE"]).to_dict()
    x = {t["name"]: list(t["x"]) for t in d["data"]}
    stamps = figs.probability_plot(tl, tid, proba, ["O", "IS", "IE"]).data[0].x
    for name in ("IS", "IE"):
        hits = [s for s, lab in zip(stamps, posts["label"]) if lab == name]
        assert x[f"true {name}"] == hits and hits, name


def test_timeline_plot_draws_unlabelled_posts_as_plain_circles():
    tl = make_timelines(n_timelines=3, n_posts=(4,), labels=("O", "IS"), seed=1)
    df = tl.df.copy()
    df.loc[df["timeline_id"] == "tl2", "label"] = None
    tl.df = df
    d = figs.timeline_plot(tl).to_dict()
    traces = {t["name"]: t for t in d["data"]}
    assert traces["(unlabelled)"]["marker"]["symbol"] == "circle" and traces["(unlabelled)"]["marker"]["size"] == 8
    assert traces["IS"]["marker"]["symbol"] == "diamond" and traces["IS"]["marker"]["size"] > 8
    assert d["layout"]["title"]["text"].startswith("3 timelines")
    many = make_timelines(n_timelines=14, n_posts=(2,), seed=2)
    shown = {y for t in figs.timeline_plot(many).to_dict()["data"] for y in t["y"]}
    assert shown == set(many.timeline_ids[:12])                          # the first 12 by default


def test_attention_heatmap_layer_head_and_colour_scale():
    # two upper layers, two heads, two posts: each (layer, head) its own pattern
    att = {"attention": [[[[0.9, 0.1], [0.5, 0.5]], [[0.7, 0.3], [0.1, 0.9]]],
                         [[[0.2, 0.8], [0.4, 0.6]], [[0.6, 0.4], [0.0, 1.0]]]], "gaps": [7200.0, 0.0]}
    last = figs.attention_heatmap(att).to_dict()
    np.testing.assert_allclose(arr(last["data"][0]["z"]), [[0.4, 0.6], [0.2, 0.8]])   # the last layer, heads averaged
    assert last["layout"]["title"]["text"] == "temporal rotary attention (upper layer 2 of 2, mean over heads)"
    assert last["data"][0]["zmin"] == 0 and last["data"][0]["zmax"] == pytest.approx(0.8)
    assert list(last["data"][0]["x"]) == ["0: −2.0 h", "1: now"]
    first = figs.attention_heatmap(att, layer=0, head=1).to_dict()
    np.testing.assert_allclose(arr(first["data"][0]["z"]), [[0.7, 0.3], [0.1, 0.9]])
    assert first["layout"]["title"]["text"] == "temporal rotary attention (upper layer 1 of 2, head 1)"
    assert figs.attention_heatmap(att, layer=-2, head=0).to_dict()["data"][0]["zmax"] == pytest.approx(0.9)
    for bad, match in (({"layer": 2}, "layer=2, but the model has 2"), ({"layer": -3}, "layer=-3"),
                       ({"head": 2}, "head=2, but each layer has 2"), ({"head": -1}, "head=-1")):
        with pytest.raises(ValueError, match=match):
            figs.attention_heatmap(att, **bad)


def test_window_chart_draws_each_class_when_named():
    by_window = {"10": _scores(0.6, 0.1, {"O": 0.9, "IS": 0.3}), "5": _scores(0.5, 0.0, {"O": 0.8, "IS": 0.2})}
    d = figs.window_chart(by_window, ["O", "IS"]).to_dict()
    assert [t["name"] for t in d["data"]] == ["macro-F1", "F1 O", "F1 IS"]
    assert list(arr(d["data"][2]["y"])) == [0.2, 0.3]                   # ordered by window size
    assert [t["name"] for t in figs.window_chart(by_window).to_dict()["data"]] == ["macro-F1"]
