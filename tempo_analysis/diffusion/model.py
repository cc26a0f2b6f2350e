"""Dynamic contextualized word embeddings (DCWE; Hofmann, Pierrehumbert & Schütze, ACL 2021).

A word's input embedding is moved by an offset that depends on *when* and *by which social unit*
the text was written, then a pretrained BERT-like encoder contextualises it:

    e'  = e + o                                   (only for the dynamic content vocabulary)
    o   = FFN_t([e ; s_{u,t}])                    one FFN per time slice t
    s_t = tanh(GAT_t2(tanh(GAT_t1(x, G)), G))     one 2-layer GAT per slice over node2vec vectors x

Training adds two Gaussian priors on the offsets to the task loss (MLM or classification):
    anchoring    lambda_a * mean ||o_t||^2
    random walk  lambda_w * mean ||o_t - o_{t-1}||^2        (lambda_a = 1e-3 * lambda_w by default)
Both means run over *offset positions only* (real tokens of the dynamic vocabulary), never over
padding, [MASK] or other tokens (the reference code averaged over all positions, diluting them).

Efficiency: each slice's GAT runs once per batch over the whole (small) unit graph, for the
slices the batch needs (its slices and their predecessors); every example then gathers its unit's
row. The reference code ran the full-graph GAT twice per example.

Start state: the FFNs' output layers are zero-initialised, so before training every offset is
exactly 0 and the model computes exactly what the plain encoder computes (see the tests).

Ablations (paper §5.2, appendix A.3):
- ``ablation="sa"`` (social ablation): time-specific two-layer FFNs on word identity only,
  o = FFN_t(e); the random-walk prior is kept.
- ``ablation="ta"`` (temporal ablation): ONE social component, one GAT and one FFN, for all slices,
  o = FFN([e ; s_u]); offsets cannot change over time, so the random-walk prior is identically 0
  (it is not computed).
Dropout as in the reference code: 0.2 inside the offset FFNs, 0.6 in the GAT layers.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS
from transformers import AutoConfig, AutoModel, AutoModelForMaskedLM, PreTrainedConfig, PreTrainedModel
from transformers.modeling_outputs import ModelOutput

from tempo_analysis.encoders import load_encoder, quiet_transformers

ABLATIONS = ("dcwe", "sa", "ta")


# ----------------------------------------------------------------------------------------------
# config
# ----------------------------------------------------------------------------------------------

def check_edge_index(edge_index, num_units: int) -> torch.Tensor:
    """``edge_index`` as a [2, E] long tensor of unit indices in 0..num_units-1, or a clear error.

    A list of (source, target) pairs ([E, 2]) is refused rather than reshaped into another graph."""
    ei = torch.as_tensor(edge_index, dtype=torch.long)
    if ei.numel() == 0:
        return ei.reshape(2, 0)
    if ei.ndim != 2 or ei.shape[0] != 2:
        raise ValueError(f"edge_index has shape {tuple(ei.shape)}: pass a [2, E] array (row 0 sources, row 1 "
                         "targets). Fix: for a list of (source, target) pairs, pass its transpose.")
    bad = sorted({int(v) for v in ei[(ei < 0) | (ei >= num_units)].tolist()})
    if bad:
        raise ValueError(f"edge_index names units {bad[:5]} but there are {num_units} units (indices "
                         f"0..{num_units - 1}). Fix: index edges by the units' rows in node_features.")
    return ei

class DCWEConfig(PreTrainedConfig):
    """Everything needed to rebuild a DCWE model: the encoder's config, the graph sizes, the priors.

    ``lambda_a=None`` means ``1e-3 * lambda_w`` (the paper's ratio); ``units=None`` labels the
    units "0".."num_units-1" and ``slices=None`` labels the slices 0..num_slices-1.
    """

    model_type = "dcwe"

    encoder: dict | None = None             # the wrapped encoder's own config as a dict (model_type inside)
    encoder_name: str | None = None         # where the pretrained weights came from (provenance)
    num_units: int = 1                      # nodes of the social graph
    num_slices: int = 1                     # time slices (one offset FFN and one GAT each)
    num_edges: int = 0                      # directed edges in edge_index (both directions of an undirected graph)
    node_dim: int = 50                      # node2vec vector size
    social_dim: int = 50                    # GAT output size (s_{u,t})
    gat_heads: int = 4                      # attention heads per GAT layer (averaged, not concatenated)
    gat_dropout: float = 0.6
    offset_dropout: float = 0.2             # dropout inside the offset FFNs (reference code: 0.2)
    lambda_w: float = 100.0                 # random-walk prior weight
    lambda_a: float | None = None           # anchoring prior weight; None = 1e-3 * lambda_w
    ablation: str = "dcwe"                  # "dcwe" | "sa" (no social input) | "ta" (one GAT + FFN, no time)
    units: list | None = None               # unit labels in model order; None = "0".."num_units-1"
    slices: list | None = None              # slice labels in time order; None = 0..num_slices-1
    dynamic_vocab_size: int = 0             # how many token ids receive offsets (informational)
    classifier_dropout: float = 0.1         # DCWEForSequenceClassification's head

    def __post_init__(self, **kwargs):
        if self.ablation not in ABLATIONS:
            raise ValueError(f"DCWEConfig.ablation={self.ablation!r}: use one of {ABLATIONS} "
                             "('sa' = no social input, 'ta' = one social component, GAT + FFN, for all slices).")
        if self.num_slices < 1 or self.num_units < 1:
            raise ValueError(f"DCWEConfig: num_slices={self.num_slices}, num_units={self.num_units}; "
                             "both must be >= 1.")
        self.encoder = dict(self.encoder or {})
        self.num_units, self.num_slices, self.num_edges = int(self.num_units), int(self.num_slices), int(self.num_edges)
        self.node_dim, self.social_dim, self.gat_heads = int(self.node_dim), int(self.social_dim), int(self.gat_heads)
        self.gat_dropout, self.offset_dropout = float(self.gat_dropout), float(self.offset_dropout)
        # paper (Table 6): lambda_a = 1e-1 tuned; lambda_a = 1e-3 * lambda_w fixes lambda_w = 100
        self.lambda_w = float(self.lambda_w)
        self.lambda_a = float(self.lambda_a) if self.lambda_a is not None else 1e-3 * self.lambda_w
        self.units = ([str(u) for u in self.units] if self.units is not None
                      else [str(i) for i in range(self.num_units)])
        self.slices = list(self.slices) if self.slices is not None else list(range(self.num_slices))
        if len(self.units) != self.num_units or len(self.slices) != self.num_slices:
            raise ValueError(f"DCWEConfig: {len(self.units)} unit labels for num_units={self.num_units} and "
                             f"{len(self.slices)} slice labels for num_slices={self.num_slices}; give one label each.")
        self.dynamic_vocab_size = int(self.dynamic_vocab_size)
        self.classifier_dropout = float(self.classifier_dropout)
        super().__post_init__(**kwargs)

    def encoder_config(self):
        """The wrapped encoder's transformers config object."""
        if not self.encoder or "model_type" not in self.encoder:
            raise ValueError("DCWEConfig.encoder is empty: build the model with DCWE*.from_encoder(...).")
        enc = dict(self.encoder)
        return AutoConfig.for_model(enc.pop("model_type"), **enc)


# ----------------------------------------------------------------------------------------------
# the dynamic component
# ----------------------------------------------------------------------------------------------
class SocialComponent(nn.Module):
    """s = tanh(GAT2(tanh(GAT1(x)))): 2 GAT layers, heads averaged (not concatenated), as in the paper."""

    def __init__(self, node_dim: int, social_dim: int, heads: int, dropout: float):
        super().__init__()
        from torch_geometric.nn import GATConv  # local: importing torch_geometric costs seconds at start-up

        self.gat1 = GATConv(node_dim, social_dim, heads=heads, concat=False, dropout=dropout)
        self.gat2 = GATConv(social_dim, social_dim, heads=heads, concat=False, dropout=dropout)

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.gat2(torch.tanh(self.gat1(x, edge_index)), edge_index))


