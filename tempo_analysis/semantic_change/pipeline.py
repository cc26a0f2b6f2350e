"""The semantic-change pipeline: data -> method model -> (post-training) -> usage vectors -> scores -> evaluation.

    from tempo_analysis.semantic_change import load_change_data, RankConfig, run_rank
    data = load_change_data("world")                 # or "semeval:DIR", "dwug:DIR", "nltk:DIR"
    result = run_rank(data, RankConfig(method="temporal-attention"))
    result.scores, result.metrics                     # word/score/rank table; Spearman, Pearson, ...

One code path serves the CLI, the notebook and the tests. Targets missing from a period are
reported (``result.missing``) and score NaN; correlation drops them and says how many.
"""
from __future__ import annotations

import time as _time
import warnings
from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd

from ..data import DataError, PeriodCorpus, TargetUsage
from ..evaluation.ranking import binary_accuracy, correlate
from ..evaluation.semantic_change import score_words
from ..extraction import TargetVectors, extract_target_vectors
from ..models.semantic_baselines import plain_model, scaled_attention_model, time_token_model
from ..models.temporal_attention import TemporalAttentionForMaskedLM
from .training import PostTrainConfig, post_train

METHODS = ("temporal-attention", "time-token", "scaled-linear", "scaled-exp", "scaled-doc", "plain")
SCORER_CHOICES = ("cosine", "apd", "prt", "apd-within", "jsd")


# ---------------------------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------------------------
@dataclass
class ChangeData:
    """A two-or-more-period corpus, its targets, optional truth, and optional given usages (DWUG)."""

    name: str
    corpus: PeriodCorpus
    targets: list[str]
    truth: pd.DataFrame | None = None
    usages: list[TargetUsage] | None = None      # given usages (DWUG, planted world); else searched
    notes: list[str] = field(default_factory=list)

    @property
    def periods(self):
        return list(self.corpus.periods)

    @property
    def compared(self):
        """The two periods Algorithm 1 compares: the first and the last."""
        return [self.periods[0], self.periods[-1]]


def load_change_data(spec: str = "world", *, seed: int = 0, max_sentences_per_period: int | None = None,
                     targets: list[str] | None = None) -> ChangeData:
    """``world`` | ``semeval:DIR`` | ``dwug:DIR`` | ``nltk:DIR`` -> :class:`ChangeData`."""
    kind, _, path = str(spec).partition(":")
    if kind == "world":
        return _world_data(path or None)
    if not path:
        raise ValueError(f"--data {spec!r}: give a folder, e.g. {kind}:/path/to/folder.")
    if kind == "semeval":
        from ..data.loaders.semeval import load_semeval
        d = load_semeval(path, max_sentences_per_period=max_sentences_per_period, seed=seed)
        return ChangeData(f"semeval:{path}", d.corpus, _pick(d.targets, targets), d.truth)
    if kind == "dwug":
        from ..data.loaders.dwug import load_dwug
        d = load_dwug(path)
        return ChangeData(f"dwug:{path}", d.corpus, _pick(d.targets, targets), d.truth, d.usages)
    if kind == "nltk":
        from ..data.loaders.nltk_corpora import DEMO_WORDS, frequent_targets, load_nltk_eras
        corpus = load_nltk_eras(path, max_sentences_per_period=max_sentences_per_period, seed=seed)
        words = targets or frequent_targets(corpus, DEMO_WORDS, min_count=15)
        return ChangeData(f"nltk:{path}", corpus, list(words), None,
                          notes=["gutenberg (mostly 19th c.) vs brown (1961): no graded truth"])
    raise ValueError(f"--data {spec!r}: use world, semeval:DIR, dwug:DIR or nltk:DIR.")


def _pick(all_targets, wanted):
    if wanted is None:
        return list(all_targets)
    from ..data.loaders.semeval import strip_pos
    wanted = [strip_pos(w)[0] for w in wanted]
    unknown = [w for w in wanted if w not in all_targets]
    if unknown:
        raise DataError(f"targets {unknown} are not in this dataset's targets ({list(all_targets)[:8]}...).")
    return wanted


