"""SemanticChangeRanker: rank target words by how much their meaning changed between two periods.

    from tempo_analysis.data.specs import load_change_data
    from tempo_analysis.semantic_change import SemanticChangeRanker
    data = load_change_data("world")                     # or "nltk", "semeval:DIR", "dwug:DIR"
    ranker = SemanticChangeRanker(method="temporal-attention").fit(data)
    ranker.scores_, ranker.ranking_, ranker.metrics_      # word/score/rank table; words, most changed first;
                                                          # Spearman, Pearson (+p), binary accuracy
    ranker.rescore(scorer="prt", layers=2)                # the stored vectors scored again, no re-embedding
    ranker.visualize_ranking(); ranker.visualize_usage_map("cell")
    ranker.save("run/"); SemanticChangeRanker.load("run/")

``fit`` builds the method's model from a pretrained encoder (weights kept), post-trains it on the
period-tagged corpus, embeds a seeded sample of usages per target and compared period, scores every
target and evaluates against the truth when the data has one. Targets missing from a period are
reported (``missing_``) and score NaN; the correlation drops them and says how many. Saved without
pickle: the model as safetensors, its tokenizer, the vectors as .npz, the tables as CSV.

:func:`comparison_table` scores several fitted rankers with several scorers (notebook 02's
comparison); :func:`fit_methods` fits one ranker per method, memoised with
:func:`tempo_analysis.notebook.cached` (a no-op unless ``TEMPO_ANALYSIS_CACHE`` is set).
"""
from __future__ import annotations

import json
import time
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from transformers import AutoTokenizer

from ..data import TargetUsage, usages_frame
from ..data.change import ChangeData
from ..data.errors import DataError
from ..encoders import quiet_transformers
from ..figures import semantic_change as figures
from ..hub import WEIGHT_FILES, require_saved_files
from ..notebook import cached
from ..outputs import atomic_output_dir
from .explore import UsageMap, embed_sentence, period_neighbours, usage_map
from .extraction import TargetVectors
from .model import TemporalAttentionForMaskedLM
from .pipeline import (ChangeModel, RankConfig, add_target_tokens, build_model, evaluate_scores, sample_usages,
                       train_model)
from .scoring import check_layers, score_words


# what SemanticChangeRanker.save writes and load reads (checked before anything is read)
SAVED_FILES = ("meta.json", "model/config.json", tuple(f"model/{f}" for f in WEIGHT_FILES), "vectors.npz", "usages.csv",
               "scores.csv")


