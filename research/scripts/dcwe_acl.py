"""DCWE against CWE on the ACL Anthology: venues as social units, years as slices (research/results/diffusion/acl.md).

    OMP_NUM_THREADS=1 .venv/bin/python research/scripts/dcwe_acl.py '{"out": "build/acl_diffusion.json"}'

One JSON argument, every key optional: years [first, last] (default 2017-2020), max_docs (abstracts sampled
per venue and year, default 40), min_papers (30), theta (author-Jaccard edge threshold, 0.01), pairs
([word, anchor] pairs to map), threads (1), out (where to write the JSON), and any DiffusionTrainConfig
field over the defaults below (one setting, chosen before the run and not tuned: nothing here reads the
test split until the end).

Prints and writes: corpus size, wall times, the held-out perplexity of DCWE and CWE on the same fixed
masks with the paired Wilcoxon signed-rank test over test documents (as the paper), and per pair the
diffusion map from each model's r-hat (first arrival per venue, walk and flight shares, the mode).
"""
import json
import sys
import time

import torch

from tempo_analysis.resolve import load_social
from tempo_analysis.diffusion.config import DiffusionTrainConfig
from tempo_analysis.diffusion.estimator import DiffusionMapper

DEFAULTS = dict(variants=("dcwe", "cwe"), epochs=100, max_steps=150, batch_size=16, lr=1e-4, dynamic_lr=1e-3,
                lambda_w=1.0, shared_warmup_steps=60, shared_warmup_lr=1e-4, mlm_probability=0.15,
                slice_batches=False, max_length=128, seed=0, progress=False)
PAIRS = [["model", "bert"], ["neural", "transformer"], ["word", "embedding"]]

args = json.loads(sys.argv[1] if len(sys.argv) > 1 else "{}")
first, last = args.pop("years", [2017, 2020])
max_docs, min_papers, theta = args.pop("max_docs", 40), args.pop("min_papers", 30), args.pop("theta", 0.01)
pairs, out = args.pop("pairs", PAIRS), args.pop("out", None)
torch.set_num_threads(int(args.pop("threads", 1)))

t0 = time.time()
corpus = load_social("acl", years=range(first, last + 1), max_docs_per_unit_slice=max_docs,
                     min_papers=min_papers, theta=theta, progress=False).data
res = {"years": [first, last], "max_docs": max_docs, "min_papers": min_papers, "theta": theta,
       "docs": len(corpus.df), "units": len(corpus.units), "edges": corpus.graph.number_of_edges(),
       "config": {**DEFAULTS, **args}}
cfg = DiffusionTrainConfig(**{**DEFAULTS, **args})
mapper = DiffusionMapper(cfg).fit(corpus)
res["fit_s"] = round(time.time() - t0)
res["split_docs"] = {k: len(v) for k, v in mapper.splits_.items()}
res["dev_history"] = {v: [(r.get("step"), round(r["perplexity"], 4)) for r in mapper.histories_[v] if "perplexity" in r]
                      for v in cfg.variants}
res["test"] = mapper.paired_comparison("dcwe", "cwe")
print("TEST", json.dumps(res["test"]), flush=True)

res["maps"] = {}
indexes = {v: mapper.context_index(v, max_docs_per_unit_slice=None, progress=False) for v in ("dcwe", "cwe")}
for word, anchor in pairs:
    for v in ("dcwe", "cwe"):
        try:
            a = mapper.analyze(word, anchor, index=indexes[v], variant=v)
        except ValueError as e:
            res["maps"][f"{word}->{anchor}:{v}"] = {"error": str(e)[:200]}
            continue
        reached = {u: t for u, t in a.first.items() if t is not None}
        res["maps"][f"{word}->{anchor}:{v}"] = {
            "n_neighbors": a.n_neighbors, "units_reached": len(reached), "first_arrival": reached,
            "walk_flight": a.walk_flight.round(3).to_dict("records"),
            "mode": {k: (round(x, 3) if isinstance(x, float) else x) for k, x in a.mode.items()}}
        print("MAP", word, anchor, v, json.dumps(res["maps"][f"{word}->{anchor}:{v}"]["mode"]), flush=True)
res["wall_s"] = round(time.time() - t0)
print("RESULT", json.dumps({k: res[k] for k in ("docs", "units", "edges", "split_docs", "test", "fit_s", "wall_s")}))
if out:
    with open(out, "w") as f:
        json.dump(res, f, indent=1, default=str)
