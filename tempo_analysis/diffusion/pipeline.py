"""The social-diffusion facade: train DCWE and its comparison models, then map a word's diffusion.

    mapper = DiffusionMapper(DiffusionTrainConfig(epochs=2)).fit(corpus)
    mapper.perplexity_          # {"start": ..., "dcwe": ..., "cwe": ..., "sa": ..., "ta": ...} on the test split
    result = mapper.analyze("cloud", "server")          # r-hat, diffusion map, walk/flight, mode
    mapper.visualize_network_map(result); mapper.visualize_walk_flight(result)
    mapper.save("runs/world"); mapper = DiffusionMapper.load("runs/world")

Steps of ``fit``: split 70/10/20 stratified by slice (paper) -> node2vec over the unit graph ->
frequent content vocabulary from the training split -> (if the encoder ships no MLM head, e.g.
MiniLM) train the fresh head with the body frozen, so early gradients do not damage the
pretrained body -> fine-tune each variant from that same start through the shared Trainer,
picking the best dev-perplexity weights -> score every variant on the same fixed-mask test batches.
Variants: "dcwe" (full), "sa" (social ablation), "ta" (temporal ablation), "cwe" (plain encoder).
"""
from __future__ import annotations

import copy
import dataclasses
import json
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path

import networkx as nx
import numpy as np
import pandas as pd
import plotly.graph_objects as go
import torch
from torch.utils.data import DataLoader
from transformers import AutoModelForMaskedLM, AutoTokenizer

from tempo_analysis.data import SocialCorpus
from tempo_analysis.diffusion.analysis import ContextIndex, graph_communities, sim_table, unit_top_words
from tempo_analysis.diffusion.corpora import graph_tensors, split_corpus
from tempo_analysis.outputs import atomic_output_dir
from tempo_analysis.diffusion.mlm import (MLMCollator, PlainMLM, SliceBatchSampler, SocialMLMDataset,
                                          document_nll, fixed_mlm_batches, mlm_perplexity)
from tempo_analysis.diffusion.model import DCWEForMaskedLM, content_vocabulary
from tempo_analysis.diffusion.node2vec import Node2Vec
from tempo_analysis.diffusion.report import (DiffusionAnalysis, analyze, index_corpus, prediction_map,
                                              world_regenerator)
from tempo_analysis.encoders import load_encoder, quiet_transformers
from tempo_analysis.figures import diffusion as figures
from tempo_analysis.training import TrainConfig, Trainer, seed_everything

VARIANTS = ("dcwe", "cwe", "sa", "ta")


@dataclass
class DiffusionTrainConfig:
    """Knobs of :class:`DiffusionMapper`; defaults fit the planted world on a laptop CPU."""

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
    shared_warmup_steps: int = 0           # plain-MLM steps on the training text, shared by ALL variants before
                                           # they fork (the same start for CWE and DCWE); 0 = none
    shared_warmup_lr: float | None = None  # its learning rate (None = lr)
    mlm_probability: float = 0.15          # training masks (held-out masks stay at BERT's 0.15)
    slice_batches: bool = True             # one time slice per batch: 2 GAT passes per step (s_t, s_{t-1})
    head_lr: float = 1e-3
    max_length: int = 64                   # tokens per document (longer texts are truncated)
    top_k: int = 10000                     # size of the dynamic (offset) vocabulary
    lambda_w: float = 100.0                # random-walk prior
    lambda_a: float | None = None          # anchoring prior; None = 1e-3 * lambda_w (paper)
    social_dim: int = 50
    gat_heads: int = 4
    gat_dropout: float = 0.6               # attention dropout in the GATs (reference code: 0.6)
    offset_dropout: float = 0.2            # dropout inside the offset FFNs (reference code: 0.2)
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
        if not (isinstance(self.shared_warmup_steps, int) and self.shared_warmup_steps >= 0):
            raise ValueError(f"DiffusionTrainConfig.shared_warmup_steps={self.shared_warmup_steps!r}: use an int >= 0.")
        if not (isinstance(self.mlm_probability, (int, float)) and 0 < self.mlm_probability < 1):
            raise ValueError(f"DiffusionTrainConfig.mlm_probability={self.mlm_probability!r}: use a float in (0, 1).")
        if self.head_warmup_steps != "auto" and not (isinstance(self.head_warmup_steps, int) and self.head_warmup_steps >= 0):
            raise ValueError(f"DiffusionTrainConfig.head_warmup_steps={self.head_warmup_steps!r}: use 'auto' or an int >= 0.")


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


