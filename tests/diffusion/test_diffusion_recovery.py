"""The planted world hides the diffusion from a time-blind reader.

A DCWE at its start state (all offsets 0) computes exactly the plain pretrained encoder (MiniLM):
a time- and unit-blind model. Reading only the word's bare usages ("the cloud again."), it cannot
find the planted first arrivals: whatever r-hat varies there must come from trained unit/time
offsets. Its masked predictions next to the word are the same for every unit and slice, so the
prediction r-hat finds no diffusion at all (walk AND flight worlds).
"""
import dataclasses
import warnings

import pytest
import torch

from tempo_analysis.diffusion.corpora import graph_tensors
from tempo_analysis.diffusion.model import DCWEForMaskedLM, content_vocabulary
from tempo_analysis.diffusion.probe import prediction_rhat
from tempo_analysis.diffusion.report import analyze, analyze_rhat, index_corpus
from tempo_analysis.encoders import load_encoder
from tempo_analysis.world import SocialWorldConfig, generate_social

WORLD = SocialWorldConfig(n_changing=2, n_stable=1, chatter_docs=0, seed=0, paired_layout="all")


@pytest.fixture(scope="module")
def encoder():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_encoder("default", head="mlm")


def _start_state(encoder, corpus):
    enc, tok = encoder
    units, ei = graph_tensors(corpus)
    return DCWEForMaskedLM.from_encoder(enc, node_features=torch.randn(len(units), 8), edge_index=ei,
                                        dynamic_token_ids=content_vocabulary(corpus.df["text"], tok), units=units,
                                        slices=corpus.slices).eval()


@pytest.fixture(scope="module", params=["walk", "flight"])
def world(request, encoder):
    corpus, truth = generate_social(dataclasses.replace(WORLD, mode=request.param))
    model = _start_state(encoder, corpus)
    return corpus, truth, model, index_corpus(model, encoder[1], corpus, progress=False)


def test_bare_usages_tell_a_time_blind_model_nothing(world):
    corpus, truth, _, index = world
    bare = set(corpus.df.loc[corpus.df["kind"] == "bare", "doc_id"])
    result = analyze(index, corpus.graph, truth["word"], truth["anchor"], word_docs=bare)
    exact = sum(result.first[u] == t for u, t in truth["first_slice"].items() if t is not None)
    reached = sum(t is not None for t in truth["first_slice"].values())
    assert exact <= 0.5 * reached       # the first arrivals are not in the bare text


def test_masked_predictions_of_a_time_blind_model_are_the_same_everywhere(world, encoder):
    corpus, truth, model, _ = world
    rhat = prediction_rhat(model, encoder[1], truth["word"], truth["anchor"], corpus.units, corpus.slices,
                           n_neighbors=1)
    assert rhat["rank"].nunique() == 1                     # no unit or time input: one answer
    result = analyze_rhat(rhat, corpus.graph, corpus.units, corpus.slices, truth["word"], truth["anchor"])
    assert result.mode["mode"] is None                     # nobody newly reached: no diffusion read
