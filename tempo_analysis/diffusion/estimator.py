"""The social-diffusion facade: train DCWE and its comparison models, then map a word's diffusion.

    from tempo_analysis.diffusion import DiffusionMapper

    mapper = DiffusionMapper(epochs=2).fit(corpus)          # or DiffusionMapper("notebook"): notebook 03's settings
    mapper.perplexity_          # {"start": ..., "dcwe": ..., "cwe": ..., "sa": ..., "ta": ...} on the test split
    result = mapper.analyze("cloud", "server")          # r-hat, diffusion map, walk/flight, mode
    mapper.visualize_network_map(result); mapper.visualize_walk_flight(result)
    mapper.save("runs/world"); mapper = DiffusionMapper.load("runs/world", variants=["dcwe"])

The settings and their presets live in :mod:`tempo_analysis.diffusion.config`; the training
helpers in :mod:`tempo_analysis.diffusion.training`. Plotly is imported by the ``visualize_*``
methods only.
"""
from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import TYPE_CHECKING

import networkx as nx
import numpy as np
import pandas as pd
import torch
from torch.utils.data import DataLoader
from transformers import AutoModelForMaskedLM, AutoTokenizer

from tempo_analysis.base import Estimator
from tempo_analysis.data import SocialCorpus
from tempo_analysis.data.errors import DataPathError, read_json_file
from tempo_analysis.diffusion.analysis import ContextIndex, graph_communities, sim_table, unit_top_words
from tempo_analysis.diffusion.config import PRESETS, DiffusionTrainConfig
from tempo_analysis.diffusion.corpora import split_corpus
from tempo_analysis.diffusion.mlm import (MLMCollator, PlainMLM, SliceBatchSampler, SocialMLMDataset,
                                          document_nll, fixed_mlm_batches, mlm_perplexity)
from tempo_analysis.diffusion.model import DCWEForMaskedLM, content_vocabulary
from tempo_analysis.diffusion.node2vec import Node2Vec
from tempo_analysis.diffusion.report import DiffusionAnalysis, analyze, index_corpus, prediction_map
from tempo_analysis.diffusion.training import build_dcwe, load_mlm_encoder, param_groups, warm_mlm_head
from tempo_analysis.encoders import quiet_transformers
from tempo_analysis.training import TrainConfig, Trainer, seed_everything

if TYPE_CHECKING:   # figures are drawn by plotly, imported inside visualize_* only
    import plotly.graph_objects as go

RUN_FILE = "run.json"
TRUTH_FILE = "truth.json"


def _slice_caster(slices):
    """CSV round trip: map each time value back to the declared slice label (ints stay ints)."""
    lookup = {str(s): s for s in slices}
    return lambda v: lookup.get(str(v), v)


