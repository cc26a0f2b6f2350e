"""Temporal attention (Rosin & Radinsky 2022) on any BERT-like encoder, keeping its pretrained weights.

The model reads top to bottom:

1. ``TemporalAttentionConfig``: the encoder's shape (copied from the source checkpoint) plus the time
   settings: how many periods, which attention form, the per-period factors of the scaled baselines.
2. ``TimeSelfAttention``: one self-attention layer whose scores are conditioned on time.
   Time ids per token: ``0..P-1`` = the periods, ``P`` = padding, ``P+1`` = a [MASK]ed token
   (the paper gives pad and mask their own time points). Each layer owns a time projection
   ``W_T`` (``self.time``) that turns the shared time embedding ``x^t`` into ``T = x^t W_T``.
   Forms (``config.time_attention``):

   * ``"faithful"`` -- the paper's ``softmax(Q Tᵀ T Kᵀ / (‖T‖ √d))``. Note
     ``(Q Tᵀ T Kᵀ)_ij = q_i (Σ_a t_aᵀ t_a) k_jᵀ = q_i M k_jᵀ`` with ``M = TᵀT`` (d×d), so we form
     ``Q' = Q M / ‖T‖`` in O(n·d²) per head and hand ``(Q', K, V)`` to ``F.scaled_dot_product_attention``
     (fused kernel), never building the n×n×d triple product. Since tokens take only P+2 time ids,
     ``M = Σ_k c_k τ_kᵀ τ_k`` (c_k = tokens with time id k) and W_T runs on the P+2 table rows only. ``M`` and ``‖T‖`` (Frobenius) are taken
     **per example** over its real tokens only -- the reference took the norm over the whole batch
     tensor, so a sentence's vectors depended on its batch mates and on padding. ``‖T‖`` is taken
     over **all heads' T together** by default (``time_norm="all_heads"``: one divisor per example, so
     the heads keep their relative scale; the library's recorded numbers use it); the paper writes
     eq. 2 for one head, whose ``T = X^t W_T`` is n × d_k, i.e. each head's own ``‖T_h‖``
     (``time_norm="per_head"``). With H heads of similar size the per-head divisor is about √H times
     smaller, so the time term starts √H times louder.
     *Rank-1 property*: when every token shares one time vector t (no pads or masks),
     ``M = n tᵀt`` and the score matrix is ``n (q_i·t)(t·k_j) / ‖T‖`` -- an outer product of two
     vectors, rank 1. Every query then ranks the keys in the same order (by ``t·k_j``; reversed when
     ``q_i·t < 0``): attention loses its query-specific routing. ``tests/semantic_change`` checks this.
     With ``time_residual=True`` (default) the form is added to the pretrained scores through a
     per-head gate that starts at 0: ``Q' = Q + g_h · Q M / ‖T‖``. That keeps the pretrained
     encoder exactly at initialisation and lets training decide how much time to mix in;
     ``time_residual=False`` is the paper's formula alone (it cannot equal the pretrained model).
   * ``"modulated"`` -- time rescales every dimension of QKᵀ: ``q'_i = q_i ⊙ (1 + u_i)``,
     ``k'_j = k_j ⊙ (1 + u_j)`` with ``u = T``. Scores stay a full-rank QKᵀ (queries keep their own
     ranking of keys), cost O(n·d), go through the fused kernel, and ``W_T = 0`` at init means the
     model starts as the pretrained encoder.
   * ``"scaled"`` -- the paper's scaled-attention baselines: ``α_ij = softmax(q_i s(t_i) k_jᵀ)`` with a
     fixed factor per period (``config.period_scales``; see :mod:`.baselines`).
   * ``"none"`` -- vanilla attention (the plain and time-token baselines).
3. ``TemporalAttentionModel``: BERT-style embeddings, post-LN layers, all hidden states out.
4. ``TemporalAttentionForMaskedLM``: adds the MLM head (decoder tied to the word embeddings; the
   loss is computed only at labelled positions, so the 30k-wide decoder runs on ~15% of tokens).

Conversion (``from_pretrained_encoder`` / ``from_hf``) copies every pretrained tensor -- embeddings,
all encoder layers, and the MLM head when the checkpoint has one (``config.head_from_checkpoint``).
The reference implementation discarded the encoder; ``test_encoder_layers_equal_checkpoint`` checks that
every layer here equals the checkpoint's.
Supported source types: BERT layout (bert, roberta, xlm-roberta, camembert, electra with
embedding size = hidden size) and distilbert.
"""
from __future__ import annotations

