"""Social corpora: documents written by social units (users, venues, communities) in time slices,
plus a networkx graph over the units.

Every document's unit must be a node of the graph, every edge must join two known units, and
every declared time slice must have documents. Isolated units are allowed (they have no edges).
"""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import numpy as np
import pandas as pd

from .errors import DataError, data_error, require_columns


def _graph_from_edges(edges, units: list[str] | None, doc_units: set[str]) -> nx.Graph:
    """Build a graph from an edge table or list; endpoints must be declared units (or units with documents)."""
    if isinstance(edges, pd.DataFrame):
        require_columns(edges, ("source", "target"), "edge list")
        weight = edges["weight"].tolist() if "weight" in edges else [1.0] * len(edges)
        pairs = list(zip(edges["source"].astype(str), edges["target"].astype(str), weight))
    else:
        pairs = [(str(e[0]), str(e[1]), float(e[2]) if len(e) > 2 else 1.0) for e in edges]
    known = set(map(str, units)) if units is not None else set(doc_units)
    bad = [(a, b) for a, b, _ in pairs if a not in known or b not in known]
    if bad:
        missing = sorted({x for a, b in bad for x in (a, b) if x not in known})
        raise data_error("source/target", f"edge(s) {bad[:3]} refer to unknown unit(s) {missing[:5]}",
                         "add those units to units= (or give them documents), or drop the edges")
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
        df = df.reset_index(drop=True).copy()
        if "doc_id" not in df:
            df["doc_id"] = [f"d{i}" for i in range(len(df))]
        df["doc_id"] = df["doc_id"].astype(str)
        if df["unit"].isna().any():
            raise data_error("unit", "documents without a social unit", "give every document a unit or drop it",
                             rows=np.flatnonzero(df["unit"].isna().to_numpy()).tolist())
        df["unit"] = df["unit"].astype(str)
        if df["time"].isna().any():
            raise data_error("time", "documents without a time slice", "give every document a time slice or drop it",
                             rows=np.flatnonzero(df["time"].isna().to_numpy()).tolist())
        empty = df["text"].isna() | (df["text"].astype(str).str.strip() == "")
        if empty.any():
            raise data_error("text", "empty or missing text", "drop these documents or fill their text",
                             ids=df.loc[empty, "doc_id"].tolist(), id_name="doc_id")
        df["text"] = df["text"].astype(str)

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
        missing = sorted(set(df["unit"]) - set(graph.nodes))
        if missing:
            rows = np.flatnonzero(df["unit"].isin(missing).to_numpy()).tolist()
            raise data_error("unit", f"unit(s) {missing[:5]} have documents but are not nodes of the graph",
                             "add them to the graph (isolated nodes are fine) or drop their documents", rows=rows)

        order = list(slices) if slices is not None else sorted(pd.unique(df["time"]).tolist())
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
        return cls.from_frame(pd.read_csv(docs, dtype={"unit": str, "doc_id": str}),
                              edges=pd.read_csv(edges, dtype={"source": str, "target": str}), **kwargs)

    def __len__(self) -> int:
        return len(self.df)

    def __repr__(self) -> str:
        return (f"SocialCorpus({len(self)} docs, {self.graph.number_of_nodes()} units, "
                f"{self.graph.number_of_edges()} edges, slices={self.slices})")

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
