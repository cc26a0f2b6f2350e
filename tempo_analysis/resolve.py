"""The one resolver for ``--data`` strings, shared by the CLI, the notebooks and the facades.

    from tempo_analysis.resolve import resolve, load_timelines
    r = resolve("world", "social")          # Resolved(data=SocialCorpus, truth=diffusion truth dict)
    r = load_timelines("csv:posts.csv", time_unit="s")   # Resolved(data=Timelines, truth=None)

Every loader returns a :class:`Resolved`: ``data`` (the wing's input) and ``truth`` (the planted
truth of a synthetic dataset, None for real data). It sits above :mod:`tempo_analysis.data` (the
types and the real-data loaders) and :mod:`tempo_analysis.world` (the planted world), and below
the method wings.

A data spec names a source and, after a colon, where it is::

    world                     the planted-truth world on disk (data/world), else generated (see below)
    world:DIR                 a world folder written by ``tempo-analysis world --out DIR``
    rumoureval2017[:DIR]      RumourEval-2017 (stream)
    semeval:DIR | dwug:DIR    semantic change benchmarks with graded truth
    pseudoword[:DIR]          the seeded pseudoword change benchmark built from real corpora
    nltk[:DIR]                NLTK corpora (gutenberg, brown, ...)
    acl[:A,B]                 ACL abstracts by year / the ACL Anthology XML
    csv:FILE[,FILE] | jsonl:FILE   your own data

A source given without a folder (``rumoureval2017``, ``nltk``, ``acl``) is looked up in the
real-data folder (:func:`tempo_analysis.data.locations.shared_data_dir`). Specs are parsed by
:func:`tempo_analysis.data.specs.parse_spec`.

**The world rule**, the same for every wing: ``world`` reads ``data/world`` when it exists. A
world folder that exists but cannot be read is an error (it is never silently replaced). When
no world is on disk at all, the default world is generated in memory (seeded, the same data
``tempo-analysis world --out data/`` writes) with a warning. ``world:DIR`` reads DIR and never
generates.
"""
from __future__ import annotations

import sys
import warnings
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd

from tempo_analysis.data.change import ChangeData
from tempo_analysis.data.errors import DataError, read_frame
from tempo_analysis.data.loaders.acl_abstracts import load_acl_abstracts
from tempo_analysis.data.loaders.dwug import load_dwug
from tempo_analysis.data.loaders.nltk_corpora import DEMO_WORDS, demo_targets, dropped_message, load_nltk_eras
from tempo_analysis.data.loaders.pseudoword import PseudowordConfig, build_pseudoword
from tempo_analysis.data.loaders.rumoureval import load_rumoureval
from tempo_analysis.data.loaders.semeval import load_semeval, strip_pos
from tempo_analysis.data.locations import data_dir
from tempo_analysis.data.social_corpora import acl_social_corpus, csv_social_corpus
from tempo_analysis.data.specs import DataSpec, one_folder, parse_spec, shared_path
from tempo_analysis.data.timelines import POSITION, Timelines, subsample_timelines
from tempo_analysis.data.yearly import yearly_frame, yearly_from_corpus
from tempo_analysis.world.change import generate_change_corpus
from tempo_analysis.world.config import SocialWorldConfig, StreamWorldConfig, YearlyWorldConfig
from tempo_analysis.world.social import generate_social
from tempo_analysis.world.stream import generate_timelines
from tempo_analysis.world.world import World, load_world
from tempo_analysis.world.yearly import generate_yearly

__all__ = ["Resolved", "resolve", "KINDS", "planted_world", "load_timelines", "load_change_data", "load_social", "load_yearly",
           "open_world", "TIMELINE_SPECS", "CHANGE_SPECS", "SOCIAL_USAGES", "YEARLY_SPECS"]


