"""Time-aware BiLSTM: the BiLSTM baseline with log time gaps as input features.

The honest control for "time helps": the same sentence vectors and the same recurrence as
`BiLSTMClassifier`, plus two time features per window slot, so any gain of TempoFormer over it
must come from HOW TempoFormer uses time, not from seeing it at all:

- ``log1p(seconds from the post to the current post) / time_scale``;
- ``log1p(seconds from the previous post in the window to this post) / time_scale`` (0 for the
  oldest real post).

`time_scale` (default 10, about log(1 day)) keeps the features near [0, 1.5] like the unit-norm
sentence vectors. `window_time_features` is shared with the signature baselines.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from .baselines import BiLSTMNet, _SentenceVectorBaseline, hidden_sizes


def window_time_features(timelines, window: int, time_scale: float = 10.0) -> torch.Tensor:
    """[N, w, 2] float32: log gap to the current post and log gap to the previous slot (pads 0)."""
    w = timelines.windows(int(window))
    gaps = np.where(w.mask, np.maximum(w.gaps, 0.0), 0.0)
    to_current = np.log1p(gaps)
    prev = np.concatenate([gaps[:, :1], gaps[:, :-1]], axis=1)  # gap of the previous slot to the current post
    prev_real = np.concatenate([np.zeros_like(w.mask[:, :1]), w.mask[:, :-1]], axis=1)
    step = np.where(prev_real & w.mask, np.maximum(prev - gaps, 0.0), 0.0)
    feats = np.stack([to_current, np.log1p(step)], axis=-1) / float(time_scale)
    return torch.as_tensor(feats * w.mask[..., None], dtype=torch.float32)


class TimeBiLSTMNet(BiLSTMNet):
    """BiLSTM over [sentence vector ; time features] per slot (oldest -> newest) -> linear."""

    def __init__(self, dim: int, hidden: int = 128, num_labels: int = 2, dropout: float = 0.1, time_dim: int = 2):
        super().__init__(dim + time_dim, hidden, num_labels, dropout)

    def forward(self, x, mask, dt):
        return super().forward(torch.cat([x, dt.to(x.dtype)], dim=-1), mask)


@dataclass(eq=False)
class TimeAwareBiLSTMClassifier(_SentenceVectorBaseline):
    """BiLSTM with log time gaps as input features (BiLSTMClassifier's settings plus time_scale)."""

    time_scale: float = 10.0  # the log1p(seconds) features are divided by this
    hidden_default = 128

    def __post_init__(self):
        super().__post_init__()
        if not float(self.time_scale) > 0:
            raise ValueError(f"time_scale={self.time_scale!r} must be > 0 (e.g. 10, about log of a day in seconds)")
        self.time_scale = float(self.time_scale)

    def _features(self, timelines):
        feats = super()._features(timelines)
        feats["dt"] = window_time_features(timelines, self.window, self.time_scale)
        return feats

    def _net(self, num_labels):
        hidden = hidden_sizes(self.hidden, self.hidden_default, "time_bilstm")
        return TimeBiLSTMNet(self.dim_, hidden, num_labels, self.dropout)


__all__ = ["TimeAwareBiLSTMClassifier", "TimeBiLSTMNet", "window_time_features"]
