"""Diagnostic: does a graded readout of a longer-trained DCWE's map give the planted mode?

    OMP_NUM_THREADS=1 .venv/bin/python research/scripts/dcwe_graded_mode_check.py '{"steps": 600, "world": {"docs_per_word": 8}}'

As research/scripts/dcwe_mode_check.py (the same training), but a unit holds the new sense in a slice when
the model's probability of the anchor (`prediction_rhat`'s `anchor_prob`, probes averaged) is
above a per-word threshold, fixed before the run as Otsu's split of log anchor_prob over all
(unit, slice) cells of that word (the split that maximises the between-class variance). A model
whose anchor_prob is the same in every cell (CWE, the zeroed-offsets DCWE) has no split: no unit
holds, and no mode is read. Prints per word and model the recovered mode, walk share against the
share expected by chance, first arrivals that are exact, the threshold and the held-out perplexity.
"""
import dataclasses, json, sys, time

import numpy as np
import torch

torch.set_num_threads(1)
from tempo_analysis.diffusion import DiffusionMapper, DiffusionTrainConfig
from tempo_analysis.diffusion.analysis import diffusion_map, recover_mode
from tempo_analysis.diffusion.evaluate import without_offsets
from tempo_analysis.diffusion.probe import prediction_rhat
from tempo_analysis.world import SocialWorldConfig, generate_social


def otsu(values: np.ndarray) -> float | None:
    """The threshold between sorted values that maximises the between-class variance (None: no spread)."""
    v = np.sort(np.asarray(values, dtype=float))
    if v[-1] - v[0] < 1e-9:
        return None
    best, cut = -1.0, None
    for i in range(1, len(v)):
        a, b = v[:i], v[i:]
        between = len(a) * len(b) * (a.mean() - b.mean()) ** 2
        if v[i] > v[i - 1] and between > best:
            best, cut = between, (v[i - 1] + v[i]) / 2
    return cut


a = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
steps = a.get("steps", 600); world = a.get("world", {"docs_per_word": 8})
for mode in a.get("modes", ("walk", "flight")):
    t0 = time.time()
    corpus, truth = generate_social(dataclasses.replace(SocialWorldConfig(**world), mode=mode))
    cfg = DiffusionTrainConfig(variants=("dcwe", "cwe"), epochs=100, max_steps=steps, lr=1e-4, dynamic_lr=1e-3,
                               lambda_w=1.0, shared_warmup_steps=a.get("warmup", 80), shared_warmup_lr=1e-3, mlm_probability=0.3,
                               slice_batches=False, seed=0, progress=False)
    m = DiffusionMapper(cfg).fit(corpus)
    print(mode, "trained", round(time.time() - t0), "s; ppl", {k: round(v, 3) for k, v in m.perplexity_.items()},
          flush=True)
    for name, model in {"dcwe": m.model_, "zeroed": without_offsets(m.model_), "cwe": m.models_["cwe"]}.items():
        for word in truth["changing_words"]:
            anchor = truth["words"][word]["anchor"]
            rh = prediction_rhat(model, m.tokenizer_, word, anchor, corpus.units, corpus.slices, n_neighbors=1,
                                 candidates=m.model_.dynamic_token_ids)
            logp = np.log(rh["anchor_prob"].to_numpy())
            cut = otsu(logp)
            graded = rh.assign(rhat=logp if cut is not None else 0.0)
            _, first = diffusion_map(graded, corpus.units, corpus.slices, threshold=cut if cut is not None else 0.0)
            r = recover_mode(corpus.graph, first, corpus.slices)
            planted = truth["words"][word]["first_slice"]
            print(mode, name, word, "mode", r["mode"], "walk_share", round(r["walk_share"], 2),
                  "expected", round(r["expected_walk_share"], 2), "planted walk_share",
                  round(truth["words"][word]["walk_share"], 2),
                  "exact", sum(first[u] == t for u, t in planted.items()), "of", len(planted),
                  "threshold", None if cut is None else round(float(np.exp(cut)), 4), flush=True)
    print(mode, "wall", round(time.time() - t0), flush=True)
