"""DWUG-style usage data (Schlechtweg et al.): one folder per lemma, one usage per row.

    DIR/data/<lemma>/uses.csv            tab-separated; columns include lemma, date, grouping,
                                          identifier, context, indexes_target_token ("start:end",
                                          character offsets into context), context_tokenized,
                                          indexes_target_token_tokenized
    DIR/stats/**/stats_groupings.csv     tab-separated; lemma, change_graded[, change_binary]
                                          (several files: the one under an ``opt/`` folder wins)

``grouping`` is the period (1 = earlier, 2 = later). Numeric groupings sort as numbers, other
labels as strings; a folder that mixes the two (``1`` and ``late``) is refused, naming the files
(their order in time would be a guess). Offsets are checked: a usage whose offsets lie outside
its context is skipped, and the skipped usages are counted in one warning that names the first few
(one bad row does not abort a benchmark of thousands); offsets that are not ``start:end``, point at
whitespace or cut a word in half are a :class:`DataError` naming the lemma, the file and the row. Lemmas with POS suffixes (``plane_nn``) map to surface forms.
A lemma folder without a ``uses.csv`` file is skipped with a warning naming it (``DWUGData.skipped_folders``).
"""
from __future__ import annotations

import csv
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..errors import DataError, DataPathError, in_cli_terms, number_like, read_frame
from ..periods import PeriodCorpus, TargetUsage
from .semeval import strip_pos

USE_COLUMNS = ("lemma", "grouping", "context", "indexes_target_token")


@dataclass
class DWUGData:
    """Usages (one TargetUsage per row), a corpus of their contexts, and graded truth."""

    usages: list[TargetUsage]
    corpus: PeriodCorpus
    truth: pd.DataFrame | None
    targets: list[str]
    target_map: dict[str, str] = field(default_factory=dict)
    n_skipped: int = 0        # usages skipped for out-of-range offsets (warned about)
    skipped_folders: list[str] = field(default_factory=list)   # lemma folders without a uses.csv (warned about)


def _read_tsv(path: Path) -> pd.DataFrame:
    with warnings.catch_warnings():         # a line of the wrong width is named below, not warned about
        warnings.simplefilter("ignore", pd.errors.ParserWarning)
        df = read_frame(pd.read_csv, path, what="DWUG file", sep="\t", quoting=csv.QUOTE_NONE, dtype=str,
                        keep_default_na=False, index_col=False, long_rows="caller",
                        fix="DWUG files are tab-separated UTF-8 with a header line")
    # pandas pads a short line with empty values (and may take a long one's first field as an index):
    # name such lines rather than read wrong fields
    lines = path.read_text(encoding="utf-8-sig").splitlines()
    width = lines[0].count("\t")
    odd = [i for i, line in enumerate(lines[1:], 2) if line.strip() and line.count("\t") != width]
    if odd:
        raise DataError(f"{path} line(s) {odd[:5]}: a different number of tab-separated fields than the header "
                        f"({width + 1}). Fix: every line needs one value per column (tab-separated, no tabs or "
                        "quoting inside values).")
    return df.reset_index(drop=True)


def _grouping(value) -> str:
    """One spelling per period: "1", "1.0" and " 1 " are the same grouping ("1"); labels are stripped."""
    label = str(value).strip()
    if number_like(label):
        x = float(label)
        return str(int(x)) if x.is_integer() else repr(x)
    return label


def _period_order(groupings: dict[str, set[str]]) -> list[str]:
    """Groupings in time order: numbers numerically, labels as strings; mixing the two is refused."""
    labels = sorted({g for gs in groupings.values() for g in gs})
    numeric = [g for g in labels if number_like(g)]
    if numeric and len(numeric) < len(labels):
        other = [g for g in labels if not number_like(g)]
        files = sorted(f for f, gs in groupings.items() if gs & set(other))[:3]
        raise DataError(f"column 'grouping' mixes numbers {numeric[:5]} with labels {other[:5]} (e.g. in {files}); "
                        "their order in time is ambiguous. Fix: use one kind of grouping in every uses.csv "
                        "(DWUG uses 1 = earlier, 2 = later).")
    if numeric:
        return sorted(labels, key=float)
    if len(labels) > 1:
        warnings.warn(f"column 'grouping': text labels {labels[:6]} are taken in alphabetical order, and ranking "
                      f"compares the first ({labels[0]!r}) with the last ({labels[-1]!r}). Fix: if that is not their "
                      "order in time, use numbers (DWUG's 1 = earlier, 2 = later).", UserWarning, stacklevel=3)
    return labels


