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
    late = wf.assign(seeds=[2, 0])  # the seed slice after the first: its units drawn as seeds, not flights
    d = figs.walk_flight_bars(late).to_dict()
    assert [t["name"].split()[0] for t in d["data"]] == ["seeds", "walk", "flight"] and list(d["data"][0]["y"]) == [2, 0]
    assert not d["layout"].get("annotations")
    empty = wf.assign(new=0, walk=0, flight=0, seeds=0)   # the model holds the association nowhere
    d = figs.walk_flight_bars(empty).to_dict()
    assert "nothing spread" in d["layout"]["annotations"][0]["text"]


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


# -- the small-multiples map --------------------------------------------------------------------
@pytest.fixture(scope="module")
def multiples(small):
    g, rhat, _ = small
    g = g.copy()
    g.add_edge("c", "d")
    rhat = pd.concat([rhat, pd.DataFrame({"unit": ["d", "d", "c"], "time": [0, 2, 2], "rhat": [0.5, 1.0, 0.25]})])
    rhat = rhat[~((rhat["unit"] == "a") & (rhat["time"] == 2))]
    communities = {"a": 0, "b": 0, "c": 1, "d": 1}
    top = {"a": ["keyboard", "server"], "b": ["rain", "roses"], "c": ["fish"], "d": ["boat", "bridge"]}
    layout = figs.graph_layout(g, seed=0)
    fig = figs.diffusion_small_multiples(g, rhat, [0, 1, 2], layout=layout, communities=communities, top_words=top,
                                         cmax=10, word="cloud", anchor="server", first={"a": 0, "b": 1, "d": 0})
    return fig.to_dict(), layout, rhat


def _nodes(d):
    """{(unit, slice): (trace, point index)} over the node traces (those with hover text)."""
    out = {}
    for tr in d["data"]:
        for i, h in enumerate(tr.get("hovertext") or []):
            unit = h.split("<b>")[1].split("</b>")[0]
            t = int(h.split("slice ")[1].split("<br>")[0])
            out[(unit, t)] = (tr, i)
    return out


def test_small_multiples_one_panel_per_slice_same_layout(multiples):
    d, layout, _ = multiples
    axes = {(tr.get("xaxis", "x"), tr.get("yaxis", "y")) for tr in d["data"] if tr.get("hovertext")}
    assert len(axes) == 3                                           # one subplot per slice
    assert [a["text"] for a in d["layout"]["annotations"][:3]] == ["slice 0", "slice 1", "slice 2"]
    nodes = _nodes(d)
    assert len(nodes) == 4 * 3                                      # every unit in every panel
    for (u, t), (tr, i) in nodes.items():                           # a unit stays in place across slices
        assert (tr["x"][i], tr["y"][i]) == pytest.approx(layout[u])
    edges = [tr for tr in d["data"] if tr.get("mode") == "lines"]
    assert len(edges) == 3 and all(len([v for v in e["x"] if v is not None]) == 6 for e in edges)


def test_small_multiples_colour_follows_rhat(multiples):
    d, _, rhat = multiples
    nodes = _nodes(d)
    for row in rhat.itertuples():
        tr, i = nodes[(row.unit, row.time)]
        assert tr["marker"]["color"][i] == row.rhat and tr["marker"]["coloraxis"] == "coloraxis"
    ax = d["layout"]["coloraxis"]
    assert ax["cmin"] == 0 and ax["cmax"] == 10 and "cloud" in ax["colorbar"]["title"]["text"]
    tr, i = nodes[("a", 2)]                                         # no r-hat row: grey, not on the scale
    assert tr["marker"]["color"] == "#e6e6e6" and "not observed" in tr["hovertext"][i]
    assert "r̂(cloud → server) = 0.50" in nodes[("d", 0)][0]["hovertext"][nodes[("d", 0)][1]]


def test_small_multiples_can_fill_with_the_anchor_probability(multiples):
    """value="anchor_prob": the nodes carry the graded column, on the colour range given (so two
    models' maps compare on one scale), labelled as a probability; the default range is its maximum."""
    _, _, rhat = multiples
    rhat = rhat.assign(anchor_prob=0.01 * (rhat["time"] + 1) + 0.001 * rhat["rhat"])
    g = nx.Graph([("a", "b"), ("b", "c"), ("c", "d")])
    d = figs.diffusion_small_multiples(g, rhat, [0, 1, 2], value="anchor_prob", cmin=0.005, cmax=0.05,
                                       word="cloud", anchor="server").to_dict()
    nodes = _nodes(d)
    for row in rhat.itertuples():
        tr, i = nodes[(row.unit, row.time)]
        assert tr["marker"]["color"][i] == pytest.approx(row.anchor_prob)
    ax = d["layout"]["coloraxis"]
    assert (ax["cmin"], ax["cmax"]) == (0.005, 0.05) and ax["colorbar"]["title"]["text"] == "p(server | cloud, unit, slice)"
    auto = figs.diffusion_small_multiples(g, rhat, [0, 1, 2], value="anchor_prob").to_dict()["layout"]["coloraxis"]
    assert auto["cmax"] == pytest.approx(rhat["anchor_prob"].max())
    with pytest.raises(ValueError, match="value='rank'"):
        figs.diffusion_small_multiples(g, rhat, [0, 1, 2], value="rank")
    with pytest.raises(ValueError, match="anchor_prob comes from prediction_rhat"):
        figs.diffusion_small_multiples(g, rhat.drop(columns=["anchor_prob"]), [0, 1, 2], value="anchor_prob")


