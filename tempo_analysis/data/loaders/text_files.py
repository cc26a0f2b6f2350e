"""Reading plain-text corpus files that may hold bytes which are not UTF-8, without losing them silently.

The corpus readers (NLTK corpora, the pseudoword benchmark, ACL abstracts) decode with
``errors="replace"``: a byte sequence that is not UTF-8 becomes U+FFFD, so one stray Latin-1
byte does not stop a load (the semeval loader does the same, line by line). The replacement is
counted per file and reported in one warning per load, naming the files and the counts.

    counts = {}
    text = read_text_counting(path, counts)          # == path.read_text(encoding="utf-8", errors="replace")
    replaced = warn_replaced(counts, "NLTK corpora")  # {"gutenberg/x.txt": 5}; one warning when not empty
"""
from __future__ import annotations

import io
import warnings
from pathlib import Path

REPLACEMENT = "\ufffd"                      # what errors="replace" puts for bytes that are not UTF-8
_REPLACEMENT_BYTES = REPLACEMENT.encode("utf-8")

__all__ = ["REPLACEMENT", "read_text_counting", "warn_replaced", "file_label"]


def file_label(path: Path) -> str:
    """``folder/name``: short, and tells gutenberg/x.txt from state_union/x.txt."""
    path = Path(path)
    return f"{path.parent.name}/{path.name}" if path.parent.name else path.name


def read_text_counting(path, counts: dict | None = None) -> str:
    """The file's text as ``path.read_text(encoding="utf-8-sig", errors="replace")`` gives it (universal
    newlines included, a leading byte-order mark dropped); the number of byte sequences that were not UTF-8 (and became U+FFFD) is stored in
    ``counts[file_label(path)]`` when the file has any. A U+FFFD the file itself holds (valid UTF-8) is
    not counted."""
    path = Path(path)
    raw = path.read_bytes()
    with io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8-sig", errors="replace") as f:
        text = f.read()                              # a leading byte-order mark is dropped, not read as text
    bad = text.count(REPLACEMENT) - raw.count(_REPLACEMENT_BYTES)
    if bad and counts is not None:
        key = file_label(path)
        counts[key] = counts.get(key, 0) + bad
    return text


def replaced_message(counts: dict, what: str) -> str:
    """The warning text for ``counts`` ({file: replaced byte sequences})."""
    listed = ", ".join(f"{name} ({n})" for name, n in counts.items())
    return (f"{what}: {sum(counts.values())} byte sequence(s) that are not UTF-8 were replaced by {REPLACEMENT!r} in "
            f"{len(counts)} file(s): {listed}. Fix: convert those files to UTF-8 (the text is otherwise read as is)")


def warn_replaced(counts: dict, what: str, stacklevel: int = 3) -> dict:
    """One warning naming every file of ``counts`` with its count (none when ``counts`` is empty);
    returns a copy of ``counts`` for the caller's notes / ``attrs``."""
    counts = {k: int(v) for k, v in counts.items() if v}
    if counts:
        warnings.warn(replaced_message(counts, what), stacklevel=stacklevel)
    return counts
