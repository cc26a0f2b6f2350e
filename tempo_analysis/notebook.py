"""Notebook helpers: find the project and its data, and record each notebook's key numbers.

Notebooks run from ``notebooks/``, from a temporary copy (the browser test), or headless from
``scripts/run_notebooks.py``. These helpers give them one way to find things:

- ``project_root()``: the nearest folder at or above the working directory that holds a
  ``pyproject.toml``; failing that, the source checkout of an editable install; failing that, the
  working directory itself.
- ``data_dir()``: ``$TEMPO_ANALYSIS_DATA`` if set, else ``<root>/data``.
- ``summary_path()``: ``$TEMPO_ANALYSIS_SUMMARY`` if set, else ``<root>/build/summary.json``.
- ``record_summary(values, notebook=...)``: merges flat keys such as
  ``"stream.tempoformer.macro_f1"`` into the summary file, atomically, under the notebook's name.

The summary file looks like::

    {"notebooks": {"00_overview": {"values": {"world.timelines.posts": 1200, ...},
                                   "updated": "2025-01-01T12:00:00+00:00"}}}

``scripts/run_notebooks.py`` adds ``seconds`` and ``status`` next to ``values``.
"""
from __future__ import annotations

import datetime as _dt
import json
import math
import os
import tempfile
from numbers import Integral, Real
from pathlib import Path
from typing import Any, Mapping

__all__ = [
    "project_root",
    "data_dir",
    "summary_path",
    "record_summary",
    "read_summary",
    "flatten",
]

ENV_DATA = "TEMPO_ANALYSIS_DATA"
ENV_SUMMARY = "TEMPO_ANALYSIS_SUMMARY"
ENV_NOTEBOOK = "TEMPO_ANALYSIS_NOTEBOOK"


# -----------------------------------------------------------------------------
# where things are


def project_root(start: str | os.PathLike | None = None) -> Path:
    """The folder holding pyproject.toml at or above `start` (default: cwd), else a fallback."""
    here = Path(start if start is not None else os.getcwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "pyproject.toml").is_file():
            return folder
    # an editable install: tempo_analysis/ sits next to the checkout's pyproject.toml
    checkout = Path(__file__).resolve().parent.parent
    if (checkout / "pyproject.toml").is_file() and (checkout / "tempo_analysis").is_dir():
        return checkout
    return here


def data_dir(start: str | os.PathLike | None = None) -> Path:
    """The demo data folder: $TEMPO_ANALYSIS_DATA, else <project root>/data."""
    env = os.environ.get(ENV_DATA)
    if env:
        return Path(env).expanduser().resolve()
    return project_root(start) / "data"


def summary_path(start: str | os.PathLike | None = None) -> Path:
    """The summary file: $TEMPO_ANALYSIS_SUMMARY, else <project root>/build/summary.json."""
    env = os.environ.get(ENV_SUMMARY)
    if env:
        return Path(env).expanduser().resolve()
    return project_root(start) / "build" / "summary.json"


# -----------------------------------------------------------------------------
# values


