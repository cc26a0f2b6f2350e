"""Language-model examples with their year, one-year batches, and the padding collator.

- ``lm_examples``: one example per window of ``[BOS] doc [EOS]`` (windows overlap by one token,
  the same windows as the perplexity in ``metrics.py``), each with its document's year.
- ``YearBatchSampler``: batches drawn from one year each, so the temporal bias runs its LSTM
  for one distinct year per optimiser step.
- ``make_collate``: right-padded ``input_ids, attention_mask, labels (-100 on padding), years``.
"""

from __future__ import annotations

import numpy as np
import torch

from tempo_analysis.future_text.metrics import document_windows


class Examples(torch.utils.data.Dataset):
    """A list of ``{"input_ids": [...], "year": int}`` as a map-style Dataset (the Trainer shuffles it)."""

    def __init__(self, items: list[dict]):
        self.items = items

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]

    def only_years(self, years) -> "Examples":
        keep = set(years)
        return Examples([e for e in self.items if e["year"] in keep])


def lm_examples(texts, years, tokenizer, block_size: int) -> Examples:
    """One example per window of ``[BOS] doc [EOS]`` (windows overlap by one token), with its year."""
    bos = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    enc = tokenizer(list(texts), add_special_tokens=False)["input_ids"]
    return Examples([{"input_ids": w, "year": int(y)} for ids, y in zip(enc, years)
                     for w in document_windows(ids, bos, tokenizer.eos_token_id, block_size) if len(w) > 1])


class YearBatchSampler(torch.utils.data.Sampler):
    """Batches drawn from one year each (seeded; reshuffled every epoch): the temporal bias then
    runs its LSTM for ONE distinct year per step instead of up to batch-size years."""

    def __init__(self, years, batch_size: int, seed: int = 0):
        self.years, self.batch_size, self.seed, self.epoch = np.asarray(years), int(batch_size), int(seed), 0

    def _batches(self, epoch: int) -> list[list[int]]:
        rng = np.random.default_rng([self.seed, epoch])
        out = []
        for y in np.unique(self.years):
            idx = rng.permutation(np.flatnonzero(self.years == y))
            out += [idx[i:i + self.batch_size].tolist() for i in range(0, len(idx), self.batch_size)]
        return [out[i] for i in rng.permutation(len(out))]

    def __iter__(self):
        batches = self._batches(self.epoch)
        self.epoch += 1
        return iter(batches)

    def __len__(self):
        return len(self._batches(0))


def make_collate(pad_id: int):
    """Right-padded batch: input_ids, attention_mask, labels (-100 on padding), years."""
    def collate(batch):
        L = max(len(b["input_ids"]) for b in batch)
        ids = torch.full((len(batch), L), pad_id, dtype=torch.long)
        att = torch.zeros((len(batch), L), dtype=torch.long)
        for r, b in enumerate(batch):
            ids[r, :len(b["input_ids"])] = torch.tensor(b["input_ids"])
            att[r, :len(b["input_ids"])] = 1
        labels = ids.masked_fill(att == 0, -100)
        return {"input_ids": ids, "attention_mask": att, "labels": labels,
                "years": torch.tensor([b["year"] for b in batch])}
    return collate