import math
import warnings

import torch
import torch.nn.functional as F
from torch import nn
from transformers import AutoConfig, PreTrainedConfig, PreTrainedModel
from transformers.activations import ACT2FN
from transformers.modeling_outputs import MaskedLMOutput

from ..encoders import load_encoder

TIME_ATTENTION_FORMS = ("faithful", "modulated", "scaled", "none")
TIME_NORMS = ("all_heads", "per_head")  # faithful: what ‖T‖ is taken over (module docstring)
_BERT_LAYOUT = ("bert", "roberta", "xlm-roberta", "camembert", "electra")


class TemporalAttentionConfig(PreTrainedConfig):
    """Encoder shape (copied from the source checkpoint by :func:`config_from_hf`) + time settings."""

    model_type = "tempo_temporal_attention"

    # --- the encoder's shape ----------------------------------------------------------------------
    vocab_size: int = 30522
    hidden_size: int = 384
    num_hidden_layers: int = 6
    num_attention_heads: int = 12
    intermediate_size: int = 1536
    hidden_act: str = "gelu"
    hidden_dropout_prob: float = 0.1
    attention_probs_dropout_prob: float = 0.1
    max_position_embeddings: int = 512
    type_vocab_size: int = 2  # 0 = no token-type embeddings (distilbert)
    layer_norm_eps: float = 1e-12
    pad_token_id: int = 0
    mask_token_id: int | None = None  # [MASK]ed tokens get their own time id
    position_offset: int = 0  # position ids start here (roberta-style checkpoints: pad_token_id + 1)
    initializer_range: float = 0.02
    source_model_type: str = "bert"  # bert, roberta, xlm-roberta, camembert, electra or distilbert
    source_name: str | None = None  # the encoder it was converted from (informational)
    head_from_checkpoint: bool = False  # the MLM head was copied (else it starts fresh, seeded)
    # --- time -------------------------------------------------------------------------------------
    num_periods: int = 2  # one time embedding per period
    period_names: list | None = None  # one name per period, oldest first; None = "0", "1", ...
    time_attention: str = "faithful"  # faithful | modulated | scaled | none (module docstring)
    time_residual: bool = True  # faithful: the time term enters through a per-head gate that starts at 0
    time_norm: str = "all_heads"  # faithful: ‖T‖ over every head's T together ("all_heads", this library's
    # default, which its recorded numbers use) or each head's own T_h ("per_head", the paper's eq. 2 per head)
    period_scales: list | None = None  # scaled: one fixed factor per period (baselines.period_scales)
    time_tokens: list | None = None  # time-token baseline: the period tokens added to the vocabulary

    def __post_init__(self, **kwargs):
        if self.time_attention not in TIME_ATTENTION_FORMS:
            raise ValueError(f"time_attention={self.time_attention!r} is not one of {TIME_ATTENTION_FORMS}; "
                             "pick 'faithful' (paper) or 'modulated' (full-rank).")
        if self.time_norm not in TIME_NORMS:
            raise ValueError(f"time_norm={self.time_norm!r} is not one of {TIME_NORMS}; 'all_heads' (‖T‖ over "
                             "every head, the default) or 'per_head' (each head's own ‖T_h‖, the paper's).")
        if int(self.num_periods) < 1:
            raise ValueError(f"num_periods={self.num_periods} must be >= 1 (one time embedding per period).")
        if self.period_names is not None and len(self.period_names) != self.num_periods:
            raise ValueError(f"period_names has {len(self.period_names)} names but num_periods={self.num_periods}; "
                             "give one name per period, oldest first.")
        if self.time_attention == "scaled" and (self.period_scales is None
                                                or len(self.period_scales) != self.num_periods):
            raise ValueError("time_attention='scaled' needs period_scales with one factor per period "
                             "(see semantic_change.baselines.period_scales).")
        self.num_periods = int(self.num_periods)
        self.period_names = ([str(i) for i in range(self.num_periods)] if self.period_names is None
                             else list(self.period_names))
        self.period_scales = list(self.period_scales) if self.period_scales is not None else None
        super().__post_init__(**kwargs)

    # time-id layout: periods, then pad, then mask
    @property
    def pad_time_id(self) -> int:
        return self.num_periods

    @property
    def mask_time_id(self) -> int:
        return self.num_periods + 1

    @property
    def num_time_ids(self) -> int:
        return self.num_periods + 2