class DiffusionMapper(Estimator):
    """DCWE (Hofmann et al., ACL 2021) and its comparison models on a social corpus, with the
    paper's diffusion analyses, in the manner of a scikit-learn estimator.

    ``DiffusionMapper()`` runs the documented defaults (``config.PRESETS["cli"]``);
    ``DiffusionMapper("notebook")`` notebook 03's settings; ``DiffusionMapper(config, epochs=1, ...)``
    a :class:`~tempo_analysis.diffusion.config.DiffusionTrainConfig` with fields replaced.
    ``fit(corpus)`` checks the settings, trains ``variants`` and returns self.

    Learned attributes: ``models_`` ({variant: model}), ``model_`` (the DCWE; in a run without one,
    the first variant trained), ``tokenizer_``, ``corpus_`` (the SocialCorpus trained on),
    ``splits_`` ({"train", "dev", "test"}: frames), ``perplexity_`` (held-out MLM perplexity per
    variant, plus "start": the encoder before fine-tuning), ``histories_`` ({variant: training log
    rows}), ``history_`` (``model_``'s rows), ``warmup_steps_`` ({"head", "shared"}: the warm-up
    steps run before the variants fork) and ``truth_`` (the planted truth given to ``fit``, or
    None). ``config_`` holds the settings it ran with.
    """

    config_class = DiffusionTrainConfig
    presets = PRESETS
    kind = "diffusion-run"
    fitted_attribute = "model_"

    # -- training -----------------------------------------------------------------------------
    def fit(self, corpus: SocialCorpus, truth: dict | None = None) -> DiffusionMapper:
        """Train the configured variants on `corpus` and score them on its held-out test split; returns self.

        corpus: a SocialCorpus, or what :func:`tempo_analysis.resolve.load_social` returns (its
        ``data`` and ``truth``). truth: the planted truth of a synthetic corpus (kept as ``truth_``
        and saved with the run, for the planted mode to read beside the recovered one); None for real data.
        """
        cfg = self._start_fit()
        if not isinstance(corpus, SocialCorpus) and hasattr(corpus, "data") and hasattr(corpus, "truth"):
            corpus, truth = corpus.data, corpus.truth if truth is None else truth
        seed_everything(cfg.seed)
        train_df, dev_df, test_df = split_corpus(corpus, cfg.dev, cfg.test, cfg.seed)
        for name, part in (("train", train_df), ("test", test_df)):
            if part.empty:
                raise ValueError(f"the {name} split is empty ({len(corpus)} documents); give more documents or "
                                 "change DiffusionTrainConfig.dev/test.")
        encoder, tok, fresh_head = load_mlm_encoder(cfg.encoder)
        # social input: node2vec vectors of the unit graph (isolated units get walks of themselves)
        n2v = Node2Vec(**{"seed": cfg.seed, **cfg.node2vec}).fit(corpus.graph)
        node_vectors = n2v.vectors(corpus.units)
        dynamic_ids = content_vocabulary(train_df["text"], tok, top_k=cfg.top_k)
        ds = {k: SocialMLMDataset(df, tok, corpus.unit_index, corpus.slice_index, cfg.max_length)
              for k, df in (("train", train_df), ("dev", dev_df), ("test", test_df))}
        test_batches = fixed_mlm_batches(ds["test"], tok, seed=cfg.seed + 1, repeats=cfg.eval_repeats)
        dev_batches = fixed_mlm_batches(ds["dev"], tok, seed=cfg.seed + 2) if len(ds["dev"]) else None
        histories: dict = {}
        warmup_steps = {"head": 0, "shared": 0}
        steps = cfg.head_warmup_steps
        if steps == "auto":
            epoch = -(-len(ds["train"]) // cfg.batch_size)
            steps = min(epoch, cfg.max_steps or epoch) if fresh_head else 0
        if steps:
            warm_mlm_head(encoder, ds["train"], tok, steps, cfg.head_lr, cfg)
            warmup_steps["head"] = steps
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
            warmup_steps["shared"] = cfg.shared_warmup_steps
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
                              param_groups=param_groups(model, cfg))
            trainer.fit(train_data(), dev_batches)
            model = model.to("cpu").eval()
            models[variant] = model
            perplexity[variant] = mlm_perplexity(model, test_batches)
            histories[variant] = [{k: v for k, v in row.items() if isinstance(v, (int, float))}
                                  for row in trainer.history_]
        self._set_fitted(models, tok, corpus, {"train": train_df, "dev": dev_df, "test": test_df}, perplexity,
                         histories, warmup_steps, copy.deepcopy(truth))
        return self

    def _set_fitted(self, models, tokenizer, corpus, splits, perplexity, histories, warmup_steps, truth) -> None:
        self.models_, self.tokenizer_, self.corpus_, self.truth_ = models, tokenizer, corpus, truth
        self.splits_, self.perplexity_, self.histories_ = splits, perplexity, histories
        self.warmup_steps_ = {"head": 0, "shared": 0, **warmup_steps}
        main = "dcwe" if "dcwe" in models else next(iter(models))
        self.history_ = histories.get(main, [])
        self.model_ = models[main]

    def _model(self, variant: str):
        """The trained model of one variant ("dcwe", "cwe", "sa" or "ta"), with a clear error when absent."""
        self._check_fitted()
        if variant not in self.models_:
            raise ValueError(f"this mapper has no {variant!r} model (it has {list(self.models_)}); "
                             f"train with {variant!r} in DiffusionTrainConfig.variants.")
        return self.models_[variant]

    # -- measures ------------------------------------------------------------------------------
    def held_out_perplexity(self, words=None, variants=None) -> dict:
        """{variant: perplexity} on the test split's fixed masks (the masks ``fit`` scored with).

        words: score only the masked tokens that are one of these words (each must be one token),
        e.g. the planted companions: the tokens whose choice the unit and the time decide.
        """
        self._check_fitted()
        cfg, tok = self.config_, self.tokenizer_
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
        return {v: mlm_perplexity(self._model(v), batches, only=only) for v in (variants or self.models_)}

    def paired_comparison(self, variant: str = "dcwe", control: str = "cwe") -> dict:
        """Held-out perplexity of two variants on the test split's fixed masks, with the paper's paired test:
        a Wilcoxon signed-rank test over the test documents of their mean masked-token cross-entropy.

        Returns perplexities, ``n_docs`` (documents with a masked token), ``wilcoxon`` and ``p_value``
        (two-sided), ``share_lower`` (documents where ``variant`` has the lower loss) and ``gain``
        (1 - ppl_variant / ppl_control).
        """
        from scipy.stats import wilcoxon

        self._check_fitted()
        cfg, tok = self.config_, self.tokenizer_
        ds = SocialMLMDataset(self.splits_["test"], tok, self.corpus_.unit_index, self.corpus_.slice_index,
                              cfg.max_length)
        batches = fixed_mlm_batches(ds, tok, seed=cfg.seed + 1, repeats=cfg.eval_repeats)
        (sa, n), (sb, _) = (document_nll(self._model(v), batches, len(ds)) for v in (variant, control))
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
        time; progress: None follows ``config_.progress``.
        """
        self._check_fitted()
        return index_corpus(self._model(variant), self.tokenizer_, self.corpus_, frame,
                            max_docs_per_unit_slice=max_docs_per_unit_slice, batch_size=batch_size,
                            max_length=max_length, seed=seed,
                            progress=self.config_.progress if progress is None else progress)

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

        model: another model to read on the same candidates (e.g. ``evaluate.without_offsets(mapper.model_)``);
        default: ``variant``'s.
        """
        self._check_fitted()
        return prediction_map(model if model is not None else self._model(variant), self.tokenizer_, self.corpus_,
                              word, anchor, n_neighbors=n_neighbors, threshold=threshold,
                              candidates=self.models_["dcwe"].dynamic_token_ids if "dcwe" in self.models_ else None)

    def variable_words(self, frame: pd.DataFrame | None = None, top: int = 10, min_contexts: int = 3):
        """(top words by sigma_sim with example contexts, all sims) of the DCWE model.

        frame: the contexts to read; default the dev split (as the paper), or the corpus when it is empty.
        """
        self._check_fitted()
        if frame is None:
            frame = self.splits_["dev"] if len(self.splits_["dev"]) else self.corpus_.df
        return sim_table(self._model("dcwe"), self.tokenizer_, frame, top=top, min_contexts=min_contexts)


    # -- persistence (Estimator.save / Estimator.load) -----------------------------------------
    @classmethod
    def _saved_files(cls) -> tuple:
        return (RUN_FILE, "corpus/docs.csv", "corpus/edges.csv")

    def _save_fitted(self, out: Path) -> None:
        """out/<variant>/ (safetensors + config + tokenizer), out/corpus/{docs,edges}.csv, out/run.json
        (perplexities, histories, splits), out/truth.json (when there is a planted truth)."""
        with quiet_transformers():
            for name, model in self.models_.items():
                model.save_pretrained(out / name)
                self.tokenizer_.save_pretrained(out / name)
        (out / "corpus").mkdir(exist_ok=True)
        self.corpus_.df.to_csv(out / "corpus" / "docs.csv", index=False)
        edges = pd.DataFrame([(a, b, d.get("weight", 1.0)) for a, b, d in self.corpus_.graph.edges(data=True)],
                             columns=["source", "target", "weight"])
        edges.to_csv(out / "corpus" / "edges.csv", index=False)
        meta = {"perplexity": self.perplexity_, "histories": self.histories_, "warmup_steps": self.warmup_steps_,
                "units": self.corpus_.units, "slices": self.corpus_.slices,
                "directed": self.corpus_.graph.is_directed(),
                "splits": {k: v["doc_id"].tolist() for k, v in self.splits_.items()}}
        (out / RUN_FILE).write_text(json.dumps(meta, indent=1, default=str))
        if self.truth_ is not None:
            (out / TRUTH_FILE).write_text(json.dumps(self.truth_, indent=1, default=str))

    def _load_fitted(self, out: Path) -> None:
        """The variants of ``config_.variants`` that the folder holds (``load(folder, variants=[...])``
        reads only those); ``config_.variants`` becomes the variants read."""
        fix = "restore the file, or train the run again (tempo-analysis diffusion train --out DIR)"
        meta = read_json_file(out / RUN_FILE, what="diffusion run file", fix=fix,
                              keys=("perplexity", "units", "slices", "splits"))
        wanted = self.config_.variants
        names = [v for v in wanted if (out / v).is_dir()]
        if not names:
            raise DataPathError(f"{str(out)!r} holds none of the models {list(wanted)}; it was trained with "
                                f"{list(self.config.variants)}. Fix: load one of those "
                                f"(DiffusionMapper.load(folder, variants=[...])).")
        self.config_ = dataclasses.replace(self.config_, variants=tuple(names))
        models = {}
        with quiet_transformers():
            for v in names:
                models[v] = (PlainMLM(AutoModelForMaskedLM.from_pretrained(out / v)) if v == "cwe"
                             else DCWEForMaskedLM.from_pretrained(out / v)).eval()
            tokenizer = AutoTokenizer.from_pretrained(out / names[0])  # (config.json says "dcwe": quiet)
        docs = pd.read_csv(out / "corpus" / "docs.csv", dtype={"unit": str, "doc_id": str}, keep_default_na=False)
        docs["time"] = docs["time"].map(_slice_caster(meta["slices"]))
        edges = pd.read_csv(out / "corpus" / "edges.csv", dtype={"source": str, "target": str}, keep_default_na=False)
        g = nx.DiGraph() if meta.get("directed") else nx.Graph()
        g.add_nodes_from(meta["units"])
        g.add_weighted_edges_from(edges.itertuples(index=False, name=None))
        corpus = SocialCorpus.from_frame(docs, g, slices=meta["slices"])
        by_id = corpus.df.set_index("doc_id")
        splits = {k: by_id.loc[ids].reset_index() for k, ids in meta["splits"].items()}
        histories = {v: rows for v, rows in meta.get("histories", {}).items() if v in models}
        truth = (read_json_file(out / TRUTH_FILE, what="diffusion run's planted truth", fix=fix)
                 if (out / TRUTH_FILE).is_file() else None)
        self._set_fitted(models, tokenizer, corpus, splits, meta["perplexity"], histories,
                         meta.get("warmup_steps", {}), truth)

    # -- figures (pure functions of tempo_analysis.figures.diffusion, imported when drawn) -------
    # -- figures (pure functions of tempo_analysis.figures.diffusion) ----------------------------
    def visualize_perplexity(self, **kwargs) -> go.Figure:
        """Bars of held-out perplexity per model (``figures.diffusion.perplexity_bars``)."""
        from tempo_analysis.figures import diffusion as figures

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
        from tempo_analysis.figures import diffusion as figures

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
        from tempo_analysis.figures import diffusion as figures

        return figures.walk_flight_bars(result.walk_flight, **kwargs)

    def visualize_rhat(self, result: DiffusionAnalysis, **kwargs) -> go.Figure:
        """Units x slices heatmap of r-hat (``figures.diffusion.rhat_heatmap``)."""
        from tempo_analysis.figures import diffusion as figures

        return figures.rhat_heatmap(result.rhat, **kwargs)

    def visualize_variable_words(self, table: pd.DataFrame | None = None, **kwargs) -> go.Figure:
        """Table of the most variable words (``figures.diffusion.variable_words_table``); default
        ``variable_words()[0]``."""
        from tempo_analysis.figures import diffusion as figures

        return figures.variable_words_table(self.variable_words()[0] if table is None else table, **kwargs)


__all__ = ["DiffusionMapper"]
