"""tempo_analysis.figures.overview on a tiny generated world, asserting on fig.to_dict()."""
import pandas as pd
import pytest

from tempo_analysis.figures import overview as ov
from tempo_analysis.world import (ChangeWorldConfig, SocialWorldConfig, StreamWorldConfig, WorldConfig,
                                  YearlyWorldConfig, generate_world)  # fmt: skip


@pytest.fixture(scope="module")
def world():
    return generate_world(WorldConfig(
        seed=0,
        stream=StreamWorldConfig(n_timelines=6, posts_per_timeline=(5, 9)),
        change=ChangeWorldConfig(targets=("cell", "tape"), controls=("table",), n_sentences_per_word_period=6),
        social=SocialWorldConfig(n_units=12, n_communities=2, n_slices=4, speed=2, n_changing=1, docs_per_word=1),
        yearly=YearlyWorldConfig(years=(2010, 2013), docs_per_year=10, trend_words=("transformer", "kernel")),
    ))  # fmt: skip


def test_post_gaps_are_per_timeline(world):
    df = world.timelines.df
    gaps = ov.post_gaps(df)
    firsts = df.groupby("timeline_id")["timestamp"].idxmin()
    assert gaps.loc[firsts].isna().all()
    assert (gaps.drop(firsts) > 0).all()
    one = df[df["timeline_id"] == df["timeline_id"].iloc[0]].sort_values("timestamp")
    assert gaps.loc[one.index[1]] == (one["timestamp"].iloc[1] - one["timestamp"].iloc[0]).total_seconds()


def test_timelines_figure(world):
    df = world.timelines.df
    fig = ov.timelines_figure(df, max_timelines=4).to_dict()
    first4 = list(pd.unique(df["timeline_id"]))[:4]
    markers = [t for t in fig["data"] if t["mode"] == "markers"]
    # every post of the 4 timelines is drawn exactly once, in the trace of its label
    assert sum(len(t["x"]) for t in markers) == df["timeline_id"].isin(first4).sum()
    names = {t["name"] for t in markers}
    assert names <= set(ov.LABEL_NAMES.values()) and "ordinary" in names
    assert set(y for t in markers for y in t["y"]) == set(first4)
    assert min(x for t in markers for x in t["x"]) == 0.0  # days since each timeline's first post
    hover = markers[0]["hovertext"][0]
    assert "gap" in hover and "UTC" in hover
    assert fig["layout"]["yaxis"]["categoryarray"] == first4[::-1]
    with pytest.raises(ValueError, match="unknown timeline_ids"):
        ov.timelines_figure(df, timeline_ids=["nope"])
    with pytest.raises(ValueError, match="missing column"):
        ov.timelines_figure(df.drop(columns="label"))


def test_gap_figure(world):
    df = world.timelines.df
    fig = ov.gap_figure(df).to_dict()
    boxes = fig["data"]
    assert all(t["type"] == "box" for t in boxes)
    n_gaps = df.groupby("timeline_id").size().sub(1).sum()
    assert sum(len(t["y"]) for t in boxes) == n_gaps
    assert fig["layout"]["yaxis"]["type"] == "log"


def test_change_figure(world):
    truth = world.change_truth
    fig = ov.change_figure(truth, threshold=0.3).to_dict()
    bars = {t["name"]: t for t in fig["data"]}
    assert set(bars) == {"gain", "loss", "stable"}
    assert list(bars["gain"]["y"]) == ["cell"] and bars["gain"]["x"][0] == pytest.approx(
        float(truth.set_index("word").loc["cell", "graded"]))
    assert "→" in bars["gain"]["hovertext"][0]
    # sorted by change, most changed on top
    order = fig["layout"]["yaxis"]["categoryarray"]
    assert order[-1] == truth.sort_values("graded")["word"].iloc[-1]
    assert any(s.get("type") == "line" and s["x0"] == 0.3 for s in fig["layout"]["shapes"])


