"""TempoFormer's stream over frozen sentence vectors: the temporal attention without the hierarchy.

The full TempoFormer (`model.py`) runs its temporal rotary attention *inside* the encoder's upper
layers, over every post's tokens in every window, which makes a CPU fold cost most of an hour at
w = 20. This model keeps only the stream side, over the same frozen mean-pooled sentence vectors
the BiLSTM baseline reads, so the question "does time-rotated attention over the window beat a
recurrence over it?" can be answered over every fold, seed and window, with the settings chosen on
dev like any baseline's. Reads top to bottom:

    window's sentence vectors x [B, W, D] (frozen, mean-pooled; zeros at pads)
      ──► for each layer u:  LayerNorm(Linear(x) + s_u(slot distance))          (u = 0: D -> hidden)
                             temporal rotary MHA over the window, rotated by phi(gap to the current
                             post) (model.TemporalRotaryAttention; no residual add, as the reference)
                             not last layer: x = LayerNorm(x_u + its attention output)
      ──► Gate&Norm(current post's x_u, its attention output)        (model.GateNorm)
      ──► head([current post's x_u ; fused]) -> 64 -> 64 -> labels, alpha-weighted focal loss

`ablation="vanilla_mha"` is the time-blind control: the same parameters with no rotation, so the
gaps are never read; "sequential_rope" rotates by slot distance (post order) instead of time, with the
same rotary base (`rope_theta`), so it changes only the position fed.
The time settings are TempoFormer's (`model_kwargs`: time_transform, time_unit, time_scale,
rope_theta, temporal_residual). This is not the paper's model: there the stream sits inside the
fine-tuned encoder; here the posts are fixed vectors.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
import torch
import torch.nn as nn

from .baselines import _SentenceVectorBaseline, hidden_sizes
from .model import GateNorm, TemporalRotaryAttention, classifier_head, time_positions
from .names import check_ablation

# TempoFormerConfig's time fields this model reads from `model_kwargs`, with TempoFormer's defaults
TIME_DEFAULTS = {"time_transform": "log1p", "time_unit": 1.0, "time_scale": 1.0, "rope_theta": 10.0,
                 "temporal_residual": False}
# the ablations that make sense without the hierarchical encoder
VECTOR_ABLATIONS = ("none", "vanilla_mha", "sequential_rope", "no_gate_norm")


class VectorTempoFormerNet(nn.Module):
    """Temporal rotary attention over a window of post vectors; see the module docstring."""

    def __init__(self, dim: int, hidden: int = 128, num_labels: int = 2, *, heads: int = 4, layers: int = 1,
                 max_window: int = 64, dropout: float = 0.1, head_hidden: int = 64, ablation: str = "none",
                 **time):
        super().__init__()
        self.time = SimpleNamespace(**{**TIME_DEFAULTS, **time})
        if self.time.time_transform not in ("log1p", "linear"):
            raise ValueError(f"time_transform={self.time.time_transform!r}: use 'log1p' (paper) or 'linear'")
        if not (self.time.time_unit > 0 and self.time.time_scale > 0 and self.time.rope_theta > 1):
            raise ValueError("time_unit and time_scale must be > 0 and rope_theta > 1")
        self.ablation = ablation
        # "sequential_rope" keeps the model's own base: it changes only the position fed (post order for time)
        theta = None if ablation == "vanilla_mha" else float(self.time.rope_theta)
        self.proj = nn.ModuleList([nn.Linear(dim if u == 0 else hidden, hidden) for u in range(layers)])
        self.stream_pos = nn.ModuleList([nn.Embedding(max_window, hidden) for _ in range(layers)])
        self.norm = nn.ModuleList([nn.LayerNorm(hidden) for _ in range(layers)])
        self.temporal = nn.ModuleList([
            TemporalRotaryAttention(hidden, heads, theta, bool(self.time.temporal_residual), dropout, dropout)
            for _ in range(layers)])
        self.between = nn.ModuleList([nn.LayerNorm(hidden) for _ in range(layers - 1)])
        self.gate_norm = GateNorm(hidden, 1e-5) if ablation != "no_gate_norm" else None
        self.head = classifier_head(2 * hidden, head_hidden, num_labels, dropout)

    def forward(self, x, mask, gaps):
        # x [B, W, D]; mask [B, W] bool (current post last, always real); gaps [B, W] seconds to the current post
        B, W, _ = x.shape
        mask = mask.bool()
        if W > self.stream_pos[0].num_embeddings:
            raise ValueError(f"window {W} is longer than max_window={self.stream_pos[0].num_embeddings}")
        dist = ((W - 1) - torch.arange(W, device=x.device))[None].expand(B, W)  # 0 = the current post
        if self.ablation == "sequential_rope":
            positions = dist.float()
        else:
            positions = time_positions(gaps.masked_fill(~mask, 0.0), self.time)
        for u, (proj, pos, norm, temporal) in enumerate(zip(self.proj, self.stream_pos, self.norm, self.temporal)):
            h = norm(proj(x) + pos(dist))
            fused, _ = temporal(h, positions, mask)
            if u < len(self.proj) - 1:
                x = self.between[u](h + fused)
        h_loc, h_glob = h[:, -1], fused[:, -1]
        stream = self.gate_norm(h_loc, h_glob) if self.gate_norm is not None else h_glob
        return self.head(torch.cat([h_loc, stream], dim=-1))


@dataclass(eq=False)
class VectorTempoFormerClassifier(_SentenceVectorBaseline):
    """TempoFormer's temporal attention over frozen sentence vectors (BiLSTM's settings, plus these)."""

    ablation: str = "none"  # "none", or the time-blind "vanilla_mha", "sequential_rope", "no_gate_norm"
    heads: int = 4  # attention heads (hidden / heads must be even for the rotation)
    layers: int = 1  # temporal attention layers
    model_kwargs: dict | None = None  # time settings, as TempoFormer's: time_transform, time_unit,
    # time_scale, rope_theta (default 10), temporal_residual
    hidden_default = 128

    def __post_init__(self):
        super().__post_init__()
        self.ablation = check_ablation(self.ablation)
        if self.ablation not in VECTOR_ABLATIONS:
            raise ValueError(f"ablation={self.ablation!r} needs the hierarchical encoder; over sentence vectors "
                             f"use one of {', '.join(VECTOR_ABLATIONS)}")
        self.model_kwargs = dict(self.model_kwargs or {})
        unknown = sorted(set(self.model_kwargs) - set(TIME_DEFAULTS))
        if unknown:
            raise ValueError(f"model_kwargs {unknown} do not apply to tempoformer_vectors; it takes "
                             f"{', '.join(TIME_DEFAULTS)}")
        hidden = hidden_sizes(self.hidden, self.hidden_default, "tempoformer_vectors")
        if int(self.layers) < 1 or hidden % int(self.heads) or (hidden // int(self.heads)) % 2:
            raise ValueError(f"hidden={hidden}, heads={self.heads}, layers={self.layers}: need layers >= 1 and "
                             "hidden split into heads of even size (e.g. hidden 128, heads 4)")

    def _features(self, timelines):
        feats = super()._features(timelines)
        w = timelines.windows(self.window)
        feats["gaps"] = torch.as_tensor(np.where(w.mask, np.maximum(w.gaps, 0.0), 0.0), dtype=torch.float64)
        return feats

    def _net(self, num_labels):
        hidden = hidden_sizes(self.hidden, self.hidden_default, "tempoformer_vectors")
        return VectorTempoFormerNet(self.dim_, hidden, num_labels, heads=int(self.heads),
                                    layers=int(self.layers), max_window=max(64, self.window), dropout=self.dropout,
                                    ablation=self.ablation, **self.model_kwargs)


__all__ = ["VECTOR_ABLATIONS", "VectorTempoFormerClassifier", "VectorTempoFormerNet"]
