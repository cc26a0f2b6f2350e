"""TempoFormer: a hierarchical, temporally aware BERT over a window of timestamped posts.

Tseriotou et al. (2024), "TempoFormer: A Transformer for Temporally-aware Representations in
Change Detection". Reads top to bottom:

    posts ──► embeddings + local stack (layers 0..L_loc-1, each post on its own, ONCE per batch)
          ──► gather windows [B, W] of post encodings (left-padded, explicit mask)
          ──► for each upper layer u (default: the last two layers of the encoder):
                 + stream position embedding s_u (slot distance to the current post), LayerNorm
                 BERT layer u over every post's tokens (pretrained weights)
                 (the last layer computes only the [CLS] rows: nothing else is read; exact)
                 temporal rotary MHA over the window's [CLS] vectors, rotated by phi(gap):
                 dropout(O(attention)), with NO residual add (the reference's form; a config
                 switch adds one); not last layer: the result replaces each post's [CLS]
          ──► Gate&Norm: g = sigmoid(W[h_loc; h_glob]); LayerNorm((1-g)*h_loc + g*h_glob)
              (paper eq. in section 3.6: g multiplies the stream side H'_CLS)
          ──► head([pooled local [CLS] of current post ; fused [CLS]]) -> 64 -> 64 -> labels
          ──► alpha-weighted focal loss (gamma 2, alpha_c = sqrt(N / n_c))

Differences from the public reference code, all deliberate (see ../shared/REFERENCE-NOTES.md):
- the upper layers are the checkpoint's pretrained layers (`from_encoder` loads them);
- padding is marked by `window_mask` only; the first post of a timeline gets its true gap;
- unique posts are encoded once per batch with dynamic padding, windows are gathered;
- the time transform is `phi(gap) = time_scale * log1p(gap / time_unit)` (seconds by default)
  and the rotary base `rope_theta` defaults to 10 so every rotary pair turns by a useful angle
  over gaps of seconds to days (with the paper's 1e4 most pairs barely rotate); both are config.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import AutoConfig, AutoModel, PreTrainedConfig, PreTrainedModel
from transformers.masking_utils import create_bidirectional_mask
from transformers.utils import ModelOutput

from tempo_analysis.encoders import load_encoder

from .names import ABLATIONS, SUMMARIES, check_ablation


class TempoFormerConfig(PreTrainedConfig):
    """Config of a TempoFormer; `encoder` holds the wrapped encoder's own config as a dict."""

    model_type = "tempoformer"

    encoder: dict | None = None  # wrapped encoder config (`enc.config.to_dict()`); None = tiny BERT
    encoder_name: str | None = None  # where the pretrained weights came from (informational)
    num_local_layers: int | None = None  # local stack size; None = all but the last 2 layers
    max_window: int = 64  # size of the stream position tables (window sizes up to this)
    time_transform: str = "log1p"  # "log1p": phi = scale*log(1+gap/unit); "linear": scale*gap/unit
    time_unit: float = 1.0  # seconds per time unit before the transform
    time_scale: float = 1.0  # multiplies phi (scales every rotary angle)
    rope_theta: float = 10.0  # rotary base for temporal RoPE (paper/reference: 1e4)
    temporal_residual: bool = False  # False (reference): the temporal MHA returns dropout(O(attn)) and
    # Gate&Norm mixes it with the local [CLS]; True: x + dropout(O(attn)) (a residual add)
    temporal_attn_dropout: float | None = None  # dropout on the temporal attention weights (reference:
    # the encoder's attention dropout); None = the encoder's attention_probs_dropout_prob
    temporal_resid_dropout: float | None = None  # dropout after the output projection (reference: 0.1);
    # None = the encoder's hidden_dropout_prob (0.1 for BERT and MiniLM)
    sequential_rope_theta: float | None = None  # rotary base of the "sequential_rope" ablation; None =
    # rope_theta, so the ablation changes only the position fed (post order for time). A number is another
    # base for it: models saved before this default carry 10000.0 and load as they were trained
    head_hidden: int = 64
    head_dropout: float = 0.1
    focal_gamma: float = 2.0
    focal_alpha: list | None = None  # per-class alpha; None = 1 for every class
    ablation: str = "none"
    rnn_hidden: int = 128  # LSTM size of the rotempoformer variant
    summary: str = "cls"  # post vector the stream reads: "cls" (paper); "mean" (masked token mean in
    # every layer); "mean_then_cls" (token mean for the local vector and the first upper layer, where
    # [CLS] is still the encoder's own, then the [CLS] slot the stream wrote; last layer [CLS]-only).
    # The means suit encoders trained with mean pooling (all-MiniLM-L6-v2), whose [CLS] is untrained.

    def __post_init__(self, **kwargs):
        self.ablation = check_ablation(self.ablation)
        if self.time_transform not in ("log1p", "linear"):
            raise ValueError(
                f"time_transform={self.time_transform!r}: use 'log1p' (paper) or 'linear'"
            )
        if self.summary not in SUMMARIES:
            raise ValueError(f"summary={self.summary!r}: use one of {SUMMARIES}")
        if not self.time_unit > 0:
            raise ValueError(f"time_unit={self.time_unit!r} must be > 0 (seconds per time unit, e.g. 1 or 3600)")
        for name in ("rope_theta", "sequential_rope_theta"):
            if getattr(self, name) is not None and not getattr(self, name) > 1:
                raise ValueError(f"{name}={getattr(self, name)!r} must be > 1 (the rotary base, e.g. 10 or 10000)")
        if not self.time_scale > 0:
            raise ValueError(f"time_scale={self.time_scale!r} must be > 0 (it multiplies every rotary angle)")
        for name in ("temporal_attn_dropout", "temporal_resid_dropout"):
            p = getattr(self, name)
            if p is not None and not 0.0 <= p < 1.0:
                raise ValueError(f"{name}={p!r} must be in [0, 1) or None (the encoder's own dropout)")
        super().__post_init__(**kwargs)

    # the wrapped encoder's config object (rebuilt from the stored dict)
    def encoder_config(self) -> PreTrainedConfig:
        d = dict(self.encoder or {})
        model_type = d.pop("model_type", "bert")
        for k in ("architectures", "transformers_version", "_name_or_path", "name_or_path"):
            d.pop(k, None)
        attn = d.pop("_attn_implementation", None) or d.pop("attn_implementation", None)
        cfg = AutoConfig.for_model(model_type, **d)
        # set after construction: some transformers releases drop it as a constructor keyword
        cfg._attn_implementation = attn or getattr(cfg, "_attn_implementation", None) or "sdpa"
        return cfg