@dataclass(frozen=True)
class Resolved:
    """What a ``--data`` spec resolves to, the same shape for every wing.

    ``data`` is the wing's input; ``truth`` is the right answer the dataset was built with (the
    planted world, or the pseudoword benchmark's injected change), and None for real data. Per kind:

    - ``"timelines"``: ``data`` a :class:`~tempo_analysis.data.Timelines`; ``truth`` for ``world``
      the hidden-state table of the planted streams (one row per post), else None.
    - ``"change"``: ``data`` a :class:`~tempo_analysis.data.change.ChangeData`; ``truth`` for
      ``world`` and ``pseudoword`` the graded truth table (``word``, ``graded``, ...; the same frame
      as ``data.truth``), else None. The annotated gold of a real benchmark (SemEval, DWUG) is no
      planted truth: it stays in ``data.truth``, where the ranker's evaluation reads it.
    - ``"social"``: ``data`` a :class:`~tempo_analysis.data.SocialCorpus`; ``truth`` for ``world``
      the diffusion truth dict (planted mode, word, anchor, first-arrival slices, ...), else None.
    - ``"yearly"``: ``data`` a frame of ``doc_id, year, text``; ``truth`` for ``world`` the planted
      trend rates (``word, year, trend, rate, ...``), else None.
    """

    data: Any
    truth: Any = None


def open_world(directory=None) -> World | None:
    """The planted world, by the world rule (module docstring); None for ``directory`` = data/world.

    Returns a :class:`tempo_analysis.world.World`, or None when no world is on disk and
    ``directory`` is None: the caller then generates the part it needs (generating one part is
    much cheaper than the whole world).
    """
    if directory is not None:
        return load_world(directory)
    folder = data_dir()
    if not any((c / "config.json").is_file() for c in (folder, folder / "world")):
        warnings.warn(f"no planted world in {folder}; generating the default world in memory "
                      f"(write it once with `tempo-analysis world --out {folder}`)", stacklevel=3)
        return None
    return load_world(folder)


def planted_world(kind: str, seed: int, **changes) -> Resolved:
    """The planted world's ``kind`` part regenerated in memory with world seed ``seed`` (never written
    to disk, never read from ``data/``), as a :class:`Resolved` like ``resolve("world", kind)``.

    ``changes``: other fields of that part's world config (``mode="flight"`` for the social part).
    A seed study reruns a lesson on ``planted_world(kind, s)`` for several ``s``."""
    from tempo_analysis.world.config import ChangeWorldConfig
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise DataError(f"seed={seed!r}: give a non-negative integer world seed")
    if kind == "timelines":
        tl, truth = generate_timelines(replace(StreamWorldConfig(), seed=seed, **changes), with_truth=True)
        return Resolved(tl, truth)
    if kind == "change":
        corpus, truth = generate_change_corpus(replace(ChangeWorldConfig(), seed=seed, **changes))
        data = ChangeData.from_usage_corpus("world", corpus, truth)
        data.name = f"world:seed={seed}"
        return Resolved(data, data.truth)
    if kind == "social":
        return Resolved(*generate_social(replace(SocialWorldConfig(), seed=seed, **changes)))
    if kind == "yearly":
        corpus, truth = generate_yearly(replace(YearlyWorldConfig(), seed=seed, **changes))
        return Resolved(yearly_from_corpus(corpus), truth)
    raise DataError(f"kind={kind!r}: give one of 'timelines', 'change', 'social', 'yearly'")


# --- stream: Timelines ------------------------------------------------------------------------

TIMELINE_SPECS = {"world": "world[:DIR]", "rumoureval2017": "rumoureval2017[:DIR]", "csv": "csv:FILE",
                  "jsonl": "jsonl:FILE"}


