"""A social corpus as DCWE consumes it: graph tensors for the GAT, and the slice-stratified split.

The corpus builders themselves (ACL venue network, CSV) are data, not method: they live in
:mod:`tempo_analysis.data.social_corpora` (the planted world's in :mod:`tempo_analysis.world`) and are reached through
:func:`tempo_analysis.resolve.load_social`.
"""
from __future__ import annotations

import numpy as np

from tempo_analysis.data import SocialCorpus


def graph_tensors(corpus: SocialCorpus) -> tuple[list[str], np.ndarray]:
    """(units in model order, edge_index [2, E']) for the GAT (row 0 = source, row 1 = target).

    An undirected graph gives both directions of every edge (E' = 2E); a directed graph
    (``networkx.DiGraph``) keeps its edges as given: unit b reads unit a only along a -> b.
    Self-loops are skipped (the GAT adds its own)."""
    units = corpus.units
    index = corpus.unit_index
    pairs = [(index[a], index[b]) for a, b in corpus.graph.edges if a != b]
    both = pairs if corpus.graph.is_directed() else pairs + [(b, a) for a, b in pairs]
    edge_index = np.array(both, dtype=np.int64).T.reshape(2, -1)
    return units, edge_index


def split_corpus(corpus: SocialCorpus, dev: float = 0.1, test: float = 0.2, seed: int = 0):
    """(train, dev, test) frames, stratified by time slice (paper: 70/10/20) so every slice is trained on."""
    if not (0 <= dev < 1 and 0 <= test < 1 and dev + test < 1):
        raise ValueError(f"split_corpus: dev={dev}, test={test} must be in [0, 1) with dev + test < 1.")
    rng = np.random.default_rng(seed)
    parts = {"train": [], "dev": [], "test": []}
    for _, grp in corpus.df.groupby("time", sort=True):
        idx = rng.permutation(grp.index.to_numpy())
        n_test, n_dev = int(round(test * len(idx))), int(round(dev * len(idx)))
        parts["test"].append(idx[:n_test])
        parts["dev"].append(idx[n_test:n_test + n_dev])
        parts["train"].append(idx[n_test + n_dev:])
    return tuple(corpus.df.loc[np.sort(np.concatenate(parts[k]))].reset_index(drop=True)
                 for k in ("train", "dev", "test"))
