"""A seeded pseudoword change benchmark from real English text, with graded truth.

The standard synthetic design of the semantic change literature (pseudowords / sense injection,
e.g. Shoemark et al. 2019, Schlechtweg & Schulte im Walde 2020), built from the real corpora in
``shared/data``: Brown, Gutenberg, State of the Union and Inaugural addresses (NLTK layout) and,
when present, one year of ACL abstracts.

1. **Documents, split at random.** Every source is cut into documents (a Brown file, a speech,
   100 consecutive sentences of a Gutenberg book, 40 ACL abstracts); a seeded coin puts each
   document in period ``early`` or ``late``. Nothing really changed between the two halves.
2. **Targets and donors.** Candidate words are common nouns (their most frequent Brown tag is
   ``nn``) found in at least ``min_count`` sentences of each period. ``n_targets`` targets are
   drawn at random; each gets a strength ``p``: a quarter of them ``p = 0`` (controls), the rest
   evenly spaced in ``(0, p_max]`` and shuffled, so ``p`` is independent of frequency
   (frequency-matched). A changed target gets a **donor**: an unused candidate noun with at least
   as many later-period sentences, the closest in frequency, whose first letter is of the same
   kind (vowel or consonant) as the target's, so that a preceding "a" / "an" still reads right
   after the swap and no surface cue marks an injected sentence.
3. **Injection.** In the later period, ``k = round(p * n)`` of the donor's sentences (``n``: the
   target's later-period sentences) get the donor replaced by the target (case kept), and ``k``
   of the target's own later-period sentences that hold no other target are dropped, so the
   target keeps its frequency (a frequency baseline cannot see ``p``) and no other target loses
   a usage. **The truth is the share injected**, ``graded = k / n`` (``p`` up to rounding;
   ``binary`` = k > 0, so a tiny ``p`` that injects nothing is a control).

One usage per sentence (its first occurrence of the target) is given with character offsets. The
corpus holds every sentence with a target plus a seeded sample of other sentences (general text for
post-training), at most ``max_sentences_per_period`` per period. Sized so that a ranking with
post-training runs in a few CPU minutes. Build it with
:func:`tempo_analysis.resolve.load_change_data` (``"pseudoword"`` or ``"pseudoword:DIR"``).

**Sources are checked, not guessed.** Brown is required; a missing Gutenberg, State of the Union
or Inaugural folder, or a missing ``papers_<acl_year>.txt``, is named in a warning (the benchmark
is then built from the rest, so two machines with the same seed but other folders differ: the
benchmark's ``sources`` and ``notes`` say which were used). Bytes that are not UTF-8 (a few in the
published Gutenberg, State of the Union and Inaugural files) become U+FFFD, counted per file and
named in one warning (``replaced_characters``).
"""
from __future__ import annotations

import re
import warnings
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import DataError, DataPathError
from ..periods import PeriodCorpus, TargetUsage
from .nltk_corpora import _SENT_RE, _detok
from .text_files import read_text_counting, warn_replaced

__all__ = ["PseudowordConfig", "PseudowordBenchmark", "build_pseudoword", "PERIODS"]

PERIODS = ("early", "late")
_WORD = re.compile(r"[A-Za-z]+")
_BROWN_FILE = re.compile(r"^c[a-r]\d\d$")
_STOP = {"time", "man", "way", "day", "year", "thing", "people", "men", "part", "case", "fact", "place",
         "one", "mr", "mrs", "miss", "sir", "lord", "god", "world", "state", "states", "government"}


@dataclass(frozen=True)
class PseudowordConfig:
    """How the benchmark is built (see the module docstring)."""

    n_targets: int = 48
    control_share: float = 0.25          # share of targets with p = 0
    p_max: float = 0.8
    min_count: int = 30                  # sentences per period a candidate needs
    max_count: int = 160                 # ... at most (keeps the corpus small)
    max_sentences_per_period: int = 6000
    acl_year: int | None = 2005          # papers_<year>.txt of acl_abstracts_by_year, when present
    seed: int = 0


