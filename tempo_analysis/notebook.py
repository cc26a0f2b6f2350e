"""What a notebook needs from the library: record its key numbers, memoise its training.

- ``summary_path()``: ``$TEMPO_ANALYSIS_SUMMARY`` if set, else ``<root>/build/summary.json``.
- ``set_notebook(name)``: names the running lesson once (Voila and nbconvert do not tell the kernel
  which notebook it runs), for ``record_summary`` and ``show``.
- ``record_summary(values, notebook=...)``: merges flat keys such as
  ``"stream.tempoformer.macro_f1"`` into the summary file, atomically, under the notebook's name.
- ``show(fig, name)``: displays a lesson's figure and exports it; ``export_figure(fig, name)`` writes a figure as standalone HTML (plotly's own writer, plotly.js
  inlined, so it opens offline) to ``figures_dir()``, ``build/figures/NN_name.html`` beside the
  summary, for a paper or a talk.
- ``cached(name, params, compute)``: memoises an expensive step (training) when
  ``$TEMPO_ANALYSIS_CACHE`` is set, so a second run of the same notebook with the same parameters
  in the same test session does not train again. Unset (users, ``make demo``): plain compute().

Where the project and its data are (``project_root``, ``data_dir``) is
:mod:`tempo_analysis.data.locations`. Executing notebooks headless is not library code: it lives
in ``scripts/notebook_exec.py``, used by ``scripts/run_notebooks.py`` and ``tests/notebooks``.

The summary file looks like::

    {"notebooks": {"00_overview": {"values": {"world.timelines.posts": 1200, ...},
                                   "updated": "2025-01-01T12:00:00+00:00"}}}

``scripts/run_notebooks.py`` adds ``seconds`` and ``status`` next to ``values``.
"""
from __future__ import annotations

import datetime as _dt
import functools
import hashlib
import importlib
import json
import math
import os
import re
import shutil
import tempfile
import warnings
from numbers import Integral, Real
from pathlib import Path
from typing import Any, Mapping

from tempo_analysis.data.locations import project_root

__all__ = [
    "summary_path",
    "record_summary",
    "read_summary",
    "update_summary",
    "flatten",
    "cached",
    "figures_dir",
    "export_figure",
    "show",
    "set_notebook",
    "NEEDS_SHARED_DATA",
    "missing_data_reason",
]

ENV_SUMMARY = "TEMPO_ANALYSIS_SUMMARY"
ENV_NOTEBOOK = "TEMPO_ANALYSIS_NOTEBOOK"
ENV_FIGURES = "TEMPO_ANALYSIS_FIGURES"

#: lessons that read the real-data folder (``shared/data``); they run only where it is found
NEEDS_SHARED_DATA = ("05_real_text",)


def missing_data_reason(name: str) -> str | None:
    """Why lesson ``name`` cannot run here (it reads the real-data folder and none is found), else None.

    ``make demo`` and the test suite skip such a lesson with this reason instead of running it into
    its first cell's error."""
    from tempo_analysis.data.locations import ENV_SHARED_DATA, shared_data_dir

    if _stem(str(name)) not in NEEDS_SHARED_DATA or shared_data_dir() is not None:
        return None
    return (f"{_stem(str(name))} reads the real data folder (shared/data with the ACL Anthology and "
            f"RumourEval-2017), and none was found: set ${ENV_SHARED_DATA} to it, or put it at ../shared/data")

_current_notebook: str | None = None


# -----------------------------------------------------------------------------
# where things are


def summary_path(start: str | os.PathLike | None = None) -> Path:
    """The summary file: $TEMPO_ANALYSIS_SUMMARY, else <project root>/build/summary.json."""
    env = os.environ.get(ENV_SUMMARY)
    if env:
        return Path(env).expanduser().resolve()
    return project_root(start) / "build" / "summary.json"


