"""The DCWE paper's analyses (not in its reference code): sim / sigma_sim, r-hat, diffusion maps,
walk versus flight, and the recovered diffusion mode.

- ``sim_table``: sim = cos(e, e + o_{u,t}) between a word's static and dynamic (type-level)
  embedding per (unit, time) it occurs in, a word split into pieces taking their mean (paper fn. 14);
  sigma_sim = its spread. Top variable words come with
  example contexts above and below their mean sim (paper Table 4).
- ``build_context_index`` + ``rhat_scores``: r-hat = N - rank + 1 of the anchor's time-specific
  centroid among the word's N nearest neighbours (0 when absent), per occurrence, averaged per
  (unit, time). Contextual vectors average the encoder's first six layers (paper fn. 15) and
  WordPiece pieces of one word (fn. 14); candidates are time-specific centroids of the corpus'
  content words.
- ``unit_top_words`` / ``graph_communities``: what a unit writes about (its most distinctive
  frequent content words) and which community of the graph it sits in, for the map's hover text
  and outlines.
- ``diffusion_map``: per slice, which units hold the association (r-hat > threshold) and when
  each got it first. ``walk_flight``: per slice, the share of newly reached units with a
  neighbour that already had it (walk) or none (flight); the first units to hold it are seeds,
  neither. ``recover_mode``: walk if the observed walk share beats the share expected if arrivals
  landed uniformly on not-yet-reached units, flight if it falls below, None on a tie.
"""
from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, field

import networkx as nx
import numpy as np
import pandas as pd
import torch
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS
from tqdm.auto import tqdm

from tempo_analysis.evaluation.spread import recover_mode, sources, walk_flight  # noqa: F401 (re-exported)


def example_sentence(text: str, word: str) -> str:
    """The first sentence of `text` that contains `word` as a whole word (else the text, shortened)."""
    pat = re.compile(rf"\b{re.escape(word)}\b", re.IGNORECASE)
    for sent in re.split(r"(?<=[.!?])\s+", text):
        if pat.search(sent):
            return sent.strip()
    return text if len(text) <= 200 else text[:197] + "..."


def _encode_batch(model, batch: dict, layers) -> torch.Tensor:
    """[B, L, H] mean of the chosen hidden layers (DCWE models get their unit/slice offsets)."""
    if hasattr(model, "encode"):            # DCWE / PlainMLM: body only, no vocabulary projection
        hs = model.encode(**batch)
    else:                                   # any HF encoder
        batch = {k: v for k, v in batch.items() if k not in ("unit_ids", "slice_ids")}
        hs = model(**batch, output_hidden_states=True).hidden_states
    if hs is None:
        raise ValueError("the model returned no hidden states; pass a DCWE model, PlainMLM or an HF encoder.")
    idx = list(layers) if layers is not None else list(range(1, min(6, len(hs) - 1) + 1))
    return torch.stack([hs[i] for i in idx]).mean(0)


# ----------------------------------------------------------------------------------------------
# contextual index: one vector per word occurrence
# ----------------------------------------------------------------------------------------------
@dataclass
class ContextIndex:
    """Contextual vectors of word occurrences with their unit, time slice and document."""

    words: list
    word_id: np.ndarray
    unit: np.ndarray
    time: np.ndarray
    doc_id: np.ndarray
    vectors: np.ndarray
    texts: dict
    slices: list
    units: list
    _lookup: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        self._lookup = {w: i for i, w in enumerate(self.words)}

    def has(self, word: str) -> bool:
        return word.lower() in self._lookup

    def mask(self, word: str) -> np.ndarray:
        i = self._lookup.get(word.lower())
        return np.zeros(len(self.word_id), bool) if i is None else self.word_id == i

    def counts(self) -> pd.Series:
        return pd.Series(np.bincount(self.word_id, minlength=len(self.words)), index=self.words)

    def require(self, word: str, role: str = "word") -> None:
        """Clear error when a word never occurs in the indexed corpus."""
        if not self.has(word):
            top = self.counts().sort_values(ascending=False).index[:8].tolist()
            raise ValueError(f"{role} {word!r} never occurs in the indexed corpus (or is a stopword). "
                             f"Fix: pick a word from the texts, e.g. {top}.")