# ---------------------------------------------------------------------------------------------
# one attention layer conditioned on time
# ---------------------------------------------------------------------------------------------
class TimeSelfAttention(nn.Module):
    """Multi-head self-attention with a per-layer time projection W_T."""

    def __init__(self, config: TemporalAttentionConfig):
        super().__init__()
        D, H = config.hidden_size, config.num_attention_heads
        if D % H:
            raise ValueError(f"hidden_size={D} is not a multiple of num_attention_heads={H}.")
        self.H, self.d, self.form = H, D // H, config.time_attention
        self.residual, self.dropout = config.time_residual, config.attention_probs_dropout_prob
        self.per_head_norm = getattr(config, "time_norm", "all_heads") == "per_head"
        self.query, self.key, self.value = nn.Linear(D, D), nn.Linear(D, D), nn.Linear(D, D)
        if self.form in ("faithful", "modulated"):
            self.time = nn.Linear(D, D, bias=False)            # W_T, all heads side by side
            self.time.time_form = self.form                    # how _init_weights starts it
        if self.form == "faithful":
            self.time_gate = nn.Parameter(torch.zeros(H))     # g_h: 0 => exactly the pretrained layer

    def _split(self, x):  # [B,n,D] -> [B,H,n,d]
        B, n, _ = x.shape
        return x.view(B, n, self.H, self.d).transpose(1, 2)

    def time_qk(self, x, time, key_mask, scale):
        """Queries and keys after time conditioning (shared by forward and the explicit scores).

        ``time = (ids [B,n], table [K,D])``: per-token time ids and the time-embedding table. W_T is
        applied to the K = P+2 table rows once (not to every token), then gathered: exact, and it
        keeps the time overhead negligible. For the faithful form ``Σ_a t_aᵀ t_a = Σ_k c_k τ_kᵀ τ_k``
        with c_k the example's count of real tokens at time id k.
        """
        q, k = self._split(self.query(x)), self._split(self.key(x))
        if self.form in ("faithful", "modulated"):
            ids, table = time
            tau = self.time(table)                                             # [K, D]
        if self.form == "faithful":
            K = tau.shape[0]
            counts = (F.one_hot(ids, K).to(q.dtype) * key_mask[..., None]).sum(1)   # [B, K]; pads excluded
            tau_h = tau.view(K, self.H, self.d)
            M = torch.einsum("bk,khd,khe->bhde", counts, tau_h, tau_h)         # [B,H,d,d] = TᵀT per example
            if self.per_head_norm:                                             # ‖T_h‖_F per example and head
                norm = torch.einsum("bk,kh->bh", counts, tau_h.pow(2).sum(-1)).sqrt().clamp_min(1e-6)
                norm = norm[:, :, None, None]
            else:                                                              # ‖T‖_F over all heads
                norm = (counts @ tau.pow(2).sum(-1)).sqrt().clamp_min(1e-6)[:, None, None, None]
            qt = (q @ M) / norm
            q = q + self.time_gate[None, :, None, None] * qt if self.residual else qt
        elif self.form == "modulated":
            u = self._split(tau[ids])
            q, k = q * (1.0 + u), k * (1.0 + u)
        elif self.form == "scaled":
            q = q * scale[:, None, :, None]                                    # s(t_i) per query token
        return q, k

    def forward(self, x, time, key_mask, attn_bias, scale=None):
        q, k = self.time_qk(x, time, key_mask, scale)
        v = self._split(self.value(x))
        p = self.dropout if self.training else 0.0
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_bias, dropout_p=p)
        return out.transpose(1, 2).reshape(x.shape)

    def scores(self, x, time, key_mask, scale=None):
        """Explicit pre-softmax scores [B,H,n,n] (O(n²); for tests and figures only)."""
        q, k = self.time_qk(x, time, key_mask, scale)
        return (q @ k.transpose(-1, -2)) / math.sqrt(self.d)