@dataclass
class PseudowordBenchmark:
    corpus: PeriodCorpus
    usages: list[TargetUsage]
    truth: pd.DataFrame
    config: PseudowordConfig
    # documents read per source ({"brown": 500, "gutenberg": ..., "acl2005": ...}); a source that was
    # missing is absent here and named in ``missing_sources`` (and in a warning when the benchmark is built)
    sources: dict = field(default_factory=dict)
    missing_sources: list = field(default_factory=list)
    replaced_characters: dict = field(default_factory=dict)    # {"state_union/1970-Nixon.txt": 63}: not UTF-8
    notes: list = field(default_factory=list)


# ---------------------------------------------------------------------------------------------
# reading the sources into documents of sentences
# ---------------------------------------------------------------------------------------------
def _split_sentences(text: str, min_words=4, max_words=60, breaks=r"\n\s*\n|\n(?=[A-Z])") -> list[str]:
    """Sentences of ``min_words`` to ``max_words`` words; upper-case paragraphs (headings) are skipped.
    ``breaks`` splits paragraphs: by default a blank line or a line that starts with a capital."""
    out = []
    for para in re.split(breaks, text):
        para = " ".join(para.split())
        if para and not para.isupper():
            out.extend(s.strip() for s in _SENT_RE.split(para))
    return [s for s in out if min_words <= len(s.split()) <= max_words]


def _chunks(sents, size):
    return [sents[i:i + size] for i in range(0, len(sents), size)]


def _read_brown(folder: Path, counts: dict | None = None):
    """(documents, noun set): one document per Brown file; nouns = words whose majority tag is nn."""
    files = sorted(p for p in folder.iterdir() if _BROWN_FILE.match(p.name)) if folder.is_dir() else []
    if not files:
        raise DataPathError(f"no Brown files (ca01 ...) in {folder}. Fix: point at the folder holding "
                            "nltk_data/corpora/brown.")
    tags: dict[str, Counter] = defaultdict(Counter)
    docs = []
    for f in files:
        sents = []
        for line in read_text_counting(f, counts).splitlines():
            pairs = [t.rsplit("/", 1) for t in line.split() if "/" in t]
            for w, t in pairs:
                if w.isalpha():
                    tags[w.lower()][t.lower()] += 1
            if 4 <= len(pairs) <= 60:
                sents.append(_detok([w for w, _ in pairs]))
        docs.append((f"brown-{f.name}", sents))
    nouns = {w for w, c in tags.items() if c.most_common(1)[0][0] == "nn" and sum(c.values()) >= 5}
    return docs, nouns


def _missing(name: str, folder: Path) -> str:
    return f"{name} ({folder} {'has no *.txt files' if folder.is_dir() else 'does not exist'})"


def read_sources(root: Path, acl_year: int | None = 2005, info: dict | None = None,
                 ) -> tuple[list[tuple[str, list[str]]], set[str]]:
    """All documents ``[(doc_id, sentences)]`` and the Brown noun set, from a shared data folder.

    A missing optional source (gutenberg/, state_union/, inaugural/ with no ``*.txt``, or a missing
    ``papers_<acl_year>.txt``) and files with bytes that are not UTF-8 are named in warnings. ``info``,
    when given, receives ``sources`` ({source: documents}), ``missing`` ([what is missing, with its
    path]) and ``replaced`` ({file: replaced byte sequences})."""
    corpora = root / "nltk_data" / "corpora"
    if not corpora.is_dir():
        raise DataPathError(f"{corpora} does not exist. Fix: give the shared data folder that holds "
                            "nltk_data/corpora (brown, gutenberg, state_union, inaugural).")
    replaced: dict[str, int] = {}
    missing: list[str] = []
    docs, nouns = _read_brown(corpora / "brown", replaced)
    g = corpora / "gutenberg"
    books = sorted(g.glob("*.txt"))
    if not books:
        missing.append(_missing("gutenberg", g))
    for book in books:
        sents = read_gutenberg_file(book, replaced)
        docs += [(f"gutenberg-{book.stem}-{i}", c) for i, c in enumerate(_chunks(sents, 100))]
    for name in ("state_union", "inaugural"):
        files = sorted((corpora / name).glob("*.txt"))
        if not files:
            missing.append(_missing(name, corpora / name))
        for f in files:
            text = read_text_counting(f, replaced)
            docs.append((f"{name}-{f.stem}", _split_sentences(text)))
    if acl_year is not None:
        f = root / "acl_abstracts_by_year" / f"papers_{acl_year}.txt"
        if f.is_file():
            abstracts = [_split_sentences(line) for line in read_text_counting(f, replaced).splitlines()
                         if line.strip()]
            for i, group in enumerate(_chunks(abstracts, 40)):
                docs.append((f"acl{acl_year}-{i}", [s for a in group for s in a]))
        else:
            missing.append(f"acl{acl_year} ({f} does not exist)")
    docs = [(d, s) for d, s in docs if s]
    if missing:
        warnings.warn(f"pseudoword: source(s) missing, the benchmark is built without them: {'; '.join(missing)}. "
                      "The same seed gives another benchmark than with every source. Fix: give the shared data "
                      "folder that holds nltk_data/corpora/{brown,gutenberg,state_union,inaugural}"
                      + (f" and acl_abstracts_by_year/papers_{acl_year}.txt (or acl_year=None to leave ACL out on "
                         "purpose)" if acl_year is not None else ""), stacklevel=2)
    replaced = warn_replaced(replaced, "pseudoword sources")
    if info is not None:
        used = Counter(d.split("-", 1)[0] if not d.startswith("acl") else d.rsplit("-", 1)[0] for d, _ in docs)
        info.update(sources=dict(used), missing=missing, replaced=replaced)
    return docs, nouns


