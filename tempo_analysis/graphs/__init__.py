"""Graph utilities (random walks, node2vec)."""
