"""The whole planted-truth world: generate it in memory, save it as small files, load it back.

`generate_world(WorldConfig(seed=0))` runs the four part generators (each with its own seeded
RNG) and wraps the tables in the shared data types. `World.save(dir)` writes the files listed in
`FILES` (CSV/JSON, deterministic bytes); `load_world(dir)` reads them back into an equal World.

A folder counts as a world folder (written by tempo-analysis) when its `config.json` is a JSON
object with an integer `format_version` (:func:`is_world_folder`). `World.save` replaces such a
folder as a whole and atomically (a temporary sibling renamed into place, with the helpers of
:mod:`tempo_analysis.outputs`), so a kill at any moment leaves the previous world complete.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Union

import networkx as nx
import pandas as pd

from tempo_analysis.data.errors import DataPathError
from tempo_analysis.data.locations import data_dir
from tempo_analysis.data.periods import PeriodCorpus
from tempo_analysis.data.social import SocialCorpus
from tempo_analysis.data.timelines import Timelines
from tempo_analysis.outputs import (OutputExistsError, _fsync_dir, clean_stale_temps, make_temp_dir, mark_temp,
                                    prepare_output_dir, temp_name, unmark_temp)

from .change import PERIODS, change_frames
from .config import WorldConfig
from .io import read_csv, read_json, write_csv, write_json
from .social import edges_frame, social_frames
from .stream import timelines_frames
from .yearly import yearly_frames

FORMAT_VERSION = 1

# file name -> what it holds (data/README.md documents every column)
FILES = {
    "config.json": "the WorldConfig that generated these files (+ format_version)",
    "timelines.csv": "posts: timeline_id, post_id, timestamp, author, label, text",
    "timelines_truth.csv": "hidden state per post: post_id, mood, intensity, gap_s, gap_kind, change_kind",
    "periods.csv": "two-period corpus: doc_id, period, word, sense, start, end, text, probe",
    "change_truth.csv": "per word: graded, binary, kind, senses, changing_sense, share_old, share_new, jsd",
    "social_docs.csv": "social corpus: doc_id, unit, time, word, kind, sense, text",
    "social_edges.csv": "the unit graph: source, target",
    "diffusion_truth.json": "mode, word, anchor, old_anchor, old_sense, new_sense, n_slices, first_slice, "
                            "community, walk_share, changing_words, stable_words, held_out_cells, words",
    "yearly.csv": "yearly corpus: doc_id, period (year), text",
    "trend_truth.csv": "per word and year: trend, rate, n_docs, doc_share",
}

# how each CSV's columns are typed when read back
_CSV_TYPES = {
    "timelines.csv": dict(time_cols=("timestamp",)),
    "timelines_truth.csv": dict(int_cols=("intensity",), float_cols=("gap_s",)),
    "periods.csv": dict(int_cols=("start", "end", "probe")),
    "change_truth.csv": dict(int_cols=("binary",), float_cols=("graded", "share_old", "share_new", "jsd")),
    "social_docs.csv": dict(int_cols=("time",)),
    "social_edges.csv": {},
    "yearly.csv": dict(int_cols=("period",)),
    "trend_truth.csv": dict(int_cols=("year", "n_docs"), float_cols=("rate", "doc_share")),
}


@dataclass(repr=False)
class World:
    """The planted-truth world: four corpora in the shared data types, and their right answers."""

    config: WorldConfig
    timelines: object            # tempo_analysis.data.Timelines, labels "O" / "IS" / "IE"
    timeline_truth: pd.DataFrame  # post_id, mood, intensity, gap_s, gap_kind, change_kind
    periods: object              # PeriodCorpus, periods "old" < "new"
    change_truth: pd.DataFrame    # word, graded, binary, kind, senses, ...
    social: object               # SocialCorpus, units "u00".., int slices
    diffusion_truth: dict         # mode, word, anchor, first_slice, community, ...
    yearly: object               # PeriodCorpus, int-year periods
    trend_truth: pd.DataFrame     # word, year, trend, rate, n_docs, doc_share
    frames: dict = field(default_factory=dict)  # the raw tables that save() writes

    def __repr__(self) -> str:
        s = self.summary()
        return (f"World(seed={self.config.seed}: {s['timelines']} timelines / {s['posts']} posts; "
                f"{s['change_words']} change words x {s['usages_per_word_period']} usages; "
                f"{s['units']} units x {s['slices']} slices ({s['mode']}); "
                f"{s['years']} years x {s['docs_per_year']} docs)")

    def summary(self) -> dict:
        """Key sizes and planted facts as a flat dict (for tables and build/summary.json)."""
        tl = self.frames["timelines"]
        labels = tl["label"].value_counts(normalize=True)
        return {
            "timelines": int(tl["timeline_id"].nunique()), "posts": int(len(tl)),
            "share_O": round(float(labels.get("O", 0.0)), 4),
            "share_IS": round(float(labels.get("IS", 0.0)), 4),
            "share_IE": round(float(labels.get("IE", 0.0)), 4),
            "change_words": int(len(self.change_truth)),
            "changed_words": int(self.change_truth["binary"].sum()),
            "usages_per_word_period": int(self.config.change.n_sentences_per_word_period),
            "units": int(len(self.diffusion_truth["community"])), "slices": int(self.diffusion_truth["n_slices"]),
            "mode": self.diffusion_truth["mode"], "walk_share": self.diffusion_truth["walk_share"],
            "years": int(self.trend_truth["year"].nunique()),
            "docs_per_year": int(self.config.yearly.docs_per_year),
            "trend_words": int(self.trend_truth["word"].nunique()),
        }

    def save(self, directory: Union[str, Path], *, overwrite: bool = False) -> dict:
        """Write every file of `FILES` into `directory`; returns {name: path}.

        The folder is replaced as a whole and atomically: the files are written into a temporary
        sibling (``.NAME.tempo_analysis-tmp-<pid>-<token>``) that is then renamed into place, so a reader (or a
        kill at any moment) sees the previous world complete or the new one complete, never a mix.
        Allowed without ``overwrite``: a missing or empty folder, or a world folder (see
        :func:`check_world_folder`); anything else is refused (:class:`OutputExistsError`).
        Files in the folder that are not world files (only with ``overwrite=True``, or hidden
        files) are carried over into the new folder: nothing of the user's is lost.
        """
        d = check_world_folder(directory, overwrite=overwrite)
        parent = d.absolute().parent
        parent.mkdir(parents=True, exist_ok=True)
        tmp = make_temp_dir(d.absolute())
        old = None
        try:
            write_json({"format_version": FORMAT_VERSION, **self.config.to_dict()}, tmp / "config.json")
            for name in _CSV_TYPES:
                write_csv(self.frames[name[:-4]], tmp / name)
            write_json(self.diffusion_truth, tmp / "diffusion_truth.json")
            # the folder may have changed while we wrote: check it again, then carry the rest over
            check_world_folder(d, overwrite=overwrite)
            if d.is_dir():
                shutil.copymode(d, tmp)
                for p in _other_entries(d):
                    if p.is_dir() and not p.is_symlink():
                        shutil.copytree(p, tmp / p.name, symlinks=True)
                    else:
                        shutil.copy2(p, tmp / p.name, follow_symlinks=False)
            if d.exists():
                old = temp_name(d.absolute(), "old")
                mark_temp(d, as_name=old)   # a kill from the rename on: clean_stale_temps (the next save or
                os.replace(d, old)          # load_world) moves the old world back
            unmark_temp(tmp)
            os.replace(tmp, d)
            _fsync_dir(parent)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            if old is not None and not d.exists():
                unmark_temp(old)
                os.replace(old, d)    # failed between the renames: the previous world goes back in place
            elif old is not None:
                unmark_temp(d)        # the rename aside itself failed: the world stays, unmarked
            raise
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
        return {name: d / name for name in FILES}


# orphans of the old file-by-file writer (io._atomic_write): `.NAME.<random>.tmp`
_FILE_TEMP = re.compile(r"^\.(?P<name>[^/]+?)\.[^./]+\.tmp$")


def _other_entries(d: Path) -> list:
    """The entries of folder `d` that are not world files (nor orphan temps of a world file)."""
    out = []
    for p in sorted(d.iterdir()):
        m = _FILE_TEMP.match(p.name)
        if p.name in FILES or (m and m.group("name") in FILES):
            continue
        out.append(p)
    return out


def is_world_folder(directory: Union[str, Path]) -> bool:
    """True when `directory` holds a world written by tempo-analysis: its `config.json` is a JSON
    object with an integer `format_version` (what `World.save` writes). File names alone do not count."""
    cfg = Path(directory) / "config.json"
    try:
        if not cfg.is_file() or cfg.stat().st_size > 1_000_000:
            return False
        data = json.loads(cfg.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    v = data.get("format_version") if isinstance(data, dict) else None
    return isinstance(v, int) and not isinstance(v, bool)


def check_world_folder(directory: Union[str, Path], *, overwrite: bool = False) -> Path:
    """Check the folder `World.save` would write, before any work; return it as a Path.

    Accepted: a folder that does not exist yet, an empty folder (hidden files aside), a world folder
    (:func:`is_world_folder`) holding only world files, or any folder with ``overwrite=True``.
    Refused with :class:`OutputExistsError` (one line naming the folder and the fix): a folder
    with other files, or whose config.json was not written by tempo-analysis; a file, a symbolic
    link, a path under a file or in a folder we cannot write to.
    """
    d = prepare_output_dir(directory, overwrite=True)    # file / link / parent checks, stale temps cleaned
    if overwrite or not d.is_dir():
        return d
    visible = [p.name for p in _other_entries(d) if not p.name.startswith(".")]
    has_world_files = any((d / n).exists() for n in FILES)
    fix = ("Fix: pass another --out (the world goes to OUT/world/), or --overwrite (overwrite=True) to write "
           "the world files there anyway (the other files are kept).")
    if visible:
        raise OutputExistsError(f"{str(d)!r} holds files that are not part of a world ({visible[:5]}), so the "
                                f"world is not written into it. {fix}")
    if has_world_files and not is_world_folder(d):
        raise OutputExistsError(f"{str(d)!r} holds files with world file names, but its config.json was not written "
                                "by tempo-analysis (no JSON object with a format_version), so they are not replaced. "
                                f"{fix}")
    return d


def _assemble(config: WorldConfig, frames: dict, diffusion_truth: dict) -> World:
    """Wrap the raw tables in the shared data types (validated by their constructors)."""
    g = nx.Graph()
    g.add_nodes_from(sorted(diffusion_truth["community"]))
    g.add_edges_from(zip(frames["social_edges"]["source"], frames["social_edges"]["target"]))
    years = sorted(frames["yearly"]["period"].unique().tolist())
    return World(
        config=config,
        timelines=Timelines.from_frame(frames["timelines"]),
        timeline_truth=frames["timelines_truth"],
        periods=PeriodCorpus.from_frame(frames["periods"], order=list(PERIODS)),
        change_truth=frames["change_truth"],
        social=SocialCorpus.from_frame(frames["social_docs"], g,
                                       slices=list(range(diffusion_truth["n_slices"]))),
        diffusion_truth=diffusion_truth,
        yearly=PeriodCorpus.from_frame(frames["yearly"], order=years, periods=years),
        trend_truth=frames["trend_truth"],
        frames=frames,
    )


def generate_world(config: Optional[WorldConfig] = None) -> World:
    """Generate the whole world in memory (fully seeded; ~1 s at the defaults)."""
    cfg = (config or WorldConfig()).resolved()
    frames: dict = {}
    frames["timelines"], frames["timelines_truth"] = timelines_frames(cfg.stream)
    frames["periods"], frames["change_truth"] = change_frames(cfg.change)
    docs, _, g, diffusion_truth = social_frames(cfg.social)
    frames["social_docs"], frames["social_edges"] = docs, edges_frame(g)
    frames["yearly"], frames["trend_truth"] = yearly_frames(cfg.yearly)
    return _assemble(cfg, frames, diffusion_truth)


def resolve_world_dir(directory: Union[str, Path, None] = None) -> Path:
    """The folder holding the world's files: `directory` itself or its `world/` subfolder;
    default: the project's data dir (`tempo_analysis.data.locations.data_dir()`)."""
    if directory is None:
        directory = data_dir()
    d = Path(directory)
    for cand in (d, d / "world"):
        if (cand / "config.json").is_file():
            return cand
    # a save killed between its two renames leaves the previous world set aside: put it back
    if clean_stale_temps(d.absolute().parent) + clean_stale_temps(d):
        for cand in (d, d / "world"):
            if (cand / "config.json").is_file():
                return cand
    raise DataPathError(f"no planted world in {d} (looked for config.json there and in {d / 'world'}). "
                            f"Fix: run `tempo-analysis world --out {d}` or pass the folder that holds it.")


def load_world(directory: Union[str, Path, None] = None) -> World:
    """Read a world written by `World.save` (or `tempo-analysis world --out DIR`)."""
    d = resolve_world_dir(directory)
    missing = [n for n in FILES if not (d / n).is_file()]
    if missing:
        raise FileNotFoundError(f"world folder {d} is missing {missing}. Fix: regenerate it with "
                                f"`tempo-analysis world --out {d.parent if d.name == 'world' else d}`.")
    meta = read_json(d / "config.json")
    version = meta.pop("format_version", None)
    if version != FORMAT_VERSION:
        raise ValueError(f"{d / 'config.json'}: format_version={version!r}, this library reads "
                         f"{FORMAT_VERSION}. Fix: regenerate the world with this version.")
    config = WorldConfig.from_dict(meta)
    frames = {name[:-4]: read_csv(d / name, **kw) for name, kw in _CSV_TYPES.items()}
    return _assemble(config, frames, read_json(d / "diffusion_truth.json"))