def read_gutenberg_file(path: Path, counts: dict | None = None) -> list[str]:
    """Sentences of one Gutenberg book (the NLTK reader, one file); ``counts`` receives the bytes that
    were not UTF-8 (replaced by U+FFFD), by file."""
    text = read_text_counting(path, counts)
    text = re.sub(r"^\[.*?\]\s*", "", text, count=1)
    return _split_sentences(text, breaks=r"\n\s*\n")    # hard-wrapped lines: only a blank line ends a paragraph


# ---------------------------------------------------------------------------------------------
# the benchmark
# ---------------------------------------------------------------------------------------------
def _first(word: str, text: str):
    m = re.search(rf"(?<![A-Za-z]){re.escape(word)}(?![A-Za-z])", text, re.IGNORECASE)
    return (m.start(), m.end()) if m else None


def _replace(text: str, span, new: str) -> tuple[str, tuple[int, int]]:
    s, e = span
    old = text[s:e]
    rep = new.capitalize() if old[:1].isupper() else new
    return text[:s] + rep + text[e:], (s, s + len(rep))


def _initial_kind(word: str) -> bool:
    return word[:1].lower() in "aeiou"


def build_pseudoword(root, config: PseudowordConfig | None = None) -> PseudowordBenchmark:
    """The seeded benchmark from a shared data folder ``root`` (module docstring)."""
    cfg = config or PseudowordConfig()
    root = Path(root)
    info: dict = {}
    docs, nouns = read_sources(root, cfg.acl_year, info)
    rng = np.random.default_rng(cfg.seed)
    late_doc = rng.random(len(docs)) < 0.5
    rows = []                                       # (doc_id, period, text)
    for (d, sents), late in zip(docs, late_doc):
        p = PERIODS[int(late)]
        rows += [(f"{d}-{i}", p, s) for i, s in enumerate(sents)]
    # sentence ids per word and period (first occurrence counts once per sentence)
    where = {p: defaultdict(list) for p in PERIODS}
    for i, (_, p, text) in enumerate(rows):
        for w in set(t.lower() for t in _WORD.findall(text)):
            if w in nouns:
                where[p][w].append(i)
    cands = sorted(w for w in nouns if len(w) >= 3 and w not in _STOP
                   and all(cfg.min_count <= len(where[p][w]) for p in PERIODS))
    in_band = [w for w in cands if all(len(where[p][w]) <= cfg.max_count for p in PERIODS)]
    if len(in_band) < cfg.n_targets * 2:
        raise DataError(f"only {len(in_band)} candidate nouns with {cfg.min_count}..{cfg.max_count} sentences per "
                        f"period; the benchmark needs {cfg.n_targets * 2}. Fix: lower n_targets or min_count.")
    targets = [in_band[i] for i in np.sort(rng.choice(len(in_band), cfg.n_targets, replace=False))]
    n_ctrl = int(round(cfg.control_share * cfg.n_targets))
    ps = np.concatenate([np.zeros(n_ctrl), np.linspace(cfg.p_max / (cfg.n_targets - n_ctrl), cfg.p_max,
                                                       cfg.n_targets - n_ctrl)])
    ps = ps[rng.permutation(len(ps))]
    target_set = set(targets)
    used = set(targets)
    dropped, converted = set(), {}                  # row ids removed / row id -> (target, new text, span)
    truth = []
    def other_targets(i, w):
        return (set(t.lower() for t in _WORD.findall(rows[i][2])) & target_set) - {w}

    for w, p in zip(targets, ps):
        own_late = [i for i in where["late"][w] if i not in dropped and i not in converted]
        n = len(own_late)
        # only sentences holding no other target may be dropped: the others' counts stay as they are
        droppable = [i for i in own_late if not other_targets(i, w)]
        k = int(round(p * n))
        if k > len(droppable):
            raise DataError(f"target {w!r} has {len(droppable)} later sentences without another target, {k} "
                            f"needed to inject p = {p:.3f}. Fix: lower p_max or n_targets.")
        donor = ""
        if k > 0:
            pool = [c for c in cands if c not in used and len(where["late"][c]) >= n
                    and _initial_kind(c) == _initial_kind(w)]
            if not pool:
                raise DataError(f"no donor noun left for target {w!r}. Fix: lower n_targets.")
            donor = min(pool, key=lambda c: (len(where["late"][c]) - n, c))
            used.add(donor)
            ok = [i for i in where["late"][donor] if i not in converted and i not in dropped
                  and not (set(t.lower() for t in _WORD.findall(rows[i][2])) & target_set)]
            if len(ok) < k:
                raise DataError(f"donor {donor!r} has {len(ok)} usable sentences, {k} needed for {w!r}.")
            for i in rng.choice(ok, k, replace=False):
                text = rows[i][2]
                converted[int(i)] = (w, *_replace(text, _first(donor, text), w))
            dropped.update(int(i) for i in rng.choice(droppable, k, replace=False))
        truth.append(dict(word=w, graded=round(k / n, 6) if n else 0.0, binary=int(k > 0), donor=donor,
                          n_early=len(where["early"][w]), n_late=n, n_injected=k))
    # the corpus: target sentences (own and converted) + a seeded sample of general text
    keep_target = {i for w in targets for p in PERIODS for i in where[p][w] if i not in dropped}
    keep_target |= set(converted)
    member = {p: {w: set(where[p][w]) for w in targets} for p in PERIODS}
    out_rows, usages = [], []
    for period in PERIODS:
        ids = [i for i, r in enumerate(rows) if r[1] == period]
        tgt = [i for i in ids if i in keep_target]
        other = [i for i in ids if i not in keep_target and i not in dropped]
        room = max(0, cfg.max_sentences_per_period - len(tgt))
        if len(other) > room:
            other = [other[j] for j in np.sort(rng.choice(len(other), room, replace=False))]
        for i in sorted(tgt + other):
            doc_id, _, text = rows[i]
            if i in converted:
                w, text, span = converted[i]
                usages.append(TargetUsage(w, period, text, span[0], span[1], doc_id))
            else:
                words = set(t.lower() for t in _WORD.findall(text)) & target_set
                for w in sorted(words):
                    if i in member[period][w]:
                        s, e = _first(w, text)
                        usages.append(TargetUsage(w, period, text, s, e, doc_id))
            out_rows.append((doc_id, period, text))
    frame = pd.DataFrame(out_rows, columns=["doc_id", "period", "text"])
    corpus = PeriodCorpus.from_frame(frame, order=list(PERIODS))
    truth = pd.DataFrame(truth).sort_values("word").reset_index(drop=True)
    notes = ["sources (documents): " + ", ".join(f"{k} {v}" for k, v in info["sources"].items())]
    if info["missing"]:
        notes.append("missing sources, built without them: " + "; ".join(info["missing"]))
    if info["replaced"]:
        notes.append("bytes that are not UTF-8 replaced by U+FFFD (file: count): "
                     + ", ".join(f"{k}: {v}" for k, v in info["replaced"].items()))
    return PseudowordBenchmark(corpus, usages, truth, cfg, info["sources"], info["missing"], info["replaced"], notes)
