"""Diffusion analyses on hand-built inputs: r-hat ranks, diffusion map, walk vs flight, mode."""
import warnings

import networkx as nx
import numpy as np
import pandas as pd
import pytest

from tempo_analysis.diffusion.analysis import (ContextIndex, diffusion_map, example_sentence, recover_mode,
                                               resolve_n_neighbors, rhat_scores, walk_flight)


def _index():
    """2 slices, units a/b; 'cloud' in a is near 'server' at slice 1 only; 5 filler words."""
    words = ["cloud", "server", "rain", "f1", "f2", "f3", "f4"]
    basis = np.eye(8, dtype=np.float32)
    rows = []  # (word, unit, time, vector)
    for t in (0, 1):
        for w_i, w in enumerate(words[1:], start=1):
            for _ in range(2):
                rows.append((w, "a", t, basis[w_i]))
    # cloud: unit a at slice 1 points at server; otherwise at rain; unit b slice 0 between rain and f1
    rows += [("cloud", "a", 0, basis[2]), ("cloud", "a", 1, basis[1] + 0.1 * basis[2]),
             ("cloud", "b", 0, basis[2] + 0.5 * basis[3]), ("cloud", "b", 1, basis[2])]
    return ContextIndex(words=words, word_id=np.array([words.index(r[0]) for r in rows]),
                        unit=np.array([r[1] for r in rows], dtype=object), time=np.array([r[2] for r in rows], dtype=object),
                        doc_id=np.array([f"d{i}" for i in range(len(rows))], dtype=object),
                        vectors=np.stack([r[3] for r in rows]),
                        texts={f"d{i}": f"The {r[0]} here. Other." for i, r in enumerate(rows)},
                        slices=[0, 1], units=["a", "b"])


def test_rhat_rank_definition():
    idx = _index()
    r = rhat_scores(idx, "cloud", "server", n_neighbors=3).set_index(["unit", "time"])
    # a@1: server is the nearest centroid -> rank 1 -> r-hat = N - 1 + 1 = 3
    assert r.loc[("a", 1), "rhat"] == 3 and r.loc[("a", 1), "rank"] == 1
    # a@0: nearest is rain (rank 1); server ties with the other orthogonal words -> rank 2 -> r-hat 2
    assert r.loc[("a", 0), "rank"] == 2 and r.loc[("a", 0), "rhat"] == 2
    # with N = 1 only the top neighbour counts: server absent -> 0
    r1 = rhat_scores(idx, "cloud", "server", n_neighbors=1).set_index(["unit", "time"])
    assert r1.loc[("a", 0), "rhat"] == 0 and r1.loc[("a", 1), "rhat"] == 1
    # b@0: rain and f1 are closer than server -> rank 3
    assert r.loc[("b", 0), "rank"] == 3 and r.loc[("b", 0), "rhat"] == 1
    assert set(r.columns) >= {"n", "example"} and r.loc[("a", 1), "example"] == "The cloud here."


def test_rhat_bad_input_messages():
    idx = _index()
    with pytest.raises(ValueError, match="never occurs in the indexed corpus"):
        rhat_scores(idx, "mask", "server")
    with pytest.raises(ValueError, match="anchor 'vaccine' never occurs"):
        rhat_scores(idx, "cloud", "vaccine")
    with pytest.raises(ValueError, match="two different words"):
        rhat_scores(idx, "cloud", "Cloud")
    # a word never seen in one slice: warning naming the slice, rows only for the other
    keep = ~((idx.word_id == 0) & (idx.time == 1))
    sub = ContextIndex(idx.words, idx.word_id[keep], idx.unit[keep], idx.time[keep], idx.doc_id[keep],
                       idx.vectors[keep], idx.texts, idx.slices, idx.units)
    with pytest.warns(UserWarning, match=r"never occurs in slice\(s\) \[1\]"):
        r = rhat_scores(sub, "cloud", "server", n_neighbors=3)
    assert set(r["time"]) == {0}


