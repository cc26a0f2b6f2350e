"""The whole planted-truth world: generate it in memory, save it as small files, load it back.

`generate_world(WorldConfig(seed=0))` runs the four part generators (each with its own seeded
RNG) and wraps the tables in the shared data types. `World.save(dir)` writes the files listed in
`FILES` (CSV/JSON, deterministic bytes); `load_world(dir)` reads them back into an equal World.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Union

import networkx as nx
import pandas as pd

from tempo_analysis.data.errors import DataPathError
from tempo_analysis.data.locations import data_dir
from tempo_analysis.outputs import OutputExistsError

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
    "social_docs.csv": "social corpus: doc_id, unit, time, sense, text",
    "social_edges.csv": "the unit graph: source, target",
    "diffusion_truth.json": "mode, word, anchor, senses, first_slice, community, walk_share",
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
        """Write every file of `FILES` into `directory` (created if needed); returns {name: path}.

        Each file is written atomically. A world folder holds only the files of `FILES`: a folder
        with any other file in it is not ours and is refused (:class:`OutputExistsError`) unless
        ``overwrite=True``, so a mistyped ``--out`` never mixes the world into a user's folder.
        """
        d = Path(directory)
        if d.is_dir() and not overwrite:
            foreign = sorted(p.name for p in d.iterdir() if p.name not in FILES and not p.name.startswith("."))
            if foreign:
                raise OutputExistsError(
                    f"{str(d)!r} holds files that are not part of a world ({foreign[:5]}), so the world is not "
                    "written into it. Fix: pass another --out (the world goes to OUT/world/), or --overwrite "
                    "(overwrite=True) to write the world files there anyway (other files are left alone).")
        out = {"config.json": write_json({"format_version": FORMAT_VERSION, **self.config.to_dict()},
                                         d / "config.json")}
        for name in _CSV_TYPES:
            out[name] = write_csv(self.frames[name[:-4]], d / name)
        out["diffusion_truth.json"] = write_json(self.diffusion_truth, d / "diffusion_truth.json")
        return out


def _assemble(config: WorldConfig, frames: dict, diffusion_truth: dict) -> World:
    """Wrap the raw tables in the shared data types (validated by their constructors)."""
    from tempo_analysis.data import PeriodCorpus, SocialCorpus, Timelines

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