class SemanticChangeRanker:
    """Ranks a :class:`~tempo_analysis.data.change.ChangeData`'s targets by semantic change.

    Settings: a :class:`~tempo_analysis.semantic_change.pipeline.RankConfig` (``config``), and/or its
    fields as keywords (``SemanticChangeRanker(method="plain", samples=30)``). Learned by ``fit``:
    ``model_`` (the method's :class:`ChangeModel`), ``vectors_`` (usage vectors, every hidden layer),
    ``scores_`` (word, score, rank, usages per period, note), ``ranking_`` (the words, most changed
    first), ``metrics_`` (against the truth; empty without one), ``missing_``, ``timings_``, and what
    it was fitted on: ``data_name_``, ``targets_``, ``periods_``, ``compared_``, ``truth_``.
    """

    def __init__(self, config: RankConfig | None = None, /, **settings):
        self.config = replace(config if config is not None else RankConfig(), **settings)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.config!r})"

    # ----- fit ----------------------------------------------------------------------------------
    def fit(self, data: ChangeData, *, model: ChangeModel | None = None) -> "SemanticChangeRanker":
        """Build (or reuse ``model``) the method's model, post-train it, embed a seeded sample, score, evaluate."""
        cfg = self.config
        data.corpus.require_periods(2, "semantic change ranking")   # a single period would score every word 0
        timings = {}
        t0 = time.perf_counter()
        built = model is None
        if built:
            doc_counts = list(data.sentences_per_period().values())      # scaled-doc: the whole periods' sizes
            model = build_model(cfg.method, data.periods, encoder=cfg.encoder, doc_counts=doc_counts,
                                form=cfg.form, time_residual=cfg.time_residual, seed=cfg.seed)
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

    def _check_fitted(self):
        if not hasattr(self, "vectors_"):
            raise ValueError(f"this {type(self).__name__} is not fitted yet. Fix: call .fit(data) first, "
                             "or SemanticChangeRanker.load(folder).")

    # ----- the stored vectors, read again ------------------------------------------------------------
    def rescore(self, *, scorer: str | None = None, layers=None, n: int | None = None,
                zscore: bool | None = None) -> pd.DataFrame:
        """The stored vectors scored under other settings (no re-embedding); unset: the config's.

        ``n``: a seeded subsample of at most n usages per word and period. Returns a frame like
        ``scores_``, most changed first; :meth:`evaluate` turns it into metrics.
        """
        self._check_fitted()
        cfg = self.config
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
        return usage_map(self.vectors_, word, layers=self.config.layers, seed=self.config.seed, method=method)

    def neighbours(self, word: str, *, k: int = 10) -> dict:
        """{period: [(word, score), ...]}: the model's best substitutes for ``word`` in each period."""
        self._check_fitted()
        return period_neighbours(self.model_, self.vectors_, word, k=k)

    def embed_sentence(self, text: str, word: str, period) -> np.ndarray:
        """The layer-averaged vector of ``word`` in ``text``, run under ``period``."""
        self._check_fitted()
        return embed_sentence(self.model_, text, word, period, layers=self.config.layers)

    # ----- figures (tempo_analysis.figures.semantic_change) --------------------------------------------
    def visualize_ranking(self, *, title: str | None = None) -> go.Figure:
        """True rank against the model's rank per word (needs graded truth); Spearman in the title."""
        self._check_fitted()
        if self.truth_ is None or "graded" not in self.truth_:
            raise ValueError(f"{self.data_name_!r} has no graded truth to rank against. "
                             "Fix: use visualize_scores() for the scores alone.")
        return figures.rank_scatter(self.scores_, self.truth_, title=title, metrics=self.metrics_)

    def visualize_scores(self, *, highlight: str | None = None, title: str | None = None) -> go.Figure:
        """Every target's change score, most changed first; ``highlight`` marks one word."""
        self._check_fitted()
        return figures.score_bars(self.scores_, highlight=highlight, title=title)

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
        return figures.usage_map(m.coords, m.periods, m.sentences, word=word, compared=self.compared_, extra=extra)

    def visualize_neighbours(self, word: str, *, k: int = 10) -> go.Figure:
        """A table of ``word``'s nearest words in each period."""
        return figures.neighbours_table(self.neighbours(word, k=k), word=word)

    # ----- persistence ------------------------------------------------------------------------
    def save(self, folder, *, overwrite: bool = False) -> Path:
        """Write the fitted ranker to ``folder`` (safetensors, tokenizer, .npz, CSV and JSON; no pickle).

        The output policy of :mod:`tempo_analysis.outputs` applies: written whole into a temporary
        sibling, then renamed into place; a non-empty folder that tempo_analysis did not write is
        refused unless ``overwrite=True``.
        """
        self._check_fitted()
        with atomic_output_dir(folder, overwrite=overwrite, kind="semantic-change-ranker") as d:
            self._write(d)
        return Path(folder)

    def _write(self, d: Path) -> None:
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
                "train_report": cm.train_report, "added_targets": cm.added_targets, "config": self.config.to_dict(),
                "metrics": self.metrics_, "missing": self.missing_, "timings": self.timings_,
                "scores_attrs": self.scores_.attrs, "data": {"name": self.data_name_, "targets": self.targets_,
                                                             "periods": self.periods_, "compared": self.compared_}}
        (d / "meta.json").write_text(json.dumps(meta, default=str))

    @classmethod
    def load(cls, folder) -> "SemanticChangeRanker":
        """A ranker written by :meth:`save`, fitted as it was.

        The folder is checked first (``meta.json``, the model, vectors, usages, scores): a missing file is
        one error naming the folder and the file; the inner model is read from disk only."""
        d = require_saved_files(folder, SAVED_FILES, what="SemanticChangeRanker folder",
                                fix="pass a folder written by SemanticChangeRanker.save (ranker.save(DIR))")
        try:
            meta = json.loads((d / "meta.json").read_text(encoding="utf-8"))
        except ValueError as e:
            raise DataError(f"SemanticChangeRanker folder {str(d)!r}: meta.json is not valid JSON ({e}). Fix: pass a "
                            "folder written by SemanticChangeRanker.save (ranker.save(DIR))") from None
        with quiet_transformers():   # our own folder: no weight-loading bar in a notebook
            model = TemporalAttentionForMaskedLM.from_pretrained(d / "model", local_files_only=True).eval()
            tok = AutoTokenizer.from_pretrained(d / "model", local_files_only=True)
        ranker = cls(RankConfig.from_dict(meta["config"]))
        ranker.model_ = ChangeModel(meta["method"], model, tok, meta["periods"], meta["time_token_ids"],
                                    meta["train_report"], meta["added_targets"], time_blind=meta["method"] == "no-time")
        z = np.load(d / "vectors.npz")
        # every column as written: a period is JSON text (1990 must not come back as an int to json.loads),
        # and a word such as "1984" or "null" stays a string
        u = pd.read_csv(d / "usages.csv", dtype={"doc_id": str, "period": str, "word": str, "text": str},
                        keep_default_na=False)
        usages = [TargetUsage(w, json.loads(p), t, int(s), int(e), doc or None)
                  for w, p, t, s, e, doc in zip(u["word"], u["period"], u["text"], u["start"], u["end"], u["doc_id"])]
        ranker.vectors_ = TargetVectors(z["vectors"], usages, [int(x) for x in z["layers"]], z["n_pieces"],
                                        z["windowed"])
        scores = pd.read_csv(d / "scores.csv", dtype={"note": str, "word": str}, keep_default_na=False,
                             na_values={"score": ["", "nan", "NaN"], "rank": ["", "nan", "NaN"]})
        scores.attrs.update(meta["scores_attrs"])
        data = meta["data"]
        ranker.data_name_, ranker.targets_ = data["name"], data["targets"]
        ranker.periods_, ranker.compared_ = data["periods"], data["compared"]
        ranker.truth_ = (pd.read_csv(d / "truth.csv", dtype={"word": str}, keep_default_na=False,
                                     na_values=["", "nan", "NaN"]) if (d / "truth.csv").is_file() else None)
        ranker.missing_, ranker.timings_ = meta["missing"], meta["timings"]
        ranker.scores_, ranker.ranking_, ranker.metrics_ = scores, scores["word"].tolist(), meta["metrics"]
        return ranker


