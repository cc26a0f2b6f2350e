"""Lesson 05's steps: the four methods on real text, the ACL Anthology and RumourEval-2017.

Each step is one call, memoised with :func:`tempo_analysis.notebook.cached` under a key that holds
the data's contents and the settings, so a rerun after ``make demo`` loads what it trained::

    from tempo_analysis import real_text as rt
    folder = rt.check_data_dir("../shared/data")         # names the missing file, or the folder
    acl = rt.load_anthology(folder)                       # abstracts by year, the venue network
    change = rt.change_data(acl["abstracts"])              # 2000-2009 against 2018-2021, the words found
    rankers = rt.rank_change(change["data"])              # plain MiniLM and temporal attention
    spread = rt.fit_spread(acl["venues"])                 # DCWE and CWE over venues and years
    future = rt.fit_future(acl["abstracts"])              # frequency bias against the all-years control
    stream = rt.fit_stream(folder)                        # RumourEval: TempoFormer over sentence vectors

Real data has no planted truth: every reading here says what it can and cannot show.
"""
from __future__ import annotations

import contextlib
import re
import warnings
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

from .data.errors import DataError

# the files a shared data folder must hold, one per source (the first missing one is named)
REQUIRED = {
    "ACL abstracts by year": "acl_abstracts_by_year/papers_2009.txt",
    "ACL Anthology XML": "acl_anthology_xml/xml/",
    "RumourEval-2017": "rumoureval2017/train-annotations/subtaskA.json",
}
WHERE = ("the folder that holds acl_abstracts_by_year/, acl_anthology_xml/xml/ and rumoureval2017/ "
         "(the ACL abstracts of the future-language-modeling paper, the ACL Anthology XML from "
         "aclanthology.org, and SemEval-2017 Task 8)")

PERIODS = {"2000-2009": (2000, 2009), "2018-2021": (2018, 2021)}
CHANGING = ("transformer", "attention", "embedding", "network", "model", "representation", "pretraining", "prompt")
STABLE = ("corpus", "sentence", "grammar", "dictionary", "translation", "parser", "annotation", "lexicon",
          "evaluation", "syntax")
SPREAD_YEARS = tuple(range(2016, 2022))
SPREAD_WORD, SPREAD_ANCHOR = "transformer", "encoder"
FUTURE_FIRST_YEAR = 2003          # the paper's split: train 2003-2019, dev 2020, test 2021
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z(])")


@contextlib.contextmanager
def _noted(notes: list):
    """One step's warnings and transformers' log lines, kept in ``notes`` (each once) instead of
    printed on stderr; the lesson prints them as notes."""
    from .encoders import quiet_transformers

    with warnings.catch_warnings(record=True) as caught, quiet_transformers():
        warnings.simplefilter("always")
        try:
            yield
        finally:
            notes.extend(m for m in dict.fromkeys(str(w.message) for w in caught) if m not in notes)


# --- 1. load, and look --------------------------------------------------------------------------
def check_data_dir(data_dir=None) -> Path:
    """The shared data folder (``data_dir``, else the one found beside the project), checked.

    Raises FileNotFoundError naming the first missing file and where to get the data."""
    from .data.locations import shared_data_dir

    folder = Path(data_dir).expanduser() if data_dir is not None else shared_data_dir()
    if folder is None:
        raise FileNotFoundError(f"no shared data folder found. Fix: set DATA_DIR to {WHERE}.")
    if not folder.is_dir():
        raise FileNotFoundError(f"DATA_DIR={str(folder)!r} is not a folder. Fix: point it at {WHERE}.")
    for what, rel in REQUIRED.items():
        path = folder / rel
        if not (path.is_dir() if rel.endswith("/") else path.is_file()):
            raise FileNotFoundError(f"DATA_DIR={str(folder)!r} has no {rel} ({what}). Fix: point DATA_DIR at {WHERE}.")
    return folder.resolve()


