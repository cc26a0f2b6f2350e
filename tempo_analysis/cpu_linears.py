"""Faster small-batch decoding on a CPU: a module's linear layers run through oneDNN with prepacked weights.

Decoding a small causal LM on a CPU multiplies a few rows (the texts of a batch, one new token
each) by every weight matrix at every step. PyTorch's default CPU path for ``nn.Linear`` reaches
about a quarter of this machine's memory bandwidth on such skinny products; oneDNN with the weight
reordered once into its blocked layout reaches about twice that (``benchmarks/cpu_packed_linears.py``).

    with packed_linears(lm):          # inside torch.no_grad(), on a CPU
        lm.generate(...)

Inside the block every plain ``nn.Linear`` of ``lm`` (float32, on the CPU) computes through
``torch.ops.mkldnn._linear_pointwise`` with a packed copy of its weight, made on entry (about 0.25 s
for SmolLM2-135M) and dropped on exit, so nothing is kept and weights changed later are never read
stale. The results equal the default path's up to float rounding. The block is a no-op, yielding
False, where it cannot apply: with gradients enabled (the packed product has no backward), on
another device, when this torch build lacks the oneDNN ops, or with ``TEMPO_ANALYSIS_PACKED_LINEARS=0``.
"""

from __future__ import annotations

import functools
import os
from contextlib import contextmanager

import torch
import torch.nn as nn

__all__ = ["packed_linears", "packed_linears_available"]


@functools.lru_cache(maxsize=1)
def _ops_present() -> bool:
    try:
        w = torch.ops.mkldnn._reorder_linear_weight(torch.ones(2, 2), 1)
        out = torch.ops.mkldnn._linear_pointwise(torch.ones(1, 2), w, None, "none", [], "")
        return bool(torch.backends.mkldnn.is_available()) and tuple(out.shape) == (1, 2)
    except (AttributeError, RuntimeError, NotImplementedError):
        return False


def packed_linears_available() -> bool:
    """Whether :func:`packed_linears` can apply here (oneDNN ops present, not switched off)."""
    return os.environ.get("TEMPO_ANALYSIS_PACKED_LINEARS", "1") != "0" and _ops_present()


def _packed_forward(packed: torch.Tensor, bias, x: torch.Tensor) -> torch.Tensor:
    return torch.ops.mkldnn._linear_pointwise(x.contiguous(), packed, bias, "none", [], "")


@contextmanager
def packed_linears(module: nn.Module, rows: int = 4):
    """Within the block, ``module``'s float32 CPU ``nn.Linear`` layers use prepacked oneDNN weights.

    rows: the expected number of input rows (a layout hint; any number works). Yields whether the
    layers were packed.
    """
    if torch.is_grad_enabled() or not packed_linears_available():
        yield False
        return
    patched = []
    try:
        for m in module.modules():
            if type(m) is nn.Linear and m.weight.device.type == "cpu" and m.weight.dtype == torch.float32:
                packed = torch.ops.mkldnn._reorder_linear_weight(m.weight.detach(), max(1, int(rows)))
                bias = None if m.bias is None else m.bias.detach()
                m.forward = functools.partial(_packed_forward, packed, bias)
                patched.append(m)
        yield bool(patched)
    finally:
        for m in patched:
            m.__dict__.pop("forward", None)
