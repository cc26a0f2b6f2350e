"""The analysis recovers the planted diffusion mode (walk AND flight) from DCWE embeddings.

Uses the embedded pretrained MiniLM (sense separation needs pretrained weights) inside a DCWE
at its start state, on a reduced planted world (24 units, 5 slices) to stay fast on CPU.
"""
import pytest
import torch

from tempo_analysis.diffusion.corpora import graph_tensors
from tempo_analysis.diffusion.model import DCWEForMaskedLM, content_vocabulary
from tempo_analysis.diffusion.report import analyze, world_regenerator
from tempo_analysis.encoders import load_encoder
from tempo_analysis.world import SocialWorldConfig, generate_social

WORLD = SocialWorldConfig(n_units=24, n_communities=3, n_slices=5, docs_per_unit_slice=3, word_share=0.67, seed=0)


@pytest.fixture(scope="module")
def model_and_tok():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        enc, tok = load_encoder("default", head="mlm")
    corpus, _ = generate_social(WORLD)
    units, ei = graph_tensors(corpus)
    m = DCWEForMaskedLM.from_encoder(enc, node_features=torch.randn(len(units), 8), edge_index=ei,
                                     dynamic_token_ids=content_vocabulary(corpus.df["text"], tok), units=units,
                                     slices=corpus.slices).eval()
    return m, tok


@pytest.mark.parametrize("mode", ["walk", "flight"])
def test_recovers_planted_mode(model_and_tok, mode):
    model, tok = model_and_tok
    regenerate = world_regenerator(model, tok, WORLD)
    index, graph, truth = regenerate(mode, 2)
    assert truth["mode"] == mode
    result = analyze(index, graph, truth["word"], truth["anchor"])  # N = auto
    assert result.mode["mode"] == mode
    if mode == "walk":
        assert result.mode["walk_share"] > result.mode["expected_walk_share"] + 0.3
    else:
        assert result.mode["walk_share"] < result.mode["expected_walk_share"] - 0.3
    # the map itself: first-arrival slices match the planted ones for (almost) every unit
    exact = sum(result.first[u] == t for u, t in truth["first_slice"].items())
    assert exact >= 0.9 * len(truth["first_slice"])
    # units that never adopted hold r-hat 0 in the last slice; adopters hold it
    last = result.rhat[result.rhat["time"] == index.slices[-1]].set_index("unit")["rhat"]
    adopters = {u for u, t in truth["first_slice"].items() if t is not None}
    assert (last[last.index.isin(adopters)] > 0).mean() >= 0.8  # noise flips a few usages
    assert (last[~last.index.isin(adopters)] == 0).mean() >= 0.8


def test_paper_n_is_too_large_for_a_small_vocabulary(model_and_tok):
    """N = 100 on a ~200-word world puts the anchor in every neighbourhood: nobody is 'new'."""
    model, tok = model_and_tok
    index, graph, truth = world_regenerator(model, tok, WORLD)("walk", 2)
    result = analyze(index, graph, truth["word"], truth["anchor"], n_neighbors=100)
    assert all(t == index.slices[0] for t in result.first.values() if t is not None)
    assert result.mode["mode"] is None and "cannot be told" in result.mode["note"]
