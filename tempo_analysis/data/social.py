"""Social corpora: documents written by social units (users, venues, communities) in time slices,
plus a networkx graph over the units.

Every document's unit must be a node of the graph, every edge must join two known units, and
every declared time slice must have documents. Isolated units are allowed (they have no edges).

Documented rules (each with a warning, never silent):
- a self-loop (an edge from a unit to itself) is not a social tie: it is dropped;
- integer time slices with gaps (0, 2, 5) are kept as given, in order, and the methods treat them as
  consecutive steps; the warning names the missing slices (pass ``slices=`` to declare the order
  yourself, which silences it).
- text time slices (``"spring"``, ``"summer"``) keep the order in which they first appear, as
  period labels do (``errors.infer_label_order``); text that spells numbers sorts by value.
Edge weights must be finite numbers. Time labels must be of one type (all numbers or all strings);
a file column mixing number-like and text labels is refused the same way.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import networkx as nx
import numpy as np
import pandas as pd

from .digest import frame_digest
from .errors import (DOC_ID_FIX, DOC_ID_UNIQUE_FIX, DataError, data_error, in_cli_terms, infer_label_order, read_frame,
                     require_columns, require_ids, require_scalars, require_texts, require_unique)


def _graph_from_edges(edges, units: list[str] | None, doc_units: set[str]) -> nx.Graph:
    """Build a graph from an edge table or list; endpoints must be declared units (or units with documents)."""
    if isinstance(edges, pd.DataFrame):
        require_columns(edges, ("source", "target"), "edge list")
        require_scalars(edges, ("source", "target", "weight"), "edge list")
        ends = edges[["source", "target"]].isna().any(axis=1)
        if ends.any():
            raise data_error("source/target", "edges with a missing endpoint", "fill or drop these edges",
                             rows=np.flatnonzero(ends.to_numpy()).tolist())
        weight = edges["weight"].tolist() if "weight" in edges else [1.0] * len(edges)
        pairs = list(zip(edges["source"].astype(str), edges["target"].astype(str), weight))
    else:
        try:
            rows = [tuple(e) for e in edges]
        except TypeError:
            raise DataError("edges must be a DataFrame(source, target[, weight]) or a list of (source, target"
                            "[, weight]) tuples.") from None
        short = [i for i, e in enumerate(rows) if len(e) not in (2, 3)]
        if short:
            raise data_error("edges", "edges that are not (source, target[, weight]) tuples",
                             "give two units (and optionally a weight) per edge", rows=short)
        pairs = [(str(e[0]), str(e[1]), e[2] if len(e) > 2 else 1.0) for e in rows]
    bad_w = [i for i, (_, _, w) in enumerate(pairs)
             if isinstance(w, (bool, np.bool_)) or not isinstance(w, (int, float, np.integer, np.floating))
             or not math.isfinite(float(w))]
    if bad_w:
        raise data_error("weight", f"edge weights that are not finite numbers (e.g. {pairs[bad_w[0]][2]!r})",
                         "use numbers (1.0 when unweighted) or drop the weight column", rows=bad_w)
    pairs = [(a, b, float(w)) for a, b, w in pairs]
    loops = [i for i, (a, b, _) in enumerate(pairs) if a == b]
    if loops:
        warnings.warn(f"SocialCorpus: dropped {len(loops)} self-loop edge(s) (a unit linked to itself, first: "
                      f"{pairs[loops[0]][0]!r}, edge row {loops[0]}); a self-loop is not a social tie.", stacklevel=3)
        pairs = [p for i, p in enumerate(pairs) if i not in set(loops)]
    known = set(map(str, units)) if units is not None else set(doc_units)
    bad = [(a, b) for a, b, _ in pairs if a not in known or b not in known]
    if bad:
        missing = sorted({x for a, b in bad for x in (a, b) if x not in known})
        raise data_error("source/target", f"edge(s) {bad[:3]} refer to unknown unit(s) {missing[:5]}",
                         "add those units to units= (or give them documents), or drop the edges")
    first: dict = {}
    repeated = []
    for i, (a, b, w) in enumerate(pairs):          # the graph is undirected: a-b and b-a are one tie
        key = frozenset((a, b))
        if key in first:
            repeated.append((first[key], i))
        else:
            first[key] = i
    if repeated:
        (i, j), n = repeated[0], len(repeated)
        warnings.warn(f"SocialCorpus: {n} edge(s) repeat a pair already listed (first: {pairs[j][0]!r}-{pairs[j][1]!r} "
                      f"at edge rows {i} and {j}, weights {pairs[i][2]:g} and {pairs[j][2]:g}); the graph keeps one "
                      "tie per pair with the last weight listed. Fix: list each pair once, with the weight you mean",
                      stacklevel=3)
    g = nx.Graph()
    g.add_nodes_from(sorted(known))
    g.add_weighted_edges_from(pairs)
    return g


class SocialCorpus:
    """Documents with a social unit and a time slice (``doc_id, unit, time, text``) and a graph over units."""

    def __init__(self, df: pd.DataFrame, graph: nx.Graph, slices: list):
        self.df = df
        self.graph = graph
        self.slices = list(slices)

    @classmethod
    def from_frame(cls, df: pd.DataFrame, graph=None, *, edges=None, units: list | None = None,
                   slices: list | None = None) -> "SocialCorpus":
        """Validate documents and the unit graph (a ``networkx.Graph``, or ``edges`` as a source/target table)."""
        if not isinstance(df, pd.DataFrame):
            raise DataError(f"SocialCorpus.from_frame expects a pandas DataFrame, got {type(df).__name__}.")
        require_columns(df, ("unit", "time", "text"), "SocialCorpus")
        require_scalars(df, ("unit", "time", "text", "doc_id"), "SocialCorpus")
        if df.empty:
            raise DataError("SocialCorpus input has no rows. Fix: pass at least one document.")
        df = df.reset_index(drop=True).copy()
        if "doc_id" not in df:
            df["doc_id"] = [f"d{i}" for i in range(len(df))]
        require_ids(df, "doc_id", "missing document ids", DOC_ID_FIX)
        if df["unit"].isna().any():
            raise data_error("unit", "documents without a social unit", "give every document a unit or drop it",
                             rows=np.flatnonzero(df["unit"].isna().to_numpy()).tolist())
        df["unit"] = df["unit"].astype(str)
        if df["time"].isna().any():
            raise data_error("time", "documents without a time slice", "give every document a time slice or drop it",
                             rows=np.flatnonzero(df["time"].isna().to_numpy()).tolist())
        require_texts(df, "doc_id", "documents")
        require_unique(df, "doc_id", "duplicate document ids", DOC_ID_UNIQUE_FIX)

        if isinstance(graph, (pd.DataFrame, list, tuple)) and edges is None:
            graph, edges = None, graph
        if graph is None and edges is None:
            raise DataError("SocialCorpus needs a graph over units. Fix: pass graph=networkx.Graph or "
                            "edges=DataFrame(source, target[, weight]); isolated units can be listed with units=.")
        if graph is None:
            graph = _graph_from_edges(edges, units, set(df["unit"]))
        elif not isinstance(graph, nx.Graph):
            raise DataError(f"graph must be a networkx.Graph, got {type(graph).__name__}. Fix: pass edges= instead.")
        else:
            graph = nx.relabel_nodes(graph, {n: str(n) for n in graph.nodes}, copy=True)
            loops = list(nx.selfloop_edges(graph))
            if loops:
                warnings.warn(f"SocialCorpus: dropped {len(loops)} self-loop edge(s) (a unit linked to itself, "
                              f"first: {loops[0][0]!r}); a self-loop is not a social tie.", stacklevel=2)
                graph.remove_edges_from(loops)
        missing = sorted(set(df["unit"]) - set(graph.nodes))
        if missing:
            rows = np.flatnonzero(df["unit"].isin(missing).to_numpy()).tolist()
            raise data_error("unit", f"unit(s) {missing[:5]} have documents but are not nodes of the graph",
                             "add them to the graph (isolated nodes are fine) or drop their documents", rows=rows)

        if slices is not None and (isinstance(slices, (str, bytes)) or not hasattr(slices, "__iter__")):
            raise DataError(f"slices= must be a list of time slices in order, got {slices!r}.")
        if slices is not None and len(set(slices)) != len(list(slices)):
            raise DataError(f"slices= lists a time slice twice: {list(slices)}. "
                            "Fix: list every slice once, in time order.")
        order = (list(slices) if slices is not None else
                 infer_label_order(df["time"], "time", "use one type for every time slice (all numbers, or all "
                                   "strings)" + in_cli_terms(", or pass slices=[...]", ""),
                                   in_cli_terms("slices=[...]", "numbers in time order (0, 1, 2, ...) in the 'time' "
                                                "column")))
        if slices is None:
            ints = [int(t) for t in order if isinstance(t, (int, np.integer)) and not isinstance(t, bool)]
            if len(ints) == len(order) > 1 and ints[-1] - ints[0] + 1 != len(ints):
                missing = sorted(set(range(ints[0], ints[-1] + 1)) - set(ints))
                warnings.warn(f"SocialCorpus: time slices {ints} have gaps (no documents in {missing[:10]}"
                              f"{' ...' if len(missing) > 10 else ''}); the slices are used in order as consecutive "
                              "steps. " + in_cli_terms("Pass slices=[...] to declare the order and silence this.",
                                                       "Number the slices without gaps to silence this."),
                              stacklevel=2)
        counts = df["time"].value_counts()
        empty_slices = [s for s in order if counts.get(s, 0) == 0]
        if empty_slices:
            raise data_error("time", f"time slice(s) {empty_slices} have no documents",
                             "add documents for them or remove them from slices=")
        unknown = sorted(set(df["time"]) - set(order), key=str)
        if unknown:
            raise data_error("time", f"time slices {unknown} are not in slices={order}", "add them to slices= or drop them")
        return cls(df[["doc_id", "unit", "time", "text"] + [c for c in df.columns
                                                           if c not in ("doc_id", "unit", "time", "text")]],
                   graph, order)

    @classmethod
    def from_csv(cls, docs: str | Path, edges: str | Path, **kwargs) -> "SocialCorpus":
        """Read documents (unit, time, text) and an edge list (source, target[, weight]) from CSV files."""
        # index_col=False: a row with a field too many is an error, not a shifted table; read_frame reads
        # only a blank cell as missing (a unit called "NA" or a text "null" is data)
        return cls.from_frame(read_frame(pd.read_csv, docs, what="documents CSV", index_col=False,
                                         dtype={"unit": str, "doc_id": str, "text": str}),
                              edges=read_frame(pd.read_csv, edges, what="edge list CSV", index_col=False,
                                               dtype={"source": str, "target": str}), **kwargs)

    def __len__(self) -> int:
        return len(self.df)

    def __repr__(self) -> str:
        return (f"SocialCorpus({len(self)} docs, {self.graph.number_of_nodes()} units, "
                f"{self.graph.number_of_edges()} edges, slices={self.slices})")

    def fingerprint(self) -> str:
        """A digest of what the models read: every document's id, unit, time and text, in order, the time
        slices and the graph's edges with their weights (:mod:`tempo_analysis.data.digest`)."""
        edges = sorted((str(u), str(v), float(w)) for u, v, w in self.graph.edges(data="weight", default=1.0))
        return frame_digest(self.df, ["doc_id", "unit", "time", "text"], list(self.slices), self.units, edges,
                            self.graph.is_directed())

    @property
    def units(self) -> list[str]:
        """All graph nodes (units), sorted."""
        return sorted(self.graph.nodes)

    @property
    def unit_index(self) -> dict[str, int]:
        """Unit -> row index into node-embedding tables."""
        return {u: i for i, u in enumerate(self.units)}

    @property
    def slice_index(self) -> dict:
        """Time slice -> 0-based position."""
        return {s: i for i, s in enumerate(self.slices)}