def load_anthology(data_dir, *, years=SPREAD_YEARS, min_papers: int = 30, max_docs_per_venue_year: int | None = 15,
                   seed: int = 0) -> dict:
    """The Anthology through the same resolver as ``--data acl``: ``{"abstracts", "venues"}``.

    ``abstracts``: every abstract, ``doc_id, year, text`` (the published files, 2018, 2020 and 2021
    from the XML); ``venues``: a :class:`~tempo_analysis.data.SocialCorpus` of venue families linked
    by author overlap, years ``years``, at most ``max_docs_per_venue_year`` abstracts per venue and year
    (seeded) for the diffusion model; ``notes``: what the loader left out, one line each."""
    from .resolve import load_social, load_yearly

    folder, notes = Path(data_dir), []
    with _noted(notes):                      # what the loader dropped (short, duplicate, no abstract)
        abstracts = load_yearly(f"acl:{folder / 'acl_abstracts_by_year'},{folder / 'acl_anthology_xml' / 'xml'}").data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # small venues are dropped by design; the count is in attrs
        venues = load_social(f"acl:{folder / 'acl_anthology_xml' / 'xml'}", years=list(years), min_papers=min_papers,
                             max_docs_per_unit_slice=max_docs_per_venue_year, seed=seed, progress=False).data
    return {"abstracts": abstracts, "venues": venues, "notes": notes}


def venue_table(venues) -> pd.DataFrame:
    """Abstracts per venue family and year (the diffusion model's sample), largest venues first."""
    table = venues.df.pivot_table(index="unit", columns="time", values="doc_id", aggfunc="count", fill_value=0)
    return table.loc[table.sum(axis=1).sort_values(ascending=False).index]


# --- 2. semantic change --------------------------------------------------------------------------
def sentences(frame: pd.DataFrame) -> pd.DataFrame:
    """Each abstract split into sentences: ``doc_id, year, text`` (one sentence per row)."""
    rows = [(f"{d}#{i}", y, s) for d, y, t in zip(frame["doc_id"], frame["year"], frame["text"])
            for i, s in enumerate(_SENTENCE.split(str(t))) if len(s.split()) >= 4]
    return pd.DataFrame(rows, columns=["doc_id", "year", "text"])


def change_data(abstracts: pd.DataFrame, *, periods=PERIODS, changing=CHANGING, stable=STABLE,
                max_abstracts_per_period: int | None = None, min_usages: int = 3, seed: int = 0) -> dict:
    """The two periods' sentences as :class:`~tempo_analysis.data.change.ChangeData`, and the word report.

    Every abstract of each period (or a seeded sample of ``max_abstracts_per_period``), split into sentences.
    A word with fewer than ``min_usages`` whole-word usages in a period is reported (``"not found in
    2000-2009"``, or how few) and left out of the ranking; it is never scored 0. Returns ``{"data",
    "report"}``: the report has one row per word with its role, its usages per period and its status."""
    from .data.change import ChangeData
    from .data.periods import PeriodCorpus

    if len(periods) != 2:
        raise DataError(f"periods={list(periods)}: give two named year ranges, e.g. {PERIODS}")
    parts = []
    for name, (lo, hi) in periods.items():
        chosen = abstracts[abstracts["year"].between(lo, hi)]
        if chosen.empty:
            raise DataError(f"periods: no abstracts in {name} ({lo}-{hi}). Fix: pick years the data covers "
                            f"({int(abstracts['year'].min())}-{int(abstracts['year'].max())})")
        if max_abstracts_per_period is not None and len(chosen) > max_abstracts_per_period:
            chosen = chosen.sample(n=max_abstracts_per_period, random_state=seed)
        parts.append(sentences(chosen).assign(period=name))
    corpus = PeriodCorpus.from_frame(pd.concat(parts, ignore_index=True)[["doc_id", "period", "text"]],
                                     order=list(periods))
    # whole-word, case-insensitive counts, as find_usages reads a usage
    words_in = {p: Counter(re.findall(r"\w+", " ".join(corpus.df.loc[corpus.df["period"] == p, "text"]).lower()))
                for p in periods}
    rows = []
    for role, words in (("expected to change", changing), ("stable control", stable)):
        for word in words:
            counts = {p: words_in[p][word.lower()] for p in periods}
            short = [p for p, n in counts.items() if n < min_usages]
            status = ("ranked" if not short else "; ".join(
                f"not found in {p}" if counts[p] == 0 else f"only {counts[p]} usages in {p}" for p in short))
            rows.append({"word": word, "role": role, **{f"usages {p}": n for p, n in counts.items()}, "status": status})
    report = pd.DataFrame(rows)
    kept = report.loc[report["status"] == "ranked", "word"].tolist()
    if len(kept) < 3:
        raise DataError(f"only {len(kept)} of the words have {min_usages} usages in both periods. Fix: give more "
                        "frequent words, more abstracts (max_abstracts_per_period) or a lower min_usages")
    lo, hi = periods.values()
    data = ChangeData(f"acl:{'/'.join(periods)}", corpus, kept, None,
                      notes=[f"{max_abstracts_per_period or 'all'} abstracts per period (seed {seed}), split into sentences",
                             "papers_2000.txt holds every paper up to 2000" if lo[0] <= 2000 else ""])
    return {"data": data, "report": report}


