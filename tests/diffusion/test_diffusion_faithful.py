"""The paper's ablations and settings: TA = one social component (GAT + FFN) for all slices, SA =
time-specific FFNs on word identity with the walk prior, reference dropouts, analyses that leave
the model as they found it, any tokenizer, directed graphs, node2vec edge weighting, and the
benchmark's equality check."""
import importlib.util
from pathlib import Path

import networkx as nx
import pandas as pd
import pytest
import torch

from tempo_analysis.data import SocialCorpus
from tempo_analysis.diffusion.analysis import sim_table
from tempo_analysis.diffusion.corpora import graph_tensors
from tempo_analysis.diffusion.mlm import MLMCollator
from tempo_analysis.diffusion.model import DCWEConfig, DCWEForMaskedLM, content_vocabulary, token_word
from tempo_analysis.diffusion.node2vec import Node2Vec
from tempo_analysis.diffusion.report import index_corpus
from tempo_analysis.encoders import tiny_encoder

TEXTS = ["the cloud stores data on a remote server", "rain falls from a dark cloud today",
         "we train neural networks on data", "a storm cloud over the hills", "server data in the cloud"]


@pytest.fixture(scope="module")
def enc_tok():
    return tiny_encoder(head="mlm", seed=0)


def _model(enc_tok, ablation, **kw):
    enc, tok = enc_tok
    fresh, _ = tiny_encoder(head="mlm", seed=0)
    fresh.load_state_dict(enc.state_dict())
    m = DCWEForMaskedLM.from_encoder(fresh, node_features=torch.randn(4, 8, generator=torch.Generator().manual_seed(0)),
                                     edge_index=[[0, 1, 2, 3], [1, 0, 3, 2]],
                                     dynamic_token_ids=content_vocabulary(TEXTS, tok), units=list("abcd"),
                                     slices=[0, 1, 2], social_dim=6, gat_heads=2, ablation=ablation, **kw)
    with torch.no_grad():   # non-zero offsets: a trained model
        for ffn in m.dynamic.ffns:
            ffn.fc2.weight.normal_(0, 0.1, generator=torch.Generator().manual_seed(1))
            ffn.fc2.bias.normal_(0, 0.1, generator=torch.Generator().manual_seed(2))
    return m.eval()


def _offsets(m, tok, units, slices):
    b = tok([TEXTS[0]] * len(units), return_tensors="pt")
    out = m(**b, unit_ids=torch.tensor(units), slice_ids=torch.tensor(slices), labels=b["input_ids"])
    n = out.offsets.shape[0] // len(units)
    return out.offsets.reshape(len(units), n, -1), out


def test_reference_dropouts():
    cfg = DCWEConfig()
    assert cfg.offset_dropout == 0.2 and cfg.gat_dropout == 0.6


def test_temporal_ablation_is_one_gat_and_one_ffn_without_time(enc_tok):
    m = _model(enc_tok, "ta")
    assert len(m.dynamic.social) == 1 and len(m.dynamic.ffns) == 1
    o, out = _offsets(m, enc_tok[1], [1, 1, 1, 2], [0, 1, 2, 2])
    assert torch.allclose(o[0], o[1]) and torch.allclose(o[1], o[2])   # same unit: same offset every slice
    assert not torch.allclose(o[2], o[3])                              # another unit: another offset
    assert out.prior_w == 0 and out.prior_a > 0                        # o_t == o_{t-1}: no walk prior


def test_social_ablation_is_time_specific_ffns_on_word_identity_with_walk_prior(enc_tok):
    m = _model(enc_tok, "sa")
    assert len(m.dynamic.social) == 0 and len(m.dynamic.ffns) == 3
    assert m.dynamic.ffns[0].fc1.in_features == m.encoder.get_input_embeddings().embedding_dim
    o, out = _offsets(m, enc_tok[1], [0, 3, 0], [1, 1, 2])
    assert torch.allclose(o[0], o[1])          # no social input: every unit alike
    assert not torch.allclose(o[0], o[2])      # time-specific
    assert out.prior_w > 0                     # the random-walk prior stays