class TemporalLayer(nn.Module):
    """Post-LN transformer block, BERT layout: attention -> add&norm -> FFN -> add&norm."""

    def __init__(self, config: TemporalAttentionConfig):
        super().__init__()
        D, eps = config.hidden_size, config.layer_norm_eps
        self.attention = TimeSelfAttention(config)
        self.attn_out, self.attn_norm = nn.Linear(D, D), nn.LayerNorm(D, eps=eps)
        self.ffn_in, self.ffn_out = nn.Linear(D, config.intermediate_size), nn.Linear(config.intermediate_size, D)
        self.ffn_norm, self.act = nn.LayerNorm(D, eps=eps), ACT2FN[config.hidden_act]
        self.drop = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, x, time, key_mask, attn_bias, scale=None):
        a = self.attention(x, time, key_mask, attn_bias, scale)
        x = self.attn_norm(x + self.drop(self.attn_out(a)))
        return self.ffn_norm(x + self.drop(self.ffn_out(self.act(self.ffn_in(x)))))


# ---------------------------------------------------------------------------------------------
# models
# ---------------------------------------------------------------------------------------------
class TemporalAttentionPreTrainedModel(PreTrainedModel):
    config_class = TemporalAttentionConfig
    base_model_prefix = "temporal"
    _no_split_modules = ["TemporalLayer"]

    @torch.no_grad()
    def _init_weights(self, module):
        super()._init_weights(module)
        std = self.config.initializer_range
        # W_T is initialised on its own Linear: transformers skips the init of a module without
        # parameters of its own, and the modulated form's attention module has none.
        form = getattr(module, "time_form", None)
        if form == "modulated":                  # W_T = 0 => u = 0 => exactly the pretrained layer
            module.weight.zero_()
        elif form == "faithful":                 # random W_T; the gate g_h = 0 => the pretrained layer
            module.weight.normal_(0.0, std)
        elif isinstance(module, TimeSelfAttention) and hasattr(module, "time_gate"):
            module.time_gate.zero_()
        elif isinstance(module, MLMHead):
            module.bias.zero_()