def load_timelines(spec, *, time_unit: str | None = None, max_timelines: int | None = None,
                   seed: int = 0) -> Resolved:
    """Resolved(Timelines, truth) (stream classification) for a ``--data`` spec.

    ``world[:DIR]``: the planted world's diary timelines (labels ``O``/``IS``/``IE``), by the world
    rule; the truth is the world's hidden-state table (one row per post);
    ``rumoureval2017[:DIR]``: RumourEval-2017 threads with LRS stance-switch labels
    (default folder: ``shared/data/rumoureval2017``); ``csv:FILE`` / ``jsonl:FILE``: columns
    ``timeline_id, post_id, timestamp, text[, label, author]`` (``time_unit`` for numeric
    timestamps: s, ms, min, h, D; ``position``, or no timestamp column, for order-only data:
    a post's index in its timeline is its time). ``world`` and ``rumoureval2017`` carry real
    timestamps: a numeric ``time_unit`` does not change them, and ``position`` replaces them by
    each post's index in its time-sorted timeline (the order-only view of the same data). A
    timeline of one post is refused (it has no stream to classify; the DataError names it).
    ``max_timelines`` keeps a seeded random subset of whole timelines (the truth keeps all rows).
    """
    s = parse_spec(spec, TIMELINE_SPECS)
    truth = None
    if s.kind in ("world", "rumoureval2017"):
        one_folder(s, "world:data/world" if s.kind == "world" else "rumoureval2017:../shared/data/rumoureval2017")
        if s.kind == "world":
            world = open_world(s.path)
            if world is not None:
                tl, truth = world.timelines, world.timeline_truth
            else:
                tl, truth = generate_timelines(StreamWorldConfig(), with_truth=True)
        else:
            tl = load_rumoureval(shared_path(s, "rumoureval2017"))
        if time_unit == POSITION:       # order-only: each post's index in its time-sorted timeline is its time
            tl = Timelines.from_frame(tl.df.drop(columns="seconds"), time_unit=POSITION, min_posts=1,
                                      label_names=tl.label_names)
    else:
        if len(s.parts) != 1 or not Path(s.path).expanduser().is_file():
            what = "names no file" if not s.parts else f"file {s.path!r} not found"
            raise DataError(f"--data {s.text!r}: {what}. Fix: give one existing {s.kind} file path "
                            f"(e.g. {s.kind}:posts.{s.kind}).")
        reader = Timelines.from_csv if s.kind == "csv" else Timelines.from_jsonl
        tl = reader(Path(s.path).expanduser(), time_unit=time_unit, min_posts=2)
    return Resolved(subsample_timelines(tl, max_timelines, seed), truth)


# --- semantic change: ChangeData ---------------------------------------------------------------

CHANGE_SPECS = {"world": "world[:DIR]", "semeval": "semeval:DIR", "dwug": "dwug:DIR", "nltk": "nltk[:DIR]",
                "pseudoword": "pseudoword[:SHARED_DATA_DIR]"}