REAL_TEXT_TIME_LR = 1e-2


def change_config(method: str, *, samples: int = 40, train_sentences: int = 3000, seed: int = 0):
    """The ranking settings for real text: notebook 02's model and post-training budget at ``time_lr``
    1e-2, the library's default scorer (APD within periods, z-scored; the CLI's), ``samples`` usages per
    word and period, ``train_sentences`` sentences of post-training (temporal attention only).

    ``time_lr`` stays at 1e-2, the value lesson 05's numbers were measured with: the planted world's
    dev-seed grid chose 4e-2 for notebook 02, and that grid was not run on real text."""
    from dataclasses import replace

    from .semantic_change.config import PRESETS, preset

    cli = PRESETS["cli"]
    cfg = replace(preset("notebook"), method=method, scorer=cli.scorer, zscore=cli.zscore, samples=samples, seed=seed)
    if method == "plain":
        return replace(cfg, train=None)
    return replace(cfg, train=replace(cfg.train, time_lr=REAL_TEXT_TIME_LR, max_sentences=train_sentences, seed=seed))


def rank_change(data, *, methods=("plain", "temporal-attention"), samples: int = 40, train_sentences: int = 3000,
                seed: int = 0) -> dict:
    """{method: fitted SemanticChangeRanker} on ``data``, each memoised."""
    from .encoders import quiet_transformers
    from .notebook import cached
    from .semantic_change.estimator import SemanticChangeRanker

    out = {}
    for method in methods:
        cfg = change_config(method, samples=samples, train_sentences=train_sentences, seed=seed)
        params = {"data": data.fingerprint(), "config": cfg.to_dict()}
        with warnings.catch_warnings(), quiet_transformers():
            warnings.simplefilter("ignore")   # rare words are reported by change_data, not again here
            out[method] = cached(f"05_real-change-{method}", params, lambda cfg=cfg: SemanticChangeRanker(cfg).fit(data),
                                 save=lambda r, folder: r.save(folder), load=SemanticChangeRanker.load)
    return out


def ranking_table(rankers: dict, report: pd.DataFrame) -> pd.DataFrame:
    """One row per ranked word: its role and each method's score and rank (temporal attention's order)."""
    roles = report.set_index("word")["role"]
    table = None
    for method, ranker in rankers.items():
        s = ranker.scores_.set_index("word")[["score", "rank"]].add_prefix(f"{method} ")
        table = s if table is None else table.join(s)
    table.insert(0, "role", roles.reindex(table.index))
    last = list(rankers)[-1]
    return table.sort_values(f"{last} rank")


def separation(scores: pd.DataFrame, report: pd.DataFrame) -> float:
    """How far the expected-to-change words score above the stable controls: the difference of the two
    groups' mean scores over the pooled standard deviation (0: the groups are not told apart)."""
    roles = report.set_index("word")["role"]
    s = scores.set_index("word")["score"].dropna()
    a, b = s[roles.reindex(s.index).eq("expected to change")], s[roles.reindex(s.index).eq("stable control")]
    pooled = np.sqrt((a.var(ddof=1) + b.var(ddof=1)) / 2) if len(a) > 1 and len(b) > 1 else np.nan
    return float((a.mean() - b.mean()) / pooled) if pooled and np.isfinite(pooled) else float("nan")


