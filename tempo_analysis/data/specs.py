"""Parsing ``--data`` strings: :class:`DataSpec`, :func:`parse_spec` and the folder helpers.

A data spec names a source and, after a colon, where it is (``world:data/world``,
``csv:posts.csv``, ``acl:A,B``). A path whose name holds a comma is one part when it exists
(``csv:comma,name.csv``). This module only parses and finds folders; it knows no source.
The one resolver that turns a spec into a wing's data (and the planted truth, for the world) is
:mod:`tempo_analysis.resolve`, which sits above this package and :mod:`tempo_analysis.world`.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tempo_analysis.data.errors import DataError
from tempo_analysis.data.locations import shared_data_dir

__all__ = ["DataSpec", "parse_spec", "one_folder", "shared_path"]


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
    return DataSpec(kind, _split_parts(rest), text)


def _split_parts(rest: str) -> tuple[str, ...]:
    """The comma-separated parts of ``rest``; commas inside a path that exists are part of it: from each
    part on, the longest run of parts that joined with commas names an existing path is one part
    (``csv:comma,name.csv``, ``csv:my,docs.csv,edges.csv``)."""
    raw = rest.split(",") if rest else []
    parts, i = [], 0
    while i < len(raw):
        j = next((j for j in range(len(raw), i + 1, -1)
                  if Path(",".join(raw[i:j]).strip()).expanduser().exists()), i + 1)
        part = ",".join(raw[i:j]).strip()
        if part:
            parts.append(part)
        i = j
    return tuple(parts)


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