@torch.no_grad()
def build_context_index(model, tokenizer, frame: pd.DataFrame, slices: list, unit_index: dict, *,
                        words=None, layers=None, batch_size: int = 32, max_length: int = 128,
                        max_docs_per_unit_slice: int | None = None, seed: int = 0,
                        progress: bool = True) -> ContextIndex:
    """Encode `frame` (doc_id, unit, time, text) once; keep one vector per content-word occurrence.

    words: restrict to these (lower-case) words; default: alphabetic non-stopword words.
    """
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError("build_context_index needs a fast tokenizer (word_ids and offsets).")
    if max_docs_per_unit_slice is not None:
        frame = (frame.sample(frac=1.0, random_state=seed)         # seeded shuffle, then the first n per group
                 .groupby(["unit", "time"], sort=False).head(max_docs_per_unit_slice).sort_index())
    frame = frame.reset_index(drop=True)
    keep = None if words is None else {w.lower() for w in words}
    stop = ENGLISH_STOP_WORDS
    slice_pos = {s: i for i, s in enumerate(slices)}
    model.eval()
    device = next(model.parameters()).device
    vocab, wid, units, times, docs, vecs = {}, [], [], [], [], []
    for start in tqdm(range(0, len(frame), batch_size), desc="encode", disable=not progress):
        part = frame.iloc[start:start + batch_size]
        texts = part["text"].tolist()
        enc = tokenizer(texts, truncation=True, max_length=max_length, padding=True, return_tensors="pt",
                        return_offsets_mapping=True)
        batch = {"input_ids": enc["input_ids"].to(device), "attention_mask": enc["attention_mask"].to(device),
                 "unit_ids": torch.tensor([unit_index[u] for u in part["unit"]], device=device),
                 "slice_ids": torch.tensor([slice_pos[t] for t in part["time"]], device=device)}
        h = _encode_batch(model, batch, layers).float().cpu().numpy()
        offsets = enc["offset_mapping"].numpy()
        for b, (text, unit, time, doc) in enumerate(zip(texts, part["unit"], part["time"], part["doc_id"])):
            pieces: dict = {}
            for j, w in enumerate(enc.word_ids(b)):
                if w is not None:
                    pieces.setdefault(w, []).append(j)
            for js in pieces.values():
                word = text[offsets[b, js[0], 0]:offsets[b, js[-1], 1]].lower()
                if not word.isalpha() or word in stop or (keep is not None and word not in keep):
                    continue
                wid.append(vocab.setdefault(word, len(vocab)))
                vecs.append(h[b, js].mean(0))       # WordPiece pieces of one word: averaged
                units.append(unit)
                times.append(time)
                docs.append(doc)
    if not vecs:
        raise ValueError("build_context_index: no content word found in the texts; check the text column or `words`.")
    return ContextIndex(words=list(vocab), word_id=np.array(wid), unit=np.array(units, dtype=object),
                        time=np.array(times, dtype=object), doc_id=np.array(docs, dtype=object),
                        vectors=np.stack(vecs).astype(np.float32),
                        texts=dict(zip(frame["doc_id"], frame["text"])), slices=list(slices),
                        units=sorted(unit_index, key=unit_index.get))


# ----------------------------------------------------------------------------------------------
# r-hat
# ----------------------------------------------------------------------------------------------
def _unit_rows(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12)


def resolve_n_neighbors(n_neighbors, n_candidates: int) -> int:
    """'auto' = 100 (paper), or 5% of the candidate vocabulary when that is smaller (at least 5)."""
    if n_neighbors == "auto":
        return int(min(100, max(5, round(0.05 * n_candidates))))
    if not (isinstance(n_neighbors, (int, np.integer)) and n_neighbors >= 1):
        raise ValueError(f"n_neighbors={n_neighbors!r}: use a positive integer (paper: 100) or 'auto'.")
    return int(n_neighbors)


