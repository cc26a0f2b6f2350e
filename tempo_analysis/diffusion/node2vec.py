"""node2vec: our own (p, q)-biased or uniform random walks, then gensim Word2Vec on the walks.

Grover & Leskovec (2016). A walk at node ``v`` having come from ``t`` steps to a neighbour ``x``
with unnormalised weight ``w(v, x) * alpha``, where ``alpha = 1/p`` if ``x == t`` (return),
``1`` if ``x`` is also a neighbour of ``t`` (stay close), ``1/q`` otherwise (move out).
``p = q = 1`` is a uniform (DeepWalk) walk (edge weights still bias it when the graph has them).

The DCWE paper initialises its social units with node2vec vectors (dim 50; 10 walks of length
80 per node; window 2): those are the defaults here.

Edge weights: the paper's graphs are binary (ArXiv: an edge where the Jaccard similarity of two
subject classes' author sets exceeds θ = 0.01), so walks are unweighted by default
(``weighted=False``), whatever ``weight`` attributes the graph carries (the ACL venue graph stores
the Jaccard value there). ``weighted=True`` biases each step by the edge's ``weight`` instead.
Directed graphs are walked as undirected (a tie is a tie for the unit's position); the GAT itself
keeps the direction (see ``corpora.graph_tensors``).

Isolated nodes have nowhere to go: each gets walks of itself (``[v, v, ..., v]``), so it still
receives a vector and the run goes on; a warning names them (their vector carries no
neighbourhood information, so consider adding edges).
"""
from __future__ import annotations

import warnings
import zlib
from dataclasses import dataclass

import networkx as nx
import numpy as np
from gensim.models import Word2Vec


def _stable_hash(s) -> int:
    """Process-independent hash for gensim's vector init (Python's str hash is salted per process)."""
    return zlib.crc32(str(s).encode("utf-8"))


def _weighted_choice(rng: np.random.Generator, weights: np.ndarray) -> int:
    """Index drawn with probability proportional to ``weights``."""
    c = np.cumsum(weights)
    return int(np.searchsorted(c, rng.random() * c[-1], side="right"))


def random_walks(graph: nx.Graph, num_walks: int = 10, walk_length: int = 80, p: float = 1.0, q: float = 1.0,
                 seed: int = 0, weight: str | None = "weight") -> list[list[int]]:
    """``num_walks`` walks of ``walk_length`` node *indices* (order of ``list(graph.nodes)``) per node.

    Nodes are visited in a seeded random order each round, as in the node2vec paper.
    """
    if num_walks < 1 or walk_length < 1:
        raise ValueError(f"num_walks={num_walks}, walk_length={walk_length}: both must be >= 1.")
    if p <= 0 or q <= 0:
        raise ValueError(f"node2vec p={p}, q={q}: both must be > 0 (p=q=1 is a uniform walk).")
    if graph.is_directed():
        graph = graph.to_undirected()
    nodes = list(graph.nodes)
    if not nodes:
        raise ValueError("node2vec: the graph has no nodes; build the social graph over your units first.")
    index = {n: i for i, n in enumerate(nodes)}
    nbrs = [np.array([index[m] for m in graph.neighbors(n) if m != n], dtype=np.int64) for n in nodes]
    wts = [np.array([float(graph[n][nodes[j]].get(weight, 1.0)) if weight else 1.0 for j in nb])
           for n, nb in zip(nodes, nbrs)]
    nbr_sets = [set(nb.tolist()) for nb in nbrs]
    uniform = p == 1.0 and q == 1.0
    rng = np.random.default_rng(seed)
    walks = []
    for _ in range(num_walks):
        for start in rng.permutation(len(nodes)):
            walk = [int(start)]
            while len(walk) < walk_length:
                cur = walk[-1]
                nb = nbrs[cur]
                if len(nb) == 0:  # isolated node: a walk of itself
                    walk.append(cur)
                    continue
                w = wts[cur]
                if not uniform and len(walk) > 1:  # second-order bias: return 1/p, stay 1, move out 1/q
                    prev = walk[-2]
                    close = np.fromiter((x in nbr_sets[prev] for x in nb), dtype=bool, count=len(nb))
                    w = w * np.where(nb == prev, 1.0 / p, np.where(close, 1.0, 1.0 / q))
                walk.append(int(nb[_weighted_choice(rng, w)]))
            walks.append(walk)
    return walks


@dataclass
class Node2Vec:
    """node2vec embeddings of a graph's nodes. ``fit(graph)`` returns self; ``embeddings_`` is [n_nodes, dim]."""

    dim: int = 50
    num_walks: int = 10
    walk_length: int = 80
    window: int = 2
    p: float = 1.0
    q: float = 1.0
    epochs: int = 10
    negative: int = 5
    seed: int = 0
    workers: int = 1  # >1 is faster but not bit-reproducible
    weighted: bool = False  # True: walk steps biased by the edges' "weight" (paper: binary edges)

    def fit(self, graph: nx.Graph) -> "Node2Vec":
        """Sample walks, train skip-gram Word2Vec on them, keep one vector per node (graph order)."""
        ties = graph.to_undirected(as_view=True) if graph.is_directed() else graph   # in- or out-edges alike
        isolated = [n for n in graph.nodes if all(m == n for m in ties.neighbors(n))]
        if isolated:
            warnings.warn(
                f"node2vec: isolated node(s) {isolated[:5]}{' ...' if len(isolated) > 5 else ''} have no edges; "
                "they get walks of themselves and their vectors carry no neighbourhood information. "
                "Fix: add edges for them (or lower the edge threshold) if they should be connected.",
                stacklevel=2,
            )
        walks = random_walks(graph, self.num_walks, self.walk_length, self.p, self.q, seed=self.seed,
                             weight="weight" if self.weighted else None)
        sentences = [[str(i) for i in w] for w in walks]
        w2v = Word2Vec(sentences, vector_size=self.dim, window=self.window, min_count=1, sg=1, hs=0,
                       negative=self.negative, epochs=self.epochs, seed=self.seed, workers=self.workers,
                       hashfxn=_stable_hash)
        self.nodes_ = list(graph.nodes)
        self.isolated_ = isolated
        self.walks_ = walks
        self.embeddings_ = np.stack([w2v.wv[str(i)] for i in range(len(self.nodes_))]).astype(np.float32)
        return self

    def vectors(self, order=None) -> np.ndarray:
        """Embeddings in the order of ``order`` (node names); default graph order."""
        if order is None:
            return self.embeddings_
        pos = {n: i for i, n in enumerate(self.nodes_)}
        missing = [n for n in order if n not in pos]
        if missing:
            raise ValueError(f"node2vec: unit(s) {missing[:5]} are not nodes of the fitted graph; "
                             "add them to the graph (isolated nodes are allowed) and fit again.")
        return self.embeddings_[[pos[n] for n in order]]


def node2vec_embeddings(graph: nx.Graph, order=None, **kwargs) -> np.ndarray:
    """Shortcut: ``Node2Vec(**kwargs).fit(graph).vectors(order)``."""
    return Node2Vec(**kwargs).fit(graph).vectors(order)
