"""Temporal word-bias modules of the future language model (Li et al., "Future Language Modeling").

Each module turns a per-year history table ``x[year, token, feature]`` into a bias over the
vocabulary for a target year, computed ONCE per distinct year (never per example x vocab):

- ``PreviousYearBias`` (Frequency-NoLSTM): ``B[y, v] = s * x[y-1, v]``, ``s`` a learned scalar.
- ``WindowLSTMBias`` (Context; Frequency as eq. 6 defines it, ``freq_bias="paper"``): ``B[y, v] = A^T LSTM(x[y-W, v], ..., x[y-1, v])``;
  one LSTM (weights shared by all tokens) batched across the vocabulary: the batch axis is
  (year, token), the time axis is the window. ``A`` is a learned vector (``head``).
- ``TrendLSTMBias`` (Frequency, our default): ``softplus(b) * (x[y-1, v] - mean_v) + A^T LSTM(...)``
  over each token's log-frequency relative to its own training-years mean. The linear skip
  starts at slope 1 ("next year's share follows last year's"). With ``monotone=True`` (the
  default) the LSTM is a *monotone* LSTM: its input and recurrent weights and ``A`` are
  non-negative (softplus of free parameters) and its candidate uses a sigmoid instead of tanh, so
  ``c_t``, ``h_t`` and ``A^T h`` never decrease when any year of the window rises: a rising
  trend can only raise the bias (strictly, through the skip). An unconstrained LSTM
  (``monotone=False``, the paper's) trained on noisy yearly counts learns regression to the
  mean and, on the planted world, cancelled most of the skip: an injected x8 rise moved the
  bias by +0.2 logits where the skip alone gave +1.1.
- ``GatedBias`` (Context^2, eqs. 9-10): with tied embeddings ``E_v``,
  ``s[y, v] = E_v^T B[y, v]`` (B in R^d from the LSTM), ``Btilde = s A``, and per position k
  ``bias[k, v] = alpha * sigmoid(H_k^T C Btilde) * (E_v^T D Btilde)``
  ``         = alpha * sigmoid(s[y, v] * (H_k . CA)) * s[y, v] * (E_v . DA)``.
  The gate is elementwise per position: it does not depend on the (padded) sequence length,
  so one-token-at-a-time decoding gets exactly the training-time bias (the reference bug).

Layout (the reference bug, fixed): ``windows(table, idx)`` returns ``[U, V, W, F]`` built with
an explicit permute, so after ``reshape(U*V, W, F)`` row ``u*V + v`` is token v's own history in
year order y-W, ..., y-1. tests/future_text/test_future_lm.py checks this against nn.LSTM run on
each token's own sequence.

Each module takes ``rows [R, V, F]`` (the distinct history years a batch needs, gathered once)
and ``idx [U, W]`` (for each distinct target year, its window as indices into ``rows``).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn


def window_index(years: torch.Tensor, first_year: int, num_years: int, window: int) -> torch.Tensor:
    """Row indices ``[U, W]`` of years ``y-W .. y-1`` in a history table starting at ``first_year``.

    Years before the table's start repeat its first row (left padding for early target years,
    documented in docs/methods/future_text.md). Callers check that ``y-1`` is in the table.
    """
    offsets = torch.arange(-window, 0, device=years.device)                  # -W, ..., -1
    idx = (years[:, None] - first_year) + offsets[None, :]                   # [U, W]
    return idx.clamp(min=0, max=num_years - 1)


def windows(table: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """Gather ``table[R, V, F]`` at ``idx[U, W]`` into ``[U, V, W, F]`` (token-major, year order)."""
    g = table[idx]                                   # [U, W, V, F]   (year axis before vocab)
    return g.permute(0, 2, 1, 3).contiguous()        # [U, V, W, F]   each token's own years


def lstm_last_hidden(lstm: nn.LSTM, x: torch.Tensor, projected: bool = False) -> torch.Tensor:
    """Last hidden state of a 1-layer ``nn.LSTM`` over ``x [N, W, F]`` (same arithmetic, gates i, f, g, o).

    Unrolled over the short window: for N = years x vocab tiny sequences this is several times
    faster on CPU than the fused kernel. ``projected=True`` means ``x`` already holds
    ``W_ih x + b_ih`` (``[N, W, 4H]``), so a projection can be shared between windows.
    """
    N, W, _ = x.shape
    H = lstm.hidden_size
    w_ih, w_hh = lstm.weight_ih_l0, lstm.weight_hh_l0
    bias = lstm.bias_hh_l0 if projected else lstm.bias_ih_l0 + lstm.bias_hh_l0
    h = c = None
    for t in range(W):
        gates = x[:, t] + bias if projected else torch.addmm(bias, x[:, t], w_ih.t())   # [N, 4H]
        if h is not None:
            gates = torch.addmm(gates, h, w_hh.t())
        act = torch.sigmoid(gates)                   # one kernel for i, f, o (g's slice is unused)
        i, f, _, o = act.split(H, dim=1)              # backward: one cat (slices: one zero-filled copy each)
        g = torch.tanh(gates.narrow(1, 2 * H, H))
        c = i * g if c is None else f * c + i * g    # h0 = c0 = 0
        h = o * torch.tanh(c)
    return h


class PreviousYearBias(nn.Module):
    """Frequency-NoLSTM: the previous year's feature scaled by one learned scalar."""

    def __init__(self, init_scale: float = 0.0):
        super().__init__()
        self.scale = nn.Parameter(torch.tensor(float(init_scale)))

    def forward(self, rows: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
        """rows ``[R, V, 1]`` raw features, idx ``[U, W]`` -> ``[U, V]`` (the last window year)."""
        return self.scale * rows[idx[:, -1], :, 0]


class WindowLSTMBias(nn.Module):
    """A^T LSTM(window) for every (year, token); LSTM weights shared across tokens."""

    def __init__(self, feature_dim: int, hidden: int = 32, out_dim: int = 1):
        super().__init__()
        self.lstm = nn.LSTM(feature_dim, hidden, batch_first=True)
        self.head = nn.Linear(hidden, out_dim, bias=False)  # A (out_dim 1) or R^hidden -> R^d
        if out_dim == 1:
            nn.init.zeros_(self.head.weight)                # A = 0: the model starts as the plain LM

    def forward(self, rows: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
        """rows ``[R, V, F]`` normalised history rows, idx ``[U, W]`` -> ``[U, V]`` or ``[U, V, d]``.

        Wide inputs (contextual embeddings) are projected by the LSTM's input weights once per
        history ROW (distinct year) and then gathered into windows; narrow ones (frequency, F=1)
        are gathered first, which moves less memory.
        """
        lstm = self.lstm
        if rows.shape[-1] > 4 * lstm.hidden_size:
            xproj = rows @ lstm.weight_ih_l0.t() + lstm.bias_ih_l0                   # [R, V, 4H]
            win, projected = windows(xproj, idx), True                               # [U, V, W, 4H]
        else:
            win, projected = windows(rows, idx), False                               # [U, V, W, F]
        U, V, W, G = win.shape
        h = lstm_last_hidden(lstm, win.reshape(U * V, W, G), projected)            # row u*V+v = token v of year u
        out = self.head(h).reshape(U, V, -1)
        return out[..., 0] if out.shape[-1] == 1 else out


class TrendLSTMBias(WindowLSTMBias):
    """Frequency: a non-negative linear skip on the last year's centred log-frequency plus an LSTM
    over the window; ``monotone=True`` constrains the LSTM so the bias never falls when a year rises."""

    def __init__(self, feature_dim: int = 1, hidden: int = 32, monotone: bool = True):
        super().__init__(feature_dim, hidden)
        self.monotone = bool(monotone)
        self.skip = nn.Parameter(torch.tensor(math.log(math.e - 1.0)))    # softplus = 1 at start
        if self.monotone:     # free parameters behind softplus: weights 0.13-0.69, A = 0.05 each at start
            with torch.no_grad():
                for w in (self.lstm.weight_ih_l0, self.lstm.weight_hh_l0):
                    w.uniform_(-2.0, 0.0)
                self.head.weight.fill_(-3.0)

    def forward(self, rows: torch.Tensor, idx: torch.Tensor, centred: torch.Tensor) -> torch.Tensor:
        """rows ``[R, V, 1]`` normalised, centred ``[R, V, 1]`` (feature minus the token's mean) -> ``[U, V]``."""
        skip = F.softplus(self.skip) * centred[idx[:, -1], :, 0]
        if not self.monotone:
            return super().forward(rows, idx) + skip
        win = windows(rows, idx)                                                   # [U, V, W, F]
        U, V, W, G = win.shape
        h = monotone_lstm_last_hidden(self.lstm, win.reshape(U * V, W, G))
        return (h @ F.softplus(self.head.weight).t()).reshape(U, V) + skip


def monotone_lstm_last_hidden(lstm: nn.LSTM, x: torch.Tensor) -> torch.Tensor:
    """Last hidden state of a monotone LSTM over ``x [N, W, F]``: ``lstm``'s weights through softplus
    (non-negative), biases free, every gate AND the candidate a sigmoid. Then ``c_t = f c_{t-1} + i g``
    with ``c, g >= 0`` and ``h = o tanh(c)`` are non-decreasing in every input (a product of
    non-negative non-decreasing terms is non-decreasing)."""
    H = lstm.hidden_size
    w_ih, w_hh = F.softplus(lstm.weight_ih_l0), F.softplus(lstm.weight_hh_l0)
    bias = lstm.bias_ih_l0 + lstm.bias_hh_l0
    h = c = None
    for t in range(x.shape[1]):
        gates = torch.addmm(bias, x[:, t], w_ih.t())
        if h is not None:
            gates = torch.addmm(gates, h, w_hh.t())
        act = torch.sigmoid(gates)
        i, f, g, o = act.split(H, dim=1)      # split, not 4 slices: its backward is one cat, not 4 zero-filled copies
        c = i * g if c is None else f * c + i * g
        h = o * torch.tanh(c)
    return h


class GatedBias(nn.Module):
    """Context^2: a decoder-state gate decides per position how much temporal bias to use."""

    def __init__(self, feature_dim: int, hidden: int, d_model: int):
        super().__init__()
        self.core = WindowLSTMBias(feature_dim, hidden, out_dim=d_model)   # B[y, v] in R^d
        self.A = nn.Parameter(torch.randn(d_model) / math.sqrt(d_model))   # eq. 9
        self.C = nn.Linear(d_model, d_model, bias=False)                   # eq. 10 gate
        self.D = nn.Linear(d_model, d_model, bias=False)                   # eq. 10 magnitude
        nn.init.eye_(self.C.weight)
        nn.init.zeros_(self.D.weight)  # magnitude 0 at start: the model starts as the plain LM

    def forward(self, rows: torch.Tensor, idx: torch.Tensor, emb: torch.Tensor) -> torch.Tensor:
        """Per-year ``[U, V, 2]``: (s = E_v^T B, m = s * E_v^T D A) -- both independent of position."""
        B = self.core(rows, idx)                            # [U, V, d]
        s = (B * emb[None]).sum(-1)                         # [U, V]
        m = s * (emb @ self.D(self.A))                      # [U, V]
        return torch.stack([s, m], dim=-1)

    def apply_gate(self, hidden: torch.Tensor, terms: torch.Tensor, alpha: float) -> torch.Tensor:
        """Bias ``[B, S, V]`` from decoder states ``hidden[B, S, d]`` and per-row year terms ``[B, V, 2]``."""
        q = hidden @ self.C(self.A)                          # [B, S]   H_k . (C A)
        s, m = terms[..., 0], terms[..., 1]                  # [B, V]
        return alpha * torch.sigmoid(q[..., None] * s[:, None, :]) * m[:, None, :]