def layer_sweep(rankers: dict, report: pd.DataFrame, layer_choices=None) -> pd.DataFrame:
    """Each method rescored at each layer choice (the last h layers averaged; no re-embedding): one row
    per (method, h) with the separation of changing words from controls and the top 3."""
    rows = []
    for method, ranker in rankers.items():
        for h in layer_choices or range(1, max(ranker.vectors_.layers) + 1):
            scores = ranker.rescore(layers=h)
            rows.append({"method": method, "layers": h, "separation": separation(scores, report),
                         "top 3": ", ".join(scores["word"].head(3))})
    return pd.DataFrame(rows)


def usage_examples(data, word: str, *, per_period: int = 2, width: int = 140, seed: int = 0) -> pd.DataFrame:
    """A few seeded usages of ``word`` from each period, the word in capitals: the evidence for its rank."""
    rows = []
    for u in data.corpus.find_usages(word, max_per_period=per_period, seed=seed):
        left, right = u.text[:u.start], u.text[u.end:]
        half = (width - len(word)) // 2
        text = ("…" if len(left) > half else "") + left[-half:] + u.text[u.start:u.end].upper() + right[:half] + (
            "…" if len(right) > half else "")
        rows.append({"word": word, "period": u.period, "usage": text})
    return pd.DataFrame(rows)


# --- 3. diffusion over venues ----------------------------------------------------------------------
def fit_spread(venues, *, seed: int = 0, progress: bool = False) -> dict:
    """DCWE and CWE (notebook 03's settings) trained on the venue corpus, memoised:
    :func:`tempo_analysis.diffusion.lesson.fit_data`'s ``{"mappers", "corpora", ...}``, with ``notes``
    (the training's warnings, e.g. a venue without links)."""
    from .diffusion.lesson import fit_data

    notes = []
    with _noted(notes):
        fitted = fit_data(venues, seed=seed, progress=progress)
    return dict(fitted, notes=notes)


def read_spread(fitted: dict, word: str = SPREAD_WORD, anchor: str = SPREAD_ANCHOR) -> dict:
    """The paper's r̂ map of ``word`` towards ``anchor`` for DCWE and CWE: ``{"maps", "table", "notes"}``,
    the table one row per model (mode, walk share and its chance expectation, cells held), the notes the
    reading's warnings (e.g. a year without the word). The r̂ tables are memoised with the fit's key, so
    a rerun does not embed the corpus again."""
    from .diffusion.lesson import read_maps, recovery_table
    from .diffusion.report import analyze_rhat
    from .notebook import cached

    mapper = fitted["mappers"]["data"]

    def compute():
        maps = read_maps(mapper, word, anchor)
        index = next(iter(maps.values())).index
        return {"rhat": {v: r.rhat for v, r in maps.items()}, "units": [str(u) for u in index.units],
                "slices": [int(t) for t in index.slices]}

    notes = []
    with _noted(notes):
        stored = cached("05_real-spread-rhat", {"fit": fitted.get("params"), "word": word, "anchor": anchor}, compute)
        maps = {v: analyze_rhat(rhat, mapper.corpus_.graph, stored["units"], stored["slices"], word, anchor)
                for v, rhat in stored["rhat"].items()}
    return {"maps": maps, "table": recovery_table({"ACL venues": maps}, {}), "notes": notes}


def reached(result) -> dict:
    """{year: venues holding the association (r̂ > 0) by then}, and how many venues were read."""
    first = {u: y for u, y in result.first.items() if y is not None and not pd.isna(y)}
    years = sorted(result.rhat["time"].unique())
    return {"by_year": {y: sum(1 for v in first.values() if v <= y) for y in years},
            "venues": int(result.rhat["unit"].nunique())}


# --- 4. future text ---------------------------------------------------------------------------------
# sampled rather than beam-searched: a 2021 abstract in seconds instead of minutes on a CPU
FUTURE_GENERATION = {"num_beams": 1}
# notebook 04's settings, sized for a dozen abstracts a year: the output offsets overfit within a few
# dozen steps (the dev loss is lowest at step 25 and rises after), and the context adapter does not
# lower the dev loss on so little text (notebook 04's adapter check drops it), so it is left out
FUTURE_SETTINGS = {"finetune_steps": 50, "adapter_rank": 0}