class OffsetFFN(nn.Module):
    """o = W2 dropout(tanh(W1 [e ; s])): W2 starts at zero so every offset starts at exactly 0."""

    def __init__(self, hidden: int, social_dim: int, dropout: float):
        super().__init__()
        self.fc1 = nn.Linear(hidden + social_dim, hidden)
        self.drop = nn.Dropout(dropout)
        self.fc2 = nn.Linear(hidden, hidden)
        nn.init.zeros_(self.fc2.weight)
        nn.init.zeros_(self.fc2.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.drop(torch.tanh(self.fc1(x))))


class DynamicComponent(nn.Module):
    """Offsets o_{u,t}(word) for the dynamic vocabulary, plus their two priors."""

    def __init__(self, config: DCWEConfig, hidden: int, vocab_size: int):
        super().__init__()
        self.config = config
        T, social = config.num_slices, config.ablation != "sa"
        self.timeless = config.ablation == "ta"      # TA: one GAT and one FFN for every slice
        n_social = 0 if not social else (1 if self.timeless else T)
        self.social = nn.ModuleList(SocialComponent(config.node_dim, config.social_dim, config.gat_heads,
                                                    config.gat_dropout) for _ in range(n_social))
        s_dim = config.social_dim if social else 0
        self.ffns = nn.ModuleList(OffsetFFN(hidden, s_dim, config.offset_dropout)
                                  for _ in range(1 if self.timeless else T))
        # fixed inputs, saved with the weights: node2vec vectors, graph edges, dynamic-vocabulary mask
        self.register_buffer("node_features", torch.zeros(config.num_units, config.node_dim))
        self.register_buffer("edge_index", torch.zeros(2, config.num_edges, dtype=torch.long))
        self.register_buffer("dynamic_mask", torch.zeros(vocab_size, dtype=torch.bool))
        self.gnn_calls = 0            # how many full-graph GAT passes ran (benchmarks and tests read it)
        self.training_priors = True   # False skips the o_{t-1} pass (inference / analysis)

    def social_table(self, t: int) -> torch.Tensor:
        """[U, social_dim] social embeddings of every unit at slice t (one full-graph GAT pass)."""
        self.gnn_calls += 1
        gat = self.social[0 if self.timeless else t]
        return gat(self.node_features, self.edge_index)

    def social_lookup(self, t: int, units: torch.Tensor, examples: torch.Tensor, cache: dict) -> torch.Tensor:
        """Rows of s_t for `units`: the slice's GAT runs ONCE per batch (cached), then rows are gathered.

        `examples` (batch index of each row) is unused here; the reference-design benchmark overrides
        this method to run the GAT once per example instead.
        """
        key = 0 if self.timeless else t   # TA: one social component for all slices
        if key not in cache:
            cache[key] = self.social_table(t)
        return cache[key][units]

    def offset(self, t: int, e: torch.Tensor, s: Optional[torch.Tensor]) -> torch.Tensor:
        """FFN_t([e ; s]) (FFN_t(e) under social ablation; the one FFN([e ; s]) under temporal ablation)."""
        return self.ffns[0 if self.timeless else t](e if s is None else torch.cat([e, s], dim=-1))

    def forward(self, embeds: torch.Tensor, input_ids: torch.Tensor, attention_mask: Optional[torch.Tensor],
                unit_ids: torch.Tensor, slice_ids: torch.Tensor):
        """Return (embeds + offsets, offsets at offset positions [P, H], prior_a, prior_w, positions mask)."""
        pos = self.dynamic_mask[input_ids]
        if attention_mask is not None:
            pos = pos & attention_mask.bool()
        b_idx, l_idx = pos.nonzero(as_tuple=True)
        zero = embeds.new_zeros(())
        if b_idx.numel() == 0:
            return embeds, embeds.new_zeros(0, embeds.shape[-1]), zero, zero, pos
        e_p = embeds[b_idx, l_idx]                               # [P, H] static embeddings at offset positions
        t_p, u_p = slice_ids[b_idx], unit_ids[b_idx]             # [P] slice / unit of each position
        social = self.config.ablation != "sa"
        cache: dict = {}                                         # slice -> [U, S], filled once per batch
        o_p, o_prev = torch.zeros_like(e_p), torch.zeros_like(e_p)
        has_prev = torch.zeros_like(t_p, dtype=torch.bool)
        # TA: offsets do not depend on time, one pass for all positions, and o_t == o_{t-1}
        groups = [0] if self.timeless else sorted(set(t_p.tolist()))
        for t in groups:                                         # one FFN call per slice present
            sel = (torch.arange(len(t_p), device=t_p.device) if self.timeless
                   else (t_p == t).nonzero(as_tuple=True)[0])
            s_t = self.social_lookup(t, u_p[sel], b_idx[sel], cache) if social else None
            o_p = o_p.index_put((sel,), self.offset(t, e_p[sel], s_t))
            if t > 0 and self.training_priors and not self.timeless:   # o_{t-1}(same word, same unit): walk prior
                s_prev = self.social_lookup(t - 1, u_p[sel], b_idx[sel], cache) if social else None
                o_prev = o_prev.index_put((sel,), self.offset(t - 1, e_p[sel], s_prev))
                has_prev[sel] = True
        # priors: means over offset positions only (slice 0 has no predecessor: walk prior skips it)
        prior_a = self.config.lambda_a * o_p.pow(2).sum(-1).mean()
        prior_w = (self.config.lambda_w * (o_p[has_prev] - o_prev[has_prev]).pow(2).sum(-1).mean()
                   if bool(has_prev.any()) else zero)
        out = embeds.index_put((b_idx, l_idx), e_p + o_p)
        return out, o_p, prior_a, prior_w, pos