def test_small_multiples_hover_names_unit_and_top_words(multiples):
    d, _, _ = multiples
    for (u, t), (tr, i) in _nodes(d).items():
        h = tr["hovertext"][i]
        assert f"<b>{u}</b>" in h and f"slice {t}" in h
        assert "top words: " + {"a": "keyboard, server", "b": "rain, roses", "c": "fish", "d": "boat, bridge"}[u] in h
    tr, i = _nodes(d)[("b", 0)]
    assert "first holds it in slice 1" in tr["hovertext"][i]


def test_small_multiples_communities_distinguishable(multiples):
    d, _, _ = multiples
    style = {}
    for (u, t), (tr, i) in _nodes(d).items():
        style.setdefault(u, set()).add((tr["marker"]["line"]["color"][i], tr["marker"]["symbol"][i]))
    assert all(len(s) == 1 for s in style.values())                 # one style per unit in every panel
    assert style["a"] == style["b"] and style["c"] == style["d"] and style["a"] != style["c"]
    (colour_a, symbol_a), = style["a"]
    (colour_c, symbol_c), = style["c"]
    assert colour_a != colour_c and symbol_a != symbol_c
    legend = {tr["name"]: tr for tr in d["data"] if tr.get("showlegend")}
    assert legend["community 0"]["marker"]["line"]["color"] == colour_a
    assert legend["community 1"]["marker"]["symbol"] == symbol_c
    assert "first holds it in this slice" in legend and "word not used (not observed)" in legend


def test_small_multiples_bad_input(small):
    g, rhat, _ = small
    with pytest.raises(ValueError, match="no position"):
        figs.diffusion_small_multiples(g, rhat, [0, 1], layout={"a": (0, 0)})
    with pytest.raises(ValueError, match="rhat has no column"):
        figs.diffusion_small_multiples(g, rhat.drop(columns=["rhat"]), [0, 1])
    d = figs.diffusion_small_multiples(g, rhat, [0, 1, 2, 3, 4]).to_dict()   # 5 slices: 3 per row
    assert d["layout"]["xaxis4"]["domain"] == d["layout"]["xaxis"]["domain"]


# a square with one diagonal, at positions that tell x from y
SQUARE = nx.Graph([("a", "b"), ("b", "c"), ("c", "d"), ("d", "a"), ("a", "c")])
AT = {"a": (0.0, 0.0), "b": (1.0, 0.0), "c": (1.0, 2.0), "d": (0.0, 2.0)}
SQUARE_RHAT = pd.DataFrame({"unit": ["a", "b", "c", "d"], "time": [0, 0, 1, 1], "rhat": [0.2, 0.4, 0.6, 0.8]})