def test_full_model_depends_on_unit_and_time(enc_tok):
    m = _model(enc_tok, "dcwe")
    assert len(m.dynamic.social) == 3 and len(m.dynamic.ffns) == 3
    o, out = _offsets(m, enc_tok[1], [0, 3, 0], [1, 1, 2])
    assert not torch.allclose(o[0], o[1]) and not torch.allclose(o[0], o[2]) and out.prior_w > 0


def test_index_corpus_restores_the_model(enc_tok):
    m = _model(enc_tok, "dcwe").train()
    g = nx.Graph([("a", "b"), ("c", "d")])
    df = pd.DataFrame({"unit": list("abcd"), "time": [0, 1, 2, 1], "text": TEXTS[:4]})
    corpus = SocialCorpus.from_frame(df, g, slices=[0, 1, 2])
    index_corpus(m, enc_tok[1], corpus, progress=False)
    assert m.dynamic.training_priors is True and m.training      # training may go on after an analysis
    m.eval()
    index_corpus(m, enc_tok[1], corpus, progress=False)
    assert not m.training


def test_sim_table_runs_in_eval_mode(enc_tok):
    m = _model(enc_tok, "dcwe").train()     # dropout on: two train-mode reads would differ
    frame = pd.DataFrame({"doc_id": [f"d{i}" for i in range(8)], "unit": list("abcdabcd"),
                          "time": [0, 1, 2, 0, 1, 2, 0, 1], "text": (TEXTS * 2)[:8]})
    _, a = sim_table(m, enc_tok[1], frame, min_contexts=1)
    _, b = sim_table(m, enc_tok[1], frame, min_contexts=1)
    pd.testing.assert_frame_equal(a, b)
    assert m.training                       # the caller's mode is restored


class _BPETokenizer:
    """A byte-level-BPE-like stub: "Ġ" marks word starts, unmarked pieces continue a word."""

    vocab = ["<s>", "</s>", "Ġcloud", "Ġserver", "ing", "Ġthe", "Ġrain", "s", "Ġ123"]
    all_special_ids = [0, 1]

    def __call__(self, texts, add_special_tokens=False):
        ids = {"cloud": [2], "server": [3], "servers": [3, 7], "clouding": [2, 4], "the": [5], "rain": [6],
               "123": [8]}
        return {"input_ids": [[i for w in t.split() for i in ids[w]] for t in texts]}

    def convert_ids_to_tokens(self, i):
        return self.vocab[i]


def test_content_vocabulary_works_with_bpe_and_sentencepiece():
    assert token_word("\u0120cloud", True) == "cloud" and token_word("ing", True) is None
    assert token_word("\u2581cloud", True) == "cloud" and token_word("##ing", False) is None
    assert token_word("cloud", False) == "cloud"
    vocab = content_vocabulary(["cloud server servers clouding", "the rain 123 cloud"], _BPETokenizer())
    assert vocab == [2, 3, 6]          # cloud, server, rain; no continuation "ing"/"s", stopword or number


def test_directed_graph_keeps_its_direction():
    df = pd.DataFrame({"unit": list("abc"), "time": [0, 0, 1], "text": TEXTS[:3]})
    directed = SocialCorpus.from_frame(df, nx.DiGraph([("a", "b"), ("b", "c")]))
    _, ei = graph_tensors(directed)
    assert sorted(map(tuple, ei.T.tolist())) == [(0, 1), (1, 2)]
    undirected = SocialCorpus.from_frame(df, nx.Graph([("a", "b"), ("b", "c")]))
    _, ei = graph_tensors(undirected)
    assert sorted(map(tuple, ei.T.tolist())) == [(0, 1), (1, 0), (1, 2), (2, 1)]


def test_node2vec_edge_weighting_is_an_option():
    g = nx.Graph()
    g.add_edge("hub", "a", weight=100.0)
    for n in "bcdefg":
        g.add_edge("hub", n, weight=0.01)
    kw = dict(num_walks=20, walk_length=6, dim=4, epochs=1, seed=0)
    plain, weighted = Node2Vec(**kw).fit(g), Node2Vec(weighted=True, **kw).fit(g)
    a = list(g.nodes).index("a")

    def share_a(walks):
        steps = [w[i + 1] for w in walks for i, x in enumerate(w[:-1]) if x == list(g.nodes).index("hub")]
        return sum(s == a for s in steps) / len(steps)

    assert share_a(weighted.walks_) > 0.9 > 0.5 > share_a(plain.walks_)   # paper: binary edges by default