class TemporalAttentionModel(TemporalAttentionPreTrainedModel):
    """Embeddings + time embeddings + temporal layers; returns every hidden state."""

    def __init__(self, config: TemporalAttentionConfig):
        super().__init__(config)
        D = config.hidden_size
        self.word_embeddings = nn.Embedding(config.vocab_size, D, padding_idx=config.pad_token_id)
        self.position_embeddings = nn.Embedding(config.max_position_embeddings, D)
        self.token_type_embeddings = nn.Embedding(config.type_vocab_size, D) if config.type_vocab_size else None
        self.embed_norm = nn.LayerNorm(D, eps=config.layer_norm_eps)
        self.embed_drop = nn.Dropout(config.hidden_dropout_prob)
        if config.time_attention in ("faithful", "modulated"):
            self.time_embeddings = nn.Embedding(config.num_time_ids, D)  # x^t: periods, pad, mask
        self.register_buffer("period_scales", torch.tensor(config.period_scales or [1.0] * config.num_periods,
                                                           dtype=torch.float32), persistent=False)
        self.layers = nn.ModuleList(TemporalLayer(config) for _ in range(config.num_hidden_layers))
        self.post_init()

    def get_input_embeddings(self):
        return self.word_embeddings

    def set_input_embeddings(self, value):
        self.word_embeddings = value

    def time_ids(self, input_ids, attention_mask, time):
        """Per-token time ids: the period (time [B] or [B,n]), pad id on padding, mask id on [MASK]."""
        P = self.config.num_periods
        if time is None:
            raise ValueError("time is required: one period index (0..P-1) per example, e.g. "
                             "torch.tensor([0, 1]); periods are listed in config.period_names.")
        time = torch.as_tensor(time, device=input_ids.device).long()
        if time.dim() == 1:
            if time.shape[0] != input_ids.shape[0]:
                raise ValueError(f"time has {time.shape[0]} entries for a batch of {input_ids.shape[0]} "
                                 "examples; give one period index per example.")
            time = time[:, None].expand_as(input_ids)
        if time.shape != input_ids.shape:
            raise ValueError(f"time has shape {tuple(time.shape)}; expected [B] or [B, n] = {tuple(input_ids.shape)}.")
        if bool(((time < 0) | (time >= P)).any()):
            raise ValueError(f"time holds period indices outside 0..{P - 1} (config.num_periods={P}); "
                             "map period labels with config.period_names.")
        ids = time.clone()
        if self.config.mask_token_id is not None:
            ids = ids.masked_fill(input_ids == self.config.mask_token_id, self.config.mask_time_id)
        return ids.masked_fill(~attention_mask.bool(), self.config.pad_time_id), time

    def embed(self, input_ids, token_type_ids=None):
        n = input_ids.shape[1]
        if n + self.config.position_offset > self.config.max_position_embeddings:
            raise ValueError(f"sequence of {n} tokens exceeds max_position_embeddings="
                             f"{self.config.max_position_embeddings}; truncate or window the input.")
        pos = torch.arange(n, device=input_ids.device) + self.config.position_offset
        h = self.word_embeddings(input_ids) + self.position_embeddings(pos)[None]
        if self.token_type_embeddings is not None:
            tt = token_type_ids if token_type_ids is not None else torch.zeros_like(input_ids)
            h = h + self.token_type_embeddings(tt)
        return self.embed_drop(self.embed_norm(h))

    def forward(self, input_ids, attention_mask=None, token_type_ids=None, time=None,
                output_hidden_states=True):
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        key_mask = attention_mask.to(self.word_embeddings.weight.dtype)
        # additive bias [B,1,1,n]: 0 on real keys, -inf-ish on padding (rows never fully masked: [CLS] is
        # real); None when nothing is padded (length-bucketed batches), which lets SDPA skip the mask
        attn_bias = None if bool(attention_mask.all()) else \
            (1.0 - key_mask)[:, None, None, :] * torch.finfo(key_mask.dtype).min
        tctx, scale = None, None
        if self.config.time_attention in ("faithful", "modulated"):
            ids, _ = self.time_ids(input_ids, attention_mask, time)
            tctx = (ids, self.time_embeddings.weight)
        elif self.config.time_attention == "scaled":
            _, period = self.time_ids(input_ids, attention_mask, time)
            scale = self.period_scales[period]
        h = self.embed(input_ids, token_type_ids)
        hidden = [h]
        for layer in self.layers:
            h = layer(h, tctx, key_mask, attn_bias, scale)
            hidden.append(h)
        return {"last_hidden_state": h, "hidden_states": tuple(hidden) if output_hidden_states else None}

    @torch.no_grad()
    def attention_scores(self, layer, input_ids, attention_mask=None, time=None):
        """Pre-softmax scores [B,H,n,n] of one layer (explicit, for inspection)."""
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        hs = self.forward(input_ids, attention_mask, time=time)["hidden_states"]
        key_mask = attention_mask.to(hs[0].dtype)
        tctx, scale = None, None
        if self.config.time_attention in ("faithful", "modulated"):
            tctx = (self.time_ids(input_ids, attention_mask, time)[0], self.time_embeddings.weight)
        elif self.config.time_attention == "scaled":
            scale = self.period_scales[self.time_ids(input_ids, attention_mask, time)[1]]
        return self.layers[layer].attention.scores(hs[layer], tctx, key_mask, scale)


