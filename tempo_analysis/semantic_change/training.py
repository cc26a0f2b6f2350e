"""MLM post-training on period-tagged sentences, through the shared Trainer.

The schedule (``PostTrainConfig``, in :mod:`.config`), and why:

* **Stage 0 -- head warm-up, body frozen** (only when the checkpoint has no MLM head, e.g.
  all-MiniLM-L6-v2). The head starts random; its early gradients, let into the body, wreck the
  middle layers (REFERENCE-NOTES §2: naive post-training *hurt* MiniLM). So the body and the time
  parameters are frozen and only the head (dense, LayerNorm, output bias; the decoder is tied to the
  frozen word embeddings) learns, at a high LR, on the corpus itself plus general text
  (``general_text``; ``semantic_change.pipeline.train_model`` passes ``general_sentences`` Brown and
  Gutenberg sentences from ``shared/data`` when that folder is found), so the head learns English,
  not only the target corpus. No gradient reaches the body,
  so this stage is cheap (forward of a frozen body + a small head).
* **Stage 1 -- gentle post-training with time.** The new time parameters (time embeddings, W_T,
  gates) learn at ``time_lr``; the pretrained body at a small ``body_lr`` (0 freezes it); the head
  at ``head_lr_stage1``. Linear decay, a short warm-up. Word embeddings follow ``body_lr``.

Masking is the standard BERT 15% (80% [MASK], 10% random, 10% kept) over content pieces; a
prepended time token (time-token baseline) is masked with ``time_mask_prob`` instead (Rosin et al.
2022's time masking), and the target words' pieces with ``target_mask_prob`` when it is set
(target-focused masking: more of the loss on the words being ranked). Everything is seeded.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import torch
from torch.utils.data import Dataset

from ..training import TrainConfig, Trainer
from .config import PostTrainConfig


class Examples(Dataset):
    """A map-style dataset over tokenised examples (the Trainer shuffles it, seeded)."""

    def __init__(self, items):
        self.items = list(items)

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


class MLMCollator:
    """Pad, mask (seeded by the Trainer's RNG), and attach the period per example.

    ``target_ids`` with ``target_prob``: these token ids (the target words' pieces) are masked with
    ``target_prob`` instead of ``mask_prob`` (target-focused masking)."""

    def __init__(self, tokenizer, mask_prob=0.15, time_mask_prob=0.5, has_time_token=False, target_ids=None,
                 target_prob=None):
        self.tok, self.p, self.pt, self.time_token = tokenizer, mask_prob, time_mask_prob, has_time_token
        self.special = set(tokenizer.all_special_ids)
        use = target_prob is not None and target_ids is not None
        self.target_ids = torch.as_tensor(sorted(set(target_ids)), dtype=torch.long) if use else None
        self.target_p = target_prob

    def __call__(self, items):
        n = max(len(x["input_ids"]) for x in items)
        pad = self.tok.pad_token_id or 0
        ids = torch.full((len(items), n), pad, dtype=torch.long)
        am = torch.zeros((len(items), n), dtype=torch.long)
        for r, x in enumerate(items):
            ids[r, :len(x["input_ids"])] = torch.tensor(x["input_ids"])
            am[r, :len(x["input_ids"])] = 1
        special = torch.zeros_like(ids, dtype=torch.bool)
        for s in self.special:
            special |= ids == s
        prob = torch.full(ids.shape, self.p)
        if self.target_ids is not None:
            prob[torch.isin(ids, self.target_ids)] = self.target_p
        if self.time_token:                      # position 1 holds the time token: time masking
            rows = torch.tensor([bool(x.get("time_token", True)) for x in items])
            prob[rows, 1] = self.pt              # general text (no time token) is masked as usual
            special[rows, 1] = False
        chosen = (torch.rand(ids.shape) < prob) & ~special & am.bool()
        labels = torch.where(chosen, ids, torch.full_like(ids, -100))
        roll = torch.rand(ids.shape)
        ids = ids.clone()
        ids[chosen & (roll < 0.8)] = self.tok.mask_token_id
        rand_pos = chosen & (roll >= 0.8) & (roll < 0.9)
        ids[rand_pos] = torch.randint(len(self.tok), (int(rand_pos.sum()),))
        time = torch.tensor([x["time"] for x in items], dtype=torch.long)
        return {"input_ids": ids, "attention_mask": am, "labels": labels, "time": time}


def encode_sentences(tokenizer, texts, times, *, max_length=64, prefix_ids=None):
    """Tokenised training examples ``{"input_ids", "time"}`` (truncated to ``max_length``)."""
    if len(texts) == 0:
        return []
    enc = tokenizer(list(texts), add_special_tokens=False, truncation=False)["input_ids"]
    cls_id = tokenizer.cls_token_id if tokenizer.cls_token_id is not None else tokenizer.bos_token_id
    sep_id = tokenizer.sep_token_id if tokenizer.sep_token_id is not None else tokenizer.eos_token_id
    out = []
    for i, (ids, t) in enumerate(zip(enc, times)):
        pre = list(prefix_ids[i]) if prefix_ids is not None else []
        body = ids[: max_length - 2 - len(pre)]
        if body:
            out.append({"input_ids": [cls_id] + pre + body + [sep_id], "time": int(t), "time_token": bool(pre)})
    return out


def _groups(model):
    """Parameter groups by role: time, head, body."""
    time, head, body = [], [], []
    for n, p in model.named_parameters():
        if ".time" in n or "time_embeddings" in n or "time_gate" in n:
            time.append(p)
        elif n.startswith("head."):
            head.append(p)
        else:
            body.append(p)
    return time, head, body


def post_train(model, tokenizer, texts, times, cfg: PostTrainConfig | None = None, *, general_text=(),
               prefix_ids=None, has_time_token=False, target_ids=None) -> dict:
    """Run the two-stage schedule on ``model`` in place. Returns a small report (losses, steps).

    ``texts``/``times``: the period corpus (period index per sentence). ``general_text``: extra
    sentences used only for the head warm-up. ``prefix_ids``: per-sentence ids after [CLS].
    ``target_ids``: the target words' token ids, masked with ``cfg.target_mask_prob`` when it is set.
    """
    cfg = cfg or PostTrainConfig()
    if cfg.max_length is None:
        cfg = replace(cfg, max_length=128)   # RankConfig.train_config() resolves it to the extraction length
    rng = np.random.default_rng(cfg.seed)
    texts, times = list(texts), list(times)
    if cfg.max_sentences is not None and len(texts) > cfg.max_sentences:
        keep = np.sort(rng.choice(len(texts), cfg.max_sentences, replace=False))
        texts, times = [texts[i] for i in keep], [times[i] for i in keep]
        prefix_ids = [prefix_ids[i] for i in keep] if prefix_ids is not None else None
    examples = encode_sentences(tokenizer, texts, times, max_length=cfg.max_length, prefix_ids=prefix_ids)
    if not examples:
        raise ValueError("post_train got no usable sentences; check the corpus.")
    collate = MLMCollator(tokenizer, cfg.mask_prob, cfg.time_mask_prob, has_time_token, target_ids=target_ids,
                          target_prob=cfg.target_mask_prob)
    time_p, head_p, body_p = _groups(model)
    report = {"config": cfg.to_dict(), "n_sentences": len(examples)}
    base = dict(batch_size=cfg.batch_size, seed=cfg.seed, progress=cfg.progress, restore_best=False,
                device="cpu" if next(model.parameters()).device.type == "cpu" else "auto")
    frozen = {id(p): p.requires_grad for p in model.parameters()}
    try:
        if not model.config.head_from_checkpoint and cfg.head_steps > 0:
            # stage 0: only the head learns (body, embeddings and time frozen)
            for p in time_p + body_p:
                p.requires_grad_(False)
            # the period corpus and general text (without a time token: it has no period)
            g = list(general_text)
            head_ex = examples + encode_sentences(tokenizer, g, [0] * len(g), max_length=cfg.max_length)
            report["n_head_examples"] = len(head_ex)                    # what stage 0 is fed
            report["n_general_sentences"] = len(head_ex) - len(examples)
            t0 = TrainConfig(max_epochs=None, max_steps=cfg.head_steps, lr=cfg.head_lr, schedule="linear",
                             warmup_ratio=cfg.warmup_ratio, weight_decay=0.0, **base)
            tr = Trainer(model, t0, collate_fn=collate, param_groups=[{"params": head_p}])
            tr.fit(Examples(head_ex))
            report["head_loss"] = [h["train_loss"] for h in tr.history_]
            model.config.head_from_checkpoint = True      # the head is now trained
            for p in time_p + body_p:
                p.requires_grad_(frozen[id(p)])
        if cfg.epochs > 0:
            groups = [{"params": time_p, "lr": cfg.time_lr, "weight_decay": 0.0},
                      {"params": head_p, "lr": cfg.head_lr_stage1, "weight_decay": 0.0}]
            if cfg.body_lr > 0:
                groups.append({"params": body_p, "lr": cfg.body_lr, "weight_decay": 0.01})
            else:
                for p in body_p:
                    p.requires_grad_(False)
            groups = [g for g in groups if g["params"]]
            steps = max(1, int(round(cfg.epochs * np.ceil(len(examples) / cfg.batch_size))))
            t1 = TrainConfig(max_epochs=None, max_steps=steps, lr=cfg.time_lr, schedule="linear",
                             warmup_ratio=cfg.warmup_ratio, **base)
            tr = Trainer(model, t1, collate_fn=collate, param_groups=groups)
            tr.fit(Examples(examples))
            report["loss"] = [h["train_loss"] for h in tr.history_]
    finally:
        for p in model.parameters():
            p.requires_grad_(frozen[id(p)])
        model.eval()
    return report