def test_diffusion_figure(world):
    truth, graph = world.diffusion_truth, world.social.graph
    fig = ov.diffusion_figure(graph, truth["first_slice"], truth["community"], truth["n_slices"]).to_dict()
    nodes = [t for t in fig["data"] if t.get("mode") == "markers"]
    assert sum(len(t["x"]) for t in nodes) == graph.number_of_nodes()
    adopted = next(t for t in nodes if t["name"] == "adopted")
    assert sorted(adopted["marker"]["color"]) == sorted(v for v in truth["first_slice"].values() if v is not None)
    curves = [t for t in fig["data"] if t.get("mode") == "lines+markers"]
    assert len(curves) == len(set(truth["community"].values()))
    assert all(list(c["y"]) == sorted(c["y"]) for c in curves)  # cumulative adoption never drops
    overall = sum(c["y"][-1] * sum(1 for v in truth["community"].values() if v == i) for i, c in enumerate(curves))
    assert overall == pytest.approx(sum(v is not None for v in truth["first_slice"].values()))
    with pytest.raises(ValueError, match="no first_slice/community"):
        ov.diffusion_figure(graph, {}, truth["community"], truth["n_slices"])


def test_trends_figure(world):
    truth = world.trend_truth
    fig = ov.trends_figure(truth).to_dict()
    assert [t["name"] for t in fig["data"]] == ["transformer", "kernel"]
    kernel = fig["data"][1]
    expected = truth[truth["word"] == "kernel"].sort_values("year")
    assert list(kernel["x"]) == expected["year"].tolist()
    assert list(kernel["y"]) == pytest.approx(expected["rate"].tolist())
    assert kernel["line"]["color"] == ov.TREND_COLORS[expected["trend"].iloc[0]]
    with pytest.raises(ValueError, match="unknown words"):
        ov.trends_figure(truth, words=["blockchain"])


def _posts(gaps_s, labels):
    """One timeline whose posts follow each other by `gaps_s` seconds."""
    t0 = pd.Timestamp("2024-03-01", tz="UTC")
    stamps = [t0 + pd.Timedelta(seconds=float(s)) for s in pd.Series([0, *gaps_s]).cumsum()]
    return pd.DataFrame({"timeline_id": "t", "post_id": [f"p{i}" for i in range(len(stamps))],
                         "timestamp": stamps, "text": "words", "label": labels})


def test_timelines_figure_in_days_with_changes_drawn_larger_and_only_labels_in_the_legend():
    df = _posts([1.5 * 86400, 60], ["O", "IS", "O"])
    fig = ov.timelines_figure(df).to_dict()
    markers = {t["name"]: t for t in fig["data"] if t["mode"] == "markers"}
    assert list(markers["switch (IS)"]["x"]) == [1.5]                  # days since the timeline's first post
    assert markers["switch (IS)"]["marker"]["size"] > markers["ordinary"]["marker"]["size"]
    line = next(t for t in fig["data"] if t["mode"] == "lines")
    assert line["showlegend"] is False and line["hoverinfo"] == "skip"
    assert ov.timelines_figure(df, max_timelines=1).to_dict()["data"]      # one timeline is enough
    with pytest.raises(ValueError, match="max_timelines=0"):
        ov.timelines_figure(df, max_timelines=0)


def test_timelines_figure_shows_the_first_twelve_timelines_by_default():
    df = pd.concat([_posts([60], ["O", "O"]).assign(timeline_id=f"t{k:02d}") for k in range(14)], ignore_index=True)
    shown = {y for t in ov.timelines_figure(df).to_dict()["data"] if t["mode"] == "markers" for y in t["y"]}
    assert shown == {f"t{k:02d}" for k in range(12)}


def test_gap_figure_in_hours_leaves_out_gaps_a_log_axis_cannot_draw():
    df = _posts([7200, 0, 1800], ["O", "O", "IS", "O"])
    fig = ov.gap_figure(df).to_dict()
    values = {t["name"].split("<br>")[0]: sorted(t["y"]) for t in fig["data"]}
    assert values == {"ordinary": [0.5, 2.0]}                            # the 0-second gap before the switch is left out
    assert fig["layout"]["title"]["text"] == "Time gap before a post, by its label"


def test_change_figure_spans_zero_to_one():
    truth = pd.DataFrame({"word": ["a", "b"], "graded": [0.0, 0.4], "kind": ["stable", "gain"]})
    assert list(ov.change_figure(truth).to_dict()["layout"]["xaxis"]["range"]) == [0, 1.0]


def test_diffusion_figure_with_one_slice(world):
    graph = world.social.graph
    first = {u: 0 for u in graph.nodes}
    community = {u: 0 for u in graph.nodes}
    fig = ov.diffusion_figure(graph, first, community, 1).to_dict()
    curve = next(t for t in fig["data"] if t.get("mode") == "lines+markers")
    assert list(curve["x"]) == [0] and list(curve["y"]) == [1.0]
    with pytest.raises(ValueError, match="n_slices=0"):
        ov.diffusion_figure(graph, first, community, 0)