class MLMHead(nn.Module):
    """BERT MLM head: dense -> act -> LayerNorm -> (tied) decoder + bias."""

    def __init__(self, config):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)
        self.act = ACT2FN[config.hidden_act]
        self.norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.bias = nn.Parameter(torch.zeros(config.vocab_size))

    def forward(self, h, decoder_weight):
        return F.linear(self.norm(self.act(self.dense(h))), decoder_weight, self.bias)


class TemporalAttentionForMaskedLM(TemporalAttentionPreTrainedModel):
    """Temporal-attention encoder + MLM head. ``labels`` use -100 for ignored positions."""

    def __init__(self, config: TemporalAttentionConfig):
        super().__init__(config)
        self.temporal = TemporalAttentionModel(config)
        self.head = MLMHead(config)
        self.post_init()

    def get_input_embeddings(self):
        return self.temporal.word_embeddings

    def forward(self, input_ids, attention_mask=None, token_type_ids=None, time=None, labels=None,
                output_hidden_states=False):
        out = self.temporal(input_ids, attention_mask, token_type_ids, time, output_hidden_states)
        h, W = out["last_hidden_state"], self.temporal.word_embeddings.weight
        if labels is None:
            return MaskedLMOutput(logits=self.head(h, W), hidden_states=out["hidden_states"])
        sel = labels != -100                          # decoder only where there is something to predict
        logits = self.head(h[sel], W)
        loss = F.cross_entropy(logits.float(), labels[sel]) if sel.any() else h.sum() * 0.0
        return MaskedLMOutput(loss=loss, logits=logits, hidden_states=out["hidden_states"])

    # ---- vocabulary growth (add target words as whole tokens) ----
    @torch.no_grad()
    def grow_vocab(self, init_pieces: list[list[int]], new_ids: list[int] | None = None):
        """Give new tokens embedding rows, each initialised to the mean of its old subword pieces.

        ``new_ids``: the tokenizer's ids of the new tokens (default: appended after the last row).
        A padded vocabulary (more embedding rows than tokenizer entries) gives new tokens ids below
        the embedding size: those rows are overwritten in place, and the matrix grows only as far as
        the largest id needs.
        """
        old = self.temporal.word_embeddings
        n_old = old.num_embeddings
        ids = list(range(n_old, n_old + len(init_pieces))) if new_ids is None else [int(i) for i in new_ids]
        if len(ids) != len(init_pieces) or len(set(ids)) != len(ids) or min(ids, default=0) < 0:
            raise ValueError(f"new_ids {ids} must give one distinct id per new token ({len(init_pieces)}).")
        size = max(n_old, max(ids, default=-1) + 1)
        emb = nn.Embedding(size, old.embedding_dim, padding_idx=old.padding_idx)
        emb.to(old.weight.device, old.weight.dtype)
        emb.weight[:n_old] = old.weight
        bias = torch.zeros(size, device=old.weight.device, dtype=self.head.bias.dtype)
        bias[:n_old] = self.head.bias
        for i, pieces in zip(ids, init_pieces):
            if not pieces:
                raise ValueError(f"new token id {i} has no subword pieces to initialise from.")
            emb.weight[i] = old.weight[pieces].mean(0)
            bias[i] = self.head.bias[pieces].mean()
        self.temporal.word_embeddings = emb
        self.head.bias = nn.Parameter(bias)
        self.config.vocab_size = emb.num_embeddings
        return self

    # ---- conversion from a pretrained encoder ----
    @classmethod
    def from_hf(cls, hf_model, head_state: dict | None = None, *, num_periods=2, period_names=None,
                time_attention="faithful", time_residual=True, period_scales=None, mask_token_id=None,
                seed=0, time_norm="all_heads"):
        """Build from a loaded HF encoder (``AutoModel`` or ``AutoModelFor*``), copying every weight."""
        src_cfg = hf_model.config
        cfg = config_from_hf(src_cfg, num_periods=num_periods, period_names=period_names,
                             time_attention=time_attention, time_residual=time_residual,
                             period_scales=period_scales, mask_token_id=mask_token_id, time_norm=time_norm)
        state = dict(hf_model.state_dict())
        if head_state:
            state.update(head_state)
        mapped, has_head = convert_state_dict(state, cfg.source_model_type, cfg.num_hidden_layers)
        cfg.head_from_checkpoint = has_head
        torch.manual_seed(seed)                       # time params and a missing head: seeded init
        model = cls(cfg)
        missing, unexpected = model.load_state_dict(mapped, strict=False)
        allowed = {"time_embeddings", ".time.", "time_gate", "head."}
        bad = [k for k in missing if not any(a in k for a in allowed)]
        if bad or unexpected:
            raise ValueError(f"could not map {cfg.source_model_type} weights: missing {bad[:5]}, "
                             f"unexpected {list(unexpected)[:5]}. Report this checkpoint layout.")
        return model

    @classmethod
    def from_pretrained_encoder(cls, name="default", **time_kw):
        """Load an encoder ("default" = embedded MiniLM, HF name, or path) and convert it.

        Returns ``(model, tokenizer)``. The MLM head is copied when the checkpoint has one;
        otherwise (MiniLM) it starts fresh and ``config.head_from_checkpoint`` is False.
        """
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            hf, tok = load_encoder(name, head="mlm")
        fresh_head = any("no pretrained MLM head" in str(w.message) for w in caught)
        if fresh_head:   # drop the randomly initialised HF head: ours is seeded and flagged
            hf_state = {k: v for k, v in hf.state_dict().items() if not k.startswith(("cls.", "lm_head.",
                                                                                        "vocab_", "generator_"))}
            body = _StateOnly(hf.config, hf_state)
            model = cls.from_hf(body, mask_token_id=tok.mask_token_id, **time_kw)
        else:
            model = cls.from_hf(hf, mask_token_id=tok.mask_token_id, **time_kw)
        model.config.source_name = str(name)
        return model, tok