# ----------------------------------------------------------------------------------------------
# outputs
# ----------------------------------------------------------------------------------------------
@dataclass
class DCWEOutput(ModelOutput):
    """Task loss + priors, and the pieces (task loss and each prior) for logging."""

    loss: Optional[torch.Tensor] = None
    logits: Optional[torch.Tensor] = None
    task_loss: Optional[torch.Tensor] = None
    prior_a: Optional[torch.Tensor] = None
    prior_w: Optional[torch.Tensor] = None
    hidden_states: Optional[tuple] = None
    offsets: Optional[torch.Tensor] = None
    offset_positions: Optional[torch.Tensor] = None


# ----------------------------------------------------------------------------------------------
# models
# ----------------------------------------------------------------------------------------------
class DCWEPreTrainedModel(PreTrainedModel):
    """Shared plumbing: build around an encoder, graph/vocabulary setters, label lookups."""

    config_class = DCWEConfig
    base_model_prefix = "dcwe"
    _head = None  # "mlm" or None: which encoder class the subclass wraps

    def _init_weights(self, module):
        """Nothing to do: the encoder initialises itself, our layers initialise in their constructors."""

    def _build(self, config: DCWEConfig, encoder=None):
        if encoder is None:
            cls = AutoModelForMaskedLM if self._head == "mlm" else AutoModel
            encoder = cls.from_config(config.encoder_config())
        self.encoder = encoder
        emb = encoder.get_input_embeddings()
        self.dynamic = DynamicComponent(config, emb.embedding_dim, emb.num_embeddings)

    # -- construction from a pretrained encoder ------------------------------------------------
    @classmethod
    def from_encoder(cls, encoder="default", *, node_features, edge_index, dynamic_token_ids, units=None,
                     slices=None, num_slices=None, **config_kwargs):
        """Wrap a pretrained encoder (name/path, or a transformers model instance) keeping its weights.

        node_features: [num_units, node_dim] node2vec vectors (row i = unit i);
        edge_index: [2, E] long tensor of unit indices (both directions for an undirected graph);
        dynamic_token_ids: token ids that receive offsets (see ``content_vocabulary``).
        """
        name = None
        if isinstance(encoder, str):
            name = encoder
            with quiet_transformers():
                encoder, _ = load_encoder(encoder, head=cls._head)
        x = torch.as_tensor(node_features, dtype=torch.float32)
        ei = check_edge_index(edge_index, x.shape[0])
        n_slices = num_slices if num_slices is not None else (len(slices) if slices is not None else 1)
        cfg = DCWEConfig(encoder=encoder.config.to_dict(), encoder_name=name, num_units=x.shape[0],
                         num_slices=n_slices, num_edges=ei.shape[1], node_dim=x.shape[1], units=units,
                         slices=slices, dynamic_vocab_size=len(dynamic_token_ids), **config_kwargs)
        model = cls(cfg, encoder=encoder)
        model.dynamic.node_features.copy_(x)
        model.dynamic.edge_index.copy_(ei)
        ids = torch.as_tensor(list(dynamic_token_ids), dtype=torch.long)
        if ids.numel() and (ids.min() < 0 or ids.max() >= model.dynamic.dynamic_mask.numel()):
            raise ValueError("dynamic_token_ids contains ids outside the encoder's vocabulary; "
                             "build it with content_vocabulary(texts, tokenizer).")
        model.dynamic.dynamic_mask[ids] = True
        return model

    # -- label lookups ------------------------------------------------------------------------
    def unit_ids(self, units) -> torch.Tensor:
        """Unit labels -> indices; an unknown unit is a clear error."""
        index = {u: i for i, u in enumerate(self.config.units)}
        missing = sorted({str(u) for u in units if str(u) not in index})
        if missing:
            raise ValueError(f"unit(s) {missing[:5]} are not nodes of this model's social graph "
                             f"({len(index)} units, e.g. {self.config.units[:3]}). Fix: add them to the graph "
                             "(isolated nodes are allowed) and retrain, or drop their documents.")
        return torch.tensor([index[str(u)] for u in units], dtype=torch.long)

    def slice_ids(self, slices) -> torch.Tensor:
        """Time-slice labels -> indices; an unknown slice is a clear error."""
        index = {s: i for i, s in enumerate(self.config.slices)}
        index.update({str(s): i for i, s in enumerate(self.config.slices)})
        missing = sorted({str(s) for s in slices if s not in index and str(s) not in index})
        if missing:
            raise ValueError(f"time slice(s) {missing[:5]} are not slices of this model {self.config.slices}. "
                             "Fix: use one of those, or retrain with the slice included.")
        return torch.tensor([index[s] if s in index else index[str(s)] for s in slices], dtype=torch.long)

    @property
    def dynamic_token_ids(self) -> list[int]:
        return self.dynamic.dynamic_mask.nonzero(as_tuple=True)[0].tolist()

    def input_embeddings(self, input_ids, attention_mask, unit_ids, slice_ids):
        """(e + o, offsets, prior_a, prior_w, positions)."""
        e = self.encoder.get_input_embeddings()(input_ids)
        return self.dynamic(e, input_ids, attention_mask, unit_ids, slice_ids)

    @torch.no_grad()
    def static_and_dynamic(self, token_ids, unit_ids, slice_ids) -> tuple[torch.Tensor, torch.Tensor]:
        """Type-level embeddings: static e [N, H] and dynamic e + o [N, H] for (token, unit, slice) triples."""
        ids = torch.as_tensor(token_ids, dtype=torch.long, device=self.device).reshape(-1, 1)
        e = self.encoder.get_input_embeddings()(ids)
        was = self.dynamic.training_priors
        self.dynamic.training_priors = False
        try:
            dyn, *_ = self.dynamic(e, ids, None, torch.as_tensor(unit_ids, device=self.device),
                                   torch.as_tensor(slice_ids, device=self.device))
        finally:
            self.dynamic.training_priors = was
        return e[:, 0], dyn[:, 0]


