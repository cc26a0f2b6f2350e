"""node2vec: our own walks (uniform and p/q-biased), gensim Word2Vec, isolated nodes."""
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
