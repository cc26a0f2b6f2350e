"""Two-era English from NLTK's corpus layout: Project Gutenberg books (mostly 19th century) vs Brown (1961).

    ROOT/gutenberg/*.txt   raw book text (a "[Title by Author Year]" first line, wrapped lines)
    ROOT/brown/c??NN       one sentence per (tab-indented) line of ``word/tag`` tokens

Both become one :class:`PeriodCorpus` of sentences with periods ``"gutenberg"`` < ``"brown"``.
There is no graded truth: this is a real-text demo. :data:`DEMO_WORDS` lists words with a known
19th-c. -> mid-20th-c. shift next to stable controls; :func:`frequent_targets` keeps those frequent
enough in both eras (:func:`demo_targets`, what ``--data nltk`` ranks, warns naming the dropped
words and their counts, and refuses an empty list).

Bytes that are not UTF-8 (a few in the published Gutenberg books) are replaced by U+FFFD, counted
per file and named in one warning per load (``corpus.df.attrs["replaced_characters"]``).
"""
from __future__ import annotations

import functools
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import DataError, DataPathError
from ..periods import PeriodCorpus
from .text_files import read_text_counting, warn_replaced

# shifted (by the historical record) and stable controls; no graded truth exists for this pair
DEMO_WORDS = ("gay", "awful", "nice", "car", "train", "record", "cell", "engine", "plane", "broadcast",
              "program", "machine", "screen", "figure", "business", "house", "water", "hand", "tree",
              "mother", "door", "horse", "night", "bread")
_SENT_RE = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z])")
_BROWN_FILE = re.compile(r"^c[a-r]\d\d$")


def read_gutenberg(folder, *, min_words=4, max_words=60, replaced: dict | None = None) -> list[str]:
    """Sentences from every ``*.txt`` book (paragraphs joined, split on sentence ends).

    Bytes that are not UTF-8 become U+FFFD: counted per file into ``replaced`` ({"gutenberg/x.txt": n})
    when given (the caller warns), else named in one warning."""
    folder = Path(folder)
    files = sorted(folder.glob("*.txt"))
    if not files:
        raise DataError(f"no *.txt books in {folder}. Fix: point at NLTK's corpora/gutenberg folder.")
    out = []
    counts = {} if replaced is None else replaced
    for f in files:
        text = read_text_counting(f, counts)
        text = re.sub(r"^\[.*?\]\s*", "", text, count=1)                   # "[Emma by Jane Austen 1816]"
        for para in re.split(r"\n\s*\n", text):
            para = " ".join(para.split())
            if not para or para.isupper():                                  # "CHAPTER I", "VOLUME I"
                continue
            out.extend(s.strip() for s in _SENT_RE.split(para))
    if replaced is None:
        warn_replaced(counts, f"NLTK corpus {folder}")
    return [s for s in out if min_words <= len(s.split()) <= max_words]


def _detok(tokens: list[str]) -> str:
    s = " ".join(tokens).replace("``", '"').replace("''", '"')
    s = re.sub(r" ([,.;:!?)%])", r"\1", s)
    s = re.sub(r"([($]) ", r"\1", s)
    return re.sub(r" (n't|'s|'re|'ve|'ll|'d|'m)\b", r"\1", s)


def read_brown(folder, *, min_words=4, max_words=60, replaced: dict | None = None) -> list[str]:
    """Sentences from the Brown files (``word/tag`` tokens with the tags dropped); ``replaced`` as in
    :func:`read_gutenberg`."""
    folder = Path(folder)
    files = sorted(p for p in folder.iterdir() if _BROWN_FILE.match(p.name)) if folder.is_dir() else []
    if not files:
        raise DataError(f"no Brown files (ca01 ...) in {folder}. Fix: point at NLTK's corpora/brown folder.")
    out = []
    counts = {} if replaced is None else replaced
    for f in files:
        for line in read_text_counting(f, counts).splitlines():
            toks = [t.rsplit("/", 1)[0] for t in line.split() if "/" in t]
            if min_words <= len(toks) <= max_words:
                out.append(_detok(toks))
    if replaced is None:
        warn_replaced(counts, f"NLTK corpus {folder}")
    return out


def load_nltk_eras(root, *, old: str = "gutenberg", new: str = "brown",
                   max_sentences_per_period: int | None = None, seed: int = 0) -> PeriodCorpus:
    """A two-period corpus from an NLTK ``corpora`` folder: ``old`` (gutenberg) < ``new`` (brown).

    Bytes that are not UTF-8 are replaced by U+FFFD and named in one warning; the counts per file are
    in ``corpus.df.attrs["replaced_characters"]``."""
    root = Path(root)
    if not root.is_dir():
        raise DataPathError(f"NLTK corpora folder {str(root)!r} does not exist. Fix: pass the folder holding "
                        "gutenberg/ and brown/ (e.g. ../shared/data/nltk_data/corpora).")
    readers = {"gutenberg": read_gutenberg, "brown": read_brown}
    for name in (old, new):
        if name not in readers:
            raise DataError(f"unknown NLTK corpus {name!r}; supported: {sorted(readers)}.")
    rng = np.random.default_rng(seed)
    frames, replaced = [], {}
    for name in (old, new):
        sents = readers[name](root / name, replaced=replaced)
        if max_sentences_per_period is not None and len(sents) > max_sentences_per_period:
            idx = np.sort(rng.choice(len(sents), max_sentences_per_period, replace=False))
            sents = [sents[i] for i in idx]
        frames.append(pd.DataFrame({"doc_id": [f"{name}-{i}" for i in range(len(sents))], "period": name,
                                    "text": sents}))
    corpus = PeriodCorpus.from_frame(pd.concat(frames, ignore_index=True), order=[old, new])
    corpus.df.attrs["replaced_characters"] = warn_replaced(replaced, f"NLTK corpora {root}")
    return corpus