class DCWEForMaskedLM(DCWEPreTrainedModel):
    """DCWE trained with masked language modelling (the paper's embedding training)."""

    _head = "mlm"

    def __init__(self, config: DCWEConfig, encoder=None):
        super().__init__(config)
        self._build(config, encoder)
        self.post_init()

    def forward(self, input_ids, unit_ids, slice_ids, attention_mask=None, token_type_ids=None, labels=None,
                output_hidden_states: bool = False, **kwargs) -> DCWEOutput:
        """With labels, `logits` are [n_masked, V] for the labelled positions only (see masked_lm_forward)."""
        embeds, offsets, prior_a, prior_w, pos = self.input_embeddings(input_ids, attention_mask, unit_ids, slice_ids)
        logits, task, hidden = masked_lm_forward(self.encoder, embeds, attention_mask, token_type_ids, labels,
                                                 output_hidden_states)
        loss = None if task is None else task + prior_a + prior_w
        return DCWEOutput(loss=loss, logits=logits, task_loss=task, prior_a=prior_a, prior_w=prior_w,
                          hidden_states=hidden, offsets=offsets, offset_positions=pos)

    @torch.no_grad()
    def encode(self, input_ids, unit_ids, slice_ids, attention_mask=None, token_type_ids=None) -> tuple:
        """All hidden states of the body for dynamic inputs (no MLM head, no o_{t-1} pass)."""
        was = self.dynamic.training_priors
        self.dynamic.training_priors = False
        try:
            embeds, *_ = self.input_embeddings(input_ids, attention_mask, unit_ids, slice_ids)
        finally:
            self.dynamic.training_priors = was
        return self.encoder.base_model(inputs_embeds=embeds, attention_mask=attention_mask,
                                       token_type_ids=token_type_ids, output_hidden_states=True).hidden_states


