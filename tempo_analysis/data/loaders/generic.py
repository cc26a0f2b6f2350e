"""Generic inputs: a DataFrame, or a CSV / JSON-lines file, into the shared data types."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..errors import DataError, DataPathError, read_frame
from ..periods import PeriodCorpus
from ..social import SocialCorpus
from ..timelines import Timelines

_ID_COLS = {"timeline_id": str, "post_id": str, "doc_id": str, "unit": str, "source": str, "target": str}
_CSV_COLS = {**_ID_COLS, "text": str}   # a text column of digits stays text in CSV


def read_table(source) -> pd.DataFrame:
    """A DataFrame as is, or a ``.csv`` / ``.tsv`` / ``.jsonl`` / ``.json`` file read with id columns as strings."""
    if isinstance(source, pd.DataFrame):
        return source
    if not isinstance(source, (str, Path)):
        raise DataError(f"expected a DataFrame or a file path, got {type(source).__name__}.")
    path = Path(source)
    if not path.exists():
        raise DataPathError(f"input file {str(path)!r} does not exist. Fix: check the path.")
    if not path.is_file():
        raise DataPathError(f"input {str(path)!r} is not a file. Fix: pass a .csv, .tsv, .jsonl or .json file.")
    suffix = "".join(path.suffixes[-2:]) if path.suffix == ".gz" else path.suffix
    # read_frame: only a blank cell is missing (a unit called "NA" or a text "null" is read as written)
    if suffix.startswith(".csv"):
        return read_frame(pd.read_csv, path, what="CSV file", dtype=_CSV_COLS)
    if suffix.startswith(".tsv"):
        return read_frame(pd.read_csv, path, what="TSV file", sep="\t", dtype=_CSV_COLS)
    if suffix.startswith(".jsonl"):
        return read_frame(pd.read_json, path, what="JSON-lines file", lines=True, dtype=_ID_COLS,
                          fix="write one JSON object per line, with the same fields on every line")
    if suffix.startswith(".json"):
        return read_frame(pd.read_json, path, what="JSON file", dtype=_ID_COLS,
                          fix="write a JSON list of records, e.g. [{\"period\": 1, \"text\": \"...\"}]")
    raise DataError(f"cannot read {path.name!r}: unknown file type {suffix!r}. Fix: use .csv, .tsv, .jsonl or .json.")


def load_timelines(source, **kwargs) -> Timelines:
    """Timelines from a DataFrame or file with timeline_id, post_id, timestamp, text[, label, author]."""
    return Timelines.from_frame(read_table(source), **kwargs)


def load_period_corpus(source, **kwargs) -> PeriodCorpus:
    """A period corpus from a DataFrame or file with period, text[, doc_id, date]; a ``year`` column may stand for period."""
    df = read_table(source)
    if "period" not in df and "year" in df:
        df = df.rename(columns={"year": "period"})
    return PeriodCorpus.from_frame(df, **kwargs)


def load_social_corpus(docs, edges, **kwargs) -> SocialCorpus:
    """A social corpus from documents (unit, time, text) and an edge list (source, target[, weight])."""
    return SocialCorpus.from_frame(read_table(docs), edges=read_table(edges), **kwargs)