def load_change_data(spec="world", *, seed: int = 0, max_sentences_per_period: int | None = None,
                     targets: list[str] | None = None) -> Resolved:
    """Resolved(:class:`~tempo_analysis.data.change.ChangeData`, truth) (semantic change ranking) for a ``--data`` spec.

    ``world[:DIR]``: the planted world's two periods (``old`` < ``new``), its given usages and its
    graded truth, by the world rule (``targets`` picks a subset; the sentence cap does not apply);
    ``semeval:DIR``: a SemEval-2020 Task 1 folder; ``dwug:DIR``: a DWUG folder (given usages);
    ``nltk[:DIR]``: Gutenberg (mostly 19th c.) against Brown (1961), no truth (default folder:
    ``shared/data/nltk_data/corpora``); ``pseudoword[:DIR]``: the seeded pseudoword change benchmark
    (:mod:`tempo_analysis.data.loaders.pseudoword`) built from the real corpora of a shared data folder
    (default ``shared/data``), ``seed`` picks the split, targets, donors and strengths, the graded
    truth is the injected share p. ``targets``: a subset of the dataset's targets (POS
    suffixes such as ``plane_nn`` are mapped to the surface form); for nltk, the words to rank
    (default: the frequent ``DEMO_WORDS``). ``max_sentences_per_period``: a seeded cap for the
    semeval and nltk corpora. ``truth`` is ``data.truth`` for the planted kinds (world, pseudoword),
    None for the real ones (see :class:`Resolved`).
    """
    s = parse_spec(spec, CHANGE_SPECS)
    if s.kind in ("world", "nltk", "semeval", "dwug"):
        one_folder(s, {"world": "world:data/world", "nltk": "nltk:../shared/data/nltk_data/corpora",
                       "semeval": "semeval:path/to/semeval2020_ulscd_eng", "dwug": "dwug:path/to/dwug_en"}[s.kind])
    if s.kind == "world":
        world = open_world(s.path)
        corpus, truth = (world.periods, world.change_truth) if world is not None else generate_change_corpus()
        data = _subset(ChangeData.from_usage_corpus("world", corpus, truth), targets)
        return Resolved(data, data.truth)
    if s.kind == "pseudoword":
        if len(s.parts) > 1:
            raise DataError(f"--data {s.text!r}: give one shared data folder, e.g. pseudoword:../shared/data")
        root = s.path if s.path else shared_path(s, "nltk_data").parent
        if s.path and not Path(s.path).expanduser().is_dir():
            raise DataError(f"--data {s.text!r}: folder {s.path!r} does not exist. Fix: give the shared data "
                            "folder that holds nltk_data/corpora")
        cfg = PseudowordConfig(seed=seed, **({"max_sentences_per_period": max_sentences_per_period}
                                             if max_sentences_per_period else {}))
        b = build_pseudoword(Path(root).expanduser(), cfg)
        name = f"pseudoword:seed={seed}" if not s.path else f"pseudoword:{s.path}:seed={seed}"
        data = _subset(ChangeData(name, b.corpus, b.truth["word"].tolist(), b.truth, b.usages,
                                  notes=["documents split into two periods at random; graded truth = injected "
                                         "share p of a donor noun's sense in the later period", *b.notes]), targets)
        return Resolved(data, data.truth)
    if s.kind == "nltk":
        root = shared_path(s, "nltk_data", "corpora")
        corpus = load_nltk_eras(root, max_sentences_per_period=max_sentences_per_period, seed=seed)
        notes = ["gutenberg (mostly 19th c.) vs brown (1961): no graded truth"]
        if targets:
            words = targets
        else:
            words, dropped = demo_targets(corpus, DEMO_WORDS, min_count=15,
                                          max_sentences_per_period=max_sentences_per_period)
            if dropped:
                notes.append(f"targets: {dropped_message(dropped, len(words) + len(dropped), 15)}")
        replaced = corpus.df.attrs.get("replaced_characters")
        if replaced:
            notes.append("bytes that are not UTF-8 replaced by U+FFFD (file: count): "
                         + ", ".join(f"{k}: {v}" for k, v in replaced.items()))
        return Resolved(ChangeData(f"nltk:{s.path or root}", corpus, list(words), None, notes=notes))
    if not s.path:
        raise DataError(f"--data {s.text!r} names no folder. Fix: give it, e.g. {s.kind}:/path/to/folder")
    if s.kind == "semeval":
        d = load_semeval(s.path, max_sentences_per_period=max_sentences_per_period, seed=seed)
        d.corpus.require_periods(2, f"semantic change ranking on --data {s.text!r}")
        return Resolved(_subset(ChangeData(f"semeval:{s.path}", d.corpus, list(d.targets), d.truth,
                                           period_sizes=d.period_sizes), targets))
    d = load_dwug(s.path)
    d.corpus.require_periods(2, f"semantic change ranking on --data {s.text!r}")
    return Resolved(_subset(ChangeData(f"dwug:{s.path}", d.corpus, list(d.targets), d.truth, d.usages), targets))


def _subset(data: ChangeData, wanted) -> ChangeData:
    """``data`` restricted to the ``wanted`` targets (checked; truth and given usages filtered too)."""
    if wanted is None:
        return data
    keep = _change_targets(data.targets, wanted)
    truth = data.truth[data.truth["word"].isin(keep)].reset_index(drop=True) if data.truth is not None else None
    usages = [u for u in data.usages if u.word in set(keep)] if data.usages is not None else None
    return ChangeData(data.name, data.corpus, keep, truth, usages, list(data.notes), data.period_sizes)


