"""The one resolver for ``--data`` strings, shared by the CLI, the notebooks and the facades.

A data spec names a source and, after a colon, where it is::

    world                     the planted-truth world on disk (data/world), else generated (see below)
    world:DIR                 a world folder written by ``tempo-analysis world --out DIR``
    rumoureval2017[:DIR]      RumourEval-2017 (stream)
    semeval:DIR | dwug:DIR    semantic change benchmarks with graded truth
    nltk[:DIR]                NLTK corpora (gutenberg, brown, ...)
    acl[:A,B]                 ACL abstracts by year / the ACL Anthology XML
    csv:FILE[,FILE] | jsonl:FILE   your own data

A source given without a folder (``rumoureval2017``, ``nltk``, ``acl``) is looked up in the
real-data folder (:func:`tempo_analysis.data.locations.shared_data_dir`).

**The world rule**, the same for every wing: ``world`` reads ``data/world`` when it exists. A
world folder that exists but cannot be read is an error (it is never silently replaced). When
no world is on disk at all, the default world is generated in memory (seeded, the same data
``tempo-analysis world --out data/`` writes) with a warning. ``world:DIR`` reads DIR and never
generates.

Each wing's loader below turns a spec into that wing's input type; all of them parse with
:func:`parse_spec` and find the world with :func:`open_world`.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path

from tempo_analysis.data.errors import DataError, read_frame
from tempo_analysis.data.locations import data_dir, shared_data_dir
from tempo_analysis.world.world import World, load_world

__all__ = ["DataSpec", "parse_spec", "open_world", "one_folder", "shared_path"]


@dataclass(frozen=True)
class DataSpec:
    """A parsed ``--data`` string: ``kind`` and the comma-separated ``parts`` after the colon."""

    kind: str
    parts: tuple[str, ...]
    text: str

    @property
    def path(self) -> str | None:
        """The first part (a file or folder), or None when the spec named no location."""
        return self.parts[0] if self.parts else None


def parse_spec(spec, usages: dict[str, str], *, what: str = "--data") -> DataSpec:
    """Split ``kind:part[,part]`` and check ``kind`` against ``usages`` (kind -> usage text).

    Raises a DataError that names the option and lists the accepted forms.
    """
    if isinstance(spec, DataSpec):
        spec = spec.text
    text = str(spec).strip()
    kind, _, rest = text.partition(":")
    kind = kind.strip().lower()
    aliases = {"rumoureval": "rumoureval2017"}
    kind = aliases.get(kind, kind)
    if kind not in usages:
        raise DataError(f"{what} {text!r} is not understood. Fix: use one of {', '.join(usages.values())}")
    parts = tuple(p.strip() for p in rest.split(",") if p.strip()) if rest else ()
    return DataSpec(kind, parts, text)


def one_folder(spec: DataSpec, example: str) -> None:
    """Refuse a spec with more than one comma-separated part where one folder is read (the rest would
    be ignored silently); ``example`` is a spec of the right form."""
    if len(spec.parts) > 1:
        raise DataError(f"--data {spec.text!r}: give one folder; the part(s) {list(spec.parts[1:])} after the comma "
                        f"would be ignored. Fix: give one folder, e.g. {example}")


def shared_path(spec: DataSpec, *relative: str) -> Path:
    """The spec's own folder, else ``shared/data/<relative>``; a clear error when neither exists."""
    if spec.path:
        path = Path(spec.path).expanduser()
        if not path.exists():
            raise DataError(f"--data {spec.text!r}: {path} does not exist. Fix: give an existing path")
        return path
    base = shared_data_dir()
    if base is None:
        raise DataError(f"--data {spec.text!r} names no folder and no shared/data folder was found. "
                        f"Fix: give the folder, e.g. {spec.kind}:/path/to/{'/'.join(relative)}")
    path = base.joinpath(*relative)
    if not path.exists():
        raise DataError(f"--data {spec.text!r}: {path} does not exist. Fix: give the folder after the colon")
    return path


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


# --- stream: Timelines ------------------------------------------------------------------------
# (this section's imports sit here, at module level, so that each wing edits only its own section)
from tempo_analysis.data.loaders.rumoureval import load_rumoureval  # noqa: E402
from tempo_analysis.data.timelines import POSITION, Timelines, subsample_timelines  # noqa: E402
from tempo_analysis.world.config import StreamWorldConfig  # noqa: E402
from tempo_analysis.world.stream import generate_timelines  # noqa: E402

TIMELINE_SPECS = {"world": "world[:DIR]", "rumoureval2017": "rumoureval2017[:DIR]", "csv": "csv:FILE",
                  "jsonl": "jsonl:FILE"}


