"""MLM data for social corpora: tokenised examples with (unit, slice), BERT masking, perplexity.

Examples carry ``unit_ids`` / ``slice_ids`` so the same batches feed DCWE, its ablations and the
plain encoder (``PlainMLM`` ignores them). Held-out perplexity is computed on masks drawn ONCE
with a fixed seed, so every model is scored on exactly the same masked tokens.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import Dataset
from transformers.modeling_outputs import MaskedLMOutput

from tempo_analysis.diffusion.model import masked_lm_forward


class SocialMLMDataset(Dataset):
    """One example per document: token ids (truncated to max_length), unit index, slice index."""

    def __init__(self, frame: pd.DataFrame, tokenizer, unit_index: dict, slice_index: dict, max_length: int = 64):
        missing_u = sorted(set(frame["unit"]) - set(unit_index))
        if missing_u:
            raise ValueError(f"column 'unit': unit(s) {missing_u[:5]} are not nodes of the social graph. "
                             "Fix: add them to the graph (isolated nodes are fine) or drop their documents.")
        missing_t = sorted(set(frame["time"]) - set(slice_index), key=str)
        if missing_t:
            raise ValueError(f"column 'time': slice(s) {missing_t[:5]} are not among the model's slices "
                             f"{list(slice_index)}. Fix: train with those slices declared.")
        texts = frame["text"].tolist()    # an empty split (no dev documents) is an empty dataset
        self.input_ids = tokenizer(texts, truncation=True, max_length=max_length)["input_ids"] if texts else []
        self.unit_ids = [unit_index[u] for u in frame["unit"]]
        self.slice_ids = [slice_index[t] for t in frame["time"]]

    def __len__(self) -> int:
        return len(self.input_ids)

    def __getitem__(self, i: int) -> dict:
        return {"input_ids": self.input_ids[i], "unit_ids": self.unit_ids[i], "slice_ids": self.slice_ids[i]}

    def num_tokens(self) -> int:
        return sum(len(x) for x in self.input_ids)


class MLMCollator:
    """Pad, then BERT masking: 15% of real non-special tokens; of those 80% [MASK], 10% random, 10% kept.

    ``generator`` (a torch.Generator) makes the masks reproducible; default: torch's global RNG,
    which the shared Trainer seeds.
    """

    def __init__(self, tokenizer, mlm_probability: float = 0.15, generator: torch.Generator | None = None):
        self.pad_id = tokenizer.pad_token_id
        self.mask_id = tokenizer.mask_token_id
        self.vocab_size = len(tokenizer)
        self.special = torch.tensor(sorted(set(tokenizer.all_special_ids)), dtype=torch.long)
        self.p = mlm_probability
        self.generator = generator

    def pad(self, items: list[dict]) -> dict:
        L = max(len(x["input_ids"]) for x in items)
        ids = torch.full((len(items), L), self.pad_id, dtype=torch.long)
        for i, x in enumerate(items):
            ids[i, : len(x["input_ids"])] = torch.as_tensor(x["input_ids"])
        attn = torch.zeros_like(ids)
        for i, x in enumerate(items):
            attn[i, : len(x["input_ids"])] = 1
        return {"input_ids": ids, "attention_mask": attn,
                "unit_ids": torch.tensor([x["unit_ids"] for x in items], dtype=torch.long),
                "slice_ids": torch.tensor([x["slice_ids"] for x in items], dtype=torch.long)}

    def __call__(self, items: list[dict]) -> dict:
        batch = self.pad(items)
        ids = batch["input_ids"]
        g = self.generator
        candidates = batch["attention_mask"].bool() & ~torch.isin(ids, self.special)
        chosen = (torch.rand(ids.shape, generator=g) < self.p) & candidates
        for i in range(ids.shape[0]):  # at least one masked token per example (short texts)
            if not chosen[i].any() and candidates[i].any():
                pos = candidates[i].nonzero(as_tuple=True)[0]
                chosen[i, pos[torch.randint(len(pos), (1,), generator=g)]] = True
        labels = torch.where(chosen, ids, torch.full_like(ids, -100))
        roll = torch.rand(ids.shape, generator=g)
        masked = ids.clone()
        masked[chosen & (roll < 0.8)] = self.mask_id
        rand_pos = chosen & (roll >= 0.8) & (roll < 0.9)
        masked[rand_pos] = torch.randint(self.vocab_size, ids.shape, generator=g)[rand_pos]
        batch["input_ids"], batch["labels"] = masked, labels
        return batch


class SliceBatchSampler(torch.utils.data.Sampler):
    """Batches drawn from ONE time slice each (seeded, reshuffled every epoch; batch order mixed).

    With one slice per batch, DCWE runs two GAT passes per step (s_t and s_{t-1} for the walk
    prior) whatever the batch size; mixed batches need one pass per distinct slice they touch.
    """

    def __init__(self, slice_ids: list[int], batch_size: int, seed: int = 0):
        self.slice_ids, self.batch_size, self.seed, self.epoch = list(slice_ids), batch_size, seed, 0

    def _batches(self, epoch: int) -> list[list[int]]:
        g = torch.Generator().manual_seed(self.seed + epoch)
        groups: dict = {}
        for i in torch.randperm(len(self.slice_ids), generator=g).tolist():
            groups.setdefault(self.slice_ids[i], []).append(i)
        batches = [idx[k:k + self.batch_size] for _, idx in sorted(groups.items())
                   for k in range(0, len(idx), self.batch_size)]
        return [batches[j] for j in torch.randperm(len(batches), generator=g).tolist()]

    def __iter__(self):
        batches = self._batches(self.epoch)
        self.epoch += 1
        return iter(batches)

    def __len__(self) -> int:
        return len(self._batches(0))


def fixed_mlm_batches(dataset: SocialMLMDataset, tokenizer, batch_size: int = 32, seed: int = 1234,
                      repeats: int = 1) -> list[dict]:
    """Held-out batches masked with a fixed seed: every model is scored on the same masks.

    repeats > 1 masks every document that many times (different masks), so short held-out sets
    still give enough masked tokens for a stable perplexity.
    """
    collate = MLMCollator(tokenizer, generator=torch.Generator().manual_seed(seed))
    items = [dataset[i] for _ in range(repeats) for i in range(len(dataset))]
    return [collate(items[i:i + batch_size]) for i in range(0, len(items), batch_size)]


class PlainMLM(nn.Module):
    """The plain (non-dynamic) encoder with its MLM head, taking the same batches as DCWE (CWE baseline).

    Uses the same masked-positions-only output layer as DCWE, so their costs and losses compare.
    """

    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder

    def forward(self, input_ids, attention_mask=None, labels=None, unit_ids=None, slice_ids=None,
                token_type_ids=None, output_hidden_states=False, **kwargs):
        embeds = self.encoder.get_input_embeddings()(input_ids)
        logits, loss, hidden = masked_lm_forward(self.encoder, embeds, attention_mask, token_type_ids, labels,
                                                 output_hidden_states)
        return MaskedLMOutput(loss=loss, logits=logits, hidden_states=hidden)

    @torch.no_grad()
    def encode(self, input_ids, attention_mask=None, unit_ids=None, slice_ids=None, token_type_ids=None) -> tuple:
        """All hidden states of the body (no MLM head)."""
        return self.encoder.base_model(input_ids=input_ids, attention_mask=attention_mask,
                                       output_hidden_states=True).hidden_states

    def save_pretrained(self, path, **kwargs):
        self.encoder.save_pretrained(path, **kwargs)


@torch.no_grad()
def mlm_perplexity(model: nn.Module, batches: list[dict], device=None, only=None) -> float:
    """exp(mean cross-entropy over all masked tokens of `batches`) — the task loss only, no priors.

    only: token ids; score only the masked tokens whose true token is one of them (e.g. the planted
    companions, the only tokens whose choice depends on the unit and the time). The same masks and
    models, so the part of the perplexity that the unit and the time could lower is read apart.
    """
    model.eval()
    device = device or next(model.parameters()).device
    keep = None if only is None else torch.as_tensor(sorted({int(t) for t in only}), dtype=torch.long)
    total, count = 0.0, 0
    for b in batches:
        b = {k: v.to(device) for k, v in b.items()}
        labels = b["labels"]
        logits = model(**b).logits                    # [n_masked, V]: labelled positions only
        target = labels[labels != -100]
        ce = F.cross_entropy(logits, target, reduction="none")
        if keep is not None:
            ce = ce[torch.isin(target, keep.to(target.device))]
        total += ce.sum().item()
        count += int(ce.numel())
    if count == 0:
        what = "masked tokens" if keep is None else f"masked tokens among the {len(keep)} ids of `only`"
        raise ValueError(f"mlm_perplexity: the held-out batches have no {what}; give more held-out text.")
    return math.exp(total / count)


@torch.no_grad()
def document_nll(model: nn.Module, batches: list[dict], n_docs: int, device=None) -> tuple[np.ndarray, np.ndarray]:
    """(summed cross-entropy [n_docs], masked-token count [n_docs]) per held-out document.

    ``batches`` from :func:`fixed_mlm_batches` over a dataset of ``n_docs`` documents: its rows are the
    documents in order, ``repeats`` times over, so row k belongs to document ``k % n_docs``. Paired
    tests between two models (the same masks) read these per-document scores.
    """
    model.eval()
    device = device or next(model.parameters()).device
    total, count = np.zeros(n_docs), np.zeros(n_docs)
    row0 = 0
    for b in batches:
        b = {k: v.to(device) for k, v in b.items()}
        labels = b["labels"]
        logits = model(**b).logits                               # [n_masked, V], row-major over labels
        rows = (labels != -100).nonzero(as_tuple=True)[0]
        ce = F.cross_entropy(logits, labels[labels != -100], reduction="none")
        docs = ((rows + row0) % n_docs).cpu().numpy()
        np.add.at(total, docs, ce.double().cpu().numpy())
        np.add.at(count, docs, 1)
        row0 += labels.shape[0]
    return total, count
