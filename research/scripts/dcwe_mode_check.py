"""Diagnostic: does a longer-trained DCWE's map give the planted mode? (research/results/diffusion/README.md)

    OMP_NUM_THREADS=1 .venv/bin/python research/scripts/dcwe_mode_check.py '{"steps": 600, "world": {"docs_per_word": 8}}'

For the walk world and then the flight world (SocialWorldConfig changes in `world`), DCWE and CWE
train as in research/scripts/dcwe_dev_compare.py (notebook 03's defaults, `steps` optimiser steps each).
Then, for every changing word, notebook 03's readout (r̂: is the anchor the model's first choice
among the dynamic words at "word [MASK]." in each unit and slice; `analyze_rhat`'s mode) from
DCWE, from the same DCWE with its offsets zeroed, and from CWE. Prints per word the recovered mode,
the walk share, how many units' first arrival is exact, the share of cells with r̂ = 1, and the
test perplexities.
"""
import dataclasses, json, sys, time
import torch
torch.set_num_threads(1)
from tempo_analysis.diffusion import DiffusionMapper, DiffusionTrainConfig
from tempo_analysis.diffusion.evaluate import without_offsets
from tempo_analysis.diffusion.probe import prediction_rhat
from tempo_analysis.diffusion.report import analyze_rhat
from tempo_analysis.world import SocialWorldConfig, generate_social
a = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
steps = a.get("steps", 600); world = a.get("world", {"docs_per_word": 8})
for mode in ("walk", "flight"):
    t0 = time.time()
    corpus, truth = generate_social(dataclasses.replace(SocialWorldConfig(**world), mode=mode))
    cfg = DiffusionTrainConfig(variants=("dcwe", "cwe"), epochs=100, max_steps=steps, lr=1e-4, dynamic_lr=1e-3,
                               lambda_w=1.0, shared_warmup_steps=80, shared_warmup_lr=1e-3, mlm_probability=0.3,
                               slice_batches=False, seed=0, progress=False)
    m = DiffusionMapper(cfg).fit(corpus)
    for name, model in {"dcwe": m.model_, "zeroed": without_offsets(m.model_), "cwe": m.models_["cwe"]}.items():
        for words in truth["changing_words"]:
            anchor = truth["words"][words]["anchor"]
            rh = prediction_rhat(model, m.tokenizer_, words, anchor, corpus.units, corpus.slices, n_neighbors=1,
                                 candidates=m.model_.dynamic_token_ids)
            r = analyze_rhat(rh, corpus.graph, corpus.units, corpus.slices, words, anchor)
            planted = truth["words"][words]["first_slice"]
            print(mode, name, words, "mode", r.mode["mode"], "walk_share", r.mode.get("walk_share"),
                  "exact", sum(r.first[u] == t for u, t in planted.items()), "rhat share", round(float(rh["rhat"].mean()), 3),
                  "ppl", {k: round(v, 3) for k, v in m.perplexity_.items()}, flush=True)
    print(mode, "wall", round(time.time() - t0), flush=True)