@dataclass
class TempoFormerOutput(ModelOutput):
    """loss (scalar or None), logits [B, C], temporal attentions (one [B, heads, W, W] per upper layer)."""

    loss: torch.Tensor | None = None
    logits: torch.Tensor | None = None
    temporal_attentions: tuple | None = None


# ---------------------------------------------------------------------------------------------
# time transform and rotary embedding


def time_positions(gaps: torch.Tensor, config: TempoFormerConfig) -> torch.Tensor:
    """phi(gap): the rotary 'position' of a post whose gap to the current post is `gaps` seconds.

    gaps are >= 0 (float64 recommended: absolute epoch seconds lose ~100 s of precision in float32).
    Default: phi = time_scale * log(1 + gap / time_unit), so phi(0) = 0 for the current post.
    """
    g = gaps.double() / float(config.time_unit)
    phi = torch.log1p(g) if config.time_transform == "log1p" else g
    return (float(config.time_scale) * phi).float()


def rotary_inv_freq(head_dim: int, theta: float, device=None) -> torch.Tensor:
    """LLaMA-style inverse frequencies theta^(-2i/d), i = 0..d/2-1."""
    return 1.0 / (theta ** (torch.arange(0, head_dim, 2, device=device).float() / head_dim))


def rotary_base(config) -> float | None:
    """The rotary base the temporal MHA of `config` uses: None (no rotation) for "vanilla_mha", else
    `rope_theta`. "sequential_rope" uses the same base as the full model unless `sequential_rope_theta`
    is set, so that against the full model it changes only the position fed (slot distance for phi(gap))."""
    if config.ablation == "vanilla_mha":
        return None
    own = getattr(config, "sequential_rope_theta", None)
    if config.ablation == "sequential_rope" and own is not None:
        return float(own)
    return float(config.rope_theta)