def rhat_scores(index: ContextIndex, word: str, anchor: str, n_neighbors=100, min_count: int = 2,
                word_docs=None) -> pd.DataFrame:
    """r-hat per (unit, time) where `word` occurs: mean over its occurrences of N - rank + 1 (0 if absent).

    rank: position of the anchor's time-specific centroid (averaged over all units) among the
    nearest centroids of the slice's candidate words (content words with >= min_count
    occurrences in that slice, the word itself excluded). Columns: unit, time, rhat, n (occurrences),
    rank (mean rank of the anchor among all candidates), example (a sentence with the word).
    Slices where the word never occurs get no rows (a warning names them); where the anchor
    occurs fewer than ``min_count`` times, r-hat is 0 (the anchor is not a candidate neighbour) and a
    warning says so.
    word_docs: only the word's occurrences in these documents are scored (e.g. usages whose text
    names no companion, so only the model's unit/time input can tell the sense); the candidate
    centroids still come from every indexed document. None = all occurrences.
    """
    word, anchor = word.lower(), anchor.lower()
    if word == anchor:
        raise ValueError(f"word and anchor are both {word!r}; pick two different words.")
    index.require(word, "word")
    index.require(anchor, "anchor")
    wmask = index.mask(word)
    scored = wmask if word_docs is None else wmask & np.isin(index.doc_id, np.asarray(list(word_docs), dtype=object))
    if word_docs is not None and not scored.any():
        raise ValueError(f"word {word!r} never occurs in the {len(list(word_docs))} documents of word_docs; "
                         "pass documents that contain it (or word_docs=None).")
    rows, unseen, no_anchor, n_used = [], [], [], []
    for t in index.slices:
        in_t = index.time == t
        occ = np.flatnonzero(scored & in_t)
        if occ.size == 0:
            unseen.append(t)
            continue
        ids_t = index.word_id[in_t & ~wmask]
        counts = np.bincount(ids_t, minlength=len(index.words))
        cand = np.flatnonzero(counts >= min_count)
        a_id = index.words.index(anchor)
        if counts[a_id] < min_count:            # never, or too rarely to be a candidate: r-hat is 0
            no_anchor.append((t, int(counts[a_id])))
        cent = np.zeros((len(cand), index.vectors.shape[1]), np.float32)
        pos = {c: i for i, c in enumerate(cand)}
        sel = np.flatnonzero(in_t & ~wmask)
        sel = sel[np.isin(index.word_id[sel], cand)]
        np.add.at(cent, [pos[c] for c in index.word_id[sel]], index.vectors[sel])
        cent = _unit_rows(cent)
        n = resolve_n_neighbors(n_neighbors, len(cand))
        n_used.append(n)
        q = _unit_rows(index.vectors[occ])
        sims = q @ cent.T                                           # [occ, candidates]
        if a_id in pos:
            a_sim = sims[:, pos[a_id]]
            rank = 1 + (sims > a_sim[:, None]).sum(1)               # 1 = nearest
            rhat = np.where(rank <= n, n - rank + 1, 0).astype(float)
        else:
            rank, rhat = np.full(len(occ), len(cand) + 1), np.zeros(len(occ))
        df = pd.DataFrame({"unit": index.unit[occ], "rhat": rhat, "rank": rank, "doc": index.doc_id[occ]})
        for unit, grp in df.groupby("unit", sort=True):
            rows.append({"unit": unit, "time": t, "rhat": float(grp["rhat"].mean()), "n": len(grp),
                         "rank": float(grp["rank"].mean()), "n_neighbors": n,
                         "example": example_sentence(index.texts[grp["doc"].iloc[int(grp["rhat"].argmax())]], word)})
    if unseen:
        warnings.warn(f"word {word!r} never occurs in slice(s) {unseen}: no r-hat there (units count as not "
                      "observed). Fix: give those slices documents with the word, or ignore them.", stacklevel=2)
    if no_anchor:
        where = ", ".join(f"{t} ({c}x)" for t, c in no_anchor)
        warnings.warn(f"anchor {anchor!r} occurs fewer than min_count={min_count} times in slice(s) {where}: "
                      "r-hat is 0 there (it is not a candidate neighbour). Fix: lower min_count, or pick an "
                      "anchor that is common in every slice.", stacklevel=2)
    if not rows:
        raise ValueError(f"word {word!r} never occurs in any slice; pick another word.")
    return pd.DataFrame(rows, columns=["unit", "time", "rhat", "n", "rank", "n_neighbors", "example"])


# ----------------------------------------------------------------------------------------------
# what a unit writes about, and where it sits
# ----------------------------------------------------------------------------------------------
_WORD_RE = re.compile(r"[a-z]+")


