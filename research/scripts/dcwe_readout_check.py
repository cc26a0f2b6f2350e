"""Where can the planted adoption map be read from? DCWE and CWE on the planted world, read four ways
(research/results/diffusion/README.md, "The text tells the time-blind control").

    OMP_NUM_THREADS=1 .venv/bin/python research/scripts/dcwe_readout_check.py '{"world": {"paired_layout": "one"}}'

One JSON argument: DiffusionTrainConfig fields over notebook 03's defaults (variants dcwe and cwe), plus
world (SocialWorldConfig changes). Prints the dev perplexity of both models (all masked tokens, and the
changing words' companions only; DEV), then per model and readout, per changing word, the AUC of
log p(anchor) - log p(old anchor) at the companion's mask against the planted adoption over the
(unit, slice) cells, and the walk/flight mode that a "p(anchor) > p(old anchor)" map gives:
- shipped: notebook 03's probes ("cloud [MASK].", "cloud and [MASK].", "cloud with [MASK].");
- last_pair: "cloud [MASK]." alone;
- in_list: the word in a list of stable-word pairs, as in the world's documents;
- own_heldout_docs: the unit's own held-out (dev and test) paired documents of that slice with the
  word's companion masked: the rest of the document is the unit's real text.
"""
import json, sys, time
import torch
from sklearn.metrics import roc_auc_score
from tempo_analysis.diffusion.report import analyze_rhat

from dcwe_common import dev_perplexities, fit_pair

t0 = time.time()
m, corpus, truth, cfg = fit_pair(json.loads(sys.argv[1] if len(sys.argv) > 1 else "{}"))
tok = m.tokenizer_
M = tok.mask_token
print("fit", round(time.time() - t0), flush=True)
from tempo_analysis.diffusion.evaluate import offset_ratio
dev = dev_perplexities(m, corpus, truth, cfg)
dev["gain_pct"] = round(100 * (1 - dev["dcwe"][0] / dev["cwe"][0]), 2)
dev["comp_gain_pct"] = round(100 * (1 - dev["dcwe"][1] / dev["cwe"][1]), 2)
dev["offset_ratio"] = round(float(offset_ratio(m.model_, tok, truth["changing_words"], truth["stable_words"])), 3)
print("DEV", json.dumps(dev), flush=True)
FAMILIES = {
    "shipped": ["{w} {m}.", "{w} and {m}.", "{w} with {m}."],
    "last_pair": ["{w} {m}."],
    "in_list": ["River boat, {w} {m}, garden roses.", "Garden fence, river bridge, {w} {m}.",
                "{w} {m}, river boat, garden fence.", "River bridge, garden roses, {w} {m}, train station."],
}
heldout = set(m.splits_["dev"]["doc_id"]) | set(m.splits_["test"]["doc_id"])
res = {}
for v in ("dcwe", "cwe"):
    model = m.models_[v]; model.eval()
    for fam, probes in list(FAMILIES.items()) + [("own_heldout_docs", None)]:
        aucs, modes = [], []
        for w in truth["changing_words"]:
            a, o = truth["words"][w]["anchor"], truth["words"][w]["old_anchor"]
            ia, io = [tok(x, add_special_tokens=False)["input_ids"][0] for x in (a, o)]
            ys, ss, rows = [], [], []
            for ui, u in enumerate(corpus.units):
                for ti, t in enumerate(corpus.slices):
                    if probes is None:
                        d = corpus.df[(corpus.df.unit == u) & (corpus.df.time == t) & corpus.df.doc_id.isin(heldout)]
                        texts = []
                        for txt in d.text:
                            for cand in (a, o):
                                if f"{w} {cand}" in txt.lower():
                                    low = txt.lower(); i = low.index(f"{w} {cand}") + len(w) + 1
                                    texts.append(txt[:i] + M + txt[i + len(cand):])
                        if not texts:
                            continue
                    else:
                        texts = [p.format(w=w, m=M) for p in probes]
                    enc = tok(texts, padding=True, return_tensors="pt")
                    with torch.no_grad():
                        out = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"],
                                    unit_ids=torch.full((len(texts),), ui), slice_ids=torch.full((len(texts),), ti))
                    mp = (enc["input_ids"] == tok.mask_token_id).nonzero(as_tuple=True)
                    lp = torch.log_softmax(out.logits[mp[0], mp[1]].float(), -1)
                    s = float((lp[:, ia] - lp[:, io]).mean())
                    f = truth["words"][w]["first_slice"][u]
                    ys.append(int(f is not None and f <= t)); ss.append(s)
                    rows.append({"unit": u, "time": t, "rhat": float(s > 0), "n": len(texts)})
            aucs.append(round(roc_auc_score(ys, ss), 3) if len(set(ys)) > 1 and len(set(ss)) > 1 else 0.5)
            import pandas as pd
            try:
                r = pd.DataFrame(rows); r["n_neighbors"] = 1
                md = analyze_rhat(r, corpus.graph, corpus.units, corpus.slices, w, a).mode
                modes.append((md.get("mode"), md.get("walk_share"), md.get("expected_walk_share")))
            except Exception as e:
                modes.append(("err", str(e)[:60]))
        res[f"{v}:{fam}"] = {"auc": aucs, "modes": modes}
        print(v, fam, json.dumps(res[f"{v}:{fam}"]), flush=True)
print("planted", truth.get("mode"), "wall", round(time.time() - t0))