def rotary_angles(positions: torch.Tensor, head_dim: int, theta: float) -> torch.Tensor:
    """Angle of every rotary pair: positions [...] -> [..., head_dim/2]."""
    return positions.float()[..., None] * rotary_inv_freq(head_dim, theta, positions.device)


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary(x: torch.Tensor, angles: torch.Tensor) -> torch.Tensor:
    """Rotate x [B, heads, W, d] by angles [B, W, d/2] (pairs (i, i+d/2), as in LLaMA)."""
    emb = torch.cat((angles, angles), dim=-1)[:, None]  # [B, 1, W, d]
    return x * emb.cos() + _rotate_half(x) * emb.sin()


class TemporalRotaryAttention(nn.Module):
    """Multi-head self-attention over the window's [CLS] vectors, rotated by time (no FFN, no norm).

    out = drop(O(drop_attn(softmax(R(phi_q) Q x . R(phi_k) K x / sqrt(d))) V x)), plus x when
    `residual` (the reference has no residual add); bias-free Q/K/V as in the reference. Scores
    depend on phi_q - phi_k only (RoPE's relative property). Padded slots are masked as keys.
    """

    def __init__(self, hidden: int, heads: int, theta: float | None, residual: bool = False,
                 attn_dropout: float = 0.0, resid_dropout: float = 0.0):
        super().__init__()
        if hidden % heads or (hidden // heads) % 2:
            raise ValueError(f"hidden={hidden} must split into {heads} heads of even size")
        self.heads, self.head_dim, self.theta = heads, hidden // heads, theta
        self.residual = bool(residual)
        self.q = nn.Linear(hidden, hidden, bias=False)
        self.k = nn.Linear(hidden, hidden, bias=False)
        self.v = nn.Linear(hidden, hidden, bias=False)
        self.o = nn.Linear(hidden, hidden)
        self.attn_dropout = nn.Dropout(attn_dropout)
        self.resid_dropout = nn.Dropout(resid_dropout)

    def forward(self, x, positions, mask):
        # x [B, W, H]; positions [B, W] float (phi or slot distance); mask [B, W] bool
        B, W, H = x.shape
        split = lambda t: t.view(B, W, self.heads, self.head_dim).transpose(1, 2)  # noqa: E731
        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        if self.theta is not None:  # rotary (temporal or sequential); None = vanilla MHA
            ang = rotary_angles(positions, self.head_dim, self.theta)
            q, k = apply_rotary(q, ang), apply_rotary(k, ang)
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.head_dim)  # [B, heads, W, W]
        scores = scores.masked_fill(~mask[:, None, None, :], torch.finfo(scores.dtype).min)
        attn = scores.softmax(-1)
        out = (self.attn_dropout(attn) @ v).transpose(1, 2).reshape(B, W, H)
        out = self.resid_dropout(self.o(out))
        return (x + out if self.residual else out), attn


class GateNorm(nn.Module):
    """Gated context fusion (Zheng et al. 2021), paper eq. 3.6: LN((1-g)*h_loc + g*h_glob)."""

    def __init__(self, hidden: int, eps: float):
        super().__init__()
        self.gate = nn.Linear(2 * hidden, hidden)
        self.norm = nn.LayerNorm(hidden, eps=eps)

    def forward(self, h_loc, h_glob):
        g = torch.sigmoid(self.gate(torch.cat([h_loc, h_glob], dim=-1)))
        return self.norm((1 - g) * h_loc + g * h_glob)


def classifier_head(in_dim: int, hidden: int, num_labels: int, dropout: float) -> nn.Sequential:
    """The paper's classifier head: in_dim -> hidden -> hidden -> labels, ReLU and dropout between."""
    return nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU(), nn.Dropout(dropout),
                         nn.Linear(hidden, hidden), nn.ReLU(), nn.Dropout(dropout),
                         nn.Linear(hidden, num_labels))