def _benchmark():
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "dcwe_step.py"
    spec = importlib.util.spec_from_file_location("dcwe_step_bench", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_benchmark_equality_check_can_fail(enc_tok):
    bench = _benchmark()
    enc, tok = enc_tok

    class WrongSlice(bench.PerExampleDynamic):   # a per-example path that reads the wrong slice's GAT
        def social_lookup(self, t, units, examples, cache):
            return super().social_lookup(max(t - 1, 0), units, examples, cache)

    def pair(cls):
        ours = DCWEForMaskedLM.from_encoder(enc, node_features=torch.randn(6, 8), edge_index=[[0, 1, 2], [1, 2, 0]],
                                            dynamic_token_ids=list(range(5, 90)), num_slices=4, offset_dropout=0.0)
        ref = DCWEForMaskedLM.from_encoder(enc, node_features=torch.zeros(6, 8), edge_index=[[0, 1, 2], [1, 2, 0]],
                                           dynamic_token_ids=list(range(5, 90)), num_slices=4, offset_dropout=0.0)
        ref.dynamic.__class__ = cls
        return ours, ref

    args = type("A", (), {"seed": 0, "units": 6, "slices": 4})()
    collate = MLMCollator(tok, generator=torch.Generator().manual_seed(0))
    batch = bench.mixed_batch(tok, list(range(5, 90)), args, collate)
    assert bench.check_same_computation(*pair(bench.PerExampleDynamic), batch) > 1e-4
    with pytest.raises(AssertionError, match="per-example path"):
        bench.check_same_computation(*pair(WrongSlice), batch)


def test_train_config_priors_and_dropouts_reach_the_model(enc_tok):
    """DiffusionTrainConfig's lambda_a, gat_dropout and offset_dropout are the built model's; the
    defaults are the reference code's (dropouts 0.6 / 0.2, lambda_a = 1e-3 * lambda_w)."""
    from tempo_analysis.diffusion.config import DiffusionTrainConfig
    from tempo_analysis.diffusion.training import build_dcwe

    enc, tok = enc_tok
    df = pd.DataFrame({"unit": list("abcab"), "time": [0, 1, 2, 0, 1], "text": TEXTS})
    corpus = SocialCorpus.from_frame(df, nx.Graph([("a", "b"), ("b", "c")]), slices=[0, 1, 2])
    dyn = content_vocabulary(TEXTS, tok)

    def build(**kw):
        cfg = DiffusionTrainConfig(social_dim=6, gat_heads=2, lambda_w=2.0, **kw)
        return build_dcwe(enc, corpus, torch.zeros(3, 8), dyn, "dcwe", cfg)

    m = build()
    assert (m.config.gat_dropout, m.config.offset_dropout) == (0.6, 0.2)
    assert m.config.lambda_a == pytest.approx(2e-3)
    assert m.dynamic.ffns[0].drop.p == 0.2 and m.dynamic.social[0].gat1.dropout == 0.6
    m = build(lambda_a=0.5, gat_dropout=0.1, offset_dropout=0.0)
    assert (m.config.lambda_a, m.config.gat_dropout, m.config.offset_dropout) == (0.5, 0.1, 0.0)
    assert m.dynamic.ffns[0].drop.p == 0.0 and m.dynamic.social[0].gat1.dropout == 0.1


def test_node2vec_reads_a_directed_tie_either_way():
    import warnings as w

    with w.catch_warnings():
        w.simplefilter("error")                    # no "isolated node" warning for c, which only has an in-edge
        n2v = Node2Vec(num_walks=2, walk_length=4, dim=4, epochs=1, seed=0).fit(nx.DiGraph([("a", "b"), ("b", "c")]))
    assert n2v.isolated_ == []