def unit_top_words(frame: pd.DataFrame, top: int = 5, *, distinctive: bool = True, exclude=(),
                   min_len: int = 3) -> dict:
    """{unit: its `top` content words} from the texts of `frame` (columns unit, text).

    Content words: lower-case alphabetic tokens of at least `min_len` letters, English stopwords and
    `exclude` removed. distinctive=True ranks by count x log(n_units / units using the word) (a
    tf-idf over units: words every unit writes score 0 and come last), ties by count, then
    alphabetically; False ranks by count alone.
    """
    missing = [c for c in ("unit", "text") if c not in frame.columns]
    if missing:
        raise ValueError(f"unit_top_words: frame has no column(s) {missing}; pass documents with unit and text.")
    if not (isinstance(top, (int, np.integer)) and top >= 1):
        raise ValueError(f"unit_top_words: top={top!r}; use an integer >= 1.")
    skip = set(ENGLISH_STOP_WORDS) | {str(w).lower() for w in exclude}
    counts: dict = {}
    for unit, text in zip(frame["unit"], frame["text"]):
        c = counts.setdefault(unit, {})
        for w in _WORD_RE.findall(str(text).lower()):
            if len(w) >= min_len and w not in skip:
                c[w] = c.get(w, 0) + 1
    n_units = len(counts)
    used_by: dict = {}
    for c in counts.values():
        for w in c:
            used_by[w] = used_by.get(w, 0) + 1
    out = {}
    for unit, c in counts.items():
        def key(w, c=c):
            idf = np.log(n_units / used_by[w]) if distinctive else 1.0
            return (-c[w] * idf, -c[w], w)
        out[unit] = sorted(c, key=key)[:top]
    return out


def graph_communities(graph: nx.Graph, seed: int = 0) -> dict:
    """{node: community index} by seeded Louvain modularity (largest community first); a node
    attribute "community" on every node is used as given instead."""
    given = nx.get_node_attributes(graph, "community")
    if graph.number_of_nodes() and len(given) == graph.number_of_nodes():
        return dict(given)
    g = graph.to_undirected() if graph.is_directed() else graph
    parts = sorted(nx.community.louvain_communities(g, seed=seed), key=lambda p: (-len(p), sorted(map(str, p))))
    return {n: i for i, part in enumerate(parts) for n in part}


# ----------------------------------------------------------------------------------------------
# diffusion map, walk vs flight, recovered mode
# ----------------------------------------------------------------------------------------------
def diffusion_map(rhat: pd.DataFrame, units: list, slices: list, threshold: float = 0.0):
    """(holds [units x slices] frame of True/False/NaN (not observed), first arrival {unit: slice|None})."""
    grid = rhat.pivot_table(index="unit", columns="time", values="rhat", aggfunc="mean")
    grid = grid.reindex(index=list(units), columns=list(slices))
    holds = (grid > threshold).astype(object).where(grid.notna(), np.nan)
    first = {}
    for u in units:
        row = holds.loc[u]
        hit = [t for t in slices if row[t] is True]
        first[u] = hit[0] if hit else None
    return holds, first