def cls_only_layer(layer: nn.Module, x: torch.Tensor, tok_mask: torch.Tensor) -> torch.Tensor | None:
    """A BERT layer's output at the [CLS] position only: [R, T, H] -> [R, H].

    Exactly the full layer's output at position 0 (keys/values still see every token), at a
    fraction of the cost: only the [CLS] row goes through the query, output projection and FFN.
    TempoFormer's last layer needs nothing else. Returns None for layers without BERT's layout.
    """
    try:
        sa, so = layer.attention.self, layer.attention.output
        inter, out = layer.intermediate, layer.output
        heads, size = sa.num_attention_heads, sa.attention_head_size
    except AttributeError:
        return None
    if getattr(layer, "is_decoder", False) or getattr(layer, "chunk_size_feed_forward", 0):
        return None
    R, T, _ = x.shape
    split = lambda t, n: t.view(R, n, heads, size).transpose(1, 2)  # noqa: E731
    q, k, v = split(sa.query(x[:, :1]), 1), split(sa.key(x), T), split(sa.value(x), T)
    p = sa.dropout.p if sa.training else 0.0
    a = F.scaled_dot_product_attention(q, k, v, attn_mask=tok_mask.bool()[:, None, None, :], dropout_p=p)
    h = so(a.transpose(1, 2).reshape(R, 1, heads * size), x[:, :1])
    return out(inter(h), h)[:, 0]


def focal_loss(logits, labels, alpha=None, gamma: float = 2.0, ignore_index: int = -100):
    """Alpha-weighted focal loss, mean over labelled rows: -alpha_y (1-p_y)^gamma log p_y."""
    keep = labels != ignore_index
    if not keep.any():
        return logits.sum() * 0.0  # no labelled row: zero loss that still has a graph
    logits, labels = logits[keep], labels[keep]
    logp = F.log_softmax(logits.float(), dim=-1).gather(1, labels[:, None]).squeeze(1)
    loss = -((1 - logp.exp()) ** gamma) * logp
    if alpha is not None:
        loss = loss * torch.as_tensor(alpha, dtype=loss.dtype, device=loss.device)[labels]
    return loss.mean()


def focal_alpha_from_labels(labels, num_labels: int) -> list[float]:
    """alpha_c = sqrt(N / n_c) over labelled rows (labels < 0 ignored); absent classes get max alpha."""
    y = torch.as_tensor(labels).long()
    y = y[y >= 0]
    counts = torch.bincount(y, minlength=num_labels).double()
    n = float(counts.sum())
    alpha = torch.where(counts > 0, (n / counts.clamp(min=1)).sqrt(), torch.zeros_like(counts))
    if (counts == 0).any():
        alpha[counts == 0] = alpha.max() if alpha.max() > 0 else 1.0
    return [float(a) for a in alpha]


# ---------------------------------------------------------------------------------------------
# the model