class _StateOnly:
    """A stand-in with ``.config`` and ``.state_dict()`` for ``from_hf``."""

    def __init__(self, config, state):
        self.config, self._state = config, state

    def state_dict(self):
        return self._state


def config_from_hf(src_cfg, **time_kw) -> TemporalAttentionConfig:
    """Copy the encoder's shape from an HF config."""
    mt = getattr(src_cfg, "model_type", "bert")
    if mt not in _BERT_LAYOUT + ("distilbert",):
        raise ValueError(f"model_type={mt!r} is not BERT-like; supported: {_BERT_LAYOUT + ('distilbert',)}.")
    if mt == "distilbert":
        shape = dict(hidden_size=src_cfg.dim, num_hidden_layers=src_cfg.n_layers,
                     num_attention_heads=src_cfg.n_heads, intermediate_size=src_cfg.hidden_dim,
                     hidden_act=src_cfg.activation, hidden_dropout_prob=src_cfg.dropout,
                     attention_probs_dropout_prob=src_cfg.attention_dropout, type_vocab_size=0,
                     layer_norm_eps=1e-12, position_offset=0)
    else:
        if getattr(src_cfg, "embedding_size", src_cfg.hidden_size) != src_cfg.hidden_size:
            raise ValueError(f"{mt} with embedding_size != hidden_size is not supported.")
        shape = dict(hidden_size=src_cfg.hidden_size, num_hidden_layers=src_cfg.num_hidden_layers,
                     num_attention_heads=src_cfg.num_attention_heads,
                     intermediate_size=src_cfg.intermediate_size, hidden_act=src_cfg.hidden_act,
                     hidden_dropout_prob=src_cfg.hidden_dropout_prob,
                     attention_probs_dropout_prob=src_cfg.attention_probs_dropout_prob,
                     type_vocab_size=src_cfg.type_vocab_size, layer_norm_eps=src_cfg.layer_norm_eps,
                     position_offset=(src_cfg.pad_token_id + 1) if mt != "bert" and mt != "electra" else 0)
    return TemporalAttentionConfig(vocab_size=src_cfg.vocab_size, max_position_embeddings=src_cfg.max_position_embeddings,
                                   pad_token_id=src_cfg.pad_token_id or 0, initializer_range=getattr(src_cfg, "initializer_range", 0.02),
                                   source_model_type=mt, **shape, **time_kw)


