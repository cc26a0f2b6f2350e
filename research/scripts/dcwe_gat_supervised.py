"""Diagnostic: can DCWE's social component represent the planted adoption map at all?

    OMP_NUM_THREADS=1 .venv/bin/python research/scripts/dcwe_gat_supervised.py [steps] [lr]

The planted world's graph and node2vec vectors (as notebook 03 builds them) feed one
`SocialComponent` (two GAT layers) per slice, as in DCWE; a linear layer per slice reads every
changing word's adoption bit from s_{u,t}. It is trained on the planted bits directly (binary
cross-entropy, all 24 units x 5 slices x 4 words in every full-graph step), with and without the
reference GAT dropout. Prints the loss, the share of cells classified right and the mean distance
between units' social vectors every 100 steps. A high accuracy means that the map can be read from
the graph, so a DCWE that does not learn it is short of signal, not of capacity
(research/results/diffusion/README.md).
"""
import sys

import numpy as np
import torch

from tempo_analysis.resolve import load_social
from tempo_analysis.diffusion.model import SocialComponent
from tempo_analysis.diffusion.node2vec import Node2Vec

torch.set_num_threads(1)
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 400
lr = float(sys.argv[2]) if len(sys.argv) > 2 else 1e-3
loaded = load_social("world")
corpus, truth = loaded.data, loaded.truth
units, T, words = corpus.units, truth["n_slices"], truth["changing_words"]
first = {w: truth["words"][w]["first_slice"] for w in words}
Y = torch.tensor([[[float(first[w][u] is not None and first[w][u] <= t) for u in units] for w in words]
                  for t in range(T)])                                  # [T, words, units]
print("adopted share per slice", [round(float(x), 3) for x in Y.mean((1, 2))])
nv = torch.tensor(Node2Vec(seed=0).fit(corpus.graph).vectors(units), dtype=torch.float32)
index = {u: i for i, u in enumerate(units)}
edges = [(index[a], index[b]) for a, b in corpus.graph.edges()]
edge_index = torch.tensor(edges + [(b, a) for a, b in edges]).T
for dropout in (0.6, 0.0):
    torch.manual_seed(0)
    gats = torch.nn.ModuleList(SocialComponent(nv.shape[1], 50, 4, dropout) for _ in range(T))
    heads = torch.nn.ModuleList(torch.nn.Linear(50, len(words)) for _ in range(T))
    opt = torch.optim.Adam([*gats.parameters(), *heads.parameters()], lr=lr)
    for step in range(steps + 1):
        gats.train()
        loss = sum(torch.nn.functional.binary_cross_entropy_with_logits(heads[t](gats[t](nv, edge_index)).T, Y[t])
                   for t in range(T)) / T
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 100 == 0:
            gats.eval()
            with torch.no_grad():
                acc = np.mean([((heads[t](gats[t](nv, edge_index)).T > 0).float() == Y[t]).float().mean().item()
                               for t in range(T)])
                s = gats[0](nv, edge_index)
            print(f"dropout {dropout}  step {step:4d}  loss {loss.item():.3f}  cells right {acc:.3f}  "
                  f"mean distance between units' s {torch.cdist(s, s).mean().item():.3f}")