def fit_future(abstracts: pd.DataFrame, *, max_docs_per_year: int = 12, n_texts: int = 2, seed: int = 0,
               lm: str = "default", generation: dict | None = None, settings: dict | None = None,
               progress: bool = False):
    """The frequency model against the all-years control on the paper's split (train 2003-2019, dev
    2020, test 2021): the LM reads ``max_docs_per_year`` abstracts a year (seeded), the frequency
    history counts every abstract. ``n_texts`` texts per model are generated for 2021, with the
    paper's decoding changed by ``generation`` (default :data:`FUTURE_GENERATION`: top-k/top-p
    sampling without beams) and notebook 04's settings by ``settings`` (default :data:`FUTURE_SETTINGS`).
    Memoised."""
    from .future_text import lesson
    from .future_text.estimator import FutureTextModel

    future = FutureTextModel("notebook", **{**FUTURE_SETTINGS, **(settings or {})}, lm=lm, seed=seed,
                             variants=("baseline", "freq"), progress=progress)
    setup = lesson.load_lesson("acl", future, first_year=FUTURE_FIRST_YEAR, max_docs_per_year=max_docs_per_year,
                               seed=seed, corpus=abstracts)
    return lesson.fit_and_score(future, setup, meteor_texts=n_texts,
                                generation=FUTURE_GENERATION if generation is None else generation)


def trending_words(future, k: int = 8, *, year: int | None = None) -> list[str]:
    """The ``k`` whole words the frequency model pushes up most for ``year`` (default: the test year)."""
    from .future_text.whatif import forecast_bias

    bias = forecast_bias(future.models_["freq"], future.test_year_ if year is None else year)
    words = []
    for i in np.argsort(-bias):
        w = future.tokenizer_.decode([int(i)]).strip()
        if len(w) >= 4 and w.isalpha() and w.lower() not in words:
            words.append(w.lower())
        if len(words) == k or bias[i] <= 0:
            break
    return words


def future_numbers(future) -> dict:
    """Content perplexity on the 2021 abstracts of the control and of the frequency model, and the gain."""
    results = future.results_.set_index("model")
    control, freq = (float(results.loc[m, "test_content_ppl"]) for m in ("baseline", "freq"))
    return {"control_content_ppl": control, "freq_content_ppl": freq, "gain": 1.0 - freq / control}


# --- 5. stream classification on RumourEval --------------------------------------------------------
STREAM_MODELS = {"tempoformer_vectors": "TempoFormer over sentence vectors", "control": "its time-blind control",
                 "bilstm": "BiLSTM over sentence vectors"}


def fit_stream(data_dir, *, window: int = 3, seed: int = 0) -> dict:
    """RumourEval-2017 as timelines with LRS stance-switch labels, fold 0: TempoFormer over sentence
    vectors, its time-blind control and the BiLSTM. Returns ``{"names", "rows", "macro_f1"}`` (``rows``:
    the comparison chart's rows, one per model), memoised with the data's contents and the settings."""
    import json

    from .notebook import cached
    from .stream import lesson

    fitted = lesson.load_lesson(f"rumoureval2017:{Path(data_dir) / 'rumoureval2017'}", window=window, seed=seed)

    def compute():
        te = lesson.vector_time_effect(fitted)
        base = lesson.fit_baselines(fitted, ["bilstm"], cache=False)
        rows = {STREAM_MODELS["tempoformer_vectors"]: lesson.score_row(fitted, te["tempoformer"]["proba"]),
                STREAM_MODELS["control"]: lesson.score_row(fitted, te["control"]["proba"]),
                STREAM_MODELS["bilstm"]: base["bilstm"]}
        rows = json.loads(json.dumps(rows, default=lambda v: v.tolist() if hasattr(v, "tolist") else str(v)))
        macro = {key: float(rows[name]["summary"]["macro_f1"]["mean"]) for key, name in STREAM_MODELS.items()}
        return {"names": fitted["names"], "rows": rows, "macro_f1": macro}

    return cached("05_real-stream", fitted["params"], compute)


