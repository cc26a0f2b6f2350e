"""Path-signature baselines (Tseriotou et al., 2023): SWNU and Seq-Sig-Net over sentence vectors and time.

A window of w posts is a path in R^d: each post's sentence vector, reduced by a learnable
Conv1d to a few channels, plus time channels. Signatures come from `pysiglib` (its torch API is
differentiable); nothing here computes a signature by hand.

- `ExpandingLogSig`: the log-signatures of the expanding windows path[:2], path[:3], ..., path[:L]
  (Lyndon basis, `pysiglib.torch_api.log_sig`, method 1). Windows are left-padded; pads are
  filled with the first real point, a constant path whose increments are zero, so the
  signature of a padded window equals that of its real posts.
- `SWNU` (signature window network unit): Conv1d reduction -> [reduced ; time] path ->
  expanding-window log-signatures -> BiLSTM -> its last hidden states.
- `SWNUClassifier`: [SWNU(window) ; current post's sentence vector ; its time features] -> FFN.
- `SeqSigNetClassifier`: the window is cut into overlapping units (`unit` posts, every `shift`),
  one shared SWNU per unit, a BiLSTM over the units' outputs, then the same concatenation and FFN.

Time channels of the path (as the paper's LRS setting: time in the path and at the output):
``log1p(seconds since the window's first post) / time_scale`` and the post's slot among the real
posts divided by w. The output gets `time_bilstm.window_time_features` of the current post.
Paper appendix grids: lr {5e-4, 3e-4}, FFN {(32, 32), (128, 128)}, SWNU LSTM {10, 12},
Conv1d dims {6, 10}, Seq-Sig-Net BiLSTM {300, 400}; 100 epochs, batch 64, dropout 0.1.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn

from .baselines import _SentenceVectorBaseline, hidden_sizes
from .time_bilstm import window_time_features


def _pysiglib():
    import pysiglib
    import pysiglib.torch_api as ta

    return pysiglib, ta


def fill_left_pads(path: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Left-padded [B, L, d] path with every pad replaced by the row's first real point."""
    first = (~mask.bool()).sum(1).clamp(max=path.shape[1] - 1)  # index of the first real slot
    first_pt = path.gather(1, first[:, None, None].expand(-1, 1, path.shape[-1]))
    return torch.where(mask.bool()[..., None], path, first_pt)


def path_time_channels(timelines, window: int, time_scale: float = 10.0) -> torch.Tensor:
    """[N, w, 2]: log1p(seconds since the window's first real post) / time_scale, real-slot index / w."""
    w = timelines.windows(int(window))
    gaps = np.where(w.mask, np.maximum(w.gaps, 0.0), 0.0)
    oldest = gaps.max(axis=1, keepdims=True)  # the first real post has the largest gap to the current
    since_start = np.log1p(np.maximum(oldest - gaps, 0.0)) / float(time_scale)
    index = (np.cumsum(w.mask, axis=1) - 1).clip(min=0) / float(w.width)
    feats = np.stack([since_start, index], axis=-1) * w.mask[..., None]
    return torch.as_tensor(feats, dtype=torch.float32)


class ExpandingLogSig(nn.Module):
    """[B, L, d] left-padded path -> [B, L-1, S] log-signatures of path[:, :k+1], k = 1..L-1."""

    def __init__(self, dim: int, depth: int = 3):
        super().__init__()
        pysiglib, _ = _pysiglib()
        self.dim, self.depth = int(dim), int(depth)
        pysiglib.prepare_log_sig(self.dim, self.depth, method=1)
        self.out_dim = int(pysiglib.log_sig_length(self.dim, self.depth))

    def forward(self, path, mask):
        pysiglib, ta = _pysiglib()
        pysiglib.prepare_log_sig(self.dim, self.depth, method=1)  # cached; a no-op after the first call
        path = fill_left_pads(path, mask).contiguous()
        B, L, _ = path.shape
        if L < 2:  # one post: a constant path, whose log-signature is zero
            return path.new_zeros(B, 1, self.out_dim)
        sigs = [ta.log_sig(path[:, : k + 1].contiguous(), self.depth, method=1) for k in range(1, L)]
        return torch.stack(sigs, dim=1)


class SWNU(nn.Module):
    """Signature window network unit: Conv1d reduction + time -> expanding log-signatures -> BiLSTM."""

    def __init__(self, in_dim: int, reduced_dim: int = 10, time_dim: int = 2, hidden: int = 12, depth: int = 3):
        super().__init__()
        self.reduce = nn.Conv1d(in_dim, reduced_dim, kernel_size=3, padding=1)
        self.sig = ExpandingLogSig(reduced_dim + time_dim, depth)
        self.lstm = nn.LSTM(self.sig.out_dim, hidden, batch_first=True, bidirectional=True)
        self.out_dim = 2 * hidden

    def forward(self, x, t, mask):
        z = self.reduce((x * mask[..., None]).transpose(1, 2)).transpose(1, 2)
        sigs = self.sig(torch.cat([z, t.to(z.dtype)], dim=-1), mask)
        _, (h, _) = self.lstm(sigs)
        return torch.cat([h[0], h[1]], dim=-1)


