"""Is this the LM a saved temporal-bias head was trained around?

A head's per-token offsets, bias and context adapter were trained on one LM's states. ``check_same_lm``
refuses another one: by the shape fields of the two configs, and by ``weights_fingerprint``, which
tells apart LMs of the same shape (a base model and its instruction-tuned version) but not the same
weights loaded in float32 or bfloat16. (``states.lm_fingerprint`` is a different, exact key: it names
a cache of decoder states, which do depend on the precision.)
"""
from __future__ import annotations

import hashlib

import torch

__all__ = ["LM_SHAPE_KEYS", "check_same_lm", "weights_fingerprint"]


# the fields of an LM's config that a saved head depends on (its offsets and adapter are sized by them)
LM_SHAPE_KEYS = ("model_type", "vocab_size", "hidden_size", "n_embd", "num_hidden_layers", "n_layer")


def weights_fingerprint(lm) -> str:
    """A short hash of an LM's weights: a fixed sample of its input-embedding rows and its last parameter
    (a final norm), rounded to bfloat16 first, so that the same weights loaded in float32 or bfloat16,
    on any device, give the same fingerprint, and another LM of the same shape (a base model and its
    instruction-tuned version) gives another."""
    emb = lm.get_input_embeddings().weight
    rows = emb[:: max(1, emb.shape[0] // 256)]
    last = [p for _, p in lm.named_parameters()][-1]
    digest = hashlib.sha256()
    for t in (rows, last):
        digest.update(t.detach().to("cpu", torch.float32).to(torch.bfloat16).to(torch.float32).numpy().tobytes())
    return digest.hexdigest()[:16]


def check_same_lm(saved: dict, given: dict, where, *, saved_fingerprint: str = "", lm=None) -> None:
    """Refuse to put a head saved around one LM onto another (a head's offsets and adapter were trained
    on that LM's states): the shape fields of the two configs must agree where both give them, and,
    when the head recorded one, the weights' fingerprint (``weights_fingerprint``) too."""
    differ = {k: (saved[k], given[k]) for k in LM_SHAPE_KEYS if k in saved and k in given and saved[k] != given[k]}
    if differ:
        said = ", ".join(f"{k} {a} there, {b} here" for k, (a, b) in differ.items())
        raise ValueError(f"{where}: this head was trained around another LM ({said}). "
                         "Fix: load it around the LM it was saved with (the checkpoint's own LM).")
    if saved_fingerprint and lm is not None and weights_fingerprint(lm) != saved_fingerprint:
        raise ValueError(f"{where}: this head was trained around another LM of the same shape (weights "
                         f"fingerprint {saved_fingerprint} there, {weights_fingerprint(lm)} here: e.g. a base model "
                         "instead of its instruction-tuned version). Fix: load it around the LM it was saved with "
                         "(the checkpoint's own LM); if that is the one given, load it in float32 or bfloat16 "
                         "(float16 rounds some weights differently).")
