"""SemanticChangeRanker: rank target words by how much their meaning changed between two periods.

    from tempo_analysis import SemanticChangeRanker
    from tempo_analysis.resolve import load_change_data
    data = load_change_data("world").data                # or "pseudoword", "nltk", "semeval:DIR", "dwug:DIR"
    ranker = SemanticChangeRanker("notebook").fit(data)  # or SemanticChangeRanker() (the CLI's defaults),
                                                         # SemanticChangeRanker(method="plain", samples=30)
    ranker.scores_, ranker.ranking_, ranker.metrics_      # word/score/rank table; words, most changed first;
                                                          # Spearman, Pearson (+p), binary accuracy
    ranker.rescore(scorer="prt", layers=2)                # the stored vectors scored again, no re-embedding
    ranker.visualize_ranking(); ranker.visualize_usage_map("cell")
    ranker.save("run/"); SemanticChangeRanker.load("run/")

``fit`` builds the method's model from a pretrained encoder (weights kept), post-trains it on the
period-tagged corpus, embeds a seeded sample of usages per target and compared period, scores every
target and evaluates against the truth when the data has one. Targets missing from a period are
reported (``missing_``) and score NaN; the correlation drops them and says how many. Saved without
pickle: the settings as ``config.json``, the model as safetensors, its tokenizer, the vectors as .npz,
the tables as CSV.

Settings: :mod:`tempo_analysis.semantic_change.config` (``RankConfig`` and its presets ``"cli"``,
``"notebook"``). Several methods on one dataset: :mod:`tempo_analysis.semantic_change.compare`.
"""
from __future__ import annotations

import json
import time
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from transformers import AutoTokenizer

from ..base import Estimator
from ..data import TargetUsage, usages_frame
from ..data.change import ChangeData
from ..data.errors import DataError
from ..encoders import quiet_transformers
from ..hub import WEIGHT_FILES
from .config import PRESETS, RankConfig
from .explore import UsageMap, embed_sentence, period_neighbours, usage_map
from .extraction import TargetVectors
from .model import TemporalAttentionForMaskedLM
from .pipeline import ChangeModel, add_target_tokens, build_model, evaluate_scores, sample_usages, train_model
from .scoring import check_layers, score_words

if TYPE_CHECKING:   # plotly is imported by the visualize_* methods only, when a figure is drawn
    import plotly.graph_objects as go


# what SemanticChangeRanker.save writes besides config.json, and load reads (checked before anything is read)
SAVED_FILES = ("meta.json", "model/config.json", tuple(f"model/{f}" for f in WEIGHT_FILES), "vectors.npz", "usages.csv",
               "scores.csv")