class _OutOfRange(Exception):
    """A usage whose offsets lie outside its context: skipped and counted by :func:`load_dwug`."""


def _parse_span(value: str, text: str, where: str) -> tuple[int, int]:
    try:
        a, b = (int(x) for x in str(value).split(":"))
    except ValueError:
        raise DataError(f"{where}: column 'indexes_target_token' = {value!r} is not 'start:end'. "
                        "Fix: give character offsets like 12:17.") from None
    if not (0 <= a < b <= len(text)):
        raise _OutOfRange(f"{where}: 'indexes_target_token' = {value!r} is outside the context of length {len(text)}")
    span = text[a:b]
    cut = (a > 0 and text[a - 1].isalnum() and span[0].isalnum()) or \
          (b < len(text) and text[b].isalnum() and span[-1].isalnum())
    if not span.strip() or cut:
        raise DataError(f"{where}: column 'indexes_target_token' = {value!r} points at {span!r} in "
                        f"{text[max(0, a - 20):b + 20]!r}, which is not a whole word. Fix: recompute the "
                        "offsets against this exact 'context' text.")
    return a, b


def find_stats_file(root: Path) -> Path | None:
    """The stats_groupings.csv to use: under an ``opt/`` folder if there is one, else the shallowest."""
    files = sorted((root / "stats").rglob("stats_groupings.csv")) if (root / "stats").is_dir() else []
    if not files:
        return None
    opt = [f for f in files if "opt" in f.relative_to(root).parts]
    pool = opt or files
    return min(pool, key=lambda f: (len(f.parts), str(f)))