# --- 6. your own data -------------------------------------------------------------------------------
OWN_DATA = {
    "stream classification": {
        "frame": pd.DataFrame({"timeline_id": ["t1", "t1", "t1"], "post_id": ["p1", "p2", "p3"],
                               "timestamp": ["2024-05-01 09:00", "2024-05-01 09:05", "2024-05-03 18:00"],
                               "text": ["Is the bridge closed?", "Yes, since this morning.", "It is open again."],
                               "label": ["O", "O", "IS"]}),
        "file": "posts.csv", "spec": "csv:posts.csv", "kind": "timelines",
        "command": "tempo-analysis stream train --data csv:posts.csv --out runs/posts",
        "call": "TempoFormerClassifier().fit(load_timelines('csv:posts.csv').data)"},
    "semantic change": {
        "frame": pd.DataFrame({"period": ["1990s", "1990s", "2020s"],
                               "text": ["The mouse ran under the table.", "A mouse is a small rodent.",
                                        "Click the left mouse button."]}),
        "file": "sentences.csv", "spec": None, "kind": "change",
        # the command line reads the benchmark layouts (semeval:DIR, dwug:DIR); a CSV goes through Python
        "command": "tempo-analysis semantic-change rank --data dwug:DIR --out runs/dwug",
        "call": "SemanticChangeRanker().fit(ChangeData('mine', PeriodCorpus.from_csv('sentences.csv', "
                "order=['1990s', '2020s']), ['mouse']))"},
    "social diffusion": {
        "frame": pd.DataFrame({"unit": ["lab_a", "lab_b", "lab_a"], "time": [2019, 2019, 2020],
                               "text": ["We train a cloud model.", "Rain clouds over the hills.",
                                        "The cloud server is down."]}),
        "file": "docs.csv", "spec": "csv:docs.csv,edges.csv", "kind": "social",
        "edges": pd.DataFrame({"source": ["lab_a"], "target": ["lab_b"], "weight": [1.0]}),
        "command": "tempo-analysis diffusion train --data csv:docs.csv,edges.csv --out runs/docs",
        "call": "DiffusionMapper().fit(load_social('csv:docs.csv,edges.csv').data)"},
    "future text": {
        "frame": pd.DataFrame({"year": [2019, 2020, 2021], "text": ["We parse sentences with a grammar.",
                                                                    "We fine-tune a language model.",
                                                                    "We prompt a large language model."]}),
        "file": "texts.csv", "spec": "csv:texts.csv", "kind": "yearly",
        "command": "tempo-analysis future-text train --data csv:texts.csv --out runs/texts",
        "call": "FutureTextModel().fit(load_yearly('csv:texts.csv').data)"},
}


def own_data_example(method: str, folder) -> dict:
    """Write ``method``'s smallest input to ``folder`` and read it back through the library's loader:
    ``{"frame", "file", "command", "call", "loaded"}`` (``loaded``: what the loader made of it)."""
    if method not in OWN_DATA:
        raise ValueError(f"method={method!r}: use one of {list(OWN_DATA)}")
    ex = dict(OWN_DATA[method])
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    ex["frame"].to_csv(folder / ex["file"], index=False)
    if "edges" in ex:
        ex["edges"].to_csv(folder / "edges.csv", index=False)
    if ex["kind"] == "change":
        from .data.periods import PeriodCorpus
        ex["loaded"] = PeriodCorpus.from_csv(folder / ex["file"], order=["1990s", "2020s"])
    else:
        from .resolve import resolve
        parts = ex["spec"].split(":", 1)[1].split(",")
        spec = "csv:" + ",".join(str(folder / p) for p in parts)
        ex["loaded"] = resolve(spec, ex["kind"]).data
    return ex


def summary_values(change: dict, rankers: dict, spread: dict, future, stream: dict, seconds: float) -> dict:
    """The lesson's key numbers for ``build/summary.json`` (``real.*``)."""
    top = rankers["temporal-attention"].ranking_[:5]
    dcwe = spread["table"].set_index("model").loc["dcwe"]
    values = {f"real.change_top5.{i}": w for i, w in enumerate(top)}
    values.update({"real.change_top5": ", ".join(top),
                   "real.content_ppl_gain": future_numbers(future)["gain"],
                   "real.recovered_mode": dcwe["recovered_mode"], "real.walk_share": dcwe["walk_share"],
                   "real.expected_walk_share": dcwe["expected_walk_share"],
                   **{f"real.stream_macro_f1.{k}": v for k, v in stream["macro_f1"].items()},
                   "real.seconds": round(float(seconds), 1)})
    return values