def figures_dir(start: str | os.PathLike | None = None) -> Path:
    """Where lessons export their figures: $TEMPO_ANALYSIS_FIGURES, else ``figures/`` beside the summary."""
    env = os.environ.get(ENV_FIGURES)
    if env:
        return Path(env).expanduser().resolve()
    return summary_path(start).parent / "figures"


_FIGURE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")


def export_figure(fig, name: str, *, notebook: str | None = None, folder: str | os.PathLike | None = None) -> Path:
    """Write ``fig`` (a plotly ``Figure`` or ``FigureWidget``) as one standalone HTML file and return its path.

    The file is ``<folder>/<NN>_<name>.html``: ``NN`` is the notebook's number (``05`` for
    ``05_real_text``; the whole name for a notebook without one), ``folder`` defaults to
    :func:`figures_dir`. plotly.js is inlined, so the file opens offline, in a browser, a slide or a
    paper's supplement. The write is atomic: a reader never sees half a file. Rewriting the same
    name replaces the file (the figure of the latest run).
    """
    if not isinstance(name, str) or not _FIGURE_NAME.fullmatch(name):
        raise ValueError(f"export_figure: name={name!r}: use letters, digits, '_' or '-' (for example 'diffusion_map')")
    if not callable(getattr(fig, "write_html", None)):
        raise TypeError(f"export_figure: fig is a {type(fig).__name__}; give a plotly Figure or FigureWidget")
    stem = _notebook_name(notebook)
    number = re.match(r"(\d+)_", stem)
    out_dir = Path(folder).expanduser() if folder is not None else figures_dir()
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{number.group(1) if number else stem}_{name}.html"
    return _write_atomic(path, lambda tmp: fig.write_html(tmp, include_plotlyjs=True, full_html=True))


def _write_atomic(path: Path, write) -> Path:
    """``write(tmp)`` into a temporary file beside ``path``, then rename it over ``path`` (a reader
    never sees half a file; the temporary is removed on any failure)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        write(tmp)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; give it a normal file's mode
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def show(fig, name: str, *, notebook: str | None = None):
    """Display ``fig`` in the notebook and export it with :func:`export_figure` (``figures/NN_name.html``).

    A ``FigureWidget`` is displayed as the live widget (its what-if controls keep updating it; the
    file holds the figure as it was first drawn). Returns None, so a cell ending in ``show(...)``
    prints nothing else.
    """
    from IPython.display import display

    display(fig)
    try:
        export_figure(fig, name, notebook=notebook)
    except OSError as e:  # a read-only deployment still shows its figures
        warnings.warn(f"show: figure {name!r} is shown but was not exported: {e}. Fix: set ${ENV_FIGURES} "
                      "to a folder you can write", stacklevel=2)


def set_notebook(name: str) -> str:
    """Name the running notebook (e.g. ``"03_social_diffusion"``) for :func:`record_summary` and
    :func:`show` in this kernel, and return the name.

    JupyterLab tells a kernel which notebook it serves; Voila and nbconvert do not. A lesson calls
    this once, in its first code cell, so that its figures and numbers carry its name wherever it runs.
    An explicit ``notebook=`` argument still wins; $TEMPO_ANALYSIS_NOTEBOOK is read only when no name was set.
    """
    global _current_notebook
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", name):
        raise ValueError(f"set_notebook: name={name!r}: give the notebook's file name, e.g. '03_social_diffusion'")
    _current_notebook = _stem(name)
    return _current_notebook


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


def _stem(name: str) -> str:
    """A notebook's name without its file suffix: '02_x.ipynb' and '02_x.py' -> '02_x'."""
    return Path(name).stem if name.endswith((".ipynb", ".py")) else name