def word_counts(corpus: PeriodCorpus, words) -> pd.DataFrame:
    """Whole-word, case-insensitive sentence counts per period for ``words``."""
    rows = {}
    for w in words:
        pat = re.compile(rf"(?<!\w){re.escape(w)}(?!\w)", re.IGNORECASE)
        hit = corpus.df["text"].map(lambda t: bool(pat.search(t)))
        rows[w] = corpus.df[hit].groupby("period").size().reindex(corpus.periods, fill_value=0)
    return pd.DataFrame(rows).T


def split_by_frequency(corpus: PeriodCorpus, words=DEMO_WORDS, min_count: int = 20) -> tuple[list[str], dict]:
    """(kept, dropped): the ``words`` in at least ``min_count`` sentences of every period, and
    ``{word: {period: sentences}}`` for the others."""
    words = list(words)
    counts = word_counts(corpus, words)
    kept = [w for w in words if (counts.loc[w] >= min_count).all()]
    dropped = {w: {p: int(counts.loc[w, p]) for p in corpus.periods} for w in words if w not in kept}
    return kept, dropped


def dropped_message(dropped: dict, n_words: int, min_count: int) -> str:
    """``broadcast (gutenberg 3, brown 40), ...`` with how many of ``n_words`` they are."""
    listed = ", ".join(f"{w} ({', '.join(f'{p} {n}' for p, n in c.items())})" for w, c in dropped.items())
    return (f"{len(dropped)} of {n_words} target word(s) occur in fewer than min_count={min_count} sentences of a "
            f"period and are not ranked: {listed}")


def frequent_targets(corpus: PeriodCorpus, words=DEMO_WORDS, min_count: int = 20) -> list[str]:
    """The ``words`` that occur in at least ``min_count`` sentences of every period; a warning names the
    others with their counts per period."""
    kept, dropped = split_by_frequency(corpus, words, min_count)
    if dropped:
        warnings.warn(f"frequent_targets: {dropped_message(dropped, len(kept) + len(dropped), min_count)}",
                      stacklevel=2)
    return kept


def demo_targets(corpus: PeriodCorpus, words=DEMO_WORDS, min_count: int = 15,
                 max_sentences_per_period: int | None = None) -> tuple[list[str], dict]:
    """(targets, dropped) for ``--data nltk``: the ``words`` frequent enough in both eras. A warning names
    the dropped words with their counts per period; a DataError when none is left."""
    kept, dropped = split_by_frequency(corpus, words, min_count)
    n = len(kept) + len(dropped)
    if not kept:
        cap = (f"max_sentences_per_period={max_sentences_per_period} keeps too few sentences; "
               if max_sentences_per_period is not None else "")
        raise DataError(f"nltk targets: none of the {n} word(s) occurs in at least min_count={min_count} sentences "
                        f"of every period ({dropped_message(dropped, n, min_count).split(': ', 1)[1]}). Fix: {cap}use a "
                        "larger max_sentences_per_period (--max-sentences) or none, a lower min_count, or give the "
                        "words to rank (targets=[...])")
    if dropped:
        warnings.warn(f"nltk targets: {dropped_message(dropped, n, min_count)}. Fix: a larger "
                      "max_sentences_per_period (--max-sentences), or give the words to rank (targets=[...])",
                      stacklevel=3)
    return kept, dropped


def general_text(n: int, seed: int = 0, root=None) -> list[str]:
    """A seeded sample of ``n`` general English sentences (Brown and Gutenberg, half each) from an NLTK
    ``corpora`` folder (default: ``shared/data/nltk_data/corpora``); [] when no such folder is found."""
    if n <= 0:
        return []
    if root is None:
        from ..locations import shared_data_dir
        base = shared_data_dir()
        if base is None:
            return []
        root = base / "nltk_data" / "corpora"
    root = Path(root)
    if not ((root / "brown").is_dir() and (root / "gutenberg").is_dir()):
        return []
    rng = np.random.default_rng(seed)
    out = []
    for sents in _general_pool(str(root)):
        k = min(len(sents), n // 2)
        out += [sents[i] for i in np.sort(rng.choice(len(sents), k, replace=False))]
    return out


@functools.lru_cache(maxsize=2)
def _general_pool(root: str) -> tuple[list[str], list[str]]:
    """Brown and Gutenberg sentences, read once per process."""
    return read_brown(Path(root) / "brown"), read_gutenberg(Path(root) / "gutenberg")
