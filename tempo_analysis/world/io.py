"""Deterministic, human-readable files for the world: CSV with fixed float format and '\\n' line
endings, JSON with sorted keys. The same frames always give the same bytes."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pandas as pd

FLOAT_FORMAT = "%.6f"
TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def _atomic_write(path: Path, data: str) -> None:
    """Write text via a temp file in the same folder, then rename (no half-written files)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(data)
        os.chmod(tmp, 0o644)   # mkstemp makes 0600; these are ordinary shared data files
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_csv(df: pd.DataFrame, path: Path) -> Path:
    """CSV with UTC timestamps as ISO 'Z' strings, floats as %.6f, missing values empty."""
    out = df.copy()
    for c in out.columns:
        if isinstance(out[c].dtype, pd.DatetimeTZDtype) or pd.api.types.is_datetime64_any_dtype(out[c]):
            out[c] = out[c].dt.tz_convert("UTC").dt.strftime(TIME_FORMAT) if isinstance(
                out[c].dtype, pd.DatetimeTZDtype) else out[c].dt.strftime(TIME_FORMAT)
    _atomic_write(Path(path), out.to_csv(index=False, lineterminator="\n", float_format=FLOAT_FORMAT))
    return Path(path)


def read_csv(path: Path, *, int_cols=(), nullable_int_cols=(), float_cols=(), time_cols=()) -> pd.DataFrame:
    """Read a CSV written by `write_csv`; text stays text ("NA" is not missing), types restored
    (other columns keep pandas' default string dtype, as in the generated frames)."""
    df = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[], encoding="utf-8")
    for c in time_cols:
        df[c] = pd.to_datetime(df[c], utc=True, format="ISO8601").astype("datetime64[ns, UTC]")
    for c in int_cols:
        df[c] = df[c].astype("int64")
    for c in nullable_int_cols:
        df[c] = pd.array([None if v == "" else int(v) for v in df[c]], dtype="Int64")
    for c in float_cols:
        df[c] = df[c].map(lambda v: float(v) if v != "" else float("nan")).astype("float64")
    return df


def write_json(obj, path: Path) -> Path:
    """Pretty JSON with sorted keys and a trailing newline."""
    _atomic_write(Path(path), json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=False) + "\n")
    return Path(path)


def read_json(path: Path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)