def _notebook_name(notebook: str | None) -> str:
    """The notebook's name: the argument, set_notebook's, $TEMPO_ANALYSIS_NOTEBOOK, or the Jupyter session."""
    if notebook:
        return _stem(notebook)
    if _current_notebook:
        return _current_notebook
    env = os.environ.get(ENV_NOTEBOOK)
    if env:
        return Path(env).stem
    # jupyter_server tells the kernel which notebook it serves
    session = os.environ.get("JPY_SESSION_NAME")
    if session and session.endswith(".ipynb"):
        return Path(session).stem
    raise ValueError(
        "could not tell which notebook is running; call set_notebook('00_overview') in its first cell, "
        f"pass notebook='00_overview', or set ${ENV_NOTEBOOK}"
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

    def write(tmp):
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2)  # insertion order: keys as notebooks record them
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())

    return _write_atomic(path, write)


class _Lock:
    """An advisory lock on the summary file's folder, so concurrent notebooks lose no updates."""

    def __init__(self, path: Path):
        self.folder = path.parent
        self.fd = None

    def __enter__(self):
        self.folder.mkdir(parents=True, exist_ok=True)
        try:
            import fcntl
        except ImportError:  # Windows: no flock; the atomic rename still prevents torn files
            return self
        self.fd = os.open(self.folder, os.O_RDONLY)
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        if self.fd is not None:
            os.close(self.fd)  # closing releases the flock


def update_summary(notebook: str, fields: Mapping[str, Any], path=None, replace=False) -> Path:
    """Merge top-level `fields` (e.g. seconds, status) into one notebook's entry.

    replace=True starts the entry afresh (a new run must not inherit the last run's numbers).
    """
    path = Path(path) if path is not None else summary_path()
    with _Lock(path):
        data = read_summary(path)
        if replace:
            data["notebooks"][notebook] = {}
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
    A run that names no summary file (neither `path` nor $TEMPO_ANALYSIS_SUMMARY, which `make demo`
    sets: a notebook run in JupyterLab or Voila) marks the entry ``status: "interactive"`` and clears
    its seconds and parameters, so that make demo's "ok" never vouches for another run's numbers.
    """
    if not isinstance(values, Mapping):
        raise ValueError(
            f"record_summary: values must be a dict of key -> number, got {type(values).__name__}"
        )
    name = _notebook_name(notebook)
    clean = {key: _to_json_scalar(key, v) for key, v in flatten(values).items()}
    now = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    fields = {"values": clean, "updated": now}
    if path is None and not os.environ.get(ENV_SUMMARY):
        fields.update(status="interactive", seconds=None, parameters=None, errors=[])
    update_summary(name, fields, path=path)
    return clean


# -----------------------------------------------------------------------------
# memoising expensive steps across runs (only when $TEMPO_ANALYSIS_CACHE is set)

ENV_CACHE = "TEMPO_ANALYSIS_CACHE"


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """sha256 (first 16 hex digits) of the library's Python sources: part of every cache key."""
    root = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for f in sorted(root.rglob("*.py")):
        h.update(f.relative_to(root).as_posix().encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def cached(name: str, params: Mapping[str, Any], compute, *, save=None, load=None):
    """Return compute(), memoised under $TEMPO_ANALYSIS_CACHE by (name, params) if that is set.

    Without the variable this is just compute(). `make demo` sets it to build/cache (emptied
    first) and `make lab` / `make app` read that folder, so a lesson opened after `make demo`
    loads its trained models instead of training them again. The test suite sets it so the
    browser test's Run All reuses what the nbclient run of the same notebook, with the same
    parameters, trained minutes earlier (see tests/notebooks/test_browser.py).
    The key is (name, params, the library's source code): after any change to tempo_analysis,
    a step is computed afresh rather than read from a result of other code.
    Stored without pickle: objects with save_pretrained/from_pretrained, pandas DataFrames,
    numpy arrays, JSON values, and tuples/lists/dicts of those; or pass save(value, folder) and
    load(folder) -> value.
    """
    root = os.environ.get(ENV_CACHE)
    if not root:
        return compute()
    blob = json.dumps({"name": name, "params": params, "code": code_fingerprint()}, sort_keys=True, default=repr)
    key = hashlib.sha256(blob.encode()).hexdigest()[:16]
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-") or "step"
    folder = Path(root) / f"{slug}-{key}"
    folder.parent.mkdir(parents=True, exist_ok=True)
    if (folder / "COMPLETE").exists():
        return load(folder / "value") if load else _load_value(folder / "value")
    value = compute()
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=Path(root)))
    (save or _save_value)(value, tmp / "value")
    (tmp / "COMPLETE").write_text(blob)
    if folder.exists():
        shutil.rmtree(folder)
    os.replace(tmp, folder)
    return value