def _change_targets(all_targets, wanted) -> list[str]:
    """``wanted`` (POS suffixes stripped) checked against the dataset's targets; None = all of them."""
    if wanted is None:
        return list(all_targets)
    wanted = [strip_pos(w)[0] for w in wanted]
    unknown = [w for w in wanted if w not in all_targets]
    if unknown:
        raise DataError(f"targets {unknown} are not in this dataset's targets ({list(all_targets)[:8]}...).")
    return wanted


# --- social diffusion: SocialCorpus -------------------------------------------------------------

SOCIAL_USAGES = {"world": "world[:DIR]", "acl": "acl[:XML_DIR]", "csv": "csv:DOCS.csv,EDGES.csv"}


def load_social(spec="world", *, world: SocialWorldConfig | dict | None = None, years=range(2017, 2021),
                theta: float = 0.01, min_papers: int = 30, max_docs_per_unit_slice: int | None = None,
                seed: int = 0, progress: bool = True) -> Resolved:
    """Resolved(SocialCorpus, diffusion truth or None) for ``world | world:DIR | acl[:XML_DIR] | csv:DOCS,EDGES``.

    - ``world``: the planted world's social part, by the world rule; the truth dict names the
      planted mode, word, anchor and first-arrival slices. ``world=`` regenerates it in memory
      instead: a :class:`~tempo_analysis.world.SocialWorldConfig`, or a dict of changes to the
      default one (``world={"mode": "flight", "speed": 3, "seed": 1}``).
    - ``acl``: the ACL Anthology venue network (:func:`~tempo_analysis.data.social_corpora.acl_social_corpus`:
      venue families as units, author-Jaccard edges > ``theta``, years as slices) from the XML folder,
      by default ``shared/data/acl_anthology_xml/xml``; ``years``, ``theta``, ``min_papers``,
      ``max_docs_per_unit_slice`` (a seeded sample per venue and year) and ``seed`` apply to it.
    - ``csv:DOCS,EDGES``: documents (unit, time, text[, doc_id]) and an edge list (source, target[, weight]).
    """
    ds = parse_spec(spec, SOCIAL_USAGES)
    if ds.kind != "world" and world is not None:
        raise DataError(f"--data {ds.text!r}: world= regenerates the planted world and applies to 'world' only")
    if ds.kind == "world":
        if len(ds.parts) > 1:
            raise DataError(f"--data {ds.text!r}: give one world folder, e.g. world:data/world")
        if world is not None:
            if ds.path:
                raise DataError(f"--data {ds.text!r}: a world folder is read, never regenerated. Fix: drop the "
                                "folder to regenerate with world=..., or drop world=... to read the folder")
            return Resolved(*generate_social(_social_world_config(world)))
        found = open_world(ds.path)
        if found is None:
            return Resolved(*generate_social(SocialWorldConfig()))
        return Resolved(found.social, found.diffusion_truth)
    if ds.kind == "acl":
        if len(ds.parts) > 1:
            raise DataError(f"--data {ds.text!r}: give one Anthology XML folder, e.g. acl:path/to/acl_anthology_xml/xml")
        folder = shared_path(ds, "acl_anthology_xml", "xml")
        return Resolved(acl_social_corpus(folder, years=years, theta=theta, min_papers=min_papers,
                                          max_docs_per_unit_slice=max_docs_per_unit_slice, seed=seed,
                                          progress=progress))
    if len(ds.parts) != 2:
        raise DataError(f"--data {ds.text!r}: use csv:DOCS.csv,EDGES.csv (documents with unit,time,text; "
                        "edges with source,target[,weight]).")
    return Resolved(csv_social_corpus(ds.parts[0], ds.parts[1]))


def _social_world_config(world) -> SocialWorldConfig:
    """A SocialWorldConfig, or a dict of changes applied to the default one."""
    if isinstance(world, SocialWorldConfig):
        return world
    try:
        return replace(SocialWorldConfig(), **dict(world))
    except TypeError:
        known = list(SocialWorldConfig.__dataclass_fields__)
        raise DataError(f"world={world!r}: not a SocialWorldConfig field. Fix: use a dict of {known}") from None


