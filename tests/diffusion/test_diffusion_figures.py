"""Diffusion figures, asserted through fig.to_dict()."""
import networkx as nx
import pandas as pd
import pytest

from tempo_analysis.figures import diffusion as figs


@pytest.fixture(scope="module")
def small():
    g = nx.path_graph(["a", "b", "c"])
    rhat = pd.DataFrame({"unit": ["a", "b", "a", "b", "c"], "time": [0, 0, 1, 1, 1], "rhat": [5.0, 0.0, 7.0, 3.0, 0.0],
                         "example": ["The cloud server.", "A dark cloud.", "Cloud server up.", "Our cloud server.",
                                     "Rain cloud."]})
    wf = pd.DataFrame({"time": [1, 2], "new": [1, 2], "walk": [1, 0], "flight": [0, 2], "walk_share": [1.0, 0.0],
                       "flight_share": [0.0, 1.0]})
    return g, rhat, wf


def test_network_map_slider_colours_hover(small):
    g, rhat, _ = small
    fig = figs.network_map(g, rhat, [0, 1], n_neighbors=10, word="cloud", anchor="server", first={"a": 0, "b": 1})
    d = fig.to_dict()
    assert len(d["data"]) == 3  # edges + one node trace per slice
    edges, s0, s1 = d["data"]
    assert edges["mode"] == "lines" and len([v for v in edges["x"] if v is not None]) == 4
    assert list(s0["marker"]["color"]) == [5.0, 0.0, 0]       # c not observed at slice 0 -> drawn hollow
    assert list(s0["marker"]["symbol"]) == ["circle", "circle", "circle-open"]
    assert list(s1["marker"]["color"]) == [7.0, 3.0, 0.0]
    assert s1["marker"]["cmax"] == 10 and s0["visible"] is True and s1["visible"] is False
    assert "The cloud server." in s0["hovertext"][0] and "<b>a</b>" in s0["hovertext"][0]
    assert "not observed" in s0["hovertext"][2]
    steps = d["layout"]["sliders"][0]["steps"]
    assert [s["label"] for s in steps] == ["0", "1"]
    assert steps[1]["args"][0]["visible"] == [True, False, True]
    assert "slice 0" in d["layout"]["title"]["text"] and "cloud" in d["layout"]["title"]["text"]
    with pytest.raises(ValueError, match="no position"):
        figs.network_map(g, rhat, [0, 1], layout={"a": (0, 0)})


def test_walk_flight_bars(small):
    *_, wf = small
    d = figs.walk_flight_bars(wf).to_dict()
    assert [t["name"].split()[0] for t in d["data"]] == ["walk", "flight"]
    assert list(d["data"][0]["y"]) == [1, 0] and list(d["data"][1]["y"]) == [0, 2]
    assert d["layout"]["barmode"] == "stack"


def test_heatmap_perplexity_table(small):
    _, rhat, _ = small
    h = figs.rhat_heatmap(rhat).to_dict()["data"][0]
    assert list(h["y"]) == ["a", "b", "c"] and h["z"][0][1] == 7.0
    p = figs.perplexity_bars({"dcwe": 10.0, "cwe": 11.0, "sa": 10.5, "ta": 12.0, "start": 30.0}).to_dict()["data"][0]
    assert list(p["x"])[0] == "before fine-tuning" and list(p["y"]) == [30.0, 11.0, 10.0, 10.5, 12.0]
    table = pd.DataFrame([{"word": "cloud", "sigma_sim": 0.01, "mean_sim": 0.99, "above_context": "a @ 0",
                           "above_text": "Rain cloud.", "below_context": "b @ 1", "below_text": "Cloud server."}])
    t = figs.variable_words_table(table).to_dict()["data"][0]
    assert t["type"] == "table" and list(t["cells"]["values"][0]) == ["cloud"] and t["cells"]["values"][1][0] == "0.0100"
    with pytest.raises(ValueError, match="sim_table"):
        figs.variable_words_table(table.drop(columns=["below_text"]))
