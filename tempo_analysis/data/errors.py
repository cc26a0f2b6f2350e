"""Errors for bad input: each one names the column, the offending rows or ids, and the fix."""

from __future__ import annotations

import contextlib
import contextvars
import math
import warnings
from collections.abc import Iterable


class DataError(ValueError):
    """Bad input data. Subclasses ``ValueError`` so callers can catch either."""


# library argument -> the running command's option that sets it (e.g. "time_unit" -> "--time-unit");
# None outside the command line
_CLI_OPTIONS: contextvars.ContextVar[dict | None] = contextvars.ContextVar("tempo_analysis_cli_options",
                                                                          default=None)


@contextlib.contextmanager
def cli_options(options: dict[str, str]):
    """Within the block, messages (:func:`in_cli_terms`) speak of the command line: ``options`` maps a library
    argument (``"time_unit"``) to the option of the running command that sets it (``"--time-unit"``).
    The CLI runs every command inside it."""
    token = _CLI_OPTIONS.set(dict(options))
    try:
        yield
    finally:
        _CLI_OPTIONS.reset(token)


def in_cli_terms(library: str, cli: str, *, option: str | None = None) -> str:
    """A part of a message that names a setting: ``library`` (in Python terms: ``"pass min_posts=1"``) outside
    the command line; under it (:func:`cli_options`), ``cli`` (in the command line's terms). With ``option``
    (a library argument), ``{option}`` in ``cli`` becomes the running command's option for it; a command
    without one gets the ``library`` text."""
    options = _CLI_OPTIONS.get()
    if options is None:
        return library
    if option is None:
        return cli
    flag = options.get(option)
    return library if flag is None else cli.format(option=flag)


def _preview(items: Iterable, limit: int = 5) -> str:
    """Show at most ``limit`` items, then how many more there are."""
    items = list(items)
    head = ", ".join(repr(x) for x in items[:limit])
    more = f" (+{len(items) - limit} more)" if len(items) > limit else ""
    return f"[{head}]{more}"


def data_error(column: str, problem: str, fix: str, *, rows: Iterable | None = None, ids: Iterable | None = None,
               id_name: str = "id") -> DataError:
    """Build a :class:`DataError` with a uniform message: column, where, what, and what to do."""
    where = []
    if ids is not None:
        where.append(f"{id_name}s {_preview(ids)}")
    if rows is not None:
        where.append(f"rows {_preview(rows)}")
    loc = f" at {' / '.join(where)}" if where else ""
    return DataError(f"column '{column}'{loc}: {problem}. Fix: {fix}")


def require_columns(df, required: Iterable[str], what: str) -> None:
    """Raise a DataError listing the missing columns and the ones that are present."""
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise DataError(
            f"{what} input is missing column(s) {missing}; it has {list(df.columns)}. "
            f"Fix: rename your columns to {list(required)} (extra columns are kept)."
        )


class DataPathError(DataError, FileNotFoundError):
    """A path the user gave does not exist or is the wrong kind (a file for a folder, ...).

    Both a :class:`DataError` (one error type at the CLI boundary) and a ``FileNotFoundError``
    (what callers of a missing path already catch)."""


def read_error(path, err: BaseException, what: str, fix: str) -> DataError:
    """A DataError for a file that could not be parsed: the file, the parser's reason, the fix."""
    reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    if type(err).__name__ == "EmptyDataError" or reason == "No columns to parse from file":
        reason = "the file is empty (0 bytes, or no header line)"
    elif isinstance(err, UnicodeDecodeError):
        reason = f"it is not UTF-8 text (byte {err.start}: {err.reason})"
    return DataError(f"cannot read {what} {str(path)!r}: {reason}. Fix: {fix}")


