"""Diagnostic: can DCWE's offsets learn the planted world's adoption map? (research/results/diffusion/README.md)

    OMP_NUM_THREADS=1 .venv/bin/python research/scripts/dcwe_map_diagnostic.py '{"freeze_body": 1, "paired_only": 1, "dlr": 1e-4, "steps": 200}'

One JSON argument: world (SocialWorldConfig changes), freeze_body (train the dynamic component only),
paired_only (train on the paired documents only), lr / dlr (body / dynamic learning rate), steps, bs,
every, top_k (dynamic vocabulary), w2_std (a non-zero start for the offset FFNs' output layers), oracle_table (a free offset
per changing word, unit and slice instead of the FFN and GAT: can the encoder read a map at all?), gat_dropout, offset_dropout, lambda_w, lambda_a. The encoder first
gets notebook 03's shared plain-MLM warm-up (80 steps at 1e-3, kept as safetensors in
the temporary folder between runs, one file per world); then
DCWE trains and every `every` steps prints the training loss, the dev perplexity (all masked tokens and
the companions only, dev split) and, per changing word, the AUC of log p(anchor) - log p(old anchor) at
the mask of "word [MASK]." over every (unit, slice) against the planted adoption (0.5 = no map).
"""
import hashlib, json, os, sys, tempfile, time
import numpy as np, torch
from safetensors.torch import load_model, save_model
torch.set_num_threads(1)
from sklearn.metrics import roc_auc_score
from tempo_analysis.resolve import load_social
from tempo_analysis.diffusion.config import DiffusionTrainConfig
from tempo_analysis.diffusion.training import build_dcwe, load_mlm_encoder, param_groups
from tempo_analysis.diffusion.mlm import SocialMLMDataset, MLMCollator, PlainMLM, fixed_mlm_batches, mlm_perplexity
from tempo_analysis.diffusion.model import content_vocabulary
from tempo_analysis.diffusion.node2vec import Node2Vec
from tempo_analysis.diffusion.corpora import split_corpus
from tempo_analysis.training import Trainer, TrainConfig, seed_everything

a = json.loads(sys.argv[1])
world = a.get("world", {})
loaded = load_social("world", world=world)
corpus, truth = loaded.data, loaded.truth
cfg = DiffusionTrainConfig(lambda_w=a.get("lambda_w", 1.0), lambda_a=a.get("lambda_a"), mlm_probability=0.3,
                           gat_dropout=a.get("gat_dropout", 0.6), offset_dropout=a.get("offset_dropout", 0.2))
tr, dev, te = split_corpus(corpus)
if a.get("paired_only"):
    tr = tr[tr["kind"] == "paired"].reset_index(drop=True)
enc, tok, fresh = load_mlm_encoder("default")
key = hashlib.sha256(json.dumps(world, sort_keys=True).encode()).hexdigest()[:16]
warm = os.path.join(tempfile.gettempdir(), f"dcwe_map_diagnostic_warm_{key}.safetensors")
col = MLMCollator(tok, 0.3)
ds = SocialMLMDataset(tr, tok, corpus.unit_index, corpus.slice_index, 64)
if os.path.exists(warm):
    load_model(enc, warm)
else:
    tc = TrainConfig(max_epochs=None, max_steps=80, batch_size=16, lr=1e-3, seed=0, progress=False,
                     restore_best=False, warmup_ratio=0.1)
    Trainer(PlainMLM(enc), tc, collate_fn=col).fit(SocialMLMDataset(split_corpus(corpus)[0], tok, corpus.unit_index, corpus.slice_index, 64))
    save_model(enc, warm)
seed_everything(0)   # the same start whether the warm-up was trained now or read from the file
nv = Node2Vec(seed=0).fit(corpus.graph).vectors(corpus.units)
dyn = content_vocabulary(split_corpus(corpus)[0]["text"], tok, top_k=a.get("top_k", 10000))
model = build_dcwe(enc, corpus, nv, dyn, "dcwe", cfg)
if a.get("w2_std"):   # start the offset FFNs' output layers small but non-zero (default: exactly 0)
    g = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for ffn in model.dynamic.ffns:
            ffn.fc2.weight.normal_(0, a["w2_std"], generator=g)