def _world_data(folder=None) -> ChangeData:
    """The planted world's two-period corpus: committed data/world if present, else generated (seed 0)."""
    try:
        from ..world import load_world
        world = load_world(folder)
        corpus, truth = world.periods, world.change_truth
    except FileNotFoundError:
        if folder is not None:
            raise
        from ..world import generate_change_corpus
        corpus, truth = generate_change_corpus()
    df = corpus.df
    usages = [TargetUsage.checked(w, p, t, s, e, surface=w, doc_id=d)
              for w, p, t, s, e, d in zip(df["word"], df["period"], df["text"], df["start"], df["end"], df["doc_id"])]
    return ChangeData("world", corpus, truth["word"].tolist(), truth.copy(), usages)


def sample_usages(data: ChangeData, n: int | None, seed: int = 0) -> tuple[list[TargetUsage], list[str]]:
    """A seeded sample of at most ``n`` usages per target and compared period; also the missing report."""
    rng = np.random.default_rng(seed)
    out, missing = [], []
    for w in data.targets:
        for p in data.compared:
            if data.usages is not None:
                pool = [u for u in data.usages if u.word == w and u.period == p]
                if n is not None and len(pool) > n:
                    pool = [pool[i] for i in np.sort(rng.choice(len(pool), n, replace=False))]
            else:
                pool = data.corpus.find_usages(w, periods=[p], max_per_period=n, seed=seed)
            if not pool:
                missing.append(f"{w!r} has no usage in period {p!r}")
            out.extend(pool)
    return out, missing


# ---------------------------------------------------------------------------------------------
# method models
# ---------------------------------------------------------------------------------------------
@dataclass
class ChangeModel:
    """A method's model + tokenizer + how it is fed time (period index and/or time-token prefix)."""

    method: str
    model: TemporalAttentionForMaskedLM
    tokenizer: object
    periods: list
    time_token_ids: list[int] | None = None
    train_report: dict | None = None
    added_targets: list[str] = field(default_factory=list)

    def period_index(self, period) -> int:
        try:
            return self.periods.index(period)
        except ValueError:
            raise DataError(f"period {period!r} is not one of the model's periods {self.periods}.") from None

    def prefix(self, periods):
        if self.time_token_ids is None:
            return None
        return [[self.time_token_ids[self.period_index(p)]] for p in periods]

    def embed(self, usages, *, layers=None, batch_size=64, max_length=128, progress=False) -> TargetVectors:
        """Target vectors for usages, each run with its own period."""
        periods = [u.period for u in usages]
        return extract_target_vectors(self.model, self.tokenizer, usages,
                                      time=[self.period_index(p) for p in periods], layers=layers,
                                      batch_size=batch_size, max_length=max_length,
                                      prefix_ids=self.prefix(periods), progress=progress)


def build_model(method: str, periods, *, encoder="default", doc_counts=None, form="faithful",
                seed=0) -> ChangeModel:
    """A freshly converted model for ``method`` (pretrained weights kept)."""
    if method not in METHODS:
        raise ValueError(f"method {method!r} is not one of {METHODS}.")
    periods = list(periods)
    names = [str(p) for p in periods]
    if method == "temporal-attention":
        model, tok = TemporalAttentionForMaskedLM.from_pretrained_encoder(
            encoder, num_periods=len(periods), period_names=names, time_attention=form, seed=seed)
        return ChangeModel(method, model, tok, periods)
    if method == "time-token":
        model, tok, ids = time_token_model(encoder, names, seed)
        return ChangeModel(method, model, tok, periods, time_token_ids=ids)
    if method.startswith("scaled-"):
        model, tok = scaled_attention_model(encoder, names, method.split("-", 1)[1], doc_counts, seed)
        return ChangeModel(method, model, tok, periods)
    model, tok = plain_model(encoder, names, seed)
    return ChangeModel(method, model, tok, periods)


def add_target_tokens(cm: ChangeModel, words) -> list[str]:
    """Add targets the tokenizer splits as whole tokens (init: mean of their pieces). Returns those added."""
    from tokenizers import AddedToken

    tok, split = cm.tokenizer, []
    for w in words:
        pieces = tok(w, add_special_tokens=False)["input_ids"]
        if len(pieces) > 1:
            split.append((w, pieces))
    if not split:
        return []
    tok.add_tokens([AddedToken(w, single_word=True, normalized=True) for w, _ in split])
    cm.model.grow_vocab([p for _, p in split])
    return [w for w, _ in split]