def mlm_head(encoder):
    """The MLM head as one module (BERT: `cls`, RoBERTa: `lm_head`), or None when it is split up."""
    heads = [m for name, m in encoder.named_children() if name != encoder.base_model_prefix]
    return heads[0] if len(heads) == 1 else None


def masked_lm_forward(encoder, embeds, attention_mask, token_type_ids, labels, output_hidden_states=False):
    """(logits, loss, hidden_states) of an MLM encoder on input embeddings.

    With labels, the vocabulary projection runs only at the labelled (masked) positions: with
    15% masking that skips ~85% of the output layer, the largest single cost of a small encoder
    on CPU. Returned logits are then [n_masked, V] in row-major (batch, position) order.
    Encoders whose head is not one module fall back to the full HF forward.
    """
    head = mlm_head(encoder)
    if head is None:
        out = encoder(inputs_embeds=embeds, attention_mask=attention_mask, token_type_ids=token_type_ids,
                      labels=labels, output_hidden_states=output_hidden_states)
        logits = out.logits if labels is None else out.logits[labels != -100]
        return logits, out.loss, out.hidden_states
    kw = {"token_type_ids": token_type_ids} if token_type_ids is not None else {}
    base = encoder.base_model(inputs_embeds=embeds, attention_mask=attention_mask,
                              output_hidden_states=output_hidden_states, **kw)
    seq = base.last_hidden_state
    if labels is None:
        return head(seq), None, base.hidden_states
    sel = labels != -100
    logits = head(seq[sel])
    loss = F.cross_entropy(logits, labels[sel]) if logits.shape[0] else seq.sum() * 0.0
    return logits, loss, base.hidden_states


