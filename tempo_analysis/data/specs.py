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

from tempo_analysis.data.errors import DataError
from tempo_analysis.data.locations import data_dir, shared_data_dir
from tempo_analysis.world.world import World, load_world

__all__ = ["DataSpec", "parse_spec", "open_world", "shared_path"]


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
# (load_timelines lives here)


# --- semantic change: ChangeData ---------------------------------------------------------------
# (load_change_data lives here)


# --- social diffusion: SocialCorpus -------------------------------------------------------------
# (load_social lives here)


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
        raise DataError(f"--data {s.text!r}: file {s.path!r} not found. Fix: give one existing CSV file "
                        "with columns year, text (e.g. csv:my_texts.csv)")
    return yearly_frame(pd.read_csv(Path(s.path).expanduser())), None


__all__ += ["YEARLY_SPECS", "load_yearly"]