# --- future text: yearly frames ------------------------------------------------------------------

YEARLY_SPECS = {"world": "world[:DIR]", "acl": "acl[:ABSTRACTS_DIR,XML_DIR]", "csv": "csv:FILE"}


def load_yearly(spec, progress: bool = False) -> Resolved:
    """Resolved(frame, trend truth or None): yearly text (``doc_id, year, text``) for a ``--data`` spec.

    ``world[:DIR]``: the planted world's yearly documents, by the world rule, with its planted
    trend rates (``world.trend_truth``); ``acl[:ABSTRACTS_DIR,XML_DIR]``: ACL abstracts by year,
    2018/2020/2021 filled from the Anthology XML (default folders: ``shared/data/acl_abstracts_by_year``
    and ``shared/data/acl_anthology_xml/xml``; ``acl:ABSTRACTS_DIR`` alone reads no XML);
    ``csv:FILE``: any CSV with ``year`` and ``text`` columns (``doc_id`` optional).
    """
    s = parse_spec(spec, YEARLY_SPECS)
    if s.kind == "world":
        one_folder(s, "world:data/world")
        world = open_world(s.path)
        if world is None:
            corpus, truth = generate_yearly(YearlyWorldConfig())
            return Resolved(yearly_from_corpus(corpus), truth)
        return Resolved(yearly_from_corpus(world.yearly), world.trend_truth)
    if s.kind == "acl":
        if len(s.parts) > 2:
            raise DataError(f"--data {s.text!r}: use acl:ABSTRACTS_DIR,XML_DIR (XML_DIR fills 2018, 2020, 2021)")
        if s.parts:
            abstracts = shared_path(s, "acl_abstracts_by_year")
            xml = shared_path(DataSpec(s.kind, s.parts[1:], s.text), "xml") if len(s.parts) > 1 else None
        else:
            abstracts = shared_path(s, "acl_abstracts_by_year")
            xml = shared_path(s, "acl_anthology_xml", "xml")
        return Resolved(yearly_frame(load_acl_abstracts(abstracts, xml, progress=progress)))
    if len(s.parts) != 1 or not Path(s.path).expanduser().is_file():
        what = "names no file" if not s.parts else f"file {s.path!r} not found"
        raise DataError(f"--data {s.text!r}: {what}. Fix: give one existing CSV file "
                        "with columns year, text (e.g. csv:my_texts.csv)")
    # texts and ids are read as written ("NA" is a text, "007" an id), and a row with a field too many
    # is an error, not a shifted table
    return Resolved(yearly_frame(read_frame(pd.read_csv, Path(s.path).expanduser(), what="yearly text CSV",
                                            index_col=False, dtype={"text": str, "doc_id": str},
                                            keep_default_na=False, na_values={"year": [""]})))


# --- one entry point ------------------------------------------------------------------------------

#: kind -> the loader of that kind (its name in this module, looked up when called)
KINDS = {"timelines": "load_timelines", "change": "load_change_data", "social": "load_social",
         "yearly": "load_yearly"}


def resolve(spec, kind: str, **options) -> Resolved:
    """Resolve a ``--data`` spec for one wing: ``kind`` is ``"timelines"`` (stream), ``"change"``
    (semantic change), ``"social"`` (diffusion) or ``"yearly"`` (future text); ``options`` are that
    kind's loader options (:func:`load_timelines`, :func:`load_change_data`, :func:`load_social`,
    :func:`load_yearly`). Returns :class:`Resolved`."""
    if kind not in KINDS:
        raise DataError(f"resolve(..., kind={kind!r}): not a data kind. Fix: use one of {sorted(KINDS)} "
                        "(timelines: stream, change: semantic change, social: diffusion, yearly: future text)")
    return getattr(sys.modules[__name__], KINDS[kind])(spec, **options)