# ---------------------------------------------------------------------------------------------
# several methods on one dataset (notebook 02's comparison)
# ---------------------------------------------------------------------------------------------
def fit_cached(data: ChangeData, config: RankConfig, *, cache_name: str = "02-semantic-change") -> SemanticChangeRanker:
    """``SemanticChangeRanker(config).fit(data)``, memoised by (data name, its contents' fingerprint,
    targets, settings): the same name over other contents (another world folder, another sentence
    cap) is fitted anew."""
    params = {"data": data.name, "data_fingerprint": data.fingerprint(), "targets": list(data.targets),
              "config": config.to_dict()}
    return cached(f"{cache_name}-{config.method}", params, lambda: SemanticChangeRanker(config).fit(data),
                  save=lambda ranker, folder: ranker.save(folder), load=SemanticChangeRanker.load)


def fit_methods(data: ChangeData, configs: dict[str, RankConfig], *, progress=None) -> dict[str, SemanticChangeRanker]:
    """{method: fitted ranker} for each method's config (in order); ``progress(method)`` before each."""
    out = {}
    for method, config in configs.items():
        if progress:
            progress(method)
        out[method] = fit_cached(data, config)
    return out


def comparison_table(rankers: dict[str, SemanticChangeRanker], scorers=("cosine", "prt", "apd-within"),
                     *, layers=None, zscore=None) -> pd.DataFrame:
    """One row per (method, scorer): Spearman, Pearson, their p-values and the settings used."""
    rows = []
    for method, r in rankers.items():
        for scorer in scorers:
            L = r.config.layers if layers is None else layers
            z = r.config.zscore if zscore is None else zscore
            m = r.evaluate(r.rescore(scorer=scorer, layers=L, zscore=z))
            rows.append({"method": method, "scorer": scorer, "spearman": m.get("spearman", float("nan")),
                         "spearman_p": m.get("spearman_p", float("nan")), "pearson": m.get("pearson", float("nan")),
                         "pearson_p": m.get("pearson_p", float("nan")), "layers": str(L), "zscore": z,
                         "samples": r.config.samples})
    return pd.DataFrame(rows)


def time_ablation(rankers: dict[str, SemanticChangeRanker], data: ChangeData | None = None) -> pd.DataFrame:
    """One row per method: Spearman with its bootstrap 95% CI over targets, Pearson, whether the model sees
    time; plus the ``frequency`` baseline when ``data`` is given (no model: the change of each target's
    relative frequency). ``time_effect(table)`` reads temporal attention minus its time-blind control."""
    from .baselines import frequency_change
    from .pipeline import TIME_BLIND

    rows = []
    for method, r in rankers.items():
        m = r.metrics_
        rows.append({"method": method, "sees_time": method not in TIME_BLIND,
                     "trained": bool(r.model_.train_report), "spearman": m.get("spearman", float("nan")),
                     "ci_low": m.get("spearman_ci_low", float("nan")), "ci_high": m.get("spearman_ci_high", float("nan")),
                     "pearson": m.get("pearson", float("nan")), "scorer": r.config.scorer, "layers": str(r.config.layers)})
    if data is not None and data.truth is not None and "graded" in data.truth:
        m = evaluate_scores(frequency_change(data), data.truth)
        rows.append({"method": "frequency", "sees_time": False, "trained": False,
                     "spearman": m.get("spearman", float("nan")), "ci_low": m.get("spearman_ci_low", float("nan")),
                     "ci_high": m.get("spearman_ci_high", float("nan")), "pearson": m.get("pearson", float("nan")),
                     "scorer": "|log2 freq ratio|", "layers": ""})
    return pd.DataFrame(rows)


def time_effect(table: pd.DataFrame, method: str = "temporal-attention", control: str = "no-time") -> float:
    """Spearman of ``method`` minus that of its time-blind ``control`` (NaN when either is missing)."""
    s = table.set_index("method")["spearman"]
    return float(s[method] - s[control]) if method in s and control in s else float("nan")
