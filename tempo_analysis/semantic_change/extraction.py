"""Target-word vectors from any encoder: batched, length-bucketed, inference-mode.

``extract_target_vectors(model, tokenizer, usages)`` returns one vector per usage and hidden layer.
What it does, in order:

1. Tokenise every sentence once with character offsets (fast tokenizer, no special tokens).
2. Find the target's own pieces: every subword whose character span overlaps ``text[start:end]``.
   A span that covers no piece (offsets pointing at whitespace, or past a tokenizer-normalised
   character) is a :class:`DataError` naming the usage -- never a silent wrong vector.
3. Window: a sentence longer than ``max_length`` keeps ``max_length`` tokens *centred on the
   target* (the usage's ``windowed`` flag says so) instead of being cut at the end and losing it.
4. Optional prefix ids after [CLS] (the time-token baseline prepends a period token).
5. Run each distinct (token ids, period) once: several targets in one sentence, or a sentence
   sampled twice, share one forward.
6. Sort by length and batch neighbours together (little padding), run under
   ``torch.inference_mode()``, and pool each usage's pieces with a per-usage weight matrix:
   ``pooled[u, l] = Σ_n w[u, n] · H[l, row(u), n, :]`` with ``w = 1/len`` on the target's pieces. Each
   hidden dimension stays in place (the reference reshaped in the wrong order and mixed dimensions).

7. ``precision="bf16"``: the encoder's matrix products run under bfloat16 autocast (pooling and
   the returned vectors stay float32). On CPUs with AVX512-BF16 or AMX this is about 2x faster; the
   vectors move by about 1e-2 relative, which leaves rankings practically unchanged (measured in
   research/results/semantic_change/extraction.md). This function's default stays ``"fp32"``: exact
   and the same on every machine; a ranking's ``RankConfig.precision`` is ``"auto"`` (bf16 only where
   the device has it natively).

Models: ``TemporalAttentionForMaskedLM`` / ``TemporalAttentionModel`` (take ``time``), or any HF
encoder returning ``hidden_states``. ``layers=None`` keeps every hidden state (index 0 = the
embedding output), so scorers can choose layers later without re-running the encoder.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

import numpy as np
import torch
from tqdm.auto import tqdm

from ..cpu_linears import packed_linears
from ..data import DataError, TargetUsage
from .config import PRECISIONS
from .model import TemporalAttentionForMaskedLM, TemporalAttentionModel


@dataclass
class TargetVectors:
    """Vectors ``[N, L, D]`` (float32) for ``usages``; ``layers`` are hidden-state indices kept."""

    vectors: np.ndarray
    usages: list[TargetUsage]
    layers: list[int]
    n_pieces: np.ndarray = field(default_factory=lambda: np.zeros(0, int))
    windowed: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))

    def __len__(self):
        return len(self.usages)

    def select(self, idx) -> "TargetVectors":
        """A subset by integer index or boolean mask."""
        idx = np.asarray(idx)
        if idx.dtype == bool:
            idx = np.flatnonzero(idx)
        return TargetVectors(self.vectors[idx], [self.usages[i] for i in idx], self.layers,
                             self.n_pieces[idx], self.windowed[idx])

    def for_word(self, word: str) -> "TargetVectors":
        return self.select(np.array([u.word == word for u in self.usages], dtype=bool))


def target_piece_span(offsets, start: int, end: int) -> tuple[int, int] | None:
    """First and one-past-last piece index whose character span overlaps [start, end)."""
    hit = [i for i, (s, e) in enumerate(offsets) if e > s and e > start and s < end]
    return (hit[0], hit[-1] + 1) if hit else None


def window(n_tokens: int, t0: int, t1: int, budget: int) -> tuple[int, int]:
    """A ``budget``-long window [a, b) of ``n_tokens`` that contains [t0, t1), centred on it."""
    if n_tokens <= budget:
        return 0, n_tokens
    if t1 - t0 > budget:
        raise DataError(f"the target spans {t1 - t0} pieces, more than the {budget} that fit in max_length; "
                        "raise max_length.")
    a = t0 - (budget - (t1 - t0)) // 2
    a = max(0, min(a, n_tokens - budget))
    return a, a + budget


def prepare(tokenizer, usages, *, max_length=128, prefix_ids=None):
    """Token ids per usage (with [CLS], prefix, [SEP]) and the target's piece positions."""
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError("extraction needs a fast tokenizer (character offsets); load it with use_fast=True.")
    cls_id = tokenizer.cls_token_id if tokenizer.cls_token_id is not None else tokenizer.bos_token_id
    sep_id = tokenizer.sep_token_id if tokenizer.sep_token_id is not None else tokenizer.eos_token_id
    enc = tokenizer([u.text for u in usages], add_special_tokens=False, return_offsets_mapping=True)
    rows, spans, windowed = [], [], []
    for i, u in enumerate(usages):
        ids, offs = enc["input_ids"][i], enc["offset_mapping"][i]
        span = target_piece_span(offs, u.start, u.end)
        if span is None or not u.text[u.start:u.end].strip():
            raise DataError(f"usage {i} (word {u.word!r}, doc {u.doc_id!r}): offsets {u.start}:{u.end} point at "
                            f"{u.text[u.start:u.end]!r}, which covers no token of {u.text[:60]!r}. Fix: give "
                            "character offsets of the target inside this exact sentence.")
        prefix = list(prefix_ids[i]) if prefix_ids is not None else []
        budget = max_length - 2 - len(prefix)
        a, b = window(len(ids), span[0], span[1], budget)
        rows.append([cls_id] + prefix + ids[a:b] + [sep_id])
        shift = 1 + len(prefix) - a
        spans.append((span[0] + shift, span[1] + shift))
        windowed.append(b - a < len(ids))
    return rows, spans, np.array(windowed, dtype=bool)