def _ffn(in_dim, hidden, num_labels, dropout):
    h1, h2 = hidden
    return nn.Sequential(nn.Linear(in_dim, h1), nn.ReLU(), nn.Dropout(dropout),
                         nn.Linear(h1, h2), nn.ReLU(), nn.Dropout(dropout), nn.Linear(h2, num_labels))


class SWNUNet(nn.Module):
    """[SWNU(window) ; current sentence vector ; current time features] -> FFN."""

    def __init__(self, dim, num_labels=2, reduced_dim=10, swnu_hidden=12, depth=3, hidden=(32, 32), dropout=0.1):
        super().__init__()
        self.swnu = SWNU(dim, reduced_dim, 2, swnu_hidden, depth)
        self.head = _ffn(self.swnu.out_dim + dim + 2, hidden, num_labels, dropout)

    def forward(self, x, mask, t, dt):
        return self.head(torch.cat([self.swnu(x, t, mask), x[:, -1], dt[:, -1].to(x.dtype)], dim=-1))


def unit_slices(window: int, unit: int, shift: int) -> list[slice]:
    """Overlapping units of `unit` slots every `shift`, the last one ending at the current post."""
    if unit < 2 or shift < 1:
        raise ValueError(f"unit={unit} must be >= 2 and shift={shift} >= 1 (e.g. unit=3, shift=2)")
    if window <= unit:
        return [slice(0, window)]
    starts = list(range(0, window - unit + 1, shift))
    if starts[-1] != window - unit:
        starts.append(window - unit)
    return [slice(s, s + unit) for s in starts]


class SeqSigNet(nn.Module):
    """Shared SWNU per unit -> BiLSTM over the units -> [its state ; current vector ; time] -> FFN."""

    def __init__(self, dim, window, num_labels=2, unit=3, shift=2, reduced_dim=10, swnu_hidden=12, depth=3,
                 seq_hidden=300, hidden=(32, 32), dropout=0.1):
        super().__init__()
        self.units = unit_slices(int(window), int(unit), int(shift))
        self.swnu = SWNU(dim, reduced_dim, 2, swnu_hidden, depth)
        self.seq = nn.LSTM(self.swnu.out_dim, seq_hidden, batch_first=True, bidirectional=True)
        self.drop = nn.Dropout(dropout)
        self.head = _ffn(2 * seq_hidden + dim + 2, hidden, num_labels, dropout)

    def forward(self, x, mask, t, dt):
        outs = [self.swnu(x[:, s], t[:, s], mask[:, s]) for s in self.units]
        _, (h, _) = self.seq(torch.stack(outs, dim=1))
        state = self.drop(torch.cat([h[0], h[1]], dim=-1))
        return self.head(torch.cat([state, x[:, -1], dt[:, -1].to(x.dtype)], dim=-1))


@dataclass(eq=False)
class SWNUClassifier(_SentenceVectorBaseline):
    """SWNU baseline (paper): log-signatures of expanding windows over reduced sentence vectors + time."""

    lr: float = 5e-4
    epochs: int = 100  # the paper's 100, with early stopping on dev
    patience: int | None = 10
    reduced_dim: int = 10  # Conv1d output channels (paper grid 6, 10)
    swnu_hidden: int = 12  # the SWNU's LSTM size (paper grid 10, 12)
    sig_depth: int = 3  # log-signature truncation level
    time_scale: float = 10.0  # log1p(seconds) time channels are divided by this
    hidden_default = (32, 32)  # the FFN head

    def __post_init__(self):
        super().__post_init__()
        for name in ("reduced_dim", "swnu_hidden", "sig_depth"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name}={getattr(self, name)!r} must be a positive integer")
        if not float(self.time_scale) > 0:
            raise ValueError(f"time_scale={self.time_scale!r} must be > 0 (e.g. 10)")

    def _features(self, timelines):
        feats = super()._features(timelines)
        feats["t"] = path_time_channels(timelines, self.window, self.time_scale)
        feats["dt"] = window_time_features(timelines, self.window, self.time_scale)
        return feats

    def _net(self, num_labels):
        return SWNUNet(self.dim_, num_labels, int(self.reduced_dim), int(self.swnu_hidden), int(self.sig_depth),
                       hidden_sizes(self.hidden, self.hidden_default, "swnu"), self.dropout)


@dataclass(eq=False)
class SeqSigNetClassifier(SWNUClassifier):
    """Seq-Sig-Net baseline (paper): a BiLSTM over SWNU units of the window."""

    unit: int = 3  # posts per SWNU unit
    shift: int = 2  # slots between unit starts
    seq_hidden: int = 300  # the BiLSTM over units (paper grid 300, 400)

    def __post_init__(self):
        super().__post_init__()
        unit_slices(self.window, int(self.unit), int(self.shift))  # validates

    def _net(self, num_labels):
        return SeqSigNet(self.dim_, self.window, num_labels, int(self.unit), int(self.shift), int(self.reduced_dim),
                         int(self.swnu_hidden), int(self.sig_depth), int(self.seq_hidden),
                         hidden_sizes(self.hidden, self.hidden_default, "seq_sig_net"), self.dropout)


__all__ = ["ExpandingLogSig", "SWNU", "SWNUClassifier", "SWNUNet", "SeqSigNet", "SeqSigNetClassifier",
           "fill_left_pads", "path_time_channels", "unit_slices"]