def read_json_file(path, *, what: str, fix: str, keys: Iterable[str] = ()) -> dict:
    """The JSON object in ``path`` (gzip-compressed when the name ends in ``.gz``), holding each of ``keys``.

    A file that is not JSON, not UTF-8, a broken gzip stream, or JSON that is not an object with those
    keys is one :class:`DataError` naming ``what``, the file, the reason and ``fix``; a missing file is
    a :class:`DataPathError`.
    """
    import gzip
    import json
    import zlib
    from pathlib import Path

    p = Path(path)
    if not p.is_file():
        raise DataPathError(f"{what}: {str(p)!r} does not exist. Fix: {fix}.")
    try:
        if p.name.endswith(".gz"):
            with gzip.open(p, "rt", encoding="utf-8") as fh:
                value = json.load(fh)
        else:
            value = json.loads(p.read_text(encoding="utf-8"))
    except (ValueError, EOFError, OSError, zlib.error) as e:   # JSON, UTF-8, gzip (BadGzipFile is an OSError)
        raise read_error(p, e, what, fix + ".") from None
    missing = [k for k in keys if not isinstance(value, dict) or k not in value]
    if not isinstance(value, dict) or missing:
        held = "a JSON object" if isinstance(value, dict) else f"a JSON {type(value).__name__}"
        lacks = f" without {', '.join(map(repr, missing))}" if isinstance(value, dict) else ", not an object"
        raise DataError(f"{what} {str(p)!r} is not what it should hold: {held}{lacks}. Fix: {fix}.")
    return value


def read_frame(reader, path, *args, what: str = "input file", fix: str | None = None, long_rows: str = "error",
               **kwargs):
    """``reader(path, *args, **kwargs)`` (a pandas reader), with parse failures as a DataError naming the file.

    A missing file is a :class:`DataPathError`; an empty file, a malformed CSV/JSON, or bytes that
    are not UTF-8 are a :class:`DataError` that names the file, the reason, and ``fix``. A row with more
    fields than the header (pandas only warns, and drops them) is an error too, unless
    ``long_rows="caller"``: the caller names such rows itself.

    With ``pd.read_csv`` only a blank cell is missing: "NA", "null", "None" or "nan" are read as written
    (a unit, a label or a text), unless the caller passes ``keep_default_na`` itself.
    """
    from pathlib import Path

    import pandas as pd

    if reader is pd.read_csv and "keep_default_na" not in kwargs:
        kwargs.update(keep_default_na=False, na_values=kwargs.get("na_values", [""]))
    p = Path(path)
    if not p.exists():
        raise DataPathError(f"{what} {str(p)!r} does not exist. Fix: check the path.")
    if p.is_dir():
        raise DataPathError(f"{what} {str(p)!r} is a folder, not a file. Fix: pass the file itself.")
    fix = fix or "check that it is a well-formed table with a header line, in UTF-8"
    import warnings

    from pandas.errors import ParserWarning

    try:
        with warnings.catch_warnings():
            # with index_col=False pandas only warns when a row has more fields than the header, and
            # drops them: that is lost data, so it is an error here
            if long_rows == "error":
                warnings.simplefilter("error", ParserWarning)
            frame = reader(p, *args, **kwargs)
    except ParserWarning as e:
        raise DataError(f"cannot read {what} {str(p)!r}: a row has more fields than the header ({e}). Fix: quote "
                        "fields that contain the separator, or add the missing column names") from None
    except (ValueError, TypeError, UnicodeError, IndexError, KeyError, OverflowError) as e:
        # pandas raises EmptyDataError/ParserError (ValueError subclasses), ValueError for bad JSON,
        # and the odd TypeError/IndexError on JSON that is not a table.
        raise read_error(p, e, what, fix) from None
    if reader is pd.read_csv:
        _refuse_duplicate_columns(p, frame, what, kwargs)
    return frame