def load_timelines(spec, *, time_unit: str | None = None, max_timelines: int | None = None,
                   seed: int = 0) -> Timelines:
    """Timelines (stream classification) for a ``--data`` spec.

    ``world[:DIR]``: the planted world's diary timelines (labels ``O``/``IS``/``IE``), by the world
    rule; ``rumoureval2017[:DIR]``: RumourEval-2017 threads with LRS stance-switch labels
    (default folder: ``shared/data/rumoureval2017``); ``csv:FILE`` / ``jsonl:FILE``: columns
    ``timeline_id, post_id, timestamp, text[, label, author]`` (``time_unit`` for numeric
    timestamps: s, ms, min, h, D; ``position``, or no timestamp column, for order-only data:
    a post's index in its timeline is its time). ``world`` and ``rumoureval2017`` carry real
    timestamps: a numeric ``time_unit`` does not change them, and ``position`` replaces them by
    each post's index in its time-sorted timeline (the order-only view of the same data). A
    timeline of one post is refused (it has no stream to classify; the DataError names it).
    ``max_timelines`` keeps a seeded random subset of whole timelines.
    """
    s = parse_spec(spec, TIMELINE_SPECS)
    if s.kind in ("world", "rumoureval2017"):
        one_folder(s, "world:data/world" if s.kind == "world" else "rumoureval2017:../shared/data/rumoureval2017")
        if s.kind == "world":
            world = open_world(s.path)
            tl = world.timelines if world is not None else generate_timelines(StreamWorldConfig())
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
    return subsample_timelines(tl, max_timelines, seed)


__all__ += ["TIMELINE_SPECS", "load_timelines"]


# --- semantic change: ChangeData ---------------------------------------------------------------
# (this section's imports sit here, at module level, so that each wing edits only its own section)
from tempo_analysis.data.change import ChangeData  # noqa: E402
from tempo_analysis.data.loaders.dwug import load_dwug  # noqa: E402
from tempo_analysis.data.loaders.nltk_corpora import DEMO_WORDS, demo_targets, dropped_message, load_nltk_eras  # noqa: E402
from tempo_analysis.data.loaders.pseudoword import PseudowordConfig, build_pseudoword  # noqa: E402
from tempo_analysis.data.loaders.semeval import load_semeval, strip_pos  # noqa: E402
from tempo_analysis.world.change import generate_change_corpus  # noqa: E402

CHANGE_SPECS = {"world": "world[:DIR]", "semeval": "semeval:DIR", "dwug": "dwug:DIR", "nltk": "nltk[:DIR]",
                "pseudoword": "pseudoword[:SHARED_DATA_DIR]"}


def load_change_data(spec="world", *, seed: int = 0, max_sentences_per_period: int | None = None,
                     targets: list[str] | None = None) -> ChangeData:
    """:class:`~tempo_analysis.data.change.ChangeData` (semantic change ranking) for a ``--data`` spec.

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
    semeval and nltk corpora.
    """
    s = parse_spec(spec, CHANGE_SPECS)
    if s.kind in ("world", "nltk", "semeval", "dwug"):
        one_folder(s, {"world": "world:data/world", "nltk": "nltk:../shared/data/nltk_data/corpora",
                       "semeval": "semeval:path/to/semeval2020_ulscd_eng", "dwug": "dwug:path/to/dwug_en"}[s.kind])
    if s.kind == "world":
        world = open_world(s.path)
        corpus, truth = (world.periods, world.change_truth) if world is not None else generate_change_corpus()
        data = ChangeData.from_usage_corpus("world", corpus, truth)
        return _subset(data, targets)
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
        data = ChangeData(name, b.corpus, b.truth["word"].tolist(), b.truth, b.usages,
                          notes=["documents split into two periods at random; graded truth = injected share p "
                                 "of a donor noun's sense in the later period", *b.notes])
        return _subset(data, targets)
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
        return ChangeData(f"nltk:{s.path or root}", corpus, list(words), None, notes=notes)
    if not s.path:
        raise DataError(f"--data {s.text!r} names no folder. Fix: give it, e.g. {s.kind}:/path/to/folder")
    if s.kind == "semeval":
        d = load_semeval(s.path, max_sentences_per_period=max_sentences_per_period, seed=seed)
        d.corpus.require_periods(2, f"semantic change ranking on --data {s.text!r}")
        return _subset(ChangeData(f"semeval:{s.path}", d.corpus, list(d.targets), d.truth,
                                  period_sizes=d.period_sizes), targets)
    d = load_dwug(s.path)
    d.corpus.require_periods(2, f"semantic change ranking on --data {s.text!r}")
    return _subset(ChangeData(f"dwug:{s.path}", d.corpus, list(d.targets), d.truth, d.usages), targets)


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