def test_n_neighbors_auto():
    assert resolve_n_neighbors("auto", 100000) == 100
    assert resolve_n_neighbors("auto", 300) == 15
    assert resolve_n_neighbors("auto", 20) == 5
    with pytest.raises(ValueError, match="n_neighbors"):
        resolve_n_neighbors(0, 10)


def _path_graph():
    g = nx.path_graph(["a", "b", "c", "d", "e", "f"])
    return g


def test_diffusion_map_first_arrival():
    rhat = pd.DataFrame({"unit": ["a", "a", "b", "b", "c"], "time": [0, 1, 0, 1, 1], "rhat": [5, 0, 0, 2, 0]})
    holds, first = diffusion_map(rhat, ["a", "b", "c", "d"], [0, 1])
    assert first == {"a": 0, "b": 1, "c": None, "d": None}
    assert holds.loc["a", 0] is True and holds.loc["c", 1] is False and pd.isna(holds.loc["d", 0])


def test_walk_flight_and_mode_recovery():
    g = _path_graph()
    walk = {"a": 0, "b": 1, "c": 2, "d": 3, "e": None, "f": None}
    wf = walk_flight(g, walk, [0, 1, 2, 3])
    assert wf["seeds"].tolist() == [1, 0, 0, 0] and wf["walk_share"].tolist()[1:] == [1.0, 1.0, 1.0]
    assert wf["flight"].sum() == 0 and np.isnan(wf["walk_share"][0])   # the seed slice: no arrivals
    m = recover_mode(g, walk, [0, 1, 2, 3])
    assert m["mode"] == "walk" and m["walk_share"] == 1.0 and m["expected_walk_share"] < 0.5
    flight = {"a": 0, "c": 1, "e": 2, "b": None, "d": None, "f": None}
    wf = walk_flight(g, flight, [0, 1, 2])
    assert wf["walk"].sum() == 0 and wf["flight_share"].tolist()[1:] == [1.0, 1.0]
    assert recover_mode(g, flight, [0, 1, 2])["mode"] == "flight"
    assert recover_mode(g, {"a": 0, "b": None}, [0, 1])["mode"] is None
    # the first units to hold it are seeds, not flights, also when nothing is reached at slice 0
    late = {"a": None, "b": 1, "c": 2, "d": 3, "e": None, "f": None}
    wf = walk_flight(g, late, [0, 1, 2, 3])
    assert wf[["seeds", "new", "walk", "flight"]].to_numpy().tolist() == [[0, 0, 0, 0], [1, 0, 0, 0], [0, 1, 1, 0], [0, 1, 1, 0]]
    m = recover_mode(g, late, [0, 1, 2, 3])
    assert m["mode"] == "walk" and m["walk_share"] == 1.0 and m["new_units"] == 2
    # a seed with no neighbours: nobody could walk, so the arrivals cannot tell walk from flight
    g.add_node("z")
    m = recover_mode(g, {"z": 0, "b": 1}, [0, 1])
    assert m["mode"] is None and m["walk_share"] == m["expected_walk_share"] == 0.0 and "cannot" in m["note"]
    from tempo_analysis.cli.diffusion import mode_line  # the CLI says why there is no mode
    assert mode_line("w", "a", m).endswith(m["note"]) and "recovered mode none (walk share 0.00" in mode_line("w", "a", m)
    # nothing told (NaN shares), also after a JSON round trip (NaN -> None): "n/a", never a crash
    told = recover_mode(g, {"a": 0, "b": None}, [0, 1])
    for mode in (told, {**told, "walk_share": None, "expected_walk_share": None}):
        assert "walk share n/a, expected under random arrival n/a" in mode_line("w", "a", mode)


