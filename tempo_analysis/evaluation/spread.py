"""Walk or flight: how a sense spread over a social graph, read from a first-arrival map.

A map gives each unit the first slice in which it holds the sense (or None). ``walk_flight``
splits each slice's newcomers into walks (a unit they read from already held it) and flights
(none did); the first units to hold it are seeds, neither. ``recover_mode`` compares the pooled
walk share with the share expected if newcomers landed uniformly on the units not yet reached.

The planted world's truth (`tempo_analysis.world.social.walk_share`) and the analysis of a trained
model's map (`tempo_analysis.diffusion.analysis`) both count with these functions, so a planted
share and a recovered share are the same quantity. Pure networkx / pandas: no model is needed.
"""
from __future__ import annotations

import networkx as nx
import numpy as np
import pandas as pd


def sources(graph: nx.Graph, unit) -> list:
    """The units `unit` can take a sense from: its neighbours, or, in a directed graph (edge a -> b:
    b reads a), its predecessors."""
    return list(graph.predecessors(unit) if graph.is_directed() else graph.neighbors(unit))


def _check_units_on_graph(graph: nx.Graph, first: dict) -> None:
    off = sorted(str(u) for u, s in first.items() if s is not None and u not in graph)
    if off:
        raise ValueError(f"first arrival names units that are not nodes of the graph: {off[:5]}"
                         f"{' ...' if len(off) > 5 else ''}; add them to the graph (an isolated node is fine) "
                         f"or leave them out of the map")


def walk_flight(graph: nx.Graph, first: dict, slices: list) -> pd.DataFrame:
    """Per slice: units reached for the first time, split into seeds, walk (a unit it reads from,
    see ``sources``, was reached earlier) and flight (none was).

    The units of the seed slice (the first slice in which any unit is reached) had nobody to walk
    from: they are ``seeds``, not flights, whichever slice that is. ``new`` = walk + flight; the
    shares are over ``new`` (NaN where nobody arrived). A unit counts as reached from its first
    arrival on, also if its map later stops holding (the first-arrival reading of the map).
    """
    _check_units_on_graph(graph, first)
    order = {s: i for i, s in enumerate(slices)}
    reached = [order[s] for s in first.values() if s is not None]
    seed_order = min(reached) if reached else None
    rows = []
    for t in slices:
        before = {u for u, s in first.items() if s is not None and order[s] < order[t]}
        arrived = [u for u, s in first.items() if s is not None and order[s] == order[t]]
        seeds = arrived if order[t] == seed_order else []
        new = [u for u in arrived if u not in seeds]
        walk = sum(any(v in before for v in sources(graph, u)) for u in new)
        rows.append({"time": t, "seeds": len(seeds), "new": len(new), "walk": walk, "flight": len(new) - walk,
                     "walk_share": walk / len(new) if new else np.nan,
                     "flight_share": (len(new) - walk) / len(new) if new else np.nan})
    return pd.DataFrame(rows, columns=["time", "seeds", "new", "walk", "flight", "walk_share", "flight_share"])


def recover_mode(graph: nx.Graph, first: dict, slices: list, holds: pd.DataFrame | None = None) -> dict:
    """Walk or flight: observed pooled walk share vs the share expected if each slice's newly reached
    units were drawn uniformly from the units not reached before it (exact expectation).

    The seed slice's units are not arrivals (see ``walk_flight``). With `holds` (``diffusion_map``'s
    units x slices frame, NaN = not observed), a unit can only be drawn in a slice where it was
    observed: units with no r-hat there are left out of that slice's chance pool. When the observed
    share equals the expected one (for instance, no unreached unit has a reached neighbour, so walking
    was impossible), the mode is None: the arrivals do not tell walk from flight.
    """
    order = {s: i for i, s in enumerate(slices)}
    wf = walk_flight(graph, first, slices)
    expected, total = 0.0, 0
    for t, k in zip(wf["time"], wf["new"]):
        if not k:
            continue
        before = {u for u, s in first.items() if s is not None and order[s] < order[t]}
        pool = [u for u in graph.nodes if u not in before]
        if holds is not None and t in holds.columns:
            seen = holds[t]
            pool = [u for u in pool if u in seen.index and seen[u] == seen[u]]   # NaN: not observed
        frac = np.mean([any(v in before for v in sources(graph, u)) for u in pool]) if pool else 0.0
        expected += k * frac
        total += k
    if total == 0:
        return {"mode": None, "walk_share": float("nan"), "expected_walk_share": float("nan"), "new_units": 0,
                "note": "no unit newly reached after the seed slice: the mode cannot be told"}
    observed = float(wf["walk"].sum() / total)
    exp_share = float(expected / total)
    out = {"mode": None, "walk_share": observed, "expected_walk_share": exp_share, "new_units": int(total)}
    if np.isclose(observed, exp_share, rtol=0.0, atol=1e-12):
        out["note"] = "the observed walk share equals the one expected by chance: walk and flight cannot be told apart"
    else:
        out["mode"] = "walk" if observed > exp_share else "flight"
    return out


__all__ = ["recover_mode", "sources", "walk_flight"]