class DCWEForSequenceClassification(DCWEPreTrainedModel):
    """DCWE with a 2-layer feed-forward head on the first token (paper §5.5, e.g. sentiment)."""

    _head = None

    def __init__(self, config: DCWEConfig, encoder=None):
        super().__init__(config)
        if config.num_labels < 2:
            raise ValueError(f"DCWEForSequenceClassification needs num_labels >= 2, got {config.num_labels}.")
        self._build(config, encoder)
        h = self.encoder.get_input_embeddings().embedding_dim
        self.classifier = nn.Sequential(nn.Linear(h, h), nn.Tanh(), nn.Dropout(config.classifier_dropout),
                                        nn.Linear(h, config.num_labels))
        self.post_init()

    def forward(self, input_ids, unit_ids, slice_ids, attention_mask=None, token_type_ids=None, labels=None,
                output_hidden_states: bool = False, **kwargs) -> DCWEOutput:
        embeds, offsets, prior_a, prior_w, pos = self.input_embeddings(input_ids, attention_mask, unit_ids, slice_ids)
        out = self.encoder(inputs_embeds=embeds, attention_mask=attention_mask, token_type_ids=token_type_ids,
                           output_hidden_states=output_hidden_states)
        logits = self.classifier(out.last_hidden_state[:, 0])
        task = None if labels is None else F.cross_entropy(logits, labels)
        loss = None if task is None else task + prior_a + prior_w
        return DCWEOutput(loss=loss, logits=logits, task_loss=task, prior_a=prior_a, prior_w=prior_w,
                          hidden_states=out.hidden_states, offsets=offsets, offset_positions=pos)


