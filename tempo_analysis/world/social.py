"""Social graph over time slices where new senses of several words spread (the diffusion world).

Units "u00".."uNN" form `n_communities` equal blocks of a stochastic block model (edge
probability `p_in` inside a block, `p_out` across, drawn with our own seeded RNG). Components
are then joined by one extra edge each (inside the community first), so the graph is connected.

`n_changing` CHANGING words (text_social.PAIRS, starting at `word`) each get their own diffusion
of a new sense, slice by slice, all by the same `mode`:
  - slice 0: `n_seeds` adopters (walk: the first seed and its neighbours; flight: scattered);
  - each later slice adds `speed` adopters, drawn uniformly from
      walk:   non-adopters with at least one adopting neighbour (the frontier; when the
              frontier is smaller than `speed`, all of it adopts), or
      flight: non-adopters with NO adopting neighbour (a long-range jump the graph cannot
              explain), falling back to any non-adopter only when none is left.
So "the share of newly reached units with an adopting neighbour" (`walk_share`) is ~1 for walk
and ~0 for flight.

Documents per (unit, slice):
  - `docs_per_word` "paired" documents: every target word once (the changing words and
    `n_stable` STABLE words, shuffled), each next to one companion (text_social). A changing
    word's companion is its `anchor` where the unit has adopted the new sense (from its first
    slice on), its `old_anchor` elsewhere; a stable word's companion is one of its two, 50/50,
    everywhere and always;
  - per changing word, `bare_docs` "bare" usages: the word alone, the text tells no sense;
  - `chatter_docs` sentences about the community's topic.
With ``paired_layout="one"`` each paired document holds ONE changing word (``docs_per_word`` per
word) next to the stable words.
Which companion a unit writes is thus decided by the unit and the time alone: no phrase hints at
it. Under the default layout, though, the other changing words of the same document do: their
companions tell how far the spreads have gone (the time) and whether this unit adopts early, so a
model without unit or time input that reads the whole document can guess the companion (measured:
research/results/diffusion/README.md). Under "one" the document tells nothing: a time- and unit-blind
model can only learn the average over units.
Columns: doc_id, unit, time, word (a bare usage's word, else ""), kind (paired, bare, chatter),
sense (paired: the sense of `word`'s usage in it, its new or old sense name; "" for a paired
document without `word`, and for other kinds), text.
"""

from __future__ import annotations

from typing import Optional

import networkx as nx
import numpy as np
import pandas as pd

from tempo_analysis.data.social import SocialCorpus
from tempo_analysis.evaluation.spread import sources, walk_flight

from .config import SocialWorldConfig
from .text_senses import TEMPLATES, WHEN, WHO
from .text_social import (BARE, COMMUNITY_TOPICS, PAIR_ORDER, PAIRED, PAIRS, SENSE_OF, STABLE, STABLE_ORDER,
                          TOPIC_ORDER)
from .util import Cycler, capitalise, fill


def unit_names(n_units: int) -> list[str]:
    width = max(2, len(str(n_units - 1)))
    return [f"u{i:0{width}d}" for i in range(n_units)]