def train_model(cm: ChangeModel, data: ChangeData, cfg: PostTrainConfig, general_text=()) -> dict:
    """MLM post-training on the period-tagged corpus (all periods)."""
    df = data.corpus.df
    texts, times = df["text"].tolist(), [cm.period_index(p) for p in df["period"]]
    prefix = cm.prefix(df["period"].tolist())
    rep = post_train(cm.model, cm.tokenizer, texts, times, cfg, general_text=general_text, prefix_ids=prefix,
                     has_time_token=cm.time_token_ids is not None)
    cm.train_report = rep
    return rep


# ---------------------------------------------------------------------------------------------
# the whole ranking
# ---------------------------------------------------------------------------------------------
@dataclass
class RankConfig:
    """Everything one ranking run depends on (the CLI flags, the notebook's parameters)."""

    method: str = "temporal-attention"
    form: str = "faithful"            # temporal-attention form: faithful | modulated
    scorer: str = "cosine"
    layers: object = 4                # last h layers averaged, or a list of hidden-state indices
    zscore: bool = False
    samples: int | None = 60          # n usages per word and period (seeded)
    seed: int = 0
    encoder: str = "default"
    add_targets: bool = True          # with post-training: targets the tokenizer splits become whole tokens
    train: PostTrainConfig | None = field(default_factory=PostTrainConfig)   # None = no post-training
    batch_size: int = 64
    max_length: int = 128
    progress: bool = False

    def to_dict(self):
        d = asdict(self)
        d["train"] = self.train.to_dict() if self.train is not None else None
        return d


@dataclass
class RankResult:
    scores: pd.DataFrame
    metrics: dict
    vectors: TargetVectors
    model: ChangeModel
    config: RankConfig
    missing: list[str]
    timings: dict


def run_rank(data: ChangeData, cfg: RankConfig, *, model: ChangeModel | None = None) -> RankResult:
    """Build (or reuse) the method's model, post-train it, embed a seeded sample, score, evaluate."""
    if cfg.scorer not in SCORER_CHOICES:
        raise ValueError(f"scorer {cfg.scorer!r} is not one of {SCORER_CHOICES}.")
    timings = {}
    t0 = _time.perf_counter()
    if model is None:
        doc_counts = data.corpus.df["period"].value_counts().reindex(data.periods).tolist()
        model = build_model(cfg.method, data.periods, encoder=cfg.encoder, doc_counts=doc_counts,
                            form=cfg.form, seed=cfg.seed)
        trains = cfg.train is not None and cfg.train.epochs > 0     # --train-epochs 0 skips post-training
        if cfg.add_targets and trains:      # new whole tokens only make sense when training can fit them
            model.added_targets = add_target_tokens(model, data.targets)
        if trains:
            train_model(model, data, cfg.train)
    timings["model_s"] = _time.perf_counter() - t0
    usages, missing = sample_usages(data, cfg.samples, cfg.seed)
    for m in missing:
        warnings.warn(f"{m}: it scores NaN and is left out of the correlation.", stacklevel=2)
    t1 = _time.perf_counter()
    vectors = model.embed(usages, batch_size=cfg.batch_size, max_length=cfg.max_length, progress=cfg.progress)
    timings["embed_s"] = _time.perf_counter() - t1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # already reported above, once per missing (word, period)
        scores = score_words(vectors, data.compared, scorer=cfg.scorer, layers=cfg.layers,
                             zscore_vectors=cfg.zscore, seed=cfg.seed, words=data.targets)
    metrics = evaluate_scores(scores, data.truth)
    return RankResult(scores, metrics, vectors, model, cfg, missing, timings)


def evaluate_scores(scores: pd.DataFrame, truth: pd.DataFrame | None) -> dict:
    """Spearman/Pearson (+p) against graded truth, accuracy against binary truth, when present."""
    if truth is None:
        return {}
    out = {}
    if "graded" in truth:
        out.update(correlate(scores, truth))
    if "binary" in truth and truth["binary"].notna().any():
        acc = binary_accuracy(scores, truth)
        out.update({f"binary_{k}": v for k, v in acc.items() if k in ("accuracy", "threshold")})
    return out