def native_bf16(device="cpu") -> bool:
    """Whether ``device`` multiplies bfloat16 natively (CPU: AVX512-BF16 or AMX; CUDA: compute 8.0+).

    Without it, bfloat16 is emulated and several times *slower* than float32 (measured on an AVX512
    CPU without BF16: 6x), so ``precision="auto"`` only picks bfloat16 where this is true.
    """
    device = torch.device(device)
    if device.type == "cuda":
        return torch.cuda.is_available() and torch.cuda.is_bf16_supported()
    if device.type != "cpu":
        return False
    import torch.cpu as tcpu

    checks = [getattr(tcpu, n, None) for n in ("_is_avx512_bf16_supported", "_is_amx_tile_supported")]
    return any(bool(c()) for c in checks if c is not None)


def resolve_precision(precision: str, device="cpu") -> str:
    """``"fp32"`` or ``"bf16"``: ``"auto"`` is bfloat16 where the device has it natively, else float32."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}. Fix: pass fp32 (exact), "
                         "bf16 (bfloat16 matrix products) or auto (bf16 where the device has it natively).")
    if precision == "auto":
        return "bf16" if native_bf16(device) else "fp32"
    return precision


def _precision(precision: str, device):
    """The autocast context for ``precision`` ("fp32": none; "auto" is resolved for ``device``)."""
    if resolve_precision(precision, device) == "fp32":
        return contextlib.nullcontext()
    return torch.autocast(device_type=torch.device(device).type, dtype=torch.bfloat16)


def _hidden_states(model, input_ids, attention_mask, time):
    """All hidden states (tuple, index 0 = embeddings) of the temporal models or an HF encoder."""
    if isinstance(model, TemporalAttentionForMaskedLM):
        model = model.temporal
    if isinstance(model, TemporalAttentionModel):
        return model(input_ids, attention_mask, time=time)["hidden_states"]
    out = model(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True)
    return out.hidden_states


def extract_target_vectors(model, tokenizer, usages: list[TargetUsage], *, time=None, layers=None,
                           batch_size: int = 64, max_length: int = 128, prefix_ids=None,
                           progress: bool = True, sort_by_length: bool = True,
                           precision: str = "fp32") -> TargetVectors:
    """Mean-pooled target vectors per usage and hidden layer (see module docstring).

    ``time``: per-usage period index (temporal models) or None. ``layers``: hidden-state indices to
    keep (None = all). ``prefix_ids``: per-usage token ids inserted after [CLS]. ``precision``:
    "fp32" (default, exact) or "bf16" (bfloat16 autocast of the encoder, about 2x faster on CPUs
    with BF16 support).
    """
    usages = list(usages)
    if not usages:
        raise DataError("no usages to embed: the target words were not found in the corpus. "
                        "Check the targets and the corpus paths.")
    if time is not None:
        time = np.asarray(time, dtype=np.int64)
        if time.shape != (len(usages),):
            raise ValueError(f"time must give one period index per usage ({len(usages)}), got shape {time.shape}.")
    rows, spans, windowed = prepare(tokenizer, usages, max_length=max_length, prefix_ids=prefix_ids)
    # one forward per distinct (token ids, period): several targets in one sentence, or repeated
    # sentences, share it; each usage then pools its own span from that row
    key_of, uniq, owner = {}, [], np.zeros(len(rows), dtype=np.int64)
    for i, row in enumerate(rows):
        key = (tuple(row), int(time[i]) if time is not None else None)
        if key not in key_of:
            key_of[key] = len(uniq)
            uniq.append(i)
        owner[i] = key_of[key]
    users = [[] for _ in uniq]
    for i, j in enumerate(owner):
        users[j].append(i)
    lengths = [len(rows[i]) for i in uniq]
    order = np.argsort(lengths, kind="stable") if sort_by_length else np.arange(len(uniq))
    device = next(model.parameters()).device
    precision = resolve_precision(precision, device)
    autocast = _precision(precision, device)
    pad = tokenizer.pad_token_id or 0
    out, kept = None, None
    was_training = model.training
    model.eval()
    packing = packed_linears(model, rows=batch_size * 32) if precision == "fp32" else contextlib.nullcontext()
    try:
        with torch.inference_mode(), packing:        # CPU: oneDNN prepacked linear weights (cpu_linears)
            for b0 in tqdm(range(0, len(order), batch_size), disable=not progress, desc="embedding usages"):
                batch = order[b0:b0 + batch_size]                     # indices into uniq
                n = max(lengths[j] for j in batch)
                ids = torch.full((len(batch), n), pad, dtype=torch.long)
                mask = torch.zeros((len(batch), n), dtype=torch.long)
                for r, j in enumerate(batch):
                    row = rows[uniq[j]]
                    ids[r, :len(row)] = torch.tensor(row)
                    mask[r, :len(row)] = 1
                members = [i for j in batch for i in users[j]]         # usages served by this batch
                local = torch.tensor([r for r, j in enumerate(batch) for _ in users[j]])
                weight = torch.zeros((len(members), n))
                for u, i in enumerate(members):
                    a, b = spans[i]
                    weight[u, a:b] = 1.0 / (b - a)
                t = torch.as_tensor(time[[uniq[j] for j in batch]], device=device) if time is not None else None
                with autocast:
                    hs = _hidden_states(model, ids.to(device), mask.to(device), t)
                if kept is None:
                    kept = list(range(len(hs))) if layers is None else [int(l) % len(hs) for l in layers]
                    out = np.zeros((len(usages), len(kept), hs[0].shape[-1]), dtype=np.float32)
                # pooled[u, l] = sum_n w[u, n] H_l[row(u), n]: one [U, B*n] @ [B*n, D] product per layer
                # (the weight sits at row(u)'s block), no [L, U, n, D] copy
                w_flat = torch.zeros((len(members), len(batch) * n), device=device)
                cols = local.to(device)[:, None] * n + torch.arange(n, device=device)
                w_flat.scatter_(1, cols, weight.to(device))
                pooled = torch.stack([w_flat @ hs[l].float().reshape(-1, hs[l].shape[-1]) for l in kept], dim=1)
                out[members] = pooled.cpu().numpy()
    finally:
        model.train(was_training)
    n_pieces = np.array([b - a for a, b in spans])
    return TargetVectors(out, usages, kept, n_pieces, windowed)


def extract_one_by_one(model, tokenizer, usages, *, time=None, layers=None, max_length=128, prefix_ids=None,
                       pad_to: int | None = None, precision: str = "fp32"):
    """The naive path (one sentence per forward, autograd on): the benchmark's baseline only.

    ``pad_to``: pad every sentence to this many tokens (fixed-length pipelines do this).
    """
    rows, spans, windowed = prepare(tokenizer, usages, max_length=max_length, prefix_ids=prefix_ids)
    device = next(model.parameters()).device
    vecs = []
    was_training = model.training
    model.eval()
    for i, row in enumerate(rows):
        n = max(len(row), pad_to or 0)
        ids = torch.full((1, n), tokenizer.pad_token_id or 0, dtype=torch.long, device=device)
        ids[0, :len(row)] = torch.tensor(row)
        mask = torch.zeros_like(ids)
        mask[0, :len(row)] = 1
        t = torch.tensor([int(time[i])], device=device) if time is not None else None
        with _precision(precision, device):
            hs = _hidden_states(model, ids, mask, t)
        kept = list(range(len(hs))) if layers is None else [int(l) % len(hs) for l in layers]
        a, b = spans[i]
        vecs.append(torch.stack([hs[l][0, a:b].float().mean(0) for l in kept]).detach().cpu().numpy())
    model.train(was_training)
    return TargetVectors(np.stack(vecs).astype(np.float32), list(usages), kept,
                         np.array([b - a for a, b in spans]), windowed)
