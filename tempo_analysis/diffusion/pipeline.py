"""Train DCWE and its comparison models on a social corpus, score held-out perplexity, save/load runs.

    run = train_diffusion_models(corpus, DiffusionTrainConfig(epochs=2))
    run.perplexity        # {"dcwe": ..., "cwe": ..., "sa": ..., "ta": ...} on the held-out test split
    run.save("runs/world"); run = DiffusionRun.load("runs/world")

Steps: split 70/10/20 stratified by slice (paper) -> node2vec over the unit graph -> frequent
content vocabulary from the training split -> (if the encoder ships no MLM head, e.g. MiniLM)
train the fresh head with the body frozen, so early gradients do not damage the pretrained
body -> fine-tune each variant from that same start through the shared Trainer, picking the
best dev-perplexity weights -> score every variant on the same fixed-mask test batches.
Variants: "dcwe" (full), "sa" (social ablation), "ta" (temporal ablation), "cwe" (plain encoder).
"""
from __future__ import annotations

import copy
import json
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path

import networkx as nx
import pandas as pd
import torch
from torch.utils.data import DataLoader

from tempo_analysis.data import SocialCorpus
from tempo_analysis.graphs.node2vec import Node2Vec
from tempo_analysis.models.dcwe import DCWEForMaskedLM, _quiet, content_vocabulary

from .corpora import graph_tensors, split_corpus
from .mlm import MLMCollator, PlainMLM, SliceBatchSampler, SocialMLMDataset, fixed_mlm_batches, mlm_perplexity

VARIANTS = ("dcwe", "cwe", "sa", "ta")


@dataclass
class DiffusionTrainConfig:
    """Knobs of ``train_diffusion_models``; defaults fit the planted world on a laptop CPU."""

    encoder: str = "default"               # "default" (MiniLM), any HF name or local path
    variants: tuple = VARIANTS             # which models to train ("dcwe" must be one for the analyses)
    epochs: int = 2
    max_steps: int | None = None           # cap on optimiser steps per variant (None = epochs only)
    batch_size: int = 16
    lr: float = 5e-5                       # encoder body and MLM head
    dynamic_lr: float = 5e-5               # GATs and offset FFNs (Adam moves the zero-init output layer
                                           # ~lr per weight per step: larger values swamp e early on)
    head_warmup_steps: int | str = "auto"  # body-frozen MLM-head steps; "auto": iff the head is fresh, as
                                           # many steps as one variant trains (at most one epoch)
    slice_batches: bool = True             # one time slice per batch: 2 GAT passes per step (s_t, s_{t-1})
    head_lr: float = 1e-3
    max_length: int = 64                   # tokens per document (longer texts are truncated)
    top_k: int = 10000                     # size of the dynamic (offset) vocabulary
    lambda_w: float = 100.0                # random-walk prior; lambda_a = 1e-3 * lambda_w (paper)
    social_dim: int = 50
    gat_heads: int = 4
    node2vec: dict = field(default_factory=dict)  # Node2Vec(...) overrides (dim, num_walks, walk_length, p, q)
    dev: float = 0.1
    test: float = 0.2
    eval_repeats: int = 3                  # test documents masked this many times (fixed seeds)
    seed: int = 0
    device: str = "auto"
    progress: bool = True

    def __post_init__(self):
        bad = [v for v in self.variants if v not in VARIANTS]
        if bad or not self.variants:
            raise ValueError(f"DiffusionTrainConfig.variants={self.variants!r}: choose from {VARIANTS}.")
        self.variants = tuple(self.variants)
        if not (isinstance(self.epochs, int) and self.epochs >= 1):
            raise ValueError(f"DiffusionTrainConfig.epochs={self.epochs!r}: use an integer >= 1.")
        if self.head_warmup_steps != "auto" and not (isinstance(self.head_warmup_steps, int) and self.head_warmup_steps >= 0):
            raise ValueError(f"DiffusionTrainConfig.head_warmup_steps={self.head_warmup_steps!r}: use 'auto' or an int >= 0.")