def flatten(values: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Flatten nested mappings into dotted keys: {"a": {"b": 1}} -> {"a.b": 1}."""
    flat: dict[str, Any] = {}
    for key, value in values.items():
        if not isinstance(key, str) or not key:
            raise ValueError(
                f"record_summary: key {key!r} is not a non-empty string; "
                "use dotted string keys such as 'stream.tempoformer.macro_f1'"
            )
        full = f"{prefix}.{key}" if prefix else key
        if isinstance(value, Mapping):
            flat.update(flatten(value, full))
        else:
            flat[full] = value
    return flat


def _to_json_scalar(key: str, value: Any) -> Any:
    """numpy/torch scalars -> python; NaN/inf -> None (JSON has no NaN); reject containers."""
    if hasattr(value, "item") and callable(value.item) and getattr(value, "ndim", 0) == 0:
        value = value.item()  # numpy scalar, 0-d array, 0-d torch tensor
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, Integral):
        return int(value)
    if isinstance(value, Real):
        value = float(value)
        return value if math.isfinite(value) else None
    raise ValueError(
        f"record_summary: value for {key!r} is a {type(value).__name__}; key numbers must be "
        "scalars (int, float, str, bool or None). Record a list element by element, e.g. "
        f"'{key}.0', or summarise it first (mean, max, ...)."
    )


def _notebook_name(notebook: str | None) -> str:
    """The notebook's name: the argument, $TEMPO_ANALYSIS_NOTEBOOK, or the Jupyter session."""
    if notebook:
        return Path(notebook).stem if notebook.endswith((".ipynb", ".py")) else notebook
    env = os.environ.get(ENV_NOTEBOOK)
    if env:
        return Path(env).stem
    # jupyter_server tells the kernel which notebook it serves
    session = os.environ.get("JPY_SESSION_NAME")
    if session and session.endswith(".ipynb"):
        return Path(session).stem
    raise ValueError(
        "record_summary: could not tell which notebook is recording; pass notebook='00_overview' "
        f"(or set ${ENV_NOTEBOOK})"
    )


# -----------------------------------------------------------------------------
# the summary file


def read_summary(path: str | os.PathLike | None = None) -> dict:
    """The summary file as a dict ({"notebooks": {}} when it does not exist yet)."""
    path = Path(path) if path is not None else summary_path()
    if not path.exists():
        return {"notebooks": {}}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(
            f"{path} is not valid JSON ({err}); delete it and re-run the notebooks"
        ) from err
    if not isinstance(data, dict) or not isinstance(data.get("notebooks", {}), dict):
        raise ValueError(f"{path} does not hold a {{'notebooks': {{...}}}} object; delete it")
    data.setdefault("notebooks", {})
    return data


def write_json_atomic(path: str | os.PathLike, data: Any) -> Path:
    """Write JSON to a temporary file in the same folder, then rename it over `path`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2, sort_keys=True)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


class _Lock:
    """An advisory lock next to the summary file, so concurrent notebooks don't lose updates."""

    def __init__(self, path: Path):
        self.path = path.with_name(path.name + ".lock")
        self.fh = None

    def __enter__(self):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.fh = open(self.path, "a")
        try:
            import fcntl

            fcntl.flock(self.fh.fileno(), fcntl.LOCK_EX)
        except ImportError:  # Windows: no flock; the atomic rename still prevents torn files
            pass
        return self

    def __exit__(self, *exc):
        self.fh.close()  # closing releases the flock


def update_summary(notebook: str, fields: Mapping[str, Any], path=None) -> Path:
    """Merge top-level `fields` (e.g. seconds, status) into one notebook's entry."""
    path = Path(path) if path is not None else summary_path()
    with _Lock(path):
        data = read_summary(path)
        entry = data["notebooks"].setdefault(notebook, {})
        for key, value in fields.items():
            if key == "values":
                entry.setdefault("values", {}).update(value)
            else:
                entry[key] = value
        return write_json_atomic(path, data)


def record_summary(
    values: Mapping[str, Any], notebook: str | None = None, path: str | os.PathLike | None = None
) -> dict[str, Any]:
    """Merge a notebook's key numbers into build/summary.json and return what was recorded.

    values: flat dotted keys -> scalars, e.g. {"stream.tempoformer.macro_f1": 0.71}; nested
        dicts are flattened with dots. numpy/torch scalars become python numbers, NaN becomes null.
    notebook: the notebook's name (e.g. "01_stream"); defaults to $TEMPO_ANALYSIS_NOTEBOOK or the
        notebook that the Jupyter server says the kernel belongs to.
    path: the summary file; defaults to $TEMPO_ANALYSIS_SUMMARY or <root>/build/summary.json.

    Keys already recorded for the notebook are overwritten; other keys and notebooks are kept.
    """
    if not isinstance(values, Mapping):
        raise ValueError(
            f"record_summary: values must be a dict of key -> number, got {type(values).__name__}"
        )
    name = _notebook_name(notebook)
    clean = {key: _to_json_scalar(key, v) for key, v in flatten(values).items()}
    now = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    update_summary(name, {"values": clean, "updated": now}, path=path)
    return clean