def test_spread_reading_follows_edge_direction_observation_and_the_graph():
    # directed edge a -> b: b reads a. b arriving after a is a walk; a arriving after b is not
    g = nx.DiGraph([("a", "b"), ("c", "d")])
    assert walk_flight(g, {"a": 0, "b": 1, "c": None, "d": None}, [0, 1])["walk"].tolist() == [0, 1]
    back = nx.DiGraph([("b", "a")])
    assert walk_flight(back, {"a": 0, "b": 1}, [0, 1])["walk"].tolist() == [0, 0]
    m = recover_mode(g, {"a": 0, "b": 1, "c": None, "d": None}, [0, 1])
    assert m["mode"] == "walk" and m["expected_walk_share"] == pytest.approx(1 / 3)
    # units with no r-hat in a slice cannot be drawn there: the chance pool leaves them out
    path = nx.path_graph(["a", "b", "c", "d", "e"])
    first = {"a": 0, "b": 2, "c": None, "d": None, "e": None}
    assert recover_mode(path, first, [0, 1, 2])["expected_walk_share"] == pytest.approx(0.25)
    holds = pd.DataFrame({0: [True, False, np.nan, np.nan, np.nan], 1: [True, False, np.nan, np.nan, np.nan],
                          2: [True, True, np.nan, np.nan, np.nan]}, index=list("abcde"), dtype=object)
    seen = recover_mode(path, first, [0, 1, 2], holds=holds)
    assert seen["expected_walk_share"] == pytest.approx(1.0) and seen["mode"] is None
    # a unit of the map that is not on the graph is refused, not counted as a flight
    with pytest.raises(ValueError, match=r"not nodes of the graph: \['x'\]"):
        walk_flight(path, {"a": 0, "x": 1}, [0, 1])
    # the planted world's truth counts with the same rule, also when the seeds come late or slices are years
    from tempo_analysis.world.social import walk_share
    for late, slices in (({"b": 1, "c": 2}, [0, 1, 2]), ({"a": 2017, "b": 2018, "c": 2019}, [2017, 2018, 2019])):
        assert walk_share(path, late) == recover_mode(path, late, slices)["walk_share"] == 1.0


def test_example_sentence():
    assert example_sentence("Rain today. The cloud server crashed! Bye.", "cloud") == "The cloud server crashed!"
    assert example_sentence("cloudy skies", "cloud") == "cloudy skies"


def test_unit_top_words_distinctive_and_frequent():
    from tempo_analysis.diffusion.analysis import unit_top_words
    frame = pd.DataFrame({"unit": ["a", "a", "b", "b"],
                          "text": ["The cloud server, the cloud keyboard.", "Cloud and server again.",
                                   "The cloud rain, a cloud of roses.", "Roses and rain."]})
    top = unit_top_words(frame, top=2)
    assert top == {"a": ["server", "keyboard"], "b": ["rain", "roses"]}          # "cloud" is everywhere
    assert unit_top_words(frame, top=1, distinctive=False) == {"a": ["cloud"], "b": ["cloud"]}
    assert unit_top_words(frame, top=3, exclude=("server",))["a"] == ["keyboard", "cloud"]
    with pytest.raises(ValueError, match="no column"):
        unit_top_words(frame.drop(columns=["text"]))


def test_graph_communities_seeded_and_given():
    from tempo_analysis.diffusion.analysis import graph_communities
    g = nx.union(nx.complete_graph(["a", "b", "c", "d"]), nx.complete_graph(["w", "x", "y"]))
    g.add_edge("d", "w")
    com = graph_communities(g, seed=0)
    assert com["a"] == com["b"] == com["c"] == com["d"] == 0 and com["w"] == com["x"] == com["y"] == 1
    nx.set_node_attributes(g, {n: "left" if n < "n" else "right" for n in g}, "community")
    assert graph_communities(g)["w"] == "right"


def test_an_anchor_too_rare_to_be_a_candidate_is_warned_about():
    """r-hat is 0 where the anchor occurs but fewer than min_count times: say so, with the counts."""
    idx = _index()
    server = idx.words.index("server")
    counts = {t: int(((idx.word_id == server) & (idx.time == t)).sum()) for t in idx.slices}
    high = max(counts.values()) + 1
    with pytest.warns(UserWarning, match=rf"anchor 'server' occurs fewer than min_count={high} times"):
        r = rhat_scores(idx, "cloud", "server", n_neighbors=1, min_count=high)
    assert (r["rhat"] == 0).all()