if a.get("freeze_body"):
    for n, p in model.named_parameters():
        if not n.startswith("dynamic."):
            p.requires_grad = False
if a.get("oracle_table"):   # the FFN and GAT replaced by a free offset per (changing word, unit, slice)
    cw = [tok(w, add_special_tokens=False)["input_ids"][0] for w in truth["changing_words"]]
    lut = torch.full((len(tok),), -1, dtype=torch.long)
    lut[cw] = torch.arange(len(cw))
    H = model.encoder.get_input_embeddings().embedding_dim
    table = torch.nn.Parameter(torch.zeros(len(cw), len(corpus.units), len(corpus.slices), H))

    def free_offsets(embeds, input_ids, attention_mask, unit_ids, slice_ids):
        k = lut[input_ids]
        pos = k >= 0
        b, l = pos.nonzero(as_tuple=True)
        o = table[k[b, l], unit_ids[b], slice_ids[b]]
        zero = embeds.new_zeros(())
        return embeds.index_put((b, l), embeds[b, l] + o), o, zero, zero, pos

    model.dynamic.forward = free_offsets
    model.table = table
groups = [{"params": [table], "lr": a.get("dlr", 1e-3)}] if a.get("oracle_table") else param_groups(model, DiffusionTrainConfig(lr=a.get("lr", 1e-4), dynamic_lr=a.get("dlr", 1e-3)))
opt = torch.optim.AdamW(groups)
dsd = SocialMLMDataset(dev, tok, corpus.unit_index, corpus.slice_index, 64)
devb = fixed_mlm_batches(dsd, tok, seed=2, repeats=3)
comp = [truth["words"][w][k] for w in truth["changing_words"] for k in ("anchor", "old_anchor")]
only = [tok(w, add_special_tokens=False)["input_ids"][0] for w in comp]

def map_auc():
    model.eval(); per = []
    for w in truth["changing_words"]:
        an, o = truth["words"][w]["anchor"], truth["words"][w]["old_anchor"]
        ids = [tok(x, add_special_tokens=False)["input_ids"][0] for x in (an, o)]
        enc_ = tok([f"{w} {tok.mask_token}."], return_tensors="pt")
        mpos = int((enc_["input_ids"][0] == tok.mask_token_id).nonzero()[0, 0])
        U, T = len(corpus.units), len(corpus.slices)
        ui = torch.arange(U).repeat_interleave(T); ti = torch.arange(T).repeat(U)
        with torch.no_grad():
            out = model(input_ids=enc_["input_ids"].repeat(U * T, 1), attention_mask=enc_["attention_mask"].repeat(U * T, 1),
                        unit_ids=ui, slice_ids=ti)
        lp = torch.log_softmax(out.logits[:, mpos], -1)
        ss = (lp[:, ids[0]] - lp[:, ids[1]]).numpy()
        ys = [int((f := truth["words"][w]["first_slice"][corpus.units[u]]) is not None and f <= corpus.slices[t])
              for u, t in zip(ui.tolist(), ti.tolist())]
        per.append(roc_auc_score(ys, ss) if np.ptp(ss) > 0 else 0.5)
    model.train()
    return [round(x, 3) for x in per]

rng = np.random.default_rng(0)
steps, bs = a.get("steps", 200), a.get("bs", 16)
t0 = time.time(); model.train()
for step in range(1, steps + 1):
    idx = rng.choice(len(ds), bs, replace=False)
    batch = col([ds[i] for i in idx])
    loss = model(**batch).loss
    loss.backward(); opt.step(); opt.zero_grad()
    if step % a.get("every", 40) == 0 or step == steps:
        print(json.dumps({"step": step, "loss": round(loss.item(), 3), "auc": map_auc(),
                          "dev": round(mlm_perplexity(model, devb), 3), "dev_comp": round(mlm_perplexity(model, devb, only=only), 3),
                          "s": round(time.time() - t0)}), flush=True)
        model.train()
