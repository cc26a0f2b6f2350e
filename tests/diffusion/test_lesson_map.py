"""Lesson 03's map, read the paper's way on the planted world's sense-bearing usages.

The usages carry their sense in their own words, so even the pretrained encoder (no unit or time
input) draws the spread: its r-hat map recovers the planted mode in the walk and in the flight world
(measured at world seed 0: 22 of 24 first arrivals exact in each). The mode needs the social input:
read over a graph with the edges removed, no arrival has a reached neighbour and the walk world no
longer reads as a walk. And it needs the time: with the slices of the documents shuffled, the first
arrivals no longer match the planted ones. The hidden items' scoring is checked on a small table."""
import warnings

import networkx as nx
import numpy as np
import pandas as pd
import pytest

from tempo_analysis.diffusion.lesson import dcwe_gain, usage_docs
from tempo_analysis.diffusion.report import analyze, index_corpus
from tempo_analysis.encoders import load_encoder
from tempo_analysis.resolve import planted_world


@pytest.fixture(scope="module")
def encoder():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_encoder("default", head="mlm")


@pytest.fixture(scope="module", params=["walk", "flight"])
def world(request, encoder):
    w = planted_world("social", 0, mode=request.param)
    return w.data, w.truth, index_corpus(encoder[0], encoder[1], w.data, progress=False)


def _read(index, graph, corpus, truth):
    return analyze(index, graph, truth["word"], truth["anchor"], word_docs=usage_docs(corpus))


@pytest.mark.slow
def test_the_usages_draw_the_spread_and_the_mode(world):
    corpus, truth, index = world
    result = _read(index, corpus.graph, corpus, truth)
    assert result.mode["mode"] == truth["mode"], result.mode
    exact = sum(result.first.get(u) == t for u, t in truth["first_slice"].items())
    assert exact >= 18, exact                          # of 24 units (measured 22)
    assert 0 < int((result.rhat["rhat"] > 0).sum()) < len(result.rhat)


@pytest.mark.slow
def test_without_the_graph_the_walk_is_not_read(world):
    corpus, truth, index = world
    if truth["mode"] != "walk":
        pytest.skip("the walk world shows it")
    bare_graph = nx.empty_graph(corpus.units)
    assert _read(index, bare_graph, corpus, truth).mode["mode"] != "walk"


@pytest.mark.slow
def test_without_the_time_the_first_arrivals_are_lost(world):
    corpus, truth, index = world
    rng = np.random.default_rng(0)
    shuffled = index.__class__(**{**index.__dict__, "time": rng.permutation(index.time), "_lookup": {}})
    result = _read(shuffled, corpus.graph, corpus, truth)
    exact = sum(result.first.get(u) == t for u, t in truth["first_slice"].items())
    assert exact <= 12, exact


def test_dcwe_gain_counts_right_answers_and_tests_the_discordant_items():
    items = pd.DataFrame({"kind": ["held-out cell"] * 4 + ["ambiguous usage"] * 4, "word": ["cloud"] * 8,
                          "unit": list("abcdabcd"), "time": [0, 0, 1, 1] * 2,
                          "adopted": [True, False, True, True, True, False, True, False],
                          "dcwe": [True, False, True, True, True, False, True, True],
                          "cwe": [True, True, True, True, True, True, True, True]})
    g = dcwe_gain(items)
    assert g["dcwe"] == pytest.approx(7 / 8) and g["cwe"] == pytest.approx(5 / 8)
    assert g["gain"] == pytest.approx(2 / 8) and g["items"] == 8
    assert g["slice_majority"] == pytest.approx(5 / 8)     # one answer per slice: 2 of 4 in slice 0, 3 of 4 in 1
    assert 0 < g["p_value"] <= 1
    assert np.isnan(dcwe_gain(items.iloc[:0])["gain"])


def test_the_hidden_table_joins_both_worlds_and_is_memoised_with_their_fits(monkeypatch):
    from tempo_analysis import notebook
    from tempo_analysis.diffusion import lesson

    calls, keys = [], []
    monkeypatch.setattr(lesson, "hidden_items", lambda mapper, index_of, truth: calls.append(mapper) or
                        pd.DataFrame({"kind": ["held-out cell"], "adopted": [True], "dcwe": [True], "cwe": [False]}))
    monkeypatch.setattr(notebook, "cached", lambda name, params, compute, **kw: keys.append((name, params)) or compute())
    fitted = {"mappers": {"walk": "m-walk", "flight": "m-flight"}, "truths": {"walk": {}, "flight": {}},
              "params": {"walk": {"mode": "walk", "data_fingerprint": "a"}, "flight": {"mode": "flight"}}}

    class Read:
        index = None

    maps = {w: {"dcwe": Read(), "cwe": Read()} for w in fitted["mappers"]}
    table = lesson.hidden_table(fitted, maps)
    assert list(table["world"]) == ["walk", "flight"] and calls == ["m-walk", "m-flight"]
    assert keys == [("03-lesson-hidden", {"fits": fitted["params"]})]
    lesson.hidden_table(fitted, maps, cache=False)
    assert len(keys) == 1 and len(calls) == 4
