"""Train the MLM head that all-MiniLM-L6-v2 does not ship, with the encoder body frozen.

all-MiniLM-L6-v2 is a sentence encoder: its checkpoint has no masked-LM head. A fresh random head
makes MLM losses meaningless at first, and its early gradients wreck the body's middle layers
during post-training (see ../shared/REFERENCE-NOTES.md, section 2). So we train the head alone,
once, on general English text, and ship it (about 0.7 MB) as
``tempo_analysis/assets/minilm_mlm_head.safetensors``; ``load_encoder("default", head="mlm")``
loads it. The decoder matrix is tied to the (frozen) word embeddings; only the transform
(dense + LayerNorm) and the output bias are trained.

Because the body is frozen, its hidden states at masked positions are computed once (inference
mode) and the head is trained on them for several epochs: minutes on a CPU.

    python scripts/train_mlm_head.py --corpora ../shared/data/nltk_data/corpora --sentences 24000
"""

from __future__ import annotations

import argparse
import json
import math
import re
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from tempo_analysis.encoders import HEAD_ASSET, load_encoder


def read_sentences(corpora: Path, limit: int, seed: int) -> list[str]:
    """Plain sentences from Brown (tags stripped), State of the Union and Inaugural addresses."""
    texts = []
    for f in sorted((corpora / "brown").glob("c[a-r][0-9][0-9]")):
        words = [tok.rsplit("/", 1)[0] for tok in f.read_text(encoding="utf-8", errors="ignore").split()]
        texts.append(" ".join(words))
    for sub in ("state_union", "inaugural"):
        for f in sorted((corpora / sub).glob("*.txt")):
            texts.append(f.read_text(encoding="utf-8", errors="ignore"))
    sents = []
    for t in texts:
        t = re.sub(r"\s+", " ", t).replace("``", '"').replace("''", '"')
        for s in re.split(r"(?<=[.!?])\s+", t):
            n = len(s.split())
            if 6 <= n <= 40:
                sents.append(s.strip())
    rng = np.random.default_rng(seed)
    rng.shuffle(sents)
    return sents[:limit]


def masked_states(model, tok, sents, *, batch=64, max_len=64, seed=0):
    """Hidden states of the frozen body at BERT-masked positions (80/10/10), with their labels."""
    g = torch.Generator().manual_seed(seed)
    feats, labels = [], []
    special = torch.tensor(sorted(set(tok.all_special_ids)))
    with torch.inference_mode():
        for i in range(0, len(sents), batch):
            enc = tok(sents[i:i + batch], return_tensors="pt", padding=True, truncation=True, max_length=max_len)
            ids = enc["input_ids"].clone()
            can = enc["attention_mask"].bool() & ~torch.isin(ids, special)
            pick = (torch.rand(ids.shape, generator=g) < 0.15) & can
            r = torch.rand(ids.shape, generator=g)
            ids[pick & (r < 0.8)] = tok.mask_token_id
            rand_tok = torch.randint(len(tok), ids.shape, generator=g)
            swap = pick & (r >= 0.8) & (r < 0.9)
            ids[swap] = rand_tok[swap]
            h = model.bert(input_ids=ids, attention_mask=enc["attention_mask"]).last_hidden_state
            feats.append(h[pick])
            labels.append(enc["input_ids"][pick])
    return torch.cat(feats), torch.cat(labels)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpora", type=Path, default=Path("../shared/data/nltk_data/corpora"))
    ap.add_argument("--sentences", type=int, default=24000)
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=HEAD_ASSET)
    args = ap.parse_args()
    torch.manual_seed(args.seed)
    t0 = time.time()
    model, tok = load_encoder("default", head="mlm", pretrained_head=False)
    model.eval()
    sents = read_sentences(args.corpora, args.sentences, args.seed)
    n_dev = max(500, len(sents) // 20)
    x, y = masked_states(model, tok, sents[n_dev:], seed=args.seed)
    xd, yd = masked_states(model, tok, sents[:n_dev], seed=args.seed + 1)
    print(f"{len(sents)} sentences, {len(y)} train / {len(yd)} dev masked tokens, {time.time() - t0:.0f}s")

    head = model.cls.predictions
    train = [p for n, p in head.named_parameters() if not n.startswith("decoder")]
    decoder_w = model.bert.embeddings.word_embeddings.weight.detach()
    opt = torch.optim.AdamW(train, lr=args.lr, weight_decay=0.01)
    steps = args.epochs * math.ceil(len(y) / 512)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, total_steps=steps, pct_start=0.1)

    def loss_on(feats, labs):
        z = head.transform(feats)
        return F.cross_entropy(z @ decoder_w.T + head.bias, labs)

    with torch.no_grad():
        before = loss_on(xd, yd).item()
    g = torch.Generator().manual_seed(args.seed)
    for epoch in range(args.epochs):
        perm = torch.randperm(len(y), generator=g)
        for j in range(0, len(y), 512):
            idx = perm[j:j + 512]
            loss = loss_on(x[idx], y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
        with torch.no_grad():
            dev = loss_on(xd, yd).item()
        print(f"epoch {epoch + 1}: dev loss {dev:.3f} (ppl {math.exp(dev):.1f})")

    from safetensors.torch import save_file

    tensors = {n: p.detach().contiguous().clone() for n, p in head.named_parameters() if not n.startswith("decoder")}
    meta = {"source": "all-MiniLM-L6-v2 body frozen; head trained by scripts/train_mlm_head.py",
            "corpora": "NLTK brown + state_union + inaugural", "sentences": str(len(sents)),
            "dev_loss_before": f"{before:.4f}", "dev_loss_after": f"{dev:.4f}", "seed": str(args.seed)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(args.out), metadata=meta)
    print(json.dumps({"out": str(args.out), "dev_loss_before": before, "dev_loss_after": dev,
                      "seconds": round(time.time() - t0)}))


if __name__ == "__main__":
    main()
