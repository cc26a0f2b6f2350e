"""SemEval-2020 Task 1 (unsupervised lexical semantic change) from its published folder layout.

    DIR/corpus1/[lemma|token]/*.txt[.gz]   one sentence per line, the earlier period
    DIR/corpus2/[lemma|token]/*.txt[.gz]   the later period
    DIR/targets.txt                        one target per line (English: POS-suffixed, ``plane_nn``)
    DIR/truth/graded.txt                   word<TAB>score   (subtask 2)
    DIR/truth/binary.txt                   word<TAB>0|1     (subtask 1)

English targets (and their occurrences in the lemma corpus) carry POS suffixes. With
``pos="strip"`` (default, as in Montariol et al. 2021 and the paper) both targets and corpus tokens
``plane_nn`` become ``plane``; ``SemEvalData.target_map`` keeps surface -> original. Two targets that
collapse onto one surface form raise a :class:`DataError` (use ``pos="keep"``).
"""
from __future__ import annotations

import gzip
import re
import warnings
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import DataError, DataPathError, in_cli_terms
from ..periods import PeriodCorpus

POS_TAGS = {"nn", "nns", "nnp", "nnps", "vb", "vbd", "vbg", "vbn", "vbp", "vbz", "jj", "jjr", "jjs",
            "rb", "rbr", "rbs", "noun", "verb", "adj", "adv", "n", "v", "a", "r"}
_POS_RE = re.compile(r"^(?P<w>.+?)_(?P<pos>[A-Za-z]{1,4})$")


def strip_pos(word: str) -> tuple[str, str | None]:
    """``plane_nn`` -> (``plane``, ``nn``); a word without a known POS suffix -> (word, None)."""
    m = _POS_RE.match(word.strip())
    if m and m.group("pos").lower() in POS_TAGS:
        return m.group("w"), m.group("pos").lower()
    return word.strip(), None


@dataclass
class SemEvalData:
    """A two-period corpus, its targets (surface forms) and truth (word, graded[, binary])."""

    corpus: PeriodCorpus
    targets: list[str]
    truth: pd.DataFrame | None
    target_map: dict[str, str] = field(default_factory=dict)
    # sentences each period's kept corpus stands for: all of the period's sentences scaled to the kept
    # sample (with keep="targets" only target-bearing sentences are kept; frequencies divide by this)
    period_sizes: dict[str, float] = field(default_factory=dict)


REPLACEMENT = "\ufffd"   # what errors='replace' puts for bytes that are not UTF-8


def _read_lines(folder: Path) -> list[str]:
    files = sorted(p for p in folder.iterdir() if p.is_file() and (p.suffix in (".txt", ".gz") or
                                                                   p.name.endswith(".txt.gz")))
    if not files:
        raise DataError(f"no .txt or .txt.gz files in {folder}. Fix: point at a SemEval-2020 Task 1 folder "
                        "(corpus1/ and corpus2/ hold one-sentence-per-line text).")
    lines = []
    for p in files:
        opener = gzip.open if p.suffix == ".gz" else open
        try:
            with opener(p, "rt", encoding="utf-8", errors="replace") as f:
                read = [line.strip() for line in f]
        except (gzip.BadGzipFile, EOFError, zlib.error) as e:
            raise DataError(f"{p}: not a readable gzip file ({e}). Fix: re-download or re-compress it.") from None
        bad = sum(line.count(REPLACEMENT) for line in read)
        if bad:
            n_lines = sum(REPLACEMENT in line for line in read)
            warnings.warn(f"{p}: {bad} byte sequence(s) that are not UTF-8 were replaced by {REPLACEMENT!r} (in "
                          f"{n_lines} line(s)). Fix: convert the file to UTF-8", stacklevel=3)
        lines.extend(read)
    return [x for x in lines if x]


def _corpus_dir(root: Path, name: str, text: str) -> Path:
    d = root / name
    if not d.is_dir():
        raise DataError(f"{d} is missing. Fix: a SemEval-2020 Task 1 folder has corpus1/ and corpus2/.")
    sub = d / text
    return sub if sub.is_dir() else d


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")   # a byte-order mark is not part of the first word
    except UnicodeDecodeError as e:
        raise DataError(f"{path}: not UTF-8 text (byte {e.start}: {e.reason}). Fix: save it as UTF-8.") from None


