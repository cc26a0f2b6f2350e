"""DCWE against CWE on the planted world, scored on the dev split (research/results/diffusion/README.md).

    OMP_NUM_THREADS=1 .venv/bin/python research/scripts/dcwe_dev_compare.py '{"max_steps": 120, "world": {"docs_per_word": 8}}'

One JSON argument: DiffusionTrainConfig fields over notebook 03's defaults (variants dcwe and cwe), plus
world (SocialWorldConfig changes), threads, oracle_social (true: DCWE's social vector is the planted
adoption bits, a diagnostic upper bound; dcwe_common.use_oracle_social) and output_offsets (true: the
offsets also enter DCWE's output layer, a diagnostic; dcwe_common.use_output_offsets). Prints RESULT with the dev
perplexity of both models (all masked tokens, and the planted companions only), the offset ratio, the σ_sim precision@k
(dev contexts, as notebook 03) and the wall time, then MAPAUC:
per changing word, the AUC of log p(anchor) - log p(old anchor) at "word [MASK]." over every (unit,
slice) against the planted adoption (0.5 = no map; CWE is 0.5 by construction).
"""
import json, sys, time
import torch
from tempo_analysis.diffusion.evaluate import offset_ratio, sigma_precision_at_k

from dcwe_common import dev_perplexities, fit_pair

args = json.loads(sys.argv[1])
t0 = time.time()
m, corpus, truth, cfg = fit_pair(args)
world = args.get("world", {})
args = {k: v for k, v in args.items() if k not in ("world", "threads")}  # oracle_social, output_offsets stay visible
tok = m.tokenizer_
res = {"args": args, "world": world, "docs": len(corpus.df), "train_docs": len(m.splits_["train"])}
for v, (all_tokens, companions) in dev_perplexities(m, corpus, truth, cfg).items():
    res[v], res[v + "_comp"] = all_tokens, companions
res["gain_pct"] = round(100 * (1 - res["dcwe"] / res["cwe"]), 2)
res["comp_gain_pct"] = round(100 * (1 - res["dcwe_comp"] / res["cwe_comp"]), 2)
try:
    res["offset_ratio"] = round(float(offset_ratio(m.model_, tok, truth["changing_words"], truth["stable_words"])), 3)
except Exception as e:
    res["offset_ratio"] = str(e)[:80]
try:
    res["sigma_precision"], res["sigma_top"] = sigma_precision_at_k(m.variable_words(top=8)[1], truth["changing_words"])
except Exception as e:
    res["sigma_precision"] = str(e)[:80]
res["best_steps"] = {v: [r.get("step") for r in m.histories_[v]][-1:] for v in ("dcwe", "cwe")}
res["wall_s"] = round(time.time() - t0)
print("RESULT", json.dumps(res))

# map diagnostic: does the model's companion choice at (u, t) follow the planted adoption?
from sklearn.metrics import roc_auc_score
aucs = {}
for v in ("dcwe", "cwe"):
    model = m.models_[v]; model.eval()
    per = []
    for w in truth["changing_words"]:
        a, o = truth["words"][w]["anchor"], truth["words"][w]["old_anchor"]
        ids = [tok(x, add_special_tokens=False)["input_ids"][0] for x in (a, o)]
        enc = tok([f"{w} {tok.mask_token}."], return_tensors="pt")
        mpos = (enc["input_ids"][0] == tok.mask_token_id).nonzero()[0, 0]
        ys, ss = [], []
        for ui, u in enumerate(corpus.units):
            for ti, t in enumerate(corpus.slices):
                with torch.no_grad():
                    out = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"],
                                unit_ids=torch.tensor([ui]), slice_ids=torch.tensor([ti]))
                lp = torch.log_softmax(out.logits[0, mpos] if out.logits.dim() == 3 else out.logits[0], -1)
                ss.append(float(lp[ids[0]] - lp[ids[1]]))
                f = truth["words"][w]["first_slice"][u]
                ys.append(int(f is not None and f <= t))
        per.append(roc_auc_score(ys, ss) if len(set(ss)) > 1 else 0.5)
    aucs[v] = [round(x, 3) for x in per]
print("MAPAUC", json.dumps(aucs))