class DiffusionMapper:
    """DCWE (Hofmann et al., ACL 2021) and its comparison models on a social corpus, with the
    paper's diffusion analyses, in the manner of a scikit-learn estimator.

    ``DiffusionMapper(config)`` or ``DiffusionMapper(epochs=1, max_steps=20, ...)`` (fields of
    :class:`DiffusionTrainConfig`); ``fit(corpus)`` trains ``config.variants`` and returns self.

    Learned attributes: ``models_`` ({variant: model}), ``tokenizer_``, ``corpus_`` (the
    SocialCorpus trained on), ``splits_`` ({"train", "dev", "test"}: frames), ``perplexity_``
    (held-out MLM perplexity per variant, plus "start": the encoder before fine-tuning) and
    ``history_`` (per-variant training logs). ``dcwe_`` is ``models_["dcwe"]``.
    """

    def __init__(self, config: DiffusionTrainConfig | None = None, **params):
        if config is not None and params:
            config = dataclasses.replace(config, **params)
        self.config = config if config is not None else DiffusionTrainConfig(**params)

    def __repr__(self) -> str:
        state = (f"fitted: {', '.join(self.models_)} on {len(self.corpus_)} documents"
                 if self._fitted() else "not fitted")
        return f"DiffusionMapper({state})"

    # -- training -----------------------------------------------------------------------------
    def fit(self, corpus: SocialCorpus) -> "DiffusionMapper":
        """Train the configured variants on `corpus` and score them on its held-out test split."""
        cfg = self.config
        seed_everything(cfg.seed)
        train_df, dev_df, test_df = split_corpus(corpus, cfg.dev, cfg.test, cfg.seed)
        for name, part in (("train", train_df), ("test", test_df)):
            if part.empty:
                raise ValueError(f"the {name} split is empty ({len(corpus)} documents); give more documents or "
                                 "change DiffusionTrainConfig.dev/test.")
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
        collate = MLMCollator(tok, cfg.mlm_probability)

        def train_data():
            if not cfg.slice_batches:
                return ds["train"]
            # a DataLoader with slice-pure batches (reshuffled each epoch, seeded)
            return DataLoader(ds["train"], collate_fn=collate,
                              batch_sampler=SliceBatchSampler(ds["train"].slice_ids, cfg.batch_size, cfg.seed))

        if cfg.shared_warmup_steps:   # plain MLM on the training text: one start shared by every variant
            seed_everything(cfg.seed)
            tc = TrainConfig(max_epochs=None, max_steps=cfg.shared_warmup_steps, batch_size=cfg.batch_size,
                             lr=cfg.shared_warmup_lr or cfg.lr,
                             seed=cfg.seed, device=cfg.device, progress=cfg.progress, restore_best=False,
                             warmup_ratio=0.1)
            Trainer(PlainMLM(encoder), tc, collate_fn=collate).fit(train_data())
            encoder = encoder.to("cpu")
            history["shared_warmup_steps"] = cfg.shared_warmup_steps
        perplexity = {"start": mlm_perplexity(PlainMLM(encoder), test_batches)}

        def eval_fn(model, _batches):
            return {"perplexity": mlm_perplexity(model, dev_batches)}

        models = {}
        for variant in cfg.variants:
            seed_everything(cfg.seed)
            # the same training masks for every variant: a generator of their own (the global stream is
            # also drawn by the offset and GAT dropout, which CWE does not have)
            collate = MLMCollator(tok, cfg.mlm_probability, generator=torch.Generator().manual_seed(cfg.seed + 3))
            model = (PlainMLM(copy.deepcopy(encoder)) if variant == "cwe"
                     else build_dcwe(encoder, corpus, node_vectors, dynamic_ids, variant, cfg))
            tc = TrainConfig(max_epochs=cfg.epochs, max_steps=cfg.max_steps, batch_size=cfg.batch_size, lr=cfg.lr,
                             seed=cfg.seed, device=cfg.device, progress=cfg.progress,
                             metric="perplexity" if dev_batches else "loss", warmup_ratio=0.1)
            trainer = Trainer(model, tc, eval_fn=eval_fn if dev_batches else None, collate_fn=collate,
                              param_groups=_param_groups(model, cfg))
            trainer.fit(train_data(), dev_batches)
            model = model.to("cpu").eval()
            models[variant] = model
            perplexity[variant] = mlm_perplexity(model, test_batches)
            history[variant] = [{k: v for k, v in row.items() if isinstance(v, (int, float))}
                                for row in trainer.history_]
        self._set_fitted(models, tok, corpus, {"train": train_df, "dev": dev_df, "test": test_df}, perplexity,
                         history)
        return self

    def _set_fitted(self, models, tokenizer, corpus, splits, perplexity, history) -> None:
        self.models_, self.tokenizer_, self.corpus_ = models, tokenizer, corpus
        self.splits_, self.perplexity_, self.history_ = splits, perplexity, history

    def _fitted(self) -> bool:
        return hasattr(self, "models_")

    def _check_fitted(self) -> None:
        if not self._fitted():
            raise ValueError("this DiffusionMapper is not fitted yet: call fit(corpus) or DiffusionMapper.load(dir).")

    def model(self, variant: str = "dcwe"):
        """The trained model of one variant ("dcwe", "cwe", "sa" or "ta")."""
        self._check_fitted()
        if variant not in self.models_:
            raise ValueError(f"this mapper has no {variant!r} model (it has {list(self.models_)}); "
                             f"train with {variant!r} in DiffusionTrainConfig.variants.")
        return self.models_[variant]

    @property
    def dcwe_(self) -> DCWEForMaskedLM:
        """The trained DCWE model (``models_["dcwe"]``)."""
        return self.model("dcwe")

    def held_out_perplexity(self, words=None, variants=None) -> dict:
        """{variant: perplexity} on the test split's fixed masks (the masks ``fit`` scored with).

        words: score only the masked tokens that are one of these words (each must be one token),
        e.g. the planted companions: the tokens whose choice the unit and the time decide.
        """
        self._check_fitted()
        cfg, tok = self.config, self.tokenizer_
        only = None
        if words is not None:
            only = []
            for w in words:
                ids = tok(w, add_special_tokens=False)["input_ids"]
                if len(ids) != 1:
                    raise ValueError(f"held_out_perplexity: {w!r} is {len(ids)} tokens for this tokenizer; "
                                     "pass one-token words.")
                only.append(ids[0])
        ds = SocialMLMDataset(self.splits_["test"], tok, self.corpus_.unit_index, self.corpus_.slice_index,
                              cfg.max_length)
        batches = fixed_mlm_batches(ds, tok, seed=cfg.seed + 1, repeats=cfg.eval_repeats)
        return {v: mlm_perplexity(self.models_[v], batches, only=only) for v in (variants or self.models_)}

    def paired_comparison(self, variant: str = "dcwe", control: str = "cwe") -> dict:
        """Held-out perplexity of two variants on the test split's fixed masks, with the paper's paired test:
        a Wilcoxon signed-rank test over the test documents of their mean masked-token cross-entropy.

        Returns perplexities, ``n_docs`` (documents with a masked token), ``wilcoxon`` and ``p_value``
        (two-sided), ``share_lower`` (documents where ``variant`` has the lower loss) and ``gain``
        (1 - ppl_variant / ppl_control).
        """
        from scipy.stats import wilcoxon

        self._check_fitted()
        cfg, tok = self.config, self.tokenizer_
        ds = SocialMLMDataset(self.splits_["test"], tok, self.corpus_.unit_index, self.corpus_.slice_index,
                              cfg.max_length)
        batches = fixed_mlm_batches(ds, tok, seed=cfg.seed + 1, repeats=cfg.eval_repeats)
        (sa, n), (sb, _) = (document_nll(self.model(v), batches, len(ds)) for v in (variant, control))
        keep = n > 0
        a, b = sa[keep] / n[keep], sb[keep] / n[keep]
        ppl_a, ppl_b = float(np.exp(sa.sum() / n.sum())), float(np.exp(sb.sum() / n.sum()))
        test = wilcoxon(a, b) if np.any(a != b) else None
        return {variant: ppl_a, control: ppl_b, "gain": 1.0 - ppl_a / ppl_b, "n_docs": int(keep.sum()),
                "share_lower": float(np.mean(a < b)),
                "wilcoxon": None if test is None else float(test.statistic),
                "p_value": 1.0 if test is None else float(test.pvalue)}

    # -- analyses ------------------------------------------------------------------------------
    def context_index(self, variant: str = "dcwe", frame: pd.DataFrame | None = None, *,
                      max_docs_per_unit_slice: int | None = None, batch_size: int = 32, max_length: int = 128,
                      seed: int = 0, progress: bool | None = None) -> ContextIndex:
        """One encoder pass over the corpus (or `frame`): a contextual vector per content-word occurrence.

        max_docs_per_unit_slice: a seeded sample (`seed`) of documents per (unit, slice) to bound the
        time; progress: None follows ``config.progress``.
        """
        return index_corpus(self.model(variant), self.tokenizer_, self.corpus_, frame,
                            max_docs_per_unit_slice=max_docs_per_unit_slice, batch_size=batch_size,
                            max_length=max_length, seed=seed,
                            progress=self.config.progress if progress is None else progress)

    def analyze(self, word: str, anchor: str, *, index: ContextIndex | None = None, n_neighbors="auto",
                threshold: float = 0.0, min_count: int = 2, variant: str = "dcwe", word_docs=None) -> DiffusionAnalysis:
        """r-hat of `word` towards `anchor` per (unit, slice), the diffusion map, walk/flight, the mode.

        index: a :meth:`context_index` to reuse (one encoder pass serves many words); default: a new one.
        """
        self._check_fitted()
        index = index if index is not None else self.context_index(variant)
        return analyze(index, self.corpus_.graph, word, anchor, n_neighbors=n_neighbors, threshold=threshold,
                       min_count=min_count, word_docs=word_docs)

    def analyze_predictions(self, word: str, anchor: str, *, variant: str = "dcwe", model=None, n_neighbors: int = 1,
                            threshold: float = 0.0) -> DiffusionAnalysis:
        """The diffusion map read from the trained model's masked predictions (notebook 03's map): in
        probes such as "cloud [MASK]." for each unit and slice, is `anchor` among the model's first
        `n_neighbors` choices? Candidates: DCWE's dynamic vocabulary, for every model alike (the whole
        vocabulary when the mapper has no DCWE).

        model: another model to read on the same candidates (e.g. ``evaluate.without_offsets(mapper.dcwe_)``);
        default: ``variant``'s.
        """
        self._check_fitted()
        return prediction_map(model if model is not None else self.model(variant), self.tokenizer_, self.corpus_,
                              word, anchor, n_neighbors=n_neighbors, threshold=threshold,
                              candidates=self.dcwe_.dynamic_token_ids if "dcwe" in self.models_ else None)

    def variable_words(self, frame: pd.DataFrame | None = None, top: int = 10, min_contexts: int = 3):
        """(top words by sigma_sim with example contexts, all sims) of the DCWE model.

        frame: the contexts to read; default the dev split (as the paper), or the corpus when it is empty.
        """
        self._check_fitted()
        if frame is None:
            frame = self.splits_["dev"] if len(self.splits_["dev"]) else self.corpus_.df
        return sim_table(self.dcwe_, self.tokenizer_, frame, top=top, min_contexts=min_contexts)

    def world_regenerator(self, base_config=None, variant: str = "dcwe", progress: bool = False):
        """A callable (mode, speed) -> (index, graph, truth): the planted world regenerated with another
        diffusion mode or speed, read by this mapper's trained model (see ``report.world_regenerator``)."""
        return world_regenerator(self.model(variant), self.tokenizer_, base_config, progress=progress)

    # -- persistence ---------------------------------------------------------------------------
    def save(self, out_dir, *, overwrite: bool = False, extra: dict | None = None) -> Path:
        """out/<variant>/ (safetensors + config + tokenizer), out/corpus/{docs,edges}.csv, out/run.json.

        ``extra`` maps file names to JSON-able objects written beside run.json (the CLI's truth.json).
        The output policy of :mod:`tempo_analysis.outputs` applies: the run folder is replaced as a
        whole (no stale variant of an older run survives), written into a temporary sibling and
        renamed into place; a non-empty folder that tempo_analysis did not write is refused unless
        ``overwrite=True``.
        """
        self._check_fitted()
        with atomic_output_dir(out_dir, overwrite=overwrite, kind="diffusion-run") as tmp:
            self._write(tmp)
            for name, obj in (extra or {}).items():
                (tmp / name).write_text(json.dumps(obj, indent=1, default=str))
        return Path(out_dir)

    def _write(self, out: Path) -> None:
        with quiet_transformers():
            for name, model in self.models_.items():
                model.save_pretrained(out / name)
                self.tokenizer_.save_pretrained(out / name)
        (out / "corpus").mkdir(exist_ok=True)
        self.corpus_.df.to_csv(out / "corpus" / "docs.csv", index=False)
        edges = pd.DataFrame([(a, b, d.get("weight", 1.0)) for a, b, d in self.corpus_.graph.edges(data=True)],
                             columns=["source", "target", "weight"])
        edges.to_csv(out / "corpus" / "edges.csv", index=False)
        meta = {"perplexity": self.perplexity_, "config": asdict(self.config), "history": self.history_,
                "units": self.corpus_.units, "slices": self.corpus_.slices,
                "directed": self.corpus_.graph.is_directed(),
                "splits": {k: v["doc_id"].tolist() for k, v in self.splits_.items()}}
        (out / "run.json").write_text(json.dumps(meta, indent=1, default=str))

    @classmethod
    def load(cls, out_dir, variants=None) -> "DiffusionMapper":
        """Read a saved mapper (all variants, or only `variants`)."""
        out = Path(out_dir)
        if not (out / "run.json").is_file():
            raise FileNotFoundError(f"{out} is not a diffusion run (no run.json). Fix: pass the --out folder of "
                                    "`tempo-analysis diffusion train` or of DiffusionMapper.save.")
        meta = json.loads((out / "run.json").read_text())
        cfg = meta["config"]
        cfg["variants"] = tuple(cfg["variants"])
        config = DiffusionTrainConfig(**cfg)
        names = [v for v in (variants or config.variants) if (out / v).is_dir()]
        if not names:
            raise FileNotFoundError(f"{out} holds none of the models {list(variants or config.variants)}; "
                                    f"it was trained with {list(config.variants)}.")
        models = {}
        with quiet_transformers():
            for v in names:
                models[v] = (PlainMLM(AutoModelForMaskedLM.from_pretrained(out / v)) if v == "cwe"
                             else DCWEForMaskedLM.from_pretrained(out / v)).eval()
            tokenizer = AutoTokenizer.from_pretrained(out / names[0])  # (config.json says "dcwe": quiet)
        docs = pd.read_csv(out / "corpus" / "docs.csv", dtype={"unit": str, "doc_id": str}, keep_default_na=False)
        docs["time"] = docs["time"].map(_slice_caster(meta["slices"]))
        edges = pd.read_csv(out / "corpus" / "edges.csv", dtype={"source": str, "target": str}, keep_default_na=False)
        g = nx.DiGraph() if meta.get("directed") else nx.Graph()   # (runs saved before: undirected)
        g.add_nodes_from(meta["units"])
        g.add_weighted_edges_from(edges.itertuples(index=False, name=None))
        corpus = SocialCorpus.from_frame(docs, g, slices=meta["slices"])
        by_id = corpus.df.set_index("doc_id")
        splits = {k: by_id.loc[ids].reset_index() for k, ids in meta["splits"].items()}
        mapper = cls(config)
        mapper._set_fitted(models, tokenizer, corpus, splits, meta["perplexity"], meta.get("history", {}))
        return mapper

    # -- figures (pure functions of tempo_analysis.figures.diffusion) ----------------------------
    def visualize_perplexity(self, **kwargs) -> go.Figure:
        """Bars of held-out perplexity per model (``figures.diffusion.perplexity_bars``)."""
        self._check_fitted()
        return figures.perplexity_bars(self.perplexity_, **kwargs)

    def visualize_network_map(self, result: DiffusionAnalysis, *, layout: dict | None = None, seed: int = 0,
                              communities: dict | None = None, top_words: dict | int | None = 5,
                              slider: bool = False, **kwargs) -> go.Figure:
        """The unit graph once per time slice, side by side, nodes filled by r-hat
        (``figures.diffusion.diffusion_small_multiples``); ``slider=True``: one slice at a time with a
        time slider (``figures.diffusion.network_map``).

        layout: {unit: (x, y)}, shared by every panel; default a seeded layout (``graph_layout(graph, seed)``).
        communities: {unit: label}, drawn as marker outline colour and symbol; default Louvain
        communities of the graph (``graph_communities(graph, seed)``). top_words: {unit: [words]} for the
        hover text, or how many to read from the corpus (``unit_top_words``, word and anchor excluded).
        ``value="anchor_prob"`` fills the nodes with the model's probability of the anchor instead of
        r-hat (a ``prediction_rhat`` map; give ``cmin``/``cmax`` to compare two models on one scale).
        """
        self._check_fitted()
        graph = self.corpus_.graph
        layout = layout or figures.graph_layout(graph, seed=seed)
        if slider:
            return figures.network_map(graph, result.rhat, self.corpus_.slices, n_neighbors=result.n_neighbors,
                                       layout=layout, word=result.word, anchor=result.anchor, first=result.first,
                                       **kwargs)
        if communities is None:
            communities = graph_communities(graph, seed=seed)
        if isinstance(top_words, (int, np.integer)) and not isinstance(top_words, bool):
            top_words = unit_top_words(self.corpus_.df, top=int(top_words), exclude=(result.word, result.anchor))
        kwargs.setdefault("cmax", (result.n_neighbors or None) if kwargs.get("value", "rhat") == "rhat" else None)
        return figures.diffusion_small_multiples(graph, result.rhat, self.corpus_.slices, layout=layout,
                                                 communities=communities, top_words=top_words,
                                                 word=result.word, anchor=result.anchor, first=result.first, **kwargs)

    def visualize_walk_flight(self, result: DiffusionAnalysis, **kwargs) -> go.Figure:
        """Newly reached units per slice, walk vs flight (``figures.diffusion.walk_flight_bars``)."""
        return figures.walk_flight_bars(result.walk_flight, **kwargs)

    def visualize_rhat(self, result: DiffusionAnalysis, **kwargs) -> go.Figure:
        """Units x slices heatmap of r-hat (``figures.diffusion.rhat_heatmap``)."""
        return figures.rhat_heatmap(result.rhat, **kwargs)

    def visualize_variable_words(self, table: pd.DataFrame | None = None, **kwargs) -> go.Figure:
        """Table of the most variable words (``figures.diffusion.variable_words_table``); default
        ``variable_words()[0]``."""
        return figures.variable_words_table(self.variable_words()[0] if table is None else table, **kwargs)