def _read_truth(path: Path, column: str, mapping) -> pd.Series | None:
    if not path.is_file():
        return None
    rows = []
    for i, line in enumerate(_read_text(path).splitlines(), 1):
        if not line.strip():
            continue
        parts = line.strip().split("\t") if "\t" in line else line.split()
        if len(parts) != 2:
            raise DataError(f"{path.name} line {i}: expected 'word<TAB>score', got {line!r}.")
        try:
            rows.append((mapping(parts[0]), float(parts[1])))
        except ValueError:
            raise DataError(f"{path.name} line {i}: score {parts[1]!r} is not a number.") from None
    words = [w for w, _ in rows]
    dups = sorted({w for w in words if words.count(w) > 1})
    if dups:
        raise DataError(f"{path}: word(s) {dups[:5]} are listed twice. Fix: give one score per word.")
    scores = [v for _, v in rows]
    if any(v != v or v in (float("inf"), float("-inf")) for v in scores):
        raise DataError(f"{path}: scores must be finite numbers (found NaN or inf). Fix: correct those lines.")
    return pd.Series(dict(rows), name=column, dtype=float)


def load_semeval(path, *, text: str = "lemma", pos: str = "strip", keep: str = "targets",
                 max_sentences_per_period: int | None = None, seed: int = 0) -> SemEvalData:
    """Read a SemEval-2020 Task 1 folder into a :class:`PeriodCorpus` ("corpus1" < "corpus2").

    ``text``: "lemma" or "token" subfolder (used when present). ``pos``: "strip" or "keep" suffixes.
    ``keep``: "targets" keeps only sentences that contain a target (what ranking needs), "all"
    keeps every sentence. ``max_sentences_per_period``: seeded sample after filtering.
    """
    root = Path(path)
    if not root.is_dir():
        raise DataPathError(f"SemEval folder {str(root)!r} does not exist. Fix: pass the folder holding corpus1/, "
                        "corpus2/, targets.txt and truth/.")
    if text not in ("lemma", "token"):
        raise DataError(f"text must be 'lemma' or 'token', got {text!r}.")
    if pos not in ("strip", "keep") or keep not in ("targets", "all"):
        raise DataError(f"pos must be 'strip'|'keep' (got {pos!r}); keep must be 'targets'|'all' (got {keep!r}).")
    tfile = root / "targets.txt"
    if not tfile.is_file():
        raise DataError(f"{tfile} is missing. Fix: a SemEval-2020 Task 1 folder lists its targets in targets.txt.")
    originals = [t.strip().split("\t")[0].strip() for t in _read_text(tfile).splitlines() if t.strip()]
    if not originals:
        raise DataError(f"{tfile} lists no targets. Fix: write one target word per line.")
    mapping = (lambda w: strip_pos(w)[0]) if pos == "strip" else (lambda w: w)
    target_map: dict[str, str] = {}
    for t in originals:
        s = mapping(t)
        if s in target_map:
            fix = in_cli_terms("load with pos='keep'", f"the command line strips part-of-speech suffixes, so list "
                               f"one of the two in {tfile} (in Python, load_semeval(DIR, pos='keep') keeps both)")
            raise DataError(f"targets {target_map[s]!r} and {t!r} both become {s!r} after stripping POS. "
                            f"Fix: {fix}.")
        target_map[s] = t
    targets = list(target_map)
    # corpus tokens carry the same suffixes as the targets: "plane_nn" -> "plane"
    sub = {o.lower(): s for s, o in target_map.items() if o != s}
    sub_re = re.compile(r"(?<!\S)(" + "|".join(re.escape(o) for o in sorted(sub, key=len, reverse=True)) + r")(?!\S)",
                        re.IGNORECASE) if sub else None
    find_re = re.compile(r"(?<!\w)(" + "|".join(re.escape(t) for t in sorted(targets, key=len, reverse=True))
                         + r")(?!\w)", re.IGNORECASE)
    rng = np.random.default_rng(seed)
    frames, sizes = [], {}
    for period in ("corpus1", "corpus2"):
        lines = _read_lines(_corpus_dir(root, period, text))
        n_all = len(lines)
        if sub_re is not None:
            lines = [sub_re.sub(lambda m: sub[m.group(1).lower()], x) for x in lines]
        if keep == "targets":
            lines = [x for x in lines if find_re.search(x)]
        n_kept = len(lines)
        if max_sentences_per_period is not None and len(lines) > max_sentences_per_period:
            idx = np.sort(rng.choice(len(lines), max_sentences_per_period, replace=False))
            lines = [lines[i] for i in idx]
        sizes[period] = len(lines) * n_all / n_kept if n_kept else float(n_all)
        frames.append(pd.DataFrame({"doc_id": [f"{period}-{i}" for i in range(len(lines))],
                                    "period": period, "text": lines}))
    corpus = PeriodCorpus.from_frame(pd.concat(frames, ignore_index=True), order=["corpus1", "corpus2"])
    graded = _read_truth(root / "truth" / "graded.txt", "graded", mapping)
    binary = _read_truth(root / "truth" / "binary.txt", "binary", mapping)
    truth = None
    if graded is not None or binary is not None:
        truth = pd.concat([s for s in (graded, binary) if s is not None], axis=1).rename_axis("word").reset_index()
    return SemEvalData(corpus, targets, truth, target_map, sizes)
