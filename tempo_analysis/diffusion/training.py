"""Training helpers of :class:`~tempo_analysis.diffusion.estimator.DiffusionMapper`: the encoder with
its MLM head, the body-frozen head warm-up, one DCWE model per variant, the optimiser groups.

Steps of ``DiffusionMapper.fit``: split 70/10/20 stratified by slice (paper) -> node2vec over the
unit graph -> frequent content vocabulary from the training split -> (if the encoder ships no MLM
head, e.g. MiniLM) train the fresh head with the body frozen (:func:`warm_mlm_head`), so early
gradients do not damage the pretrained body -> fine-tune each variant (:func:`build_dcwe`) from
that same start through the shared Trainer, picking the best dev-perplexity weights -> score every
variant on the same fixed-mask test batches.
Variants: "dcwe" (full), "sa" (social ablation), "ta" (temporal ablation), "cwe" (plain encoder).
"""
from __future__ import annotations

import copy
import warnings

from tempo_analysis.data import SocialCorpus
from tempo_analysis.diffusion.config import DiffusionTrainConfig
from tempo_analysis.diffusion.corpora import graph_tensors
from tempo_analysis.diffusion.mlm import MLMCollator, PlainMLM
from tempo_analysis.diffusion.model import DCWEForMaskedLM
from tempo_analysis.encoders import load_encoder, quiet_transformers
from tempo_analysis.training import TrainConfig, Trainer


def _dynamic_params(model):
    return [p for n, p in model.named_parameters() if n.startswith("dynamic.") and p.requires_grad]


def param_groups(model, cfg: DiffusionTrainConfig, decay: float = 0.01):
    """AdamW groups: encoder at lr, dynamic component at dynamic_lr; no decay on biases/norms."""
    dyn = {id(p) for p in _dynamic_params(model)}
    groups = []
    for is_dyn, lr in ((False, cfg.lr), (True, cfg.dynamic_lr)):
        ps = [p for p in model.parameters() if p.requires_grad and (id(p) in dyn) == is_dyn]
        groups += [{"params": [p for p in ps if p.ndim >= 2], "lr": lr, "weight_decay": decay},
                   {"params": [p for p in ps if p.ndim < 2], "lr": lr, "weight_decay": 0.0}]
    return [g for g in groups if g["params"]]


def load_mlm_encoder(name: str):
    """(MLM encoder, tokenizer, head_is_fresh)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with quiet_transformers():
            enc, tok = load_encoder(name, head="mlm")
    fresh = any("no pretrained MLM head" in str(w.message) for w in caught)
    return enc, tok, fresh


def warm_mlm_head(encoder, dataset, tokenizer, steps: int, lr: float, cfg: DiffusionTrainConfig):
    """Train only the MLM head (body frozen; the tied decoder stays = word embeddings)."""
    head_names = [n for n, _ in encoder.named_parameters() if not n.startswith(encoder.base_model_prefix + ".")]
    for n, p in encoder.named_parameters():
        p.requires_grad = n in head_names
    try:
        tc = TrainConfig(max_epochs=None, max_steps=steps, batch_size=cfg.batch_size, lr=lr, schedule="constant",
                         seed=cfg.seed, device=cfg.device, progress=cfg.progress, restore_best=False)
        Trainer(PlainMLM(encoder), tc, collate_fn=MLMCollator(tokenizer)).fit(dataset)
    finally:
        for p in encoder.parameters():
            p.requires_grad = True
    return encoder


def build_dcwe(encoder, corpus: SocialCorpus, node_vectors, dynamic_ids, ablation: str, cfg: DiffusionTrainConfig):
    """A DCWEForMaskedLM around a copy of `encoder` for this corpus' graph and slices."""
    units, edge_index = graph_tensors(corpus)
    return DCWEForMaskedLM.from_encoder(copy.deepcopy(encoder), node_features=node_vectors, edge_index=edge_index,
                                        dynamic_token_ids=dynamic_ids, units=units, slices=corpus.slices,
                                        ablation=ablation, social_dim=cfg.social_dim, gat_heads=cfg.gat_heads,
                                        gat_dropout=cfg.gat_dropout, offset_dropout=cfg.offset_dropout,
                                        lambda_w=cfg.lambda_w, lambda_a=cfg.lambda_a)


__all__ = ["build_dcwe", "load_mlm_encoder", "param_groups", "warm_mlm_head"]