class TempoFormerModel(PreTrainedModel):
    """TempoFormer over any BERT-like encoder (BERT, RoBERTa, MiniLM, ...); see module docstring."""

    config_class = TempoFormerConfig
    base_model_prefix = "tempoformer"
    main_input_name = "input_ids"

    def __init__(self, config: TempoFormerConfig):
        super().__init__(config)
        ecfg = config.encoder_config()
        self.encoder = AutoModel.from_config(ecfg)  # embeddings + all layers (+ pooler if it has one)
        if not hasattr(self.encoder, "embeddings") or not hasattr(
            getattr(self.encoder, "encoder", None), "layer"
        ):
            raise ValueError(
                f"encoder model_type={ecfg.model_type!r} is not BERT-like: TempoFormer needs "
                "`.embeddings` and `.encoder.layer` (BERT, RoBERTa, ELECTRA, MiniLM, ...)"
            )
        L, H = ecfg.num_hidden_layers, ecfg.hidden_size
        n_loc = L - 2 if config.num_local_layers is None else int(config.num_local_layers)
        if not 0 <= n_loc < L:
            raise ValueError(
                f"num_local_layers={n_loc} must be in [0, {L - 1}] for a {L}-layer encoder "
                "(at least one upper layer is needed)"
            )
        self.num_local, self.num_upper, self.hidden = n_loc, L - n_loc, H
        ab = config.ablation
        # one stream position table (+ LayerNorm) per upper layer; s10 = first, s11 = last
        use_s = [ab != "no_s10_s11"] * self.num_upper
        if ab == "no_s11":
            use_s[-1] = False
        self.stream_pos = nn.ModuleList(
            [nn.Embedding(config.max_window, H) if u else nn.Identity() for u in use_s]
        )
        self.stream_norm = nn.ModuleList(
            [nn.LayerNorm(H, eps=ecfg.layer_norm_eps) if u else nn.Identity() for u in use_s]
        )
        self._use_s = use_s
        theta = rotary_base(config)
        drop_attn = config.temporal_attn_dropout
        drop_attn = getattr(ecfg, "attention_probs_dropout_prob", 0.1) if drop_attn is None else drop_attn
        drop_resid = config.temporal_resid_dropout
        drop_resid = getattr(ecfg, "hidden_dropout_prob", 0.1) if drop_resid is None else drop_resid
        self.temporal = nn.ModuleList(
            [TemporalRotaryAttention(H, ecfg.num_attention_heads, theta, config.temporal_residual,
                                     drop_attn, drop_resid) for _ in range(self.num_upper)]
        )
        self.gate_norm = GateNorm(H, ecfg.layer_norm_eps) if ab != "no_gate_norm" else None
        # BERT pooler (dense + tanh on [CLS]) for the local current-post summary
        if getattr(self.encoder, "pooler", None) is None:
            self.local_pooler = nn.Sequential(nn.Linear(H, H), nn.Tanh())
        # RoTempoFormer (as the reference): a new dense + tanh "pooler" over every post's fused [CLS],
        # an LSTM over them, and a head that reads ONLY the LSTM's last state
        self.rnn = nn.LSTM(H, config.rnn_hidden, batch_first=True) if ab == "rotempoformer" else None
        self.ro_pooler = nn.Sequential(nn.Linear(H, H), nn.Tanh()) if self.rnn is not None else None
        head_in = config.rnn_hidden if self.rnn is not None else 2 * H
        d, p = config.head_hidden, config.head_dropout
        self.head = classifier_head(head_in, d, config.num_labels, p)
        self.post_init()

    def _init_weights(self, module):
        # the classifier head (and the LSTM) keep PyTorch's fan-in init: BERT's std-0.02 init
        # shrinks a 3-layer ReLU head's signal ~100x and it then barely trains in a few epochs
        ro = tuple(self.ro_pooler) if getattr(self, "ro_pooler", None) is not None else ()
        if isinstance(module, (nn.Linear, nn.LSTM)) and any(
            module is m for m in (*self.head, self.rnn, *ro) if m is not None
        ):
            module.reset_parameters()
            return
        # everything else: the encoder's own init (also restores buffers such as position_ids)
        type(self.encoder)._init_weights(self.encoder, module)

    # ----- construction from a pretrained encoder ------------------------------------------
    @classmethod
    def from_encoder(cls, encoder="default", **config_kwargs) -> "TempoFormerModel":
        """Build a TempoFormer whose every encoder weight (local AND upper layers) is the checkpoint's.

        encoder: "default" (embedded MiniLM), an HF name, a local path, or an already loaded model.
        config_kwargs go to TempoFormerConfig (num_labels, id2label, ablation, num_local_layers, ...).
        """
        if isinstance(encoder, str):
            name = encoder
            encoder, _ = load_encoder(encoder)
        else:
            name = getattr(encoder.config, "_name_or_path", None) or encoder.config.model_type
        base = getattr(encoder, "base_model", encoder)
        cfg = TempoFormerConfig(encoder=base.config.to_dict(), encoder_name=str(name), **config_kwargs)
        model = cls(cfg)
        result = model.encoder.load_state_dict(base.state_dict(), strict=False)
        missing = [k for k in result.missing_keys if not k.startswith("pooler.")]
        if missing or result.unexpected_keys:
            raise ValueError(
                f"encoder {name!r} weights do not fit its own architecture: missing={missing[:5]}, "
                f"unexpected={result.unexpected_keys[:5]}"
            )
        return model

    @property
    def local_layers(self):
        return self.encoder.encoder.layer[: self.num_local]

    @property
    def upper_layers(self):
        return self.encoder.encoder.layer[self.num_local :]

    def _mask4d(self, x, attention_mask):
        return create_bidirectional_mask(
            config=self.encoder.config, inputs_embeds=x, attention_mask=attention_mask
        )

    def local_encode(self, input_ids, attention_mask, token_type_ids=None) -> torch.Tensor:
        """Embeddings + local stack over each post on its own: [P, T] -> [P, T, H]."""
        x = self.encoder.embeddings(input_ids=input_ids, token_type_ids=token_type_ids)
        mask = self._mask4d(x, attention_mask)
        for layer in self.local_layers:
            x = layer(x, mask)
        return x

    def summarize(self, x: torch.Tensor, tok_mask: torch.Tensor, mean: bool) -> torch.Tensor:
        """Post vectors [N, T, H] -> [N, H]: the masked token mean, or the [CLS] row."""
        if not mean:
            return x[:, 0]
        m = tok_mask[..., None].to(x.dtype)
        return (x * m).sum(1) / m.sum(1).clamp(min=1)

    def pool_local(self, cls_vectors: torch.Tensor) -> torch.Tensor:
        """BERT pooling of [CLS] vectors [N, H] -> [N, H]."""
        pooler = getattr(self.encoder, "pooler", None)
        if pooler is not None:
            return pooler(cls_vectors[:, None, :])
        return self.local_pooler(cls_vectors)

    # ----- forward ------------------------------------------------------------------------
    def forward(
        self,
        input_ids=None,
        attention_mask=None,
        window_index=None,
        window_mask=None,
        post_times=None,
        labels=None,
        token_type_ids=None,
        local_hidden=None,
        output_attentions: bool = False,
        **_,
    ) -> TempoFormerOutput:
        """Classify the current (last-slot) post of every window.

        input_ids / attention_mask [P, T]: the batch's UNIQUE posts, dynamically padded
            (or `local_hidden` [P, T, H]: precomputed local-stack output, e.g. with frozen lower layers);
        window_index [B, W] long: rows into the posts, oldest -> newest, current post LAST, -1 = pad;
        window_mask [B, W] bool: True = real post (the only padding marker);
        post_times [P] float64 absolute seconds (any origin; only differences are used);
        labels [B] long, -100 = unlabeled (predicted, no loss).
        """
        if window_index is None or window_mask is None or post_times is None:
            raise ValueError("TempoFormer needs window_index, window_mask and post_times")
        window_mask = window_mask.bool()
        B, W = window_index.shape
        if W > self.config.max_window:
            raise ValueError(
                f"window size {W} exceeds config.max_window={self.config.max_window}; "
                "build the model with a larger max_window"
            )
        if not window_mask[:, -1].all():
            raise ValueError("window_mask[:, -1] must be True: the current post sits in the last slot")
        if attention_mask is None:
            attention_mask = torch.ones(input_ids.shape[:2], dtype=torch.long, device=input_ids.device)

        # 1) local stack, once per unique post
        h = local_hidden if local_hidden is not None else self.local_encode(
            input_ids, attention_mask, token_type_ids
        )
        safe_index = window_index.clamp(min=0)
        cur = window_index[:, -1]
        if self.config.summary == "cls":  # BERT pooling of the current post's local [CLS]
            pooled_local = self.pool_local(h[cur, 0])  # [B, H]
        else:
            pooled_local = self.summarize(h[cur], attention_mask[cur], mean=True)

        # 2) time gaps to the current post (float64 so absolute epoch seconds keep precision)
        times = post_times.to(torch.float64)
        gaps = (times[cur][:, None] - times[safe_index]).masked_fill(~window_mask, 0.0)
        if (gaps < 0).any():
            raise ValueError(
                "a window lists a post later than its current post: window_index must run "
                "oldest -> newest with the current post last (sort timelines by timestamp)"
            )
        slot_dist = (W - 1) - torch.arange(W, device=window_index.device)  # 0 = current post
        slot_dist = slot_dist[None].expand(B, W)
        if self.config.ablation == "sequential_rope":
            positions = slot_dist.float()
        else:
            positions = time_positions(gaps, self.config)

        # 3) gather the real (window, slot) pairs; pads are never computed
        b_idx, s_idx = window_mask.nonzero(as_tuple=True)
        rows = window_index[b_idx, s_idx]
        x, tok_mask = h[rows], attention_mask[rows]
        mask4d = self._mask4d(x, tok_mask)
        dist = slot_dist[b_idx, s_idx]

        attentions = []
        for u, layer in enumerate(self.upper_layers):
            if self._use_s[u]:  # stream position embedding on every token, then LayerNorm
                x = self.stream_norm[u](x + self.stream_pos[u](dist)[:, None, :])
            last = u == self.num_upper - 1
            mean = self.config.summary == "mean" or (self.config.summary == "mean_then_cls" and u == 0)
            top = None
            if last and not mean:  # last layer: [CLS] rows only (exact)
                top = cls_only_layer(layer, x, tok_mask)
            if top is None:
                x = layer(x, mask4d)
                top = self.summarize(x, tok_mask, mean)
            cls = x.new_zeros(B, W, self.hidden).index_put((b_idx, s_idx), top)
            fused, attn = self.temporal[u](cls, positions, window_mask)
            attentions.append(attn)
            if u < self.num_upper - 1:  # stream-aware [CLS] replaces each post's [CLS]
                x = torch.cat([fused[b_idx, s_idx][:, None, :], x[:, 1:]], dim=1)

        # 4) Gate&Norm fusion of the last layer's word-level and stream-level [CLS]
        if self.rnn is None:
            h_loc, h_glob = cls[:, -1], fused[:, -1]
            stream = self.gate_norm(h_loc, h_glob) if self.gate_norm is not None else h_glob
        else:  # RoTempoFormer: LSTM over every real post's pooled fused [CLS], oldest -> newest
            every = self.gate_norm(cls, fused) if self.gate_norm is not None else fused
            pooled = self.ro_pooler(every)
            n = window_mask.sum(1)
            shift = (torch.arange(W, device=n.device)[None] + (W - n)[:, None]) % W  # left -> right pad
            pooled = pooled.gather(1, shift[..., None].expand(-1, -1, pooled.shape[-1]))
            packed = nn.utils.rnn.pack_padded_sequence(
                pooled, n.cpu(), batch_first=True, enforce_sorted=False
            )
            _, (h_n, _) = self.rnn(packed)
            stream = h_n[-1]

        # TempoFormer: [pooled local vector of the current post ; fused stream vector]; RoTempoFormer:
        # the LSTM state alone (what each reference head reads)
        logits = self.head(stream if self.rnn is not None else torch.cat([pooled_local, stream], dim=-1))
        loss = None
        if labels is not None:
            loss = focal_loss(logits, labels, self.config.focal_alpha, self.config.focal_gamma)
        return TempoFormerOutput(
            loss=loss, logits=logits,
            temporal_attentions=tuple(attentions) if output_attentions else None,
        )


# saved folders say model_type "tempoformer": AutoConfig (and so AutoTokenizer) can read them
AutoConfig.register(TempoFormerConfig.model_type, TempoFormerConfig, exist_ok=True)

__all__ = [
    "ABLATIONS",
    "SUMMARIES",
    "TempoFormerConfig",
    "TempoFormerModel",
    "TempoFormerOutput",
    "TemporalRotaryAttention",
    "GateNorm",
    "check_ablation",
    "cls_only_layer",
    "focal_alpha_from_labels",
    "focal_loss",
    "rotary_angles",
    "rotary_base",
    "time_positions",
]