def _segments(trace) -> set:
    """The edges an edge trace draws, as sets of two end points (the pen lifts at each None)."""
    xs, ys = list(trace["x"]), list(trace["y"])
    assert xs[2::3] == [None] * (len(xs) // 3) and ys[2::3] == [None] * (len(ys) // 3)
    return {frozenset({(xs[i], ys[i]), (xs[i + 1], ys[i + 1])}) for i in range(0, len(xs), 3)}


def _drawn_edges():
    return {frozenset({AT[a], AT[b]}) for a, b in SQUARE.edges}


def test_network_map_draws_each_edge_between_its_nodes_and_each_node_at_its_place():
    d = figs.network_map(SQUARE, SQUARE_RHAT, [0, 1], layout=AT, start=1).to_dict()
    edges, *slices = d["data"]
    assert _segments(edges) == _drawn_edges() and edges["showlegend"] is False
    for s in slices:
        assert list(zip(s["x"], s["y"])) == [AT[u] for u in SQUARE.nodes] and s["showlegend"] is False
    assert slices[0]["marker"]["cmin"] == 0 and slices[0]["marker"]["cmax"] == 1.0   # r-hat below 1: the scale is 0-1
    assert d["layout"]["sliders"][0]["active"] == 1 and slices[1]["visible"] is True and slices[0]["visible"] is False
    assert d["layout"]["xaxis"]["visible"] is False and d["layout"]["yaxis"]["visible"] is False
    wide = figs.network_map(SQUARE, SQUARE_RHAT.assign(rhat=[0.0, 9.0, 3.0, 1.0]), [0, 1], layout=AT).to_dict()
    assert wide["data"][1]["marker"]["cmax"] == 9.0                                  # else up to the largest r-hat


def test_small_multiples_draw_edges_between_nodes_and_frame_every_node():
    d = figs.diffusion_small_multiples(SQUARE, SQUARE_RHAT, [0, 1], layout=AT).to_dict()
    edges = [tr for tr in d["data"] if tr.get("mode") == "lines"]
    assert len(edges) == 2 and all(_segments(e) == _drawn_edges() and e["showlegend"] is False for e in edges)
    for tr in d["data"]:
        if tr.get("hovertext"):
            unit_at = {h.split("<b>")[1].split("</b>")[0]: (x, y) for h, x, y in zip(tr["hovertext"], tr["x"], tr["y"])}
            assert all(AT[u] == xy for u, xy in unit_at.items())
    # x spans 0-1 and y 0-2: each axis padded by 8% of its own span
    assert d["layout"]["xaxis"]["range"] == pytest.approx([-0.08, 1.08])
    assert d["layout"]["yaxis"]["range"] == pytest.approx([-0.16, 2.16])
    assert d["layout"]["coloraxis"]["cmax"] == 1.0                                   # r-hat below 1: the scale is 0-1
    line = {u: (0.5, float(i)) for i, u in enumerate("abcd")}                        # every x the same: pad 0.08
    flat = figs.diffusion_small_multiples(SQUARE, SQUARE_RHAT, [0, 1], layout=line).to_dict()
    assert flat["layout"]["xaxis"]["range"] == pytest.approx([0.42, 0.58])
    assert "r̂" in flat["layout"]["coloraxis"]["colorbar"]["title"]["text"]          # no word: the value's name alone
    assert "(" not in flat["layout"]["coloraxis"]["colorbar"]["title"]["text"]


@pytest.mark.parametrize("n, rows, cols", [(1, 1, 1), (3, 1, 3), (4, 1, 4), (5, 2, 3), (7, 3, 3)])
def test_small_multiples_one_row_up_to_four_slices_then_three_per_row(n, rows, cols):
    d = figs.diffusion_small_multiples(SQUARE, SQUARE_RHAT, list(range(n)), layout=AT).to_dict()
    xs = {k for k in d["layout"] if k.startswith("xaxis")}
    ys = {round(d["layout"][k]["domain"][0], 6) for k in d["layout"] if k.startswith("yaxis")}
    assert len(xs) == rows * cols and len(ys) == rows
    if rows == 1:
        assert d["layout"]["yaxis"]["domain"] == [0.0, 1.0]        # one row: no vertical spacing taken
    else:                                                           # rows apart by the 0.08 spacing
        lows = sorted({tuple(d["layout"][k]["domain"]) for k in d["layout"] if k.startswith("yaxis")})
        assert lows[1][0] - lows[0][1] == pytest.approx(0.08)


def test_graph_layout_spreads_nodes_in_two_dimensions_and_follows_the_seed():
    g = nx.cycle_graph(6)
    pos = figs.graph_layout(g, seed=3)
    assert pos == figs.graph_layout(g, seed=3) and len({round(x - y, 6) for x, y in pos.values()}) > 1
    tree = nx.path_graph(3)                                         # connected: started from Kamada-Kawai
    assert figs.graph_layout(tree, seed=0) == figs.graph_layout(tree, seed=1)
    apart = nx.Graph([(0, 1), (2, 3)])                              # not connected: spring layout from the seed
    assert figs.graph_layout(apart, seed=0) != figs.graph_layout(apart, seed=1)
    assert set(figs.graph_layout(nx.Graph([("x", "y")]))) == {"x", "y"}
    assert list(figs.graph_layout(nx.empty_graph(["solo"]))) == ["solo"]
    with pytest.raises(ValueError, match="no nodes"):
        figs.graph_layout(nx.Graph())


def test_small_multiples_ring_the_first_holders_in_their_slice_on_hidden_axes():
    d = figs.diffusion_small_multiples(SQUARE, SQUARE_RHAT, [0, 1], layout=AT, word="cloud", anchor="server",
                                       first={"a": 0, "c": 1, "b": None}).to_dict()
    rings = {tr["name"]: list(zip(tr["x"], tr["y"])) for tr in d["data"] if tr["name"] in ("first 0", "first 1")}
    assert rings == {"first 0": [AT["a"]], "first 1": [AT["c"]]}
    assert all(tr["showlegend"] is False for tr in d["data"] if tr["name"] in rings or tr["name"].startswith("slice "))
    assert d["layout"]["xaxis"]["visible"] is False and d["layout"]["yaxis"]["visible"] is False
    assert d["layout"]["title"]["text"] == "r̂(cloud → server) per unit, one panel per time slice"
    plain = figs.diffusion_small_multiples(SQUARE, SQUARE_RHAT, [0, 1], layout=AT).to_dict()
    assert plain["layout"]["title"]["text"] == "the social network per time slice"