def _save_value(value: Any, where: Path) -> None:
    """Store one value in folder `where` with a meta.json saying how to read it back."""
    where.mkdir(parents=True)
    meta: dict[str, Any]
    if hasattr(value, "save_pretrained") and hasattr(type(value), "from_pretrained"):
        value.save_pretrained(where / "pretrained")
        meta = {"kind": "pretrained", "class": f"{type(value).__module__}:{type(value).__qualname__}"}
    elif type(value).__name__ == "DataFrame" and hasattr(value, "to_json"):
        value.to_json(where / "frame.json", orient="table")
        meta = {"kind": "dataframe", "dtypes": [str(t) for t in value.dtypes]}
    elif type(value).__module__ == "numpy" and type(value).__name__ == "ndarray":
        import numpy as np

        np.save(where / "array.npy", value, allow_pickle=False)
        meta = {"kind": "ndarray"}
    elif isinstance(value, tuple) or (isinstance(value, list) and not _is_json(value)):
        for i, item in enumerate(value):
            _save_value(item, where / str(i))
        meta = {"kind": type(value).__name__, "n": len(value)}
    elif isinstance(value, dict) and not _is_json(value):
        keys = list(value)
        if not all(isinstance(k, str) for k in keys):
            raise ValueError(f"cached: dict keys must be strings to be stored, got {keys!r}")
        for i, k in enumerate(keys):
            _save_value(value[k], where / str(i))
        meta = {"kind": "dict", "keys": keys}
    elif _is_json(value):
        (where / "value.json").write_text(json.dumps(value))
        meta = {"kind": "json"}
    else:
        raise ValueError(
            f"cached: cannot store a {type(value).__name__} without pickle; pass "
            "save=lambda value, folder: ... and load=lambda folder: ..."
        )
    (where / "meta.json").write_text(json.dumps(meta))


def _load_value(where: Path) -> Any:
    """Read back what _save_value stored."""
    meta = json.loads((where / "meta.json").read_text())
    kind = meta["kind"]
    if kind == "pretrained":
        module, qualname = meta["class"].split(":")
        cls = importlib.import_module(module)
        for part in qualname.split("."):
            cls = getattr(cls, part)
        from tempo_analysis.encoders import quiet_transformers

        with quiet_transformers():   # the notebook cache's own folder: no weight-loading bar
            return cls.from_pretrained(where / "pretrained")
    if kind == "dataframe":
        import pandas as pd

        frame = pd.read_json(where / "frame.json", orient="table")
        for column, dtype in zip(frame.columns, meta["dtypes"]):
            if str(frame[column].dtype) != dtype:  # e.g. datetime64[us] comes back as [ns]
                frame[column] = frame[column].astype(dtype)
        return frame
    if kind == "ndarray":
        import numpy as np

        return np.load(where / "array.npy", allow_pickle=False)
    if kind in ("tuple", "list"):
        items = [_load_value(where / str(i)) for i in range(meta["n"])]
        return tuple(items) if kind == "tuple" else items
    if kind == "dict":
        return {k: _load_value(where / str(i)) for i, k in enumerate(meta["keys"])}
    return json.loads((where / "value.json").read_text())


def _is_json(value: Any) -> bool:
    """True for None/bool/int/float/str and lists/dicts of them (string keys); not tuples."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return True
    if isinstance(value, list):
        return all(_is_json(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_json(v) for k, v in value.items())
    return False