__all__ += ["CHANGE_SPECS", "load_change_data"]


# --- social diffusion: SocialCorpus -------------------------------------------------------------
from dataclasses import replace  # noqa: E402

from tempo_analysis.data.social_corpora import (acl_social_corpus, csv_social_corpus,  # noqa: E402
                                                world_social_corpus)
from tempo_analysis.world.config import SocialWorldConfig  # noqa: E402

__all__ += ["SOCIAL_USAGES", "load_social"]

SOCIAL_USAGES = {"world": "world[:DIR]", "acl": "acl[:XML_DIR]", "csv": "csv:DOCS.csv,EDGES.csv"}


def load_social(spec="world", *, world: SocialWorldConfig | dict | None = None, years=range(2017, 2021),
                theta: float = 0.01, min_papers: int = 30, max_docs_per_unit_slice: int | None = None,
                seed: int = 0, progress: bool = True):
    """(SocialCorpus, diffusion truth or None) for ``world | world:DIR | acl[:XML_DIR] | csv:DOCS,EDGES``.

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
            return world_social_corpus(_social_world_config(world))
        found = open_world(ds.path)
        if found is None:
            return world_social_corpus(SocialWorldConfig())
        return found.social, found.diffusion_truth
    if ds.kind == "acl":
        if len(ds.parts) > 1:
            raise DataError(f"--data {ds.text!r}: give one Anthology XML folder, e.g. acl:path/to/acl_anthology_xml/xml")
        folder = shared_path(ds, "acl_anthology_xml", "xml")
        corpus = acl_social_corpus(folder, years=years, theta=theta, min_papers=min_papers,
                                   max_docs_per_unit_slice=max_docs_per_unit_slice, seed=seed, progress=progress)
        return corpus, None
    if len(ds.parts) != 2:
        raise DataError(f"--data {ds.text!r}: use csv:DOCS.csv,EDGES.csv (documents with unit,time,text; "
                        "edges with source,target[,weight]).")
    return csv_social_corpus(ds.parts[0], ds.parts[1]), None


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
# (this section's imports sit here, at module level, so that each wing edits only its own section)
import pandas as pd  # noqa: E402

from tempo_analysis.data.loaders.acl_abstracts import load_acl_abstracts  # noqa: E402
from tempo_analysis.data.yearly import yearly_frame, yearly_from_corpus  # noqa: E402
from tempo_analysis.world.config import YearlyWorldConfig  # noqa: E402
from tempo_analysis.world.yearly import generate_yearly  # noqa: E402

YEARLY_SPECS = {"world": "world[:DIR]", "acl": "acl[:ABSTRACTS_DIR,XML_DIR]", "csv": "csv:FILE"}


def load_yearly(spec, progress: bool = False):
    """(frame, trend_truth or None): yearly text (``doc_id, year, text``) for a ``--data`` spec.

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
            return yearly_from_corpus(corpus), truth
        return yearly_from_corpus(world.yearly), world.trend_truth
    if s.kind == "acl":
        if len(s.parts) > 2:
            raise DataError(f"--data {s.text!r}: use acl:ABSTRACTS_DIR,XML_DIR (XML_DIR fills 2018, 2020, 2021)")
        if s.parts:
            abstracts = shared_path(s, "acl_abstracts_by_year")
            xml = shared_path(DataSpec(s.kind, s.parts[1:], s.text), "xml") if len(s.parts) > 1 else None
        else:
            abstracts = shared_path(s, "acl_abstracts_by_year")
            xml = shared_path(s, "acl_anthology_xml", "xml")
        return yearly_frame(load_acl_abstracts(abstracts, xml, progress=progress)), None
    if len(s.parts) != 1 or not Path(s.path).expanduser().is_file():
        what = "names no file" if not s.parts else f"file {s.path!r} not found"
        raise DataError(f"--data {s.text!r}: {what}. Fix: give one existing CSV file "
                        "with columns year, text (e.g. csv:my_texts.csv)")
    # texts and ids are read as written ("NA" is a text, "007" an id), and a row with a field too many
    # is an error, not a shifted table
    return yearly_frame(read_frame(pd.read_csv, Path(s.path).expanduser(), what="yearly text CSV", index_col=False,
                                   dtype={"text": str, "doc_id": str}, keep_default_na=False,
                                   na_values={"year": [""]})), None


__all__ += ["YEARLY_SPECS", "load_yearly"]
