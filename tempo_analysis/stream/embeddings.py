"""Frozen sentence embeddings (SBERT-style mean pooling) and cached encoder loading.

`cached_encoder(name)` loads an encoder once per process; `resolve_encoder_pair(encoder)` turns
the `encoder` setting of every stream classifier ("default", an HF name, a path, or an already
loaded (model, tokenizer) pair) into that pair.

The FFN-History and BiLSTM baselines read posts as fixed sentence vectors, as in the paper
(all-MiniLM-L6-v2 mean-pooled, L2-normalised: exactly what sentence-transformers does for that
model). Vectors are cached per (encoder, max_length, text) for the life of the process, so cross-
validation folds and seeds embed each post once.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import torch
from tqdm.auto import tqdm

from tempo_analysis.encoders import load_encoder

_CACHE: dict[tuple, dict[str, np.ndarray]] = {}


@functools.lru_cache(maxsize=4)
def cached_encoder(name: str = "default"):
    """(model, tokenizer) from tempo_analysis.encoders.load_encoder, loaded once per process.

    Callers must not train this instance: copy its weights (TempoFormerModel.from_encoder does).
    """
    model, tok = load_encoder(name)
    return model.eval(), tok


def resolve_encoder_pair(encoder):
    """"default" / HF name / path -> cached (model, tokenizer); a (model, tokenizer) pair passes through."""
    if isinstance(encoder, tuple):
        return encoder
    return cached_encoder(str(encoder))


def settings_repr(obj) -> str:
    """`Name(field=value, ...)` of a dataclass classifier; a loaded encoder pair shows as 'custom'."""
    items = []
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if f.name == "encoder" and not isinstance(value, str):
            value = "custom"
        items.append(f"{f.name}={value!r}")
    return f"{type(obj).__name__}({', '.join(items)})"


def sentence_embeddings(texts, encoder: str = "default", *, max_length: int = 128, batch_size: int = 16,
                        normalize: bool = True, progress: bool = False) -> np.ndarray:
    """[N, H] float32 mean-pooled (masked) last-layer vectors of `texts`, L2-normalised by default.

    A text's vector does not depend on which other texts are embedded with it (in this call or
    earlier ones), so a seeded model trained on these vectors gives the same result whatever was
    embedded before: texts are grouped by token count (no padding) and every forward pass has
    exactly `batch_size` rows, a short group being filled with copies of its first text. (CPU
    matrix kernels round differently for different batch shapes: with padding or a varying batch
    size, the same text could get vectors that differ in the last bits, and training amplifies that.)
    """
    texts = [str(t) for t in texts]
    cache = _CACHE.setdefault((encoder, max_length, normalize), {})
    todo = sorted({t for t in texts if t not in cache})
    if todo:
        model, tok = cached_encoder(encoder)
        device = next(model.parameters()).device
        enc = tok(todo, truncation=True, max_length=max_length)
        by_length: dict[int, list[int]] = {}
        for i, ids in enumerate(enc["input_ids"]):
            by_length.setdefault(len(ids), []).append(i)
        chunks = [rows[j : j + batch_size] for _, rows in sorted(by_length.items())
                  for j in range(0, len(rows), batch_size)]
        for rows in tqdm(chunks, desc="embed", disable=not progress):
            filled = rows + [rows[0]] * (batch_size - len(rows))
            batch = {k: torch.tensor([enc[k][i] for i in filled], device=device) for k in enc.keys()}
            with torch.inference_mode():
                h = model(**batch).last_hidden_state
            m = batch["attention_mask"][..., None].to(h.dtype)
            v = (h * m).sum(1) / m.sum(1).clamp(min=1)
            if normalize:
                v = torch.nn.functional.normalize(v, dim=-1)
            for i, row in zip(rows, v.float().cpu().numpy()):
                cache[todo[i]] = row
    return np.stack([cache[t] for t in texts]) if texts else np.zeros((0, 0), np.float32)


def clear_cache() -> None:
    """Forget cached sentence vectors (e.g. after changing an encoder folder on disk)."""
    _CACHE.clear()


__all__ = ["cached_encoder", "clear_cache", "resolve_encoder_pair", "sentence_embeddings", "settings_repr"]