def _refuse_duplicate_columns(path, frame, what: str, kwargs: dict) -> None:
    """pandas renames a second ``label`` column ``label.1`` and reads the first: refuse instead, naming it."""
    import re

    import pandas as pd

    cols = [str(c) for c in frame.columns]
    renamed = [re.fullmatch(r"(.+)\.\d+", c) for c in cols]
    if not any(m and m.group(1) in cols for m in renamed):
        return
    # the header line as written (header=None: no renaming), with the caller's separator and encoding
    raw = pd.read_csv(path, nrows=1, header=None, sep=kwargs.get("sep", ","), dtype=str,
                      encoding=kwargs.get("encoding", "utf-8"), keep_default_na=False).iloc[0].tolist()
    names = [str(c) for c in raw]
    twice = sorted({c for c in names if names.count(c) > 1})
    if twice:
        raise DataError(f"{what} {str(path)!r} has {len(twice)} column name(s) more than once: "
                        f"{', '.join(map(repr, twice))}; only one of each could be read. Fix: rename or drop the "
                        "extra column(s).")


DOC_ID_FIX = "give every document an id, or drop the column to number the rows"
DOC_ID_UNIQUE_FIX = "make doc ids unique or drop the column to number rows"


def require_ids(df, column: str, problem: str, fix: str) -> None:
    """Every row has an id in ``column`` (then read as strings), else a DataError at the rows without."""
    import numpy as np

    missing = df[column].isna()
    if missing.any():
        raise data_error(column, problem, fix, rows=np.flatnonzero(missing.to_numpy()).tolist())
    df[column] = df[column].astype(str)


def require_unique(df, column: str, problem: str, fix: str) -> None:
    """No id of ``column`` is used by two rows, else a DataError naming the ids and all their rows."""
    import numpy as np

    dup = df[column].duplicated(keep=False)
    if dup.any():
        raise data_error(column, problem, fix, ids=sorted(df.loc[dup, column].unique()), id_name=column,
                         rows=np.flatnonzero(dup.to_numpy()).tolist())


def require_texts(df, id_column: str, items: str) -> None:
    """Column 'text' holds non-blank strings in every row (``items``: "posts", "documents"), else a
    DataError naming the ids and rows: first the empty or missing texts, then values of another type
    (numbers read from a wrong column)."""
    import numpy as np

    text = df["text"]
    empty = text.isna() | (text.astype(str).str.strip() == "")
    not_str = ~empty & ~text.map(lambda v: isinstance(v, str))
    for bad, problem, fix in (
            (empty, "empty or missing text", f"drop these {items} or fill their text"),
            (not_str, f"values that are not text (e.g. {text[not_str].iloc[0]!r})" if not_str.any() else "",
             "check that 'text' is the right column, or convert these values to strings")):
        if bad.any():
            raise data_error("text", problem, fix, ids=df.loc[bad, id_column].tolist(), id_name=id_column,
                             rows=np.flatnonzero(bad.to_numpy()).tolist())


def require_scalars(df, columns: Iterable[str], what: str) -> None:
    """Refuse lists, dicts and other containers in ``columns`` (JSON lines may nest values)."""
    for c in columns:
        if c not in df.columns:
            continue
        col = df[c]
        if col.dtype != object:
            continue
        bad = [i for i, v in enumerate(col.tolist()) if isinstance(v, (list, dict, tuple, set))]
        if bad:
            raise data_error(c, f"{what} values must be single values, found {type(col.iloc[bad[0]]).__name__}s",
                             "flatten these values to strings or numbers", rows=bad)


def check_label_types(values: Iterable, column: str, fix: str) -> None:
    """Refuse labels that mix numbers and strings (1 and 'late'): their order in time is ambiguous."""
    import datetime
    import numbers

    import numpy as np

    kinds = {}
    for v in values:
        if isinstance(v, (bool, np.bool_)):
            k = "bool"
        elif isinstance(v, numbers.Number):
            k = "number"
        elif isinstance(v, str):
            k = "string"
        elif isinstance(v, (datetime.date, np.datetime64)):
            k = "date"
        else:
            k = type(v).__name__
        kinds.setdefault(k, v)
    if len(kinds) > 1:
        examples = ", ".join(f"{v!r} ({k})" for k, v in kinds.items())
        raise DataError(f"column '{column}' mixes label types: {examples}; their order in time is ambiguous. "
                        f"Fix: {fix}")


