"""node2vec: our own walks (uniform and p/q-biased), gensim Word2Vec, isolated nodes."""
import inspect

import networkx as nx
import numpy as np
import pytest

from tempo_analysis.diffusion.node2vec import Node2Vec, random_walks


def _two_cliques():
    g = nx.disjoint_union(nx.complete_graph(6), nx.complete_graph(6))
    g.add_edge(0, 6)
    return g


def test_walks_shape_seeded_and_follow_edges():
    g = _two_cliques()
    w1 = random_walks(g, num_walks=3, walk_length=12, seed=1)
    assert len(w1) == 3 * g.number_of_nodes() and all(len(w) == 12 for w in w1)
    assert w1 == random_walks(g, num_walks=3, walk_length=12, seed=1)
    assert w1 != random_walks(g, num_walks=3, walk_length=12, seed=2)
    nodes = list(g.nodes)
    for w in w1:
        for a, b in zip(w, w[1:]):
            assert g.has_edge(nodes[a], nodes[b])


def test_p_q_bias_changes_return_rate():
    g = nx.cycle_graph(30)  # on a cycle, "return" vs "move on" is the only choice
    def return_rate(p, q):
        walks = random_walks(g, num_walks=4, walk_length=40, p=p, q=q, seed=0)
        back = [w[i] == w[i - 2] for w in walks for i in range(2, len(w))]
        return float(np.mean(back))
    assert return_rate(0.1, 10.0) > 0.8          # cheap returns, expensive outward moves
    assert return_rate(10.0, 0.1) < 0.05          # expensive returns: the walk runs around the cycle
    assert 0.35 < return_rate(1.0, 1.0) < 0.65    # uniform: half the steps go back


def test_embeddings_reflect_communities_and_are_reproducible():
    g = _two_cliques()
    m = Node2Vec(dim=16, num_walks=10, walk_length=20, epochs=20, seed=0).fit(g)
    assert m.embeddings_.shape == (12, 16)
    assert np.allclose(m.embeddings_, Node2Vec(dim=16, num_walks=10, walk_length=20, epochs=20, seed=0).fit(g).embeddings_)
    x = m.embeddings_ / np.linalg.norm(m.embeddings_, axis=1, keepdims=True)
    sims = x @ x.T
    intra = np.mean([sims[i, j] for i in range(1, 6) for j in range(1, 6) if i != j])
    inter = np.mean([sims[i, j] for i in range(1, 6) for j in range(7, 12)])
    assert intra > inter + 0.2


def test_isolated_node_gets_walks_of_itself_and_a_vector():
    g = _two_cliques()
    g.add_node("lonely")
    with pytest.warns(UserWarning, match="isolated node"):
        m = Node2Vec(dim=8, num_walks=2, walk_length=5, seed=0).fit(g)
    idx = m.nodes_.index("lonely")
    assert all(w == [idx] * 5 for w in m.walks_ if w[0] == idx)
    assert m.isolated_ == ["lonely"]
    assert np.isfinite(m.vectors(["lonely"])).all()
    with pytest.raises(ValueError, match="not nodes of the fitted graph"):
        m.vectors(["nobody"])


def test_the_defaults_are_the_papers_and_reproducible():
    """DCWE's node2vec: 50 dimensions, 10 walks of length 80 per node, window 2; one worker (bit-reproducible)."""
    m = Node2Vec()
    assert (m.dim, m.num_walks, m.walk_length, m.window, m.p, m.q, m.weighted) == (50, 10, 80, 2, 1.0, 1.0, False)
    assert (m.epochs, m.negative, m.seed, m.workers) == (10, 5, 0, 1)
    walk_defaults = {k: v.default for k, v in inspect.signature(random_walks).parameters.items() if k != "graph"}
    assert walk_defaults == dict(num_walks=10, walk_length=80, p=1.0, q=1.0, seed=0, weight="weight")


@pytest.mark.parametrize("kw, field", [({"num_walks": 0}, "num_walks=0"), ({"walk_length": 0}, "walk_length=0"),
                                       ({"p": 0.0}, "p=0.0"), ({"q": 0.0}, "q=0.0"), ({"p": -1.0}, "p=-1.0")])
def test_walk_settings_out_of_range_are_refused_by_name(kw, field):
    with pytest.raises(ValueError, match=field):
        random_walks(_two_cliques(), **kw)


def test_one_walk_of_one_node_is_allowed():
    walks = random_walks(_two_cliques(), num_walks=1, walk_length=1, seed=0)
    assert all(len(w) == 1 for w in walks) and sorted(w[0] for w in walks) == list(range(12))


@pytest.mark.parametrize("p, q", [(1.0, 10.0), (0.1, 1.0)])
def test_either_bias_alone_makes_the_walk_second_order(p, q):
    """p = q = 1 is the only uniform walk: p = 1 with an expensive move out, or cheap returns with q = 1, both
    send a walk on a cycle back where it came from far more often than half the time."""
    walks = random_walks(nx.cycle_graph(30), num_walks=4, walk_length=40, p=p, q=q, seed=0)
    back = [w[i] == w[i - 2] for w in walks for i in range(2, len(w))]
    assert np.mean(back) > 0.8


def test_the_bias_applies_from_the_walks_second_step():
    """The step after the first already knows where it came from (return 1/p)."""
    walks = random_walks(nx.cycle_graph(30), num_walks=20, walk_length=3, p=0.01, q=100.0, seed=0)
    assert np.mean([w[2] == w[0] for w in walks]) > 0.95


def test_the_walks_train_skip_gram_with_negative_sampling(monkeypatch):
    """node2vec is skip-gram (sg=1) with negative sampling (hs=0) over every node (min_count=1)."""
    import tempo_analysis.diffusion.node2vec as n2v

    seen = {}
    real = n2v.Word2Vec

    def spy(sentences, **kw):
        seen.update(kw)
        return real(sentences, **kw)

    monkeypatch.setattr(n2v, "Word2Vec", spy)
    Node2Vec(dim=4, num_walks=1, walk_length=3, window=2, negative=3, epochs=2, seed=5).fit(_two_cliques())
    assert {k: seen[k] for k in ("sg", "hs", "min_count", "vector_size", "window", "negative", "epochs", "seed",
                                 "workers")} == dict(sg=1, hs=0, min_count=1, vector_size=4, window=2, negative=3,
                                                     epochs=2, seed=5, workers=1)
