"""Per-year averaged contextual embeddings of every LM token (the Context / Context^2 history, eq. 7).

``V[y, v]`` = mean of the encoder's last hidden state over all occurrences of LM token ``v`` in
year ``y``'s documents. The LM tokenizer (BPE) and the encoder tokenizer (WordPiece) differ, so
occurrences are aligned by character offsets: an LM token's vector is the mean of the encoder
pieces whose character span overlaps it.

Fallback for a token unseen in a year (documented, no future leakage): the token's vector from
the most recent earlier year in which it occurred; if it never occurred up to that year, the
encoder's context-free embedding of the token's text alone ("static"). Years without documents
therefore carry every token forward (with a warning). Encoder inputs are truncated to
``max_length`` pieces; text beyond that does not contribute.
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import torch
from safetensors import safe_open
from safetensors.torch import save_file
from tqdm.auto import tqdm

from tempo_analysis.data.errors import DataError
from tempo_analysis.encoders import load_encoder
from tempo_analysis.future_text.tokenizer import token_strings, vocab_fingerprint


@dataclass
class ContextTable:
    """``emb[i, v]`` (float32 ``[Y, V, E]``) for contiguous ``years``; ``counts[i, v]`` occurrences."""

    years: list[int]
    emb: np.ndarray
    counts: np.ndarray
    fingerprint: str
    filled_years: list[int] = field(default_factory=list)

    def features(self) -> np.ndarray:
        return self.emb

    def check_tokenizer(self, tokenizer) -> None:
        if vocab_fingerprint(tokenizer) != self.fingerprint or len(tokenizer) != self.emb.shape[1]:
            raise DataError("tokenizer: vocabulary differs from the context table's; token ids would point at "
                            "other words. Fix: rebuild the table with this tokenizer")

    def save(self, path) -> None:
        meta = {"years": json.dumps(self.years), "fingerprint": self.fingerprint,
                "filled_years": json.dumps(self.filled_years)}
        save_file({"emb": torch.from_numpy(np.ascontiguousarray(self.emb)),
                   "counts": torch.from_numpy(np.ascontiguousarray(self.counts))}, str(path), metadata=meta)

    @classmethod
    def load(cls, path) -> "ContextTable":
        with safe_open(str(path), framework="np") as f:
            meta = f.metadata()
            emb, counts = f.get_tensor("emb"), f.get_tensor("counts")
        return cls(json.loads(meta["years"]), emb, counts, meta["fingerprint"], json.loads(meta["filled_years"]))


@torch.inference_mode()
def _static_embeddings(model, etok, strings: list[str], batch_size: int = 256) -> torch.Tensor:
    """Context-free encoder vector of each token's text (mean over its pieces; zeros for blank text)."""
    E = model.config.hidden_size
    out = torch.zeros(len(strings), E)
    idx = [i for i, s in enumerate(strings) if s.strip()]
    for s in range(0, len(idx), batch_size):
        chunk = idx[s:s + batch_size]
        enc = etok([strings[i].strip() for i in chunk], padding=True, truncation=True, max_length=16,
                   return_tensors="pt", return_special_tokens_mask=True)
        special = enc.pop("special_tokens_mask")
        h = model(**enc).last_hidden_state
        w = (enc["attention_mask"] * (1 - special)).float()
        out[chunk] = (h * w[..., None]).sum(1) / w.sum(1, keepdim=True).clamp_min(1)
    return out


@torch.inference_mode()
def contextual_table(texts: Sequence[str], years: Sequence[int], tokenizer, encoder="default", *,
                     year_range=None, max_length: int = 256, batch_size: int = 16,
                     progress: bool = False) -> ContextTable:
    """Average encoder states per (year, LM token); ``encoder`` = name/path or ``(model, tokenizer)``."""
    model, etok = load_encoder(encoder) if isinstance(encoder, str) else encoder
    model.eval()
    years = [int(y) for y in years]
    if len(texts) != len(years) or not years:
        raise DataError(f"column 'year': {len(years)} years for {len(texts)} texts. Fix: one year per text, >= 1 text")
    first, last = year_range if year_range is not None else (min(years), max(years))
    Y, V, E = last - first + 1, len(tokenizer), model.config.hidden_size
    sums, counts = torch.zeros(Y, V, E), torch.zeros(Y, V)
    order = np.argsort([len(t) for t in texts], kind="stable")          # similar lengths batch together
    for s in tqdm(range(0, len(order), batch_size), disable=not progress, desc="contextual embeddings"):
        rows = order[s:s + batch_size]
        batch = [texts[i] for i in rows]
        enc = etok(batch, padding=True, truncation=True, max_length=max_length, return_tensors="pt",
                   return_offsets_mapping=True, return_special_tokens_mask=True)
        offsets, special = enc.pop("offset_mapping"), enc.pop("special_tokens_mask")
        hidden = model(**enc).last_hidden_state                           # [b, n, E]
        valid = (enc["attention_mask"] == 1) & (special == 0)
        lm = tokenizer(batch, add_special_tokens=False, return_offsets_mapping=True)
        for b, i in enumerate(rows):
            y = years[i] - first
            if not 0 <= y < Y:
                raise DataError(f"column 'year': {years[i]} is outside year_range ({first}, {last})")
            ids = torch.tensor(lm["input_ids"][b], dtype=torch.long)
            if ids.numel() == 0:
                continue
            g = torch.tensor(lm["offset_mapping"][b], dtype=torch.long)   # [m, 2] LM token char spans
            w = offsets[b]                                                # [n, 2] encoder piece spans
            overlap = (g[:, :1] < w[None, :, 1]) & (g[:, 1:] > w[None, :, 0]) & valid[b][None]   # [m, n]
            n_pieces = overlap.sum(1)
            keep = n_pieces > 0
            if not keep.any():
                continue
            vec = (overlap[keep].float() / n_pieces[keep, None]) @ hidden[b]                       # [m', E]
            sums[y].index_add_(0, ids[keep], vec)
            counts[y].index_add_(0, ids[keep], torch.ones(int(keep.sum())))
    static = _static_embeddings(model, etok, token_strings(tokenizer))
    emb = torch.empty(Y, V, E)
    prev = static                                                     # fallback chain: earlier years, then static
    for y in range(Y):
        have = counts[y] > 0
        cur = torch.where(have[:, None], sums[y] / counts[y].clamp_min(1)[:, None], prev)
        emb[y], prev = cur, cur
    filled = [first + y for y in range(Y) if counts[y].sum() == 0]
    if filled:
        warnings.warn(f"contextual_table: no documents for year(s) {filled}; every token carries its previous "
                      "vector forward (documented fill)", stacklevel=2)
    return ContextTable(list(range(first, last + 1)), emb.numpy(), counts.numpy(), vocab_fingerprint(tokenizer), filled)