@dataclass
class DiffusionRun:
    """Trained models + everything the analyses need (tokenizer, corpus, splits, perplexities)."""

    models: dict
    tokenizer: object
    corpus: SocialCorpus
    splits: dict
    perplexity: dict
    config: DiffusionTrainConfig
    history: dict = field(default_factory=dict)

    @property
    def dcwe(self) -> DCWEForMaskedLM:
        if "dcwe" not in self.models:
            raise ValueError(f"this run has no 'dcwe' model (it trained {list(self.models)}); "
                             "train with 'dcwe' in DiffusionTrainConfig.variants.")
        return self.models["dcwe"]

    def save(self, out_dir) -> Path:
        """out/<variant>/ (safetensors + config + tokenizer), out/corpus/{docs,edges}.csv, out/run.json."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        with _quiet():
            for name, model in self.models.items():
                model.save_pretrained(out / name)
                self.tokenizer.save_pretrained(out / name)
        (out / "corpus").mkdir(exist_ok=True)
        self.corpus.df.to_csv(out / "corpus" / "docs.csv", index=False)
        edges = pd.DataFrame([(a, b, d.get("weight", 1.0)) for a, b, d in self.corpus.graph.edges(data=True)],
                             columns=["source", "target", "weight"])
        edges.to_csv(out / "corpus" / "edges.csv", index=False)
        meta = {"perplexity": self.perplexity, "config": asdict(self.config), "history": self.history,
                "units": self.corpus.units, "slices": self.corpus.slices,
                "splits": {k: v["doc_id"].tolist() for k, v in self.splits.items()}}
        (out / "run.json").write_text(json.dumps(meta, indent=1, default=str))
        return out

    @classmethod
    def load(cls, out_dir, variants=None) -> "DiffusionRun":
        """Read a saved run (all variants, or only `variants`)."""
        from transformers import AutoModelForMaskedLM, AutoTokenizer

        out = Path(out_dir)
        if not (out / "run.json").is_file():
            raise FileNotFoundError(f"{out} is not a diffusion run (no run.json). Fix: pass the --out folder of "
                                    "`tempo-analysis diffusion train`.")
        meta = json.loads((out / "run.json").read_text())
        cfg = meta["config"]
        cfg["variants"] = tuple(cfg["variants"])
        config = DiffusionTrainConfig(**cfg)
        names = [v for v in (variants or config.variants) if (out / v).is_dir()]
        if not names:
            raise FileNotFoundError(f"{out} holds none of the models {list(variants or config.variants)}; "
                                    f"it was trained with {list(config.variants)}.")
        models = {}
        with _quiet():
            for v in names:
                models[v] = (PlainMLM(AutoModelForMaskedLM.from_pretrained(out / v)) if v == "cwe"
                             else DCWEForMaskedLM.from_pretrained(out / v)).eval()
            tokenizer = AutoTokenizer.from_pretrained(out / names[0])  # (config.json says "dcwe": quiet)
        docs = pd.read_csv(out / "corpus" / "docs.csv", dtype={"unit": str, "doc_id": str}, keep_default_na=False)
        docs["time"] = docs["time"].map(_slice_caster(meta["slices"]))
        edges = pd.read_csv(out / "corpus" / "edges.csv", dtype={"source": str, "target": str})
        g = nx.Graph()
        g.add_nodes_from(meta["units"])
        g.add_weighted_edges_from(edges.itertuples(index=False, name=None))
        corpus = SocialCorpus.from_frame(docs, g, slices=meta["slices"])
        by_id = corpus.df.set_index("doc_id")
        splits = {k: by_id.loc[ids].reset_index() for k, ids in meta["splits"].items()}
        return cls(models, tokenizer, corpus, splits, meta["perplexity"], config, meta.get("history", {}))


def _slice_caster(slices):
    """CSV round trip: map each time value back to the declared slice label (ints stay ints)."""
    lookup = {str(s): s for s in slices}
    return lambda v: lookup.get(str(v), v)


def _dynamic_params(model):
    return [p for n, p in model.named_parameters() if n.startswith("dynamic.") and p.requires_grad]


def _param_groups(model, cfg: DiffusionTrainConfig, decay: float = 0.01):
    """AdamW groups: encoder at lr, dynamic component at dynamic_lr; no decay on biases/norms."""
    dyn = {id(p) for p in _dynamic_params(model)}
    groups = []
    for is_dyn, lr in ((False, cfg.lr), (True, cfg.dynamic_lr)):
        ps = [p for p in model.parameters() if p.requires_grad and (id(p) in dyn) == is_dyn]
        groups += [{"params": [p for p in ps if p.ndim >= 2], "lr": lr, "weight_decay": decay},
                   {"params": [p for p in ps if p.ndim < 2], "lr": lr, "weight_decay": 0.0}]
    return [g for g in groups if g["params"]]


def _load_mlm_encoder(name: str):
    """(MLM encoder, tokenizer, head_is_fresh)."""
    from tempo_analysis.encoders import load_encoder

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with _quiet():
            enc, tok = load_encoder(name, head="mlm")
    fresh = any("no pretrained MLM head" in str(w.message) for w in caught)
    return enc, tok, fresh


def warm_mlm_head(encoder, dataset, tokenizer, steps: int, lr: float, cfg: DiffusionTrainConfig):
    """Train only the MLM head (body frozen; the tied decoder stays = word embeddings)."""
    from tempo_analysis.training import TrainConfig, Trainer

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
                                        lambda_w=cfg.lambda_w)


def train_diffusion_models(corpus: SocialCorpus, config: DiffusionTrainConfig | None = None) -> DiffusionRun:
    """Train the configured variants on `corpus`; return a DiffusionRun with held-out perplexities."""
    from tempo_analysis.training import TrainConfig, Trainer, seed_everything

    cfg = config or DiffusionTrainConfig()
    seed_everything(cfg.seed)
    train_df, dev_df, test_df = split_corpus(corpus, cfg.dev, cfg.test, cfg.seed)
    for name, part in (("train", train_df), ("test", test_df)):
        if part.empty:
            raise ValueError(f"the {name} split is empty ({len(corpus)} documents); give more documents or change "
                             "DiffusionTrainConfig.dev/test.")
    encoder, tok, fresh_head = _load_mlm_encoder(cfg.encoder)
    # social input: node2vec vectors of the unit graph (isolated units get walks of themselves)
    n2v = Node2Vec(**{"seed": cfg.seed, **cfg.node2vec}).fit(corpus.graph)
    node_vectors = n2v.vectors(corpus.units)
    dynamic_ids = content_vocabulary(train_df["text"], tok, top_k=cfg.top_k)
    ds = {k: SocialMLMDataset(df, tok, corpus.unit_index, corpus.slice_index, cfg.max_length)
          for k, df in (("train", train_df), ("dev", dev_df), ("test", test_df))}
    test_batches = fixed_mlm_batches(ds["test"], tok, seed=cfg.seed + 1, repeats=cfg.eval_repeats)
    dev_batches = fixed_mlm_batches(ds["dev"], tok, seed=cfg.seed + 2) if len(ds["dev"]) else None
    history: dict = {}
    steps = cfg.head_warmup_steps
    if steps == "auto":
        epoch = -(-len(ds["train"]) // cfg.batch_size)
        steps = min(epoch, cfg.max_steps or epoch) if fresh_head else 0
    if steps:
        warm_mlm_head(encoder, ds["train"], tok, steps, cfg.head_lr, cfg)
        history["head_warmup_steps"] = steps
    perplexity = {"start": mlm_perplexity(PlainMLM(encoder), test_batches)}

    def eval_fn(model, _batches):
        return {"perplexity": mlm_perplexity(model, dev_batches)}

    models = {}
    for variant in cfg.variants:
        seed_everything(cfg.seed)
        model = (PlainMLM(copy.deepcopy(encoder)) if variant == "cwe"
                 else build_dcwe(encoder, corpus, node_vectors, dynamic_ids, variant, cfg))
        tc = TrainConfig(max_epochs=cfg.epochs, max_steps=cfg.max_steps, batch_size=cfg.batch_size, lr=cfg.lr,
                         seed=cfg.seed, device=cfg.device, progress=cfg.progress,
                         metric="perplexity" if dev_batches else "loss", warmup_ratio=0.1)
        trainer = Trainer(model, tc, eval_fn=eval_fn if dev_batches else None, collate_fn=MLMCollator(tok),
                          param_groups=_param_groups(model, cfg))
        train_data = ds["train"]
        if cfg.slice_batches:  # a DataLoader with slice-pure batches (reshuffled each epoch, seeded)
            train_data = DataLoader(ds["train"], collate_fn=MLMCollator(tok),
                                    batch_sampler=SliceBatchSampler(ds["train"].slice_ids, cfg.batch_size, cfg.seed))
        trainer.fit(train_data, dev_batches)
        model = model.to("cpu").eval()
        models[variant] = model
        perplexity[variant] = mlm_perplexity(model, test_batches)
        history[variant] = [{k: v for k, v in row.items() if isinstance(v, (int, float))} for row in trainer.history_]
    splits = {"train": train_df, "dev": dev_df, "test": test_df}
    return DiffusionRun(models, tok, corpus, splits, perplexity, cfg, history)