class SemanticChangeRanker(Estimator):
    """Ranks a :class:`~tempo_analysis.data.change.ChangeData`'s targets by semantic change.

    ``SemanticChangeRanker(config=None, **overrides)``: ``config`` is a
    :class:`~tempo_analysis.semantic_change.config.RankConfig`, a preset name (``"cli"``, the default;
    ``"notebook"``) or a dict; ``overrides`` are RankConfig fields (``method="plain", samples=30``).
    They are checked by ``fit``, which stores the settings it ran with as ``config_``.

    Learned by ``fit``: ``model_`` (the method's :class:`ChangeModel`), ``vectors_`` (usage vectors,
    every hidden layer), ``scores_`` (word, score, rank, usages per period, note), ``ranking_`` (the
    words, most changed first), ``metrics_`` (against the truth; empty without one), ``missing_``,
    ``timings_``, and what it was fitted on: ``data_name_``, ``targets_``, ``periods_``, ``compared_``,
    ``truth_``.
    """

    config_class = RankConfig
    presets = PRESETS
    kind = "semantic-change-ranker"
    fitted_attribute = "model_"

    # ----- fit ----------------------------------------------------------------------------------
    def fit(self, data: ChangeData, *, model: ChangeModel | None = None) -> "SemanticChangeRanker":
        """Build (or reuse ``model``) the method's model, post-train it, embed a seeded sample, score, evaluate.

        The settings are resolved and checked first (``config_``), before any data or model is touched."""
        cfg = self._start_fit()
        data.corpus.require_periods(2, "semantic change ranking")   # a single period would score every word 0
        timings = {}
        t0 = time.perf_counter()
        built = model is None
        if built:
            doc_counts = list(data.sentences_per_period().values())      # scaled-doc: the whole periods' sizes
            model = build_model(cfg.method, data.periods, encoder=cfg.encoder, doc_counts=doc_counts,
                                form=cfg.form, time_residual=cfg.time_residual, seed=cfg.seed,
                                time_norm=cfg.time_norm)
        check_layers(cfg.layers, model.model.config.num_hidden_layers)   # before training and embedding
        if built:
            trains = cfg.train is not None and cfg.train.epochs > 0     # --train-epochs 0 skips post-training
            if cfg.add_targets and trains:      # new whole tokens only make sense when training can fit them
                model.added_targets = add_target_tokens(model, data.targets)
            if trains:
                train_model(model, data, cfg.train_config())
        timings["model_s"] = time.perf_counter() - t0
        usages, missing = sample_usages(data, cfg.samples, cfg.seed)
        for m in missing:
            warnings.warn(f"{m}: it scores NaN and is left out of the correlation.", stacklevel=2)
        t1 = time.perf_counter()
        vectors = model.embed(usages, batch_size=cfg.batch_size, max_length=cfg.max_length, precision=cfg.precision,
                              progress=cfg.progress)
        timings["embed_s"] = time.perf_counter() - t1
        self.model_, self.vectors_, self.missing_, self.timings_ = model, vectors, missing, timings
        self.data_name_, self.targets_ = data.name, list(data.targets)
        self.periods_, self.compared_ = list(data.periods), list(data.compared)
        self.truth_ = data.truth
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # already reported above, once per missing (word, period)
            self._set_scores(self.rescore())
        return self

    def _set_scores(self, scores: pd.DataFrame) -> None:
        self.scores_ = scores
        self.ranking_ = scores["word"].tolist()
        self.metrics_ = evaluate_scores(scores, self.truth_)

    # ----- the stored vectors, read again ------------------------------------------------------------
    def rescore(self, *, scorer: str | None = None, layers=None, n: int | None = None,
                zscore: bool | None = None) -> pd.DataFrame:
        """The stored vectors scored under other settings (no re-embedding); unset: the config's.

        ``n``: a seeded subsample of at most n usages per word and period. Returns a frame like
        ``scores_``, most changed first; :meth:`evaluate` turns it into metrics.
        """
        self._check_fitted()
        cfg = self.config_
        return score_words(self.vectors_, self.compared_, scorer=scorer or cfg.scorer,
                           layers=cfg.layers if layers is None else layers, n=n,
                           zscore_vectors=cfg.zscore if zscore is None else zscore, seed=cfg.seed,
                           words=self.targets_)

    def evaluate(self, scores: pd.DataFrame | None = None) -> dict:
        """Spearman/Pearson (+p) and binary accuracy of ``scores`` (default ``scores_``) against ``truth_``."""
        self._check_fitted()
        return evaluate_scores(self.scores_ if scores is None else scores, self.truth_)

    def usage_map(self, word: str, *, method: str = "umap") -> UsageMap:
        """``word``'s usages on a 2-D map (seeded cosine UMAP, or ``method="pca"``) at the config's layers."""
        self._check_fitted()
        return usage_map(self.vectors_, word, layers=self.config_.layers, seed=self.config_.seed, method=method)

    def neighbours(self, word: str, *, k: int = 10) -> dict:
        """{period: [(word, score), ...]}: the model's best substitutes for ``word`` in each period."""
        self._check_fitted()
        return period_neighbours(self.model_, self.vectors_, word, k=k)

    def embed_sentence(self, text: str, word: str, period) -> np.ndarray:
        """The layer-averaged vector of ``word`` in ``text``, run under ``period``."""
        self._check_fitted()
        return embed_sentence(self.model_, text, word, period, layers=self.config_.layers)

    # ----- figures (pure functions of tempo_analysis.figures.semantic_change) ------------------------
    def visualize_ranking(self, *, title: str | None = None) -> go.Figure:
        """True rank against the model's rank per word (needs graded truth); Spearman in the title."""
        self._check_fitted()
        if self.truth_ is None or "graded" not in self.truth_:
            raise ValueError(f"{self.data_name_!r} has no graded truth to rank against. "
                             "Fix: use visualize_scores() for the scores alone.")
        from ..figures.semantic_change import rank_scatter

        return rank_scatter(self.scores_, self.truth_, title=title, metrics=self.metrics_)

    def visualize_scores(self, *, highlight: str | None = None, title: str | None = None) -> go.Figure:
        """Every target's change score, most changed first; ``highlight`` marks one word."""
        self._check_fitted()
        from ..figures.semantic_change import score_bars

        return score_bars(self.scores_, highlight=highlight, title=title)

    def visualize_usage_map(self, word: str, *, method: str = "umap", sentence: str | None = None,
                            period=None, precomputed: UsageMap | None = None) -> go.Figure:
        """``word``'s usages on a 2-D map coloured by period; with ``sentence``, where it lands when run
        under ``period`` (default: the later compared period). ``precomputed``: the word's map, already
        computed by :meth:`usage_map` (UMAP takes seconds)."""
        m = precomputed if precomputed is not None else self.usage_map(word, method=method)
        extra = None
        if sentence is not None:
            v = self.embed_sentence(sentence, word, self.compared_[-1] if period is None else period)
            extra = {**m.place(v, self.compared_), "text": sentence}
        from ..figures.semantic_change import usage_map as usage_map_figure

        return usage_map_figure(m.coords, m.periods, m.sentences, word=word, compared=self.compared_, extra=extra)

    def visualize_neighbours(self, word: str, *, k: int = 10) -> go.Figure:
        """A table of ``word``'s nearest words in each period."""
        from ..figures.semantic_change import neighbours_table

        return neighbours_table(self.neighbours(word, k=k), word=word)

    # ----- persistence (save / load: tempo_analysis.base.Estimator) ------------------------------
    @classmethod
    def _saved_files(cls) -> tuple:
        return SAVED_FILES

    def _save_fitted(self, d: Path) -> None:
        """The model (safetensors) and tokenizer, the vectors (.npz), usages, scores and truth (CSV), the rest
        as JSON; no pickle. ``config.json`` (the settings) is written by :meth:`save`."""
        cm = self.model_
        cm.model.save_pretrained(d / "model")
        cm.tokenizer.save_pretrained(d / "model")
        tv = self.vectors_
        np.savez(d / "vectors.npz", vectors=tv.vectors, layers=np.array(tv.layers), n_pieces=tv.n_pieces,
                 windowed=tv.windowed)
        u = usages_frame(tv.usages)
        u["period"] = u["period"].map(lambda p: json.dumps(p))
        u.to_csv(d / "usages.csv", index=False)
        self.scores_.to_csv(d / "scores.csv", index=False)
        if self.truth_ is not None:
            self.truth_.to_csv(d / "truth.csv", index=False)
        meta = {"method": cm.method, "periods": cm.periods, "time_token_ids": cm.time_token_ids,
                "train_report": cm.train_report, "added_targets": cm.added_targets,
                "metrics": self.metrics_, "missing": self.missing_, "timings": self.timings_,
                "scores_attrs": self.scores_.attrs, "data": {"name": self.data_name_, "targets": self.targets_,
                                                             "periods": self.periods_, "compared": self.compared_}}
        (d / "meta.json").write_text(json.dumps(meta, default=str))

    def _load_fitted(self, d: Path) -> None:
        """Read what :meth:`_save_fitted` wrote (the folder's files are checked by :meth:`load` first); the
        inner model is read from disk only."""
        try:
            meta = json.loads((d / "meta.json").read_text(encoding="utf-8"))
        except ValueError as e:
            raise DataError(f"SemanticChangeRanker folder {str(d)!r}: meta.json is not valid JSON ({e}). Fix: pass a "
                            "folder written by SemanticChangeRanker.save (ranker.save(DIR))") from None
        with quiet_transformers():   # our own folder: no weight-loading bar in a notebook
            model = TemporalAttentionForMaskedLM.from_pretrained(d / "model", local_files_only=True).eval()
            tok = AutoTokenizer.from_pretrained(d / "model", local_files_only=True)
        z = np.load(d / "vectors.npz")
        # every column as written: a period is JSON text (1990 must not come back as an int to json.loads),
        # and a word such as "1984" or "null" stays a string
        u = pd.read_csv(d / "usages.csv", dtype={"doc_id": str, "period": str, "word": str, "text": str},
                        keep_default_na=False)
        usages = [TargetUsage(w, json.loads(p), t, int(s), int(e), doc or None)
                  for w, p, t, s, e, doc in zip(u["word"], u["period"], u["text"], u["start"], u["end"], u["doc_id"])]
        self.vectors_ = TargetVectors(z["vectors"], usages, [int(x) for x in z["layers"]], z["n_pieces"],
                                      z["windowed"])
        scores = pd.read_csv(d / "scores.csv", dtype={"note": str, "word": str}, keep_default_na=False,
                             na_values={"score": ["", "nan", "NaN"], "rank": ["", "nan", "NaN"]})
        scores.attrs.update(meta["scores_attrs"])
        data = meta["data"]
        self.data_name_, self.targets_ = data["name"], data["targets"]
        self.periods_, self.compared_ = data["periods"], data["compared"]
        self.truth_ = (pd.read_csv(d / "truth.csv", dtype={"word": str}, keep_default_na=False,
                                   na_values=["", "nan", "NaN"]) if (d / "truth.csv").is_file() else None)
        self.missing_, self.timings_ = meta["missing"], meta["timings"]
        self.scores_, self.ranking_, self.metrics_ = scores, scores["word"].tolist(), meta["metrics"]
        self.model_ = ChangeModel(meta["method"], model, tok, meta["periods"], meta["time_token_ids"],
                                  meta["train_report"], meta["added_targets"], time_blind=meta["method"] == "no-time")