# ----------------------------------------------------------------------------------------------
# sim and sigma_sim
# ----------------------------------------------------------------------------------------------
@torch.no_grad()
def sim_table(model, tokenizer, frame: pd.DataFrame, top: int = 10, min_contexts: int = 3,
              batch_size: int = 4096) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(top variable words with example contexts, all sims). sim = cos(e, e + o) per (word, unit, time).

    A word is a whole word of the text (the tokenizer's word boundaries): when the tokenizer splits it
    into several pieces, e and e + o are the means of its pieces' (paper fn. 14), so the labels and the
    example sentences are words, never pieces such as "snow" of "snowstorm". Only the model's dynamic
    vocabulary has offsets; a word takes part when one of its pieces does and it is alphabetic. Words
    seen in fewer than `min_contexts` (unit, time) contexts get no sigma.
    """
    was_training = model.training
    model.eval()                      # no offset or GAT dropout in the sims
    try:
        return _sim_table(model, tokenizer, frame, top, min_contexts, batch_size)
    finally:
        model.train(was_training)


def _sim_table(model, tokenizer, frame, top, min_contexts, batch_size):
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError("sim_table needs a fast tokenizer (word_ids and offsets), to put a word's pieces together.")
    dyn = set(model.dynamic_token_ids)
    slice_pos = {s: i for i, s in enumerate(model.config.slices)}
    unit_pos = {u: i for i, u in enumerate(model.config.units)}
    # one sim per (word, unit, time), a word being a whole word of the text: the pieces the tokenizer
    # splits it into are averaged, in the static and in the dynamic embedding alike (paper fn. 14).
    # A word counts when one of its pieces has offsets (the dynamic vocabulary holds word starts only).
    triples: dict = {}
    spelled: dict = {}
    texts_list = frame["text"].tolist()
    enc = tokenizer(texts_list, add_special_tokens=False, return_offsets_mapping=True)
    for b, (text, unit, time, doc) in enumerate(zip(texts_list, frame["unit"], frame["time"], frame["doc_id"])):
        ids, offsets, pieces = enc["input_ids"][b], enc["offset_mapping"][b], {}
        for j, w in enumerate(enc.word_ids(b)):
            if w is not None:
                pieces.setdefault(w, []).append(j)
        for js in pieces.values():
            key = tuple(int(ids[j]) for j in js)
            surface = text[offsets[js[0]][0]:offsets[js[-1]][1]]
            if not dyn.intersection(key) or not surface.isalpha():
                continue
            if (key, unit, time) not in triples:
                triples[(key, unit, time)] = (doc, surface)
            spelled.setdefault(key, surface.lower())
    if not triples:
        raise ValueError("sim_table: no dynamic-vocabulary word occurs in the given texts.")
    keys = list(triples)
    sims = []
    for i in range(0, len(keys), batch_size):
        chunk = keys[i:i + batch_size]
        n_pieces = torch.tensor([len(k[0]) for k in chunk])
        owner = torch.repeat_interleave(torch.arange(len(chunk)), n_pieces)
        e, d = model.static_and_dynamic([t for k in chunk for t in k[0]],
                                        [unit_pos[k[1]] for k in chunk for _ in k[0]],
                                        [slice_pos[k[2]] for k in chunk for _ in k[0]])
        owner = owner.to(e.device)
        e_word = torch.zeros(len(chunk), e.shape[-1], device=e.device, dtype=e.dtype).index_add_(0, owner, e)
        d_word = torch.zeros_like(e_word).index_add_(0, owner, d)
        scale = n_pieces.to(e.device, e.dtype)[:, None]
        sims.append(torch.nn.functional.cosine_similarity(e_word / scale, d_word / scale, dim=-1).cpu().numpy())
    texts = dict(zip(frame["doc_id"], frame["text"]))
    # a word's label is how the text spells it (lower-cased); two spellings of other pieces stay apart
    labels, seen = {}, {}
    for key, word in spelled.items():
        n = seen[word] = seen.get(word, 0) + 1
        labels[key] = word if n == 1 else f"{word} ({n})"
    all_sims = pd.DataFrame({"word": [labels[k[0]] for k in keys],
                             "unit": [k[1] for k in keys], "time": [k[2] for k in keys],
                             "sim": np.concatenate(sims), "doc_id": [triples[k][0] for k in keys]})
    surface = {(labels[k[0]], triples[k][0]): triples[k][1] for k in keys}
    rows = []
    for word, grp in all_sims.groupby("word"):
        if len(grp) < min_contexts:
            continue
        mu = grp["sim"].mean()
        hi, lo = grp.loc[grp["sim"].idxmax()], grp.loc[grp["sim"].idxmin()]
        rows.append({"word": word, "sigma_sim": float(grp["sim"].std(ddof=0)), "mean_sim": float(mu),
                     "contexts": len(grp),
                     "above_context": f"{hi['unit']} @ {hi['time']}", "above_sim": float(hi["sim"]),
                     "above_text": example_sentence(texts[hi["doc_id"]], surface[(word, hi["doc_id"])]),
                     "below_context": f"{lo['unit']} @ {lo['time']}", "below_sim": float(lo["sim"]),
                     "below_text": example_sentence(texts[lo["doc_id"]], surface[(word, lo["doc_id"])])})
    table = pd.DataFrame(rows)
    if table.empty:
        raise ValueError(f"sim_table: no word occurs in >= min_contexts={min_contexts} (unit, time) contexts; "
                         "lower min_contexts or give more text.")
    return table.sort_values("sigma_sim", ascending=False).head(top).reset_index(drop=True), all_sims