def number_like(label: str) -> bool:
    """Whether a text label spells a finite number ("1990", "1.0"; not "inf", "late")."""
    try:
        return math.isfinite(float(label))
    except ValueError:
        return False


def infer_label_order(values, column: str, fix: str, declare: str) -> list:
    """Time order of period / slice labels when none is declared: the one rule of PeriodCorpus and
    SocialCorpus, and so of every CSV / JSON input (DWUG's groupings follow DWUG's own convention).

    Numbers and dates sort. Text labels that all spell numbers (``"1"``, ``"2"``, ``"10"``: a file
    column read as text) sort by their value; two spellings of one number (``"1"``, ``"1.0"``) are
    refused. Text that mixes number-like and other labels (``"1990"``, ``"late"``: what a CSV gives
    for a mixed column) is refused like mixed types. Other text labels keep the order in which they
    first appear, with a warning naming that order, since text says nothing about time.
    ``fix`` ends the errors; ``declare`` names the argument that states the order (``"order=[...]"``).
    """
    import pandas as pd

    uniq = pd.unique(pd.Series(list(values), dtype=object)).tolist()
    check_label_types(uniq, column, fix)
    if not uniq or not all(isinstance(v, str) for v in uniq):
        return sorted(uniq)
    numeric = [v for v in uniq if number_like(v)]
    if numeric and len(numeric) < len(uniq):
        other = [v for v in uniq if not number_like(v)]
        raise DataError(f"column '{column}' mixes number-like labels {numeric[:3]} with text labels {other[:3]}; "
                        f"their order in time is ambiguous. Fix: {fix}")
    if numeric:
        by_value: dict = {}
        for v in numeric:
            by_value.setdefault(float(v), []).append(v)
        twice = [names for names in by_value.values() if len(names) > 1]
        if twice:
            raise DataError(f"column '{column}': labels {twice[0]} spell the same number, so they would be two "
                            "periods. Fix: write every label of a period the same way")
        return sorted(numeric, key=float)
    if len(uniq) > 1:
        warnings.warn(f"column '{column}': text labels are ordered by first appearance {uniq[:6]}"
                      f"{' ...' if len(uniq) > 6 else ''}; text says nothing about time. Pass {declare} "
                      "to declare the order and silence this.", stacklevel=3)
    return uniq


YEAR_RANGE = (1000, 2100)   # plausible years; a value outside is most likely a typo (20061)


def check_years(years, column: str = "year", *, year_range: tuple[int, int] | None = None, where: str = "") -> None:
    """Refuse years outside ``year_range`` (default 1000-2100) or that are not whole numbers, naming the rows.

    Widen the range on purpose with ``year_range=(lo, hi)`` (e.g. historical corpora before 1000).
    ``where`` (a file name, an option) is put in front of the message.
    """
    import numpy as np

    lo, hi = year_range or YEAR_RANGE
    values = list(years)
    prefix = f"{where}: " if where else ""
    bad_type = [i for i, y in enumerate(values)
                if isinstance(y, (bool, np.bool_)) or not isinstance(y, (int, float, np.integer, np.floating))
                or (isinstance(y, (float, np.floating)) and not float(y).is_integer())]
    if bad_type:
        raise DataError(prefix + str(data_error(column, f"values that are not whole-number years (e.g. "
                                                f"{values[bad_type[0]]!r})", "give years as integers like 2019",
                                                rows=bad_type)))
    out = [i for i, y in enumerate(values) if not lo <= int(y) <= hi]
    if out:
        shown = sorted({int(values[i]) for i in out})[:5]
        fix = in_cli_terms("correct them, or widen the range on purpose with year_range=(lo, hi)",
                        f"correct them (the command line reads years {lo}-{hi})")
        raise DataError(prefix + str(data_error(column, f"years {shown} lie outside {lo}-{hi} (a typo?)", fix,
                                                rows=out)))
