"""Planted-truth scores: sigma precision@k, offset ratio, and the masked-prediction r-hat."""
import networkx as nx
import pandas as pd
import pytest
import torch

from tempo_analysis.diffusion.evaluate import offset_norms, offset_ratio, sigma_precision_at_k, without_offsets
from tempo_analysis.diffusion.mlm import PlainMLM
from tempo_analysis.diffusion.model import DCWEForMaskedLM, content_vocabulary
from tempo_analysis.diffusion.probe import prediction_rhat
from tempo_analysis.diffusion.report import analyze_rhat
from tempo_analysis.encoders import tiny_encoder

TEXTS = ["cloud server", "cloud rain", "river boat", "river bridge", "mouse cheese"]


def test_sigma_precision_at_k():
    sims = pd.DataFrame({"word": ["cloud"] * 3 + ["river"] * 3 + ["mouse"] * 3,
                         "sim": [0.5, 0.9, 0.7, 0.99, 0.98, 0.99, 0.8, 0.95, 0.6]})
    assert sigma_precision_at_k(sims, ["cloud", "mouse"]) == (1.0, ["cloud", "mouse"])
    assert sigma_precision_at_k(sims, ["river", "cloud"])[0] == 0.5
    assert sigma_precision_at_k(sims, ["cloud"], min_contexts=4)[0] == 0.0   # too few contexts: no sigma


@pytest.fixture
def model():
    enc, tok = tiny_encoder(head="mlm", seed=0)
    m = DCWEForMaskedLM.from_encoder(enc, node_features=torch.randn(3, 4), edge_index=[[0, 1], [1, 2]],
                                     dynamic_token_ids=content_vocabulary(TEXTS, tok), units=list("abc"),
                                     slices=[0, 1], social_dim=4, gat_heads=1, offset_dropout=0.0,
                                     gat_dropout=0.0).eval()
    return m, tok


def test_offset_ratio_is_larger_where_offsets_move(model):
    m, tok = model
    assert offset_norms(m, tok, ["cloud"])["ratio"].eq(0).all()     # start state: no offsets
    with torch.no_grad():
        cloud = tok("cloud", add_special_tokens=False)["input_ids"][0]
        e = m.encoder.get_input_embeddings().weight[cloud]
        for ffn in m.dynamic.ffns:   # an offset that fires for "cloud" only: bias cancels elsewhere
            ffn.fc2.weight.normal_(0, 0.01, generator=torch.Generator().manual_seed(0))
            ffn.fc1.weight[:, : e.numel()] += 5 * e.unsqueeze(0) / e.norm() ** 2
    norms = offset_norms(m, tok, ["cloud", "river"])
    assert set(norms.columns) == {"word", "unit", "time", "ratio"} and len(norms) == 2 * 3 * 2
    assert offset_ratio(m, tok, ["cloud"], ["river"]) > 1
    with pytest.raises(ValueError, match="dynamic vocabulary"):
        offset_norms(m, tok, ["the"])


def test_prediction_rhat_cwe_gives_one_answer_and_zero_offsets_change_nothing(model):
    m, tok = model
    g = nx.Graph([("a", "b"), ("b", "c")])
    units, slices = ["a", "b", "c"], [0, 1]
    plain = prediction_rhat(PlainMLM(m.encoder), tok, "cloud", "server", units, slices, n_neighbors=3,
                            candidates=m.dynamic_token_ids)
    assert plain["rank"].nunique() == 1 and len(plain) == 6    # no unit or time input: one answer
    # a large offset in slice 1 only, which depends on the unit (through the unit's social vector):
    # slice 0 still reads as the plain encoder, slice 1 differs from it, and from unit to unit
    with torch.no_grad():
        ffn = m.dynamic.ffns[1]
        gen = torch.Generator().manual_seed(0)
        ffn.fc2.weight.normal_(0, 1.0, generator=gen)
        ffn.fc1.weight[:, -m.config.social_dim:].normal_(0, 5.0, generator=gen)
    vocab = list(range(len(tok)))          # every word a candidate: a moved offset moves the anchor's rank
    base = prediction_rhat(PlainMLM(m.encoder), tok, "cloud", "server", units, slices, candidates=vocab)
    dyn = prediction_rhat(m, tok, "cloud", "server", units, slices, n_neighbors=3, candidates=vocab)
    by = dyn.set_index(["unit", "time"])["rank"]
    assert [by[(u, 0)] for u in units] == base[base["time"] == 0]["rank"].tolist()   # slice 0: no offset
    assert all(by[(u, 1)] != by[(u, 0)] for u in units)     # slice 1 is read with slice 1's offsets
    assert len({by[(u, 1)] for u in units}) == len(units)   # ... and with each unit's own
    result = analyze_rhat(dyn, g, units, slices, "cloud", "server")
    assert set(result.first) == set(units)


