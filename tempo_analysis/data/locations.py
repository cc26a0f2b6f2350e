"""Where things live: the project checkout, its demo data, the real-data folder, the cache.

One rule for every wing, notebook and command:

- ``project_root()``: the nearest folder at or above the working directory that holds a
  ``pyproject.toml``; failing that, the source checkout of an editable install; failing that,
  the working directory itself.
- ``data_dir()``: ``$TEMPO_ANALYSIS_DATA`` if set, else ``<root>/data`` (the planted world lives
  in its ``world/`` subfolder).
- ``shared_data_dir()``: the real public datasets: ``$TEMPO_ANALYSIS_SHARED_DATA`` if set, else
  the first ``shared/data`` folder found beside the project root or any folder above it.
"""
from __future__ import annotations

import os
from pathlib import Path

ENV_DATA = "TEMPO_ANALYSIS_DATA"
ENV_SHARED_DATA = "TEMPO_ANALYSIS_SHARED_DATA"

__all__ = ["ENV_DATA", "ENV_SHARED_DATA", "project_root", "data_dir", "shared_data_dir"]


def project_root(start: str | os.PathLike | None = None) -> Path:
    """The folder holding pyproject.toml at or above `start` (default: cwd), else a fallback."""
    here = Path(start if start is not None else os.getcwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "pyproject.toml").is_file():
            return folder
    # an editable install: tempo_analysis/ sits next to the checkout's pyproject.toml
    checkout = Path(__file__).resolve().parents[2]
    if (checkout / "pyproject.toml").is_file() and (checkout / "tempo_analysis").is_dir():
        return checkout
    return here


def data_dir(start: str | os.PathLike | None = None) -> Path:
    """The demo data folder: $TEMPO_ANALYSIS_DATA, else <project root>/data."""
    env = os.environ.get(ENV_DATA)
    if env:
        return Path(env).expanduser().resolve()
    return project_root(start) / "data"


def shared_data_dir(start: str | os.PathLike | None = None, *, required: bool = False) -> Path | None:
    """The real-data folder (``shared/data``): $TEMPO_ANALYSIS_SHARED_DATA, else found upwards.

    Looks for ``shared/data`` in the project root's parent folders (a checkout at
    ``/work/main`` finds ``/work/shared/data``). ``required=True`` raises a FileNotFoundError that
    says how to point at it; otherwise None when there is none.
    """
    env = os.environ.get(ENV_SHARED_DATA)
    if env:
        path = Path(env).expanduser().resolve()
        if path.is_dir():
            return path
        if required:
            raise FileNotFoundError(f"${ENV_SHARED_DATA}={env}: no such folder. Fix: point it at the "
                                    "folder holding rumoureval2017/, acl_abstracts_by_year/, nltk_data/ ...")
        return None
    root = project_root(start)
    for folder in (root, *root.parents):
        cand = folder / "shared" / "data"
        if cand.is_dir():
            return cand
    if required:
        raise FileNotFoundError(f"no shared/data folder beside {root} or above it. Fix: set "
                                f"${ENV_SHARED_DATA} to the real-data folder, or give the path in the spec "
                                "(e.g. rumoureval2017:/path/to/rumoureval2017)")
    return None