def _bert_names(i):
    s = f"encoder.layer.{i}."
    return {s + "attention.self.query": "attention.query", s + "attention.self.key": "attention.key",
            s + "attention.self.value": "attention.value", s + "attention.output.dense": "attn_out",
            s + "attention.output.LayerNorm": "attn_norm", s + "intermediate.dense": "ffn_in",
            s + "output.dense": "ffn_out", s + "output.LayerNorm": "ffn_norm"}


def _distil_names(i):
    s = f"transformer.layer.{i}."
    return {s + "attention.q_lin": "attention.query", s + "attention.k_lin": "attention.key",
            s + "attention.v_lin": "attention.value", s + "attention.out_lin": "attn_out",
            s + "sa_layer_norm": "attn_norm", s + "ffn.lin1": "ffn_in", s + "ffn.lin2": "ffn_out",
            s + "output_layer_norm": "ffn_norm"}


def convert_state_dict(state: dict, model_type: str, num_layers: int) -> tuple[dict, bool]:
    """Map an HF BERT-like state dict onto our parameter names. Returns (state, has_mlm_head)."""
    # strip the body prefix ("bert.", "roberta.", "distilbert.", "electra.") so bare and headed models match
    body = {}
    for k, v in state.items():
        for p in ("bert.", "roberta.", "distilbert.", "electra.", "model."):
            if k.startswith(p):
                k = k[len(p):]
                break
        body[k] = v
    out = {}
    emb = {"embeddings.word_embeddings": "temporal.word_embeddings",
           "embeddings.position_embeddings": "temporal.position_embeddings",
           "embeddings.token_type_embeddings": "temporal.token_type_embeddings",
           "embeddings.LayerNorm": "temporal.embed_norm"}
    names = dict(emb)
    for i in range(num_layers):
        per = _distil_names(i) if model_type == "distilbert" else _bert_names(i)
        names.update({k: f"temporal.layers.{i}.{v}" for k, v in per.items()})
    head_names = {"cls.predictions.transform.dense": "head.dense", "cls.predictions.transform.LayerNorm": "head.norm",
                  "lm_head.dense": "head.dense", "lm_head.layer_norm": "head.norm",
                  "vocab_transform": "head.dense", "vocab_layer_norm": "head.norm",
                  "generator_predictions.dense": "head.dense", "generator_predictions.LayerNorm": "head.norm"}
    names.update(head_names)
    for k, v in body.items():
        stem, _, leaf = k.rpartition(".")
        if stem in names:
            out[f"{names[stem]}.{leaf}"] = v
        elif k in ("cls.predictions.bias", "lm_head.bias", "vocab_projector.bias", "generator_lm_head.bias"):
            out["head.bias"] = v
    has_head = all(k in out for k in ("head.dense.weight", "head.norm.weight", "head.bias"))
    return out, has_head


AutoConfig.register(TemporalAttentionConfig.model_type, TemporalAttentionConfig, exist_ok=True)