def test_prediction_rhat_anchor_prob_is_the_graded_answer(model):
    """anchor_prob: the anchor's probability among the candidates, one value for the control in every
    cell, and for DCWE a value that moves with the slice's offsets even where the rank stays put; it
    falls as the anchor's rank falls, and it is a probability over the candidates."""
    m, tok = model
    units, slices, cands = ["a", "b", "c"], [0, 1], m.dynamic_token_ids
    plain = prediction_rhat(PlainMLM(m.encoder), tok, "cloud", "server", units, slices, candidates=cands)
    assert plain["anchor_prob"].nunique() == 1 and 0 < plain["anchor_prob"].iloc[0] < 1
    with torch.no_grad():
        ffn = m.dynamic.ffns[1]
        gen = torch.Generator().manual_seed(0)
        ffn.fc2.weight.normal_(0, 0.05, generator=gen)         # a small slice-1 offset
        ffn.fc1.weight[:, -m.config.social_dim:].normal_(0, 5.0, generator=gen)
    dyn = prediction_rhat(m, tok, "cloud", "server", units, slices, candidates=cands)
    by = dyn.set_index(["unit", "time"])["anchor_prob"]
    assert [by[(u, 0)] for u in units] == pytest.approx(plain[plain["time"] == 0]["anchor_prob"].tolist(), abs=1e-6)
    assert all(abs(by[(u, 1)] - by[(u, 0)]) > 1e-6 for u in units)
    # within one cell, read with each candidate as the anchor: the probabilities sum to 1 over the
    # candidates, and order as the ranks (the first choice has the largest probability)
    cloud = tok.convert_tokens_to_ids("cloud")
    cells = [prediction_rhat(m, tok, "cloud", tok.convert_ids_to_tokens(c), ["a"], [1], candidates=cands).iloc[0]
             for c in cands if c != cloud]
    assert sum(c["anchor_prob"] for c in cells) == pytest.approx(1.0, abs=1e-4)
    by_rank = sorted(cells, key=lambda c: c["rank"])
    assert all(a["anchor_prob"] >= b["anchor_prob"] for a, b in zip(by_rank, by_rank[1:]))


def test_without_offsets_reads_the_trained_body_blind_to_unit_and_time(model):
    """The zeroed-offsets control: the same weights, every offset 0, so one answer for every unit
    and slice; the original model keeps its offsets."""
    m, tok = model
    with torch.no_grad():
        for ffn in m.dynamic.ffns:
            gen = torch.Generator().manual_seed(1)
            ffn.fc2.weight.normal_(0, 1.0, generator=gen)
            ffn.fc1.weight[:, -m.config.social_dim:].normal_(0, 5.0, generator=gen)
    blind = without_offsets(m)
    units, slices, vocab = ["a", "b", "c"], [0, 1], list(range(len(tok)))
    zeroed = prediction_rhat(blind, tok, "cloud", "server", units, slices, candidates=vocab)
    plain = prediction_rhat(PlainMLM(m.encoder), tok, "cloud", "server", units, slices, candidates=vocab)
    assert zeroed["rank"].tolist() == plain["rank"].tolist() and zeroed["rank"].nunique() == 1
    assert prediction_rhat(m, tok, "cloud", "server", units, slices, candidates=vocab)["rank"].nunique() > 1
    assert offset_norms(blind, tok, ["cloud"])["ratio"].eq(0).all() and not offset_norms(m, tok, ["cloud"])["ratio"].eq(0).all()
    with pytest.raises(ValueError, match="DCWE model"):
        without_offsets(PlainMLM(m.encoder))