def community_graph(cfg: SocialWorldConfig, rng: np.random.Generator) -> tuple[nx.Graph, dict]:
    """Seeded SBM over units, made connected; returns (graph, {unit: community})."""
    units = unit_names(cfg.n_units)
    community = {u: i * cfg.n_communities // cfg.n_units for i, u in enumerate(units)}
    g = nx.Graph()
    g.add_nodes_from(units)
    for i in range(len(units)):
        for j in range(i + 1, len(units)):
            p = cfg.p_in if community[units[i]] == community[units[j]] else cfg.p_out
            if rng.random() < p:
                g.add_edge(units[i], units[j])
    # join the components: first inside each community, then across communities
    for c in range(cfg.n_communities):
        members = [u for u in units if community[u] == c]
        comps = [sorted(cc) for cc in nx.connected_components(g.subgraph(members))]
        comps.sort()
        for a, b in zip(comps, comps[1:]):
            g.add_edge(a[int(rng.integers(len(a)))], b[int(rng.integers(len(b)))])
    comps = sorted(sorted(cc) for cc in nx.connected_components(g))
    for a, b in zip(comps, comps[1:]):
        g.add_edge(a[int(rng.integers(len(a)))], b[int(rng.integers(len(b)))])
    return g, community


def _adjacent(g: nx.Graph, u: str, adopters: set) -> bool:
    return any(v in adopters for v in sources(g, u))   # the rule the analysis reads walks by


def plant_diffusion(g: nx.Graph, cfg: SocialWorldConfig, rng: np.random.Generator) -> dict:
    """{unit: first slice with the new sense, or None} by walk or flight."""
    units = sorted(g.nodes)
    first: dict = {u: None for u in units}
    adopters: set = set()
    # slice 0: seeds
    start = units[int(rng.integers(len(units)))]
    seeds = [start]
    while len(seeds) < cfg.n_seeds:
        if cfg.mode == "walk":
            pool = sorted({v for s in seeds for v in g.neighbors(s)} - set(seeds))
        else:
            pool = [u for u in units if u not in seeds and not _adjacent(g, u, set(seeds))]
        pool = pool or [u for u in units if u not in seeds]
        seeds.append(pool[int(rng.integers(len(pool)))])
    for s in seeds:
        first[s] = 0
    adopters.update(seeds)
    # later slices
    for t in range(1, cfg.n_slices):
        rest = [u for u in units if u not in adopters]
        local = [u for u in rest if _adjacent(g, u, adopters)]
        if cfg.mode == "walk":
            pool = local
        else:
            pool = [u for u in rest if u not in set(local)]
        chosen = [pool[i] for i in sorted(rng.permutation(len(pool))[: cfg.speed])]
        if cfg.mode == "flight" and len(chosen) < cfg.speed:   # no jump target left
            left = [u for u in rest if u not in chosen]
            chosen += [left[i] for i in sorted(rng.permutation(len(left))[: cfg.speed - len(chosen)])]
        for u in chosen:
            first[u] = t
        adopters.update(chosen)
    return first


def walk_share(graph: nx.Graph, first_slice: dict, per_slice: bool = False):
    """Share of newly reached units (after the seed slice) with a neighbour reached before them.

    Pooled over slices (float, NaN if nobody is newly reached), or per slice ({t: share} for the
    slices with newcomers). Counted by `tempo_analysis.evaluation.spread.walk_flight`, the same rule
    that reads a trained model's map."""
    slices = sorted({t for t in first_slice.values() if t is not None})
    wf = walk_flight(graph, first_slice, slices)
    wf = wf[wf["new"] > 0]
    if per_slice:
        return {t: float(v) for t, v in zip(wf["time"], wf["walk_share"])}
    return float(wf["walk"].sum() / wf["new"].sum()) if len(wf) else float("nan")


def changing_words(cfg: SocialWorldConfig) -> list[str]:
    """`word` first, then the next words of PAIR_ORDER (wrapping round), `n_changing` in all."""
    i = PAIR_ORDER.index(cfg.word)
    return [PAIR_ORDER[(i + k) % len(PAIR_ORDER)] for k in range(cfg.n_changing)]


def _sense_rows(cfg, rng, u, t, changing, stable, adopted, held_out, senses, paired, bare, slots) -> list:
    """The "senses" layout: per changing word, ``docs_per_word`` documents that write the word in a
    sentence of the unit's current sense (varied context words) and name its companion, plus
    ``bare_docs`` ambiguous usages; nothing where the cell is held out. Stable words get one document
    each with a 50/50 companion."""
    rows = []
    for w in changing:
        if (u, t) in held_out[w]:
            continue
        pair = PAIRS[w]
        for _ in range(cfg.docs_per_word):
            new = adopted[w] != (rng.random() < cfg.noise)       # noise: the other sense than planted
            sense = pair["new_sense"] if new else pair["old_sense"]
            companion = pair["anchor"] if new else pair["old_anchor"]
            sentence = fill(senses[w][SENSE_OF[w][sense]].next(), rng, slots)
            phrase = capitalise(paired.next().replace("{T}", w).replace("{C}", companion)) + "."
            rows.append(dict(unit=u, time=t, word=w, kind="usage", sense=sense, text=f"{sentence} {phrase}"))
        for _ in range(cfg.bare_docs):
            rows.append(dict(unit=u, time=t, word=w, kind="bare", sense="",
                             text=fill(bare.next().replace("{T}", w), rng, slots)))
    for w in stable:
        companion = STABLE[w][int(rng.integers(2))]
        rows.append(dict(unit=u, time=t, word=w, kind="usage", sense="",
                         text=capitalise(paired.next().replace("{T}", w).replace("{C}", companion)) + "."))
    return rows


def _paired_rows(cfg, rng, u, t, changing, stable, adopted, paired, bare, slots, main) -> list:
    """The "all" and "one" layouts: documents listing target words next to bare companions."""
    rows = []
    # "all": each document lists every changing word; "one": a document per (changing word, copy)
    layouts = ([list(range(len(changing)))] * cfg.docs_per_word if cfg.paired_layout == "all"
               else [[i] for i in range(len(changing)) for _ in range(cfg.docs_per_word)])
    for chosen in layouts:
        phrases, main_new = [], False
        for k in rng.permutation(len(chosen) + len(stable)):
            if k < len(chosen):
                w = changing[chosen[k]]
                new = adopted[w] != (rng.random() < cfg.noise)   # noise flips the companion
                main_new = new if w == cfg.word else main_new
                companion = PAIRS[w]["anchor"] if new else PAIRS[w]["old_anchor"]
            else:
                w = stable[k - len(chosen)]
                companion = STABLE[w][int(rng.integers(2))]
            phrases.append(paired.next().replace("{T}", w).replace("{C}", companion))
        has_main = cfg.word in [changing[i] for i in chosen]
        rows.append(dict(unit=u, time=t, word="", kind="paired",
                         sense=(main["new_sense"] if main_new else main["old_sense"]) if has_main else "",
                         text=capitalise(", ".join(phrases)) + "."))
    for w in changing:
        for _ in range(cfg.bare_docs):
            rows.append(dict(unit=u, time=t, word=w, kind="bare", sense="",
                             text=fill(bare.next().replace("{T}", w), rng, slots)))
    return rows


def social_frames(cfg: SocialWorldConfig) -> tuple[pd.DataFrame, pd.DataFrame, nx.Graph, dict]:
    """(docs, units, graph, truth). docs: doc_id, unit, time, word, kind, sense, text. units: unit,
    community, first_slice (of `word`). truth: the diffusion_truth dict (see generate_social)."""
    cfg.validate()
    rng = np.random.default_rng(cfg.seed)
    g, community = community_graph(cfg, rng)
    changing = changing_words(cfg)
    stable = list(STABLE_ORDER[: cfg.n_stable])
    firsts = {w: plant_diffusion(g, cfg, rng) for w in changing}
    slots = {"who": WHO, "when": WHEN}
    paired, bare = Cycler(PAIRED, rng), Cycler(BARE, rng)
    topics = {c: Cycler(COMMUNITY_TOPICS[TOPIC_ORDER[c % len(TOPIC_ORDER)]], rng)
              for c in range(cfg.n_communities)}

    main = PAIRS[cfg.word]
    senses = {w: {s: Cycler(TEMPLATES[w][s], rng) for s in TEMPLATES[w]} for w in changing}
    # "senses": cells (unit, slice) where a changing word is never written, per word
    held_out = {w: set() for w in changing}
    if cfg.paired_layout == "senses" and cfg.held_out_cells > 0:
        cells = [(u, t) for t in range(cfg.n_slices) for u in sorted(g.nodes)]
        for w in changing:
            k = int(round(cfg.held_out_cells * len(cells)))
            held_out[w] = {cells[i] for i in rng.permutation(len(cells))[:k]}
    rows = []
    for t in range(cfg.n_slices):
        for u in sorted(g.nodes):
            adopted = {w: firsts[w][u] is not None and firsts[w][u] <= t for w in changing}
            if cfg.paired_layout == "senses":
                rows.extend(_sense_rows(cfg, rng, u, t, changing, stable, adopted, held_out, senses, paired, bare,
                                        slots))
            else:
                rows.extend(_paired_rows(cfg, rng, u, t, changing, stable, adopted, paired, bare, slots, main))
            for _ in range(cfg.chatter_docs):
                rows.append(dict(unit=u, time=t, word="", kind="chatter", sense="",
                                 text=fill(topics[community[u]].next(), rng, slots)))
    docs = pd.DataFrame(rows, columns=["unit", "time", "word", "kind", "sense", "text"])
    docs.insert(0, "doc_id", [f"d{i:05d}" for i in range(len(docs))])
    first = firsts[cfg.word]
    units = pd.DataFrame({"unit": sorted(g.nodes)})
    units["community"] = units.unit.map(community).astype(int)
    units["first_slice"] = units.unit.map(lambda u: first[u]).astype("Int64")
    pair = PAIRS[cfg.word]
    truth = {
        "mode": cfg.mode, "word": cfg.word, "anchor": pair["anchor"], "old_anchor": pair["old_anchor"],
        "old_sense": pair["old_sense"], "new_sense": pair["new_sense"],
        "n_slices": cfg.n_slices,
        "first_slice": {u: first[u] for u in sorted(first)},
        "community": {u: community[u] for u in sorted(community)},
        "walk_share": round(float(walk_share(g, first)), 6),
        "changing_words": changing, "stable_words": stable,
        "held_out_cells": {w: sorted([u, t] for u, t in held_out[w]) for w in changing},
        "words": {w: {"anchor": PAIRS[w]["anchor"], "old_anchor": PAIRS[w]["old_anchor"],
                      "first_slice": {u: firsts[w][u] for u in sorted(firsts[w])},
                      "walk_share": round(float(walk_share(g, firsts[w])), 6)} for w in changing},
    }
    return docs, units, g, truth


def edges_frame(g: nx.Graph) -> pd.DataFrame:
    """Edges as a sorted (source, target) frame with source < target."""
    edges = sorted(tuple(sorted(e)) for e in g.edges)
    return pd.DataFrame(edges, columns=["source", "target"])


def generate_social(cfg: Optional[SocialWorldConfig] = None):
    """(SocialCorpus, diffusion_truth) of the diffusion world.

    diffusion_truth: mode ("walk"/"flight"), word, anchor (its new-sense companion), old_anchor,
    old_sense, new_sense, n_slices, first_slice {unit: int|None} (of `word`), community {unit: int},
    walk_share (planted share of newly reached units with an adopting neighbour), changing_words,
    stable_words, words {changing word: anchor, old_anchor, first_slice, walk_share}."""
    docs, _, g, truth = social_frames(cfg or SocialWorldConfig())
    return SocialCorpus.from_frame(docs, g, slices=list(range(truth["n_slices"]))), truth