def load_dwug(path, *, pos: str = "strip", lemmas: list[str] | None = None) -> DWUGData:
    """Read ``DIR/data/<lemma>/uses.csv`` and the graded truth into the shared types."""
    if pos not in ("strip", "keep"):
        raise DataError(f"pos must be 'strip' or 'keep', got {pos!r}.")
    if isinstance(lemmas, str):
        lemmas = [lemmas]
    root = Path(path)
    data = root / "data"
    if not data.is_dir():
        raise DataPathError(f"{data} does not exist. Fix: pass a DWUG folder holding data/<lemma>/uses.csv.")
    lemma_folders = sorted(p for p in data.iterdir() if p.is_dir() and not p.name.startswith("."))
    if lemmas is not None:
        lemma_folders = [p for p in lemma_folders if p.name in set(lemmas) or strip_pos(p.name)[0] in set(lemmas)]
    folders = [p for p in lemma_folders if (p / "uses.csv").is_file()]
    if not folders:
        raise DataError(f"no <lemma>/uses.csv under {data}. Fix: check the DWUG folder layout.")
    unread = [str(p) for p in lemma_folders if p not in folders]
    if unread:
        warnings.warn(f"skipped {len(unread)} DWUG lemma folder(s) without a readable uses.csv file (their words are "
                      f"not ranked, and their truth leaves the correlation): {', '.join(unread[:5])}"
                      + (" ..." if len(unread) > 5 else "") + ". Fix: restore their uses.csv, or remove the folders.",
                      stacklevel=2)
    mapping = (lambda w: strip_pos(w)[0]) if pos == "strip" else (lambda w: w)
    usages, docs, target_map, groupings, skipped = [], [], {}, {}, []
    seen_usage, repeated, unlike = set(), [], []
    for folder in folders:
        f = folder / "uses.csv"
        df = _read_tsv(f)
        missing = [c for c in USE_COLUMNS if c not in df.columns]
        if missing:
            raise DataError(f"{f}: missing column(s) {missing}; it has {list(df.columns)}. "
                            f"Fix: DWUG uses.csv needs {list(USE_COLUMNS)} (tab-separated).")
        for i, row in df.iterrows():
            where = f"{f} row {i + 2} (lemma {row['lemma']!r})"
            text = row["context"]
            if not text.strip():
                raise DataError(f"{where}: column 'context' is empty. Fix: drop the row or fill its text.")
            if not row["lemma"].strip() or not row["grouping"].strip():
                raise DataError(f"{where}: column '{'lemma' if not row['lemma'].strip() else 'grouping'}' is empty. "
                                "Fix: give every usage its lemma and its grouping (period).")
            try:
                a, b = _parse_span(row["indexes_target_token"], text, where)
            except _OutOfRange as e:
                skipped.append(str(e))
                continue
            word = mapping(row["lemma"])
            prev = target_map.setdefault(word, row["lemma"])
            if prev != row["lemma"]:
                fix = in_cli_terms("pos='keep'", "the command line strips part-of-speech suffixes, so move one of "
                                   "the two lemma folders out of DIR/data (in Python, load_dwug(DIR, pos='keep') "
                                   "keeps both)")
                raise DataError(f"lemmas {prev!r} and {row['lemma']!r} (in {folder}) both become {word!r}. "
                                f"Fix: {fix}.")
            doc_id = row.get("identifier") or f"{folder.name}-{i}"
            period = _grouping(row["grouping"])
            key = (doc_id, word, period, text, a, b)                  # the same usage listed again
            if key in seen_usage:
                repeated.append(f"{where}: identifier {doc_id!r}")
                continue
            seen_usage.add(key)
            stem = re.sub(r"_[a-z]+$", "", row["lemma"].strip().lower())[:2]
            if not text[a:b].lower().startswith(stem):
                unlike.append(f"{where}: {text[a:b]!r}")
            groupings.setdefault(str(f), set()).add(period)
            usages.append(TargetUsage(word, period, text, a, b, doc_id))
            docs.append({"doc_id": doc_id, "period": period, "text": text,
                         **({"date": row["date"]} if "date" in df else {})})
    if repeated:
        warnings.warn(f"skipped {len(repeated)} DWUG usage row(s) that repeat an identifier already read for the "
                      f"same lemma (each usage counts once): {'; '.join(repeated[:3])}"
                      + (" ..." if len(repeated) > 3 else ""), stacklevel=2)
    if unlike:
        warnings.warn(f"{len(unlike)} DWUG usage(s) whose offsets point at a token that does not begin like its "
                      f"lemma (kept; check the offsets if these are not inflected forms): {'; '.join(unlike[:3])}"
                      + (" ..." if len(unlike) > 3 else ""), stacklevel=2)
    if skipped:
        warnings.warn(f"skipped {len(skipped)} DWUG usage(s) whose offsets lie outside their context "
                      f"(0-based character offsets into 'context' are expected): {'; '.join(skipped[:3])}"
                      + (" ..." if len(skipped) > 3 else ""), stacklevel=2)
    if not docs:
        raise DataError(f"the uses.csv files under {data} have no usable rows"
                        + (f" ({len(skipped)} skipped for out-of-range offsets)" if skipped else "")
                        + ". Fix: check the DWUG folder.")
    docs_df = pd.DataFrame(docs)
    clash = docs_df.drop_duplicates(["doc_id", "period", "text"])["doc_id"].duplicated(keep=False)
    if clash.any():
        ids = sorted(docs_df.drop_duplicates(["doc_id", "period", "text"]).loc[clash, "doc_id"].unique())[:5]
        raise DataError(f"column 'identifier': ids {ids} name different usages (another context or grouping). "
                        "Fix: make identifiers unique across the folder.")
    docs_df = docs_df.drop_duplicates("doc_id")
    order = _period_order(groupings)
    corpus = PeriodCorpus.from_frame(docs_df, order=order)
    truth = None
    stats = find_stats_file(root)
    if stats is not None:
        st = _read_tsv(stats)
        if "lemma" not in st or "change_graded" not in st:
            raise DataError(f"{stats}: needs columns 'lemma' and 'change_graded'; it has {list(st.columns)}.")
        graded = pd.to_numeric(st["change_graded"], errors="coerce")
        bad = st.index[graded.isna() & st["change_graded"].astype(str).str.strip().ne("")].tolist()
        if bad:
            raise DataError(f"{stats}: column 'change_graded' at rows {[r + 2 for r in bad[:5]]} is not a number "
                            f"({st['change_graded'][bad[0]]!r}). Fix: give a number or leave it empty")
        truth = pd.DataFrame({"word": st["lemma"].map(mapping), "graded": graded})
        if "change_binary" in st:
            truth["binary"] = pd.to_numeric(st["change_binary"], errors="coerce")
        truth = truth[truth["word"].isin(target_map)].reset_index(drop=True)
        truth.attrs["source"] = str(stats)
    return DWUGData(usages, corpus, truth, list(target_map), target_map, len(skipped), unread)