def _without(idx, drop):
    keep = ~drop
    return ContextIndex(idx.words, idx.word_id[keep], idx.unit[keep], idx.time[keep], idx.doc_id[keep],
                        idx.vectors[keep], idx.texts, idx.slices, idx.units)


def test_an_anchor_at_min_count_is_a_candidate_and_a_rarer_one_ranks_behind_every_candidate():
    idx = _index()                                       # 'server' occurs twice in each slice
    with warnings.catch_warnings():
        warnings.simplefilter("error")                   # at min_count exactly: a candidate, no warning
        r = rhat_scores(idx, "cloud", "server", n_neighbors=3, min_count=2).set_index(["unit", "time"])
    assert r.loc[("a", 1), "rank"] == 1
    server = idx.words.index("server")
    once = _without(idx, (idx.word_id == server) & (idx.time == 0) & (np.arange(len(idx.word_id)) % 2 == 0))
    with pytest.warns(UserWarning, match=r"occurs fewer than min_count=2 times in slice\(s\) 0 \(1x\)"):
        r = rhat_scores(once, "cloud", "server", n_neighbors=3, min_count=2).set_index(["unit", "time"])
    # slice 0's candidates: rain and f1..f4; the anchor is not one of them, so it ranks behind all five
    assert r.loc[("a", 0), "rank"] == 6 and r.loc[("a", 0), "rhat"] == 0 and r.loc[("a", 1), "rank"] == 1


def test_word_docs_scores_only_the_words_occurrences_in_those_documents():
    idx = _index()
    cloud = np.flatnonzero(idx.word_id == idx.words.index("cloud"))
    a1 = [d for d, u, t in zip(idx.doc_id[cloud], idx.unit[cloud], idx.time[cloud]) if (u, t) == ("a", 1)]
    with pytest.warns(UserWarning, match=r"never occurs in slice\(s\) \[0\]"):
        r = rhat_scores(idx, "cloud", "server", n_neighbors=3, word_docs=a1)
    assert r[["unit", "time", "rank"]].values.tolist() == [["a", 1, 1.0]]
    with pytest.raises(ValueError, match="never occurs in the 1 documents of word_docs"):
        rhat_scores(idx, "cloud", "server", word_docs=["d0"])          # d0 holds 'server', not 'cloud'


def test_rhat_reads_directions_only():
    """Cosine nearness: rescaling the word's occurrence vectors, or every vector of one candidate
    word, changes no rank."""
    idx = _index()
    want = rhat_scores(idx, "cloud", "server", n_neighbors=3)
    scaled = _index()
    cloud = scaled.mask("cloud")
    scaled.vectors[cloud] *= np.array([0.1, 7.0, 3.0, 0.5], dtype=np.float32)[:, None]
    scaled.vectors[scaled.mask("rain")] *= 40.0
    pd.testing.assert_frame_equal(rhat_scores(scaled, "cloud", "server", n_neighbors=3), want)


def test_unit_top_words_counts_and_units_weigh_as_documented():
    from tempo_analysis.diffusion.analysis import unit_top_words
    frame = pd.DataFrame({"unit": ["a", "b", "c"],
                          "text": ["yak yak yak zebra ox sun", "yak moss", "cat"]})
    # a: yak 3 x log(3/2) = 1.22 beats zebra 1 x log(3/1) = 1.10; "ox" is shorter than min_len = 3
    assert unit_top_words(frame, top=4)["a"] == ["yak", "sun", "zebra"]
    assert unit_top_words(frame, top=4, min_len=2)["a"] == ["yak", "ox", "sun", "zebra"]
    with pytest.raises(ValueError, match="top=0"):
        unit_top_words(frame, top=0)


def test_rows_are_scaled_to_unit_length_one_by_one():
    from tempo_analysis.diffusion.analysis import _unit_rows
    got = _unit_rows(np.array([[3.0, 4.0], [2.0, 0.0], [0.0, 0.0]]))
    np.testing.assert_allclose(got, [[0.6, 0.8], [1.0, 0.0], [0.0, 0.0]])     # a zero row stays zero
