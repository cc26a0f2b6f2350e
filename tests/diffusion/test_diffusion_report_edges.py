"""The diffusion report and the corpus split at their edges: the JSON form of an analysis, the largest
neighbourhood read from an r-hat frame, no walk-prior GAT pass when a corpus is indexed, the world
regenerator's unit check, and the split's bounds."""
import json
from types import SimpleNamespace

import networkx as nx
import pandas as pd
import pytest
import torch

from tempo_analysis.data import SocialCorpus
from tempo_analysis.diffusion.corpora import split_corpus
from tempo_analysis.diffusion.report import analyze_rhat, index_corpus, world_regenerator


def _rhat(n_neighbors=(3, 5)):
    rows = []
    for i, (u, t) in enumerate([("a", 0), ("a", 1), ("b", 0), ("b", 1)]):
        rank = float(i + 1)
        rows.append({"unit": u, "time": t, "rhat": float("nan") if i == 3 else max(0.0, 3 - rank + 1), "n": 4,
                     "rank": rank, "n_neighbors": n_neighbors[i % len(n_neighbors)], "example": f"cloud server {i}"})
    return pd.DataFrame(rows)


def test_an_analysis_reads_the_largest_neighbourhood_and_writes_plain_json():
    g = nx.Graph([("a", "b")])
    r = analyze_rhat(_rhat(), g, ["a", "b"], [0, 1], "Cloud", "SERVER")
    assert (r.word, r.anchor, r.n_neighbors) == ("cloud", "server", 5)
    d = json.loads(json.dumps(r.to_dict()))                   # JSON-able: no numpy scalars, no NaN
    assert d["rhat"][3]["rhat"] is None and d["rhat"][0]["example"] == "cloud server 0"
    assert [row["rank"] for row in d["rhat"]] == [1.0, 2.0, 3.0, 4.0]
    assert set(d["first_arrival"]) == {"a", "b"}
    empty = analyze_rhat(_rhat().iloc[:0], g, ["a", "b"], [0, 1], "cloud", "server")
    assert empty.n_neighbors == 0 and empty.to_dict()["rhat"] == []


def _corpus():
    df = pd.DataFrame({"doc_id": [f"d{i}" for i in range(6)], "unit": list("ababab"), "time": [0, 0, 1, 1, 2, 2],
                       "text": ["cloud server data", "rain cloud", "cloud data", "server rain", "cloud", "data rain"]})
    return SocialCorpus(df, nx.Graph([("a", "b")]), [0, 1, 2])


def test_indexing_skips_the_walk_priors_pass_and_restores_the_model():
    from tempo_analysis.diffusion.model import DCWEForMaskedLM, content_vocabulary
    from tempo_analysis.encoders import tiny_encoder

    corpus = _corpus()
    enc, tok = tiny_encoder(head="mlm", seed=0)
    m = DCWEForMaskedLM.from_encoder(enc, node_features=torch.randn(2, 4, generator=torch.Generator().manual_seed(0)),
                                     edge_index=[[0, 1], [1, 0]], dynamic_token_ids=content_vocabulary(corpus.df["text"], tok),
                                     units=corpus.units, slices=corpus.slices, social_dim=4, gat_heads=1)
    m.train()
    m.dynamic.gnn_calls = 0
    index = index_corpus(m, tok, corpus, batch_size=1, progress=False)
    assert m.dynamic.gnn_calls == 6                           # one pass per one-document batch: no o_{t-1} pass
    assert m.training and m.dynamic.training_priors           # both restored
    assert index.counts()["cloud"] == 4


def test_the_world_regenerator_refuses_a_model_of_other_units():
    model = SimpleNamespace(config=SimpleNamespace(units=["x", "y"]))
    regenerate = world_regenerator(model, None)
    with pytest.raises(ValueError, match="the regenerated world's units differ from the model's"):
        regenerate("walk", 3)


@pytest.mark.parametrize("dev, test", [(0.1, -0.1), (0.1, 1.0), (-0.1, 0.2), (0.5, 0.5)])
def test_the_split_shares_are_bounded(dev, test):
    with pytest.raises(ValueError, match="split_corpus: dev=.* must be in \\[0, 1\\) with dev \\+ test < 1"):
        split_corpus(_corpus(), dev=dev, test=test)


def test_a_split_without_dev_or_test_documents_is_allowed():
    train, dev, test = split_corpus(_corpus(), dev=0.0, test=0.0)
    assert (len(train), len(dev), len(test)) == (6, 0, 0)
    train, dev, test = split_corpus(_corpus(), dev=0.0, test=0.5)
    assert (len(train), len(dev), len(test)) == (3, 0, 3) and sorted(test["time"]) == [0, 1, 2]


def test_the_world_regenerator_reads_any_model_without_unit_labels():
    """A plain encoder (the time-blind control) has no units to check: the regenerated world is indexed."""
    from tempo_analysis.diffusion.mlm import PlainMLM
    from tempo_analysis.encoders import tiny_encoder
    from tempo_analysis.world import SocialWorldConfig

    enc, tok = tiny_encoder(head="mlm", seed=0)
    base = SocialWorldConfig(n_units=6, docs_per_word=1)
    index, graph, truth = world_regenerator(PlainMLM(enc), tok, base)("flight", 2)
    assert truth["mode"] == "flight" and graph.number_of_nodes() == 6 and len(index.units) == 6


def test_the_split_frames_keep_the_corpus_columns():
    for part in split_corpus(_corpus(), dev=0.2, test=0.3):
        assert list(part.columns) == list(_corpus().df.columns) and list(part.index) == list(range(len(part)))