# ----------------------------------------------------------------------------------------------
# the dynamic (content) vocabulary
# ----------------------------------------------------------------------------------------------
WORD_START_MARKERS = ("\u0120", "\u2581")   # byte-level BPE "Ġword", SentencePiece "▁word"


def token_word(token: str, marked: bool) -> str | None:
    """The word a vocabulary token spells when it STARTS a word, else None.

    WordPiece: a token starts a word unless it is a "##" continuation. Byte-level BPE (GPT-2,
    RoBERTa) and SentencePiece mark word starts with "Ġ" / "▁": when the vocabulary uses such a
    marker (`marked`), only marked tokens start words (the marker is stripped); an unmarked token
    there is a continuation, or a text's first word (BPE without a prefix space), and is skipped.
    """
    for m in WORD_START_MARKERS:
        if token.startswith(m):
            return token[len(m):]
    if token.startswith("##") or marked:
        return None
    return token


def content_vocabulary(texts, tokenizer, top_k: int = 10000, stopwords=None, min_count: int = 1) -> list[int]:
    """Token ids of the top_k most frequent word-start tokens that are alphabetic and not stopwords.

    Only these get offsets (paper: frequent vocabulary; the reference: alphabetic, no stopwords).
    Works with WordPiece, byte-level BPE and SentencePiece vocabularies (see ``token_word``);
    word continuations ("##ing", unmarked BPE pieces) and special tokens are never dynamic.
    """
    if stopwords is None:
        stopwords = ENGLISH_STOP_WORDS
    stop = {w.lower() for w in stopwords}
    special = set(getattr(tokenizer, "all_special_ids", []) or [])
    counts: Counter = Counter()
    for ids in tokenizer(list(texts), add_special_tokens=False)["input_ids"]:
        counts.update(ids)
    tokens = {int(t): tokenizer.convert_ids_to_tokens(int(t)) for t in counts}
    marked = any(str(t).startswith(WORD_START_MARKERS) for t in tokens.values())
    keep = []
    for tid, n in counts.most_common():
        if n < min_count or len(keep) >= top_k:
            break
        word = token_word(str(tokens[int(tid)]), marked)
        if tid in special or word is None or not word.isalpha() or word.lower() in stop:
            continue
        keep.append(int(tid))
    if not keep:
        raise ValueError("content_vocabulary: no alphabetic non-stopword token in the texts; "
                         "check the text column (is it empty or non-English?) or pass stopwords=[].")
    return keep


# saved folders say model_type "dcwe": AutoConfig (and so AutoTokenizer) can read them
AutoConfig.register(DCWEConfig.model_type, DCWEConfig, exist_ok=True)

__all__ = ["ABLATIONS", "DCWEConfig", "DCWEForMaskedLM", "DCWEForSequenceClassification", "DCWEOutput",
           "DynamicComponent", "OffsetFFN", "SocialComponent", "content_vocabulary", "token_word"]
