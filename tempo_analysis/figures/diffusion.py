"""Figures for social diffusion: the network map with a time slider, walk-vs-flight bars,
r-hat heatmap, perplexity bars, top-variable-words table. Pure functions -> go.Figure."""
from __future__ import annotations

import networkx as nx
import numpy as np
import pandas as pd
import plotly.graph_objects as go


def graph_layout(graph: nx.Graph, seed: int = 0) -> dict:
    """Seeded spring layout {node: (x, y)} (isolated nodes included)."""
    if graph.number_of_nodes() == 0:
        raise ValueError("graph_layout: the graph has no nodes.")
    pos = nx.spring_layout(graph, seed=seed)
    return {n: (float(p[0]), float(p[1])) for n, p in pos.items()}


def _wrap(text: str, width: int = 60) -> str:
    words, lines, cur = str(text).split(), [], ""
    for w in words:
        if len(cur) + len(w) + 1 > width and cur:
            lines.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}".strip()
    return "<br>".join(lines + [cur]) if cur else ""


def network_map(graph: nx.Graph, rhat: pd.DataFrame, slices: list, *, n_neighbors: int | None = None,
                layout: dict | None = None, word: str = "", anchor: str = "", first: dict | None = None,
                start: int | None = None, title: str | None = None) -> go.Figure:
    """Units as nodes coloured by r-hat, one trace per slice switched by a slider; edges in grey.

    rhat: columns unit, time, rhat[, example] (from ``rhat_scores``). Units with no usage of the
    word in a slice are drawn hollow grey ("not observed"). Hover: unit, r-hat, example sentence.
    """
    layout = layout or graph_layout(graph)
    missing = [n for n in graph.nodes if n not in layout]
    if missing:
        raise ValueError(f"network_map: layout has no position for unit(s) {missing[:5]}; recompute graph_layout.")
    nodes = list(graph.nodes)
    ex, ey = [], []
    for a, b in graph.edges:
        ex += [layout[a][0], layout[b][0], None]
        ey += [layout[a][1], layout[b][1], None]
    edge_trace = go.Scatter(x=ex, y=ey, mode="lines", line=dict(color="#bbbbbb", width=1), hoverinfo="skip",
                            name="co-membership", showlegend=False)
    cmax = float(n_neighbors) if n_neighbors else float(max(rhat["rhat"].max(), 1.0))
    by = rhat.set_index(["unit", "time"])
    traces = [edge_trace]
    for k, t in enumerate(slices):
        vals, hover, symbols = [], [], []
        for u in nodes:
            if (u, t) in by.index:
                row = by.loc[(u, t)]
                vals.append(float(row["rhat"]))
                sent = _wrap(row["example"]) if "example" in row and isinstance(row["example"], str) else ""
                hover.append(f"<b>{u}</b> · slice {t}<br>r̂ = {row['rhat']:.1f}"
                             + (f" (first: {first.get(u)})" if first is not None else "") + f"<br>{sent}")
                symbols.append("circle")
            else:
                vals.append(np.nan)
                hover.append(f"<b>{u}</b> · slice {t}<br>word not used here (not observed)")
                symbols.append("circle-open")
        traces.append(go.Scatter(
            x=[layout[u][0] for u in nodes], y=[layout[u][1] for u in nodes], mode="markers", name=f"slice {t}",
            marker=dict(size=14, color=[0 if np.isnan(v) else v for v in vals], cmin=0, cmax=cmax,
                        colorscale="Viridis", symbol=symbols, line=dict(width=1, color="#444"),
                        colorbar=dict(title="r̂")),
            text=[str(u) for u in nodes], hovertext=hover, hoverinfo="text", visible=(k == (start or 0)),
            customdata=vals, showlegend=False))
    steps = []
    for k, t in enumerate(slices):
        visible = [True] + [j == k for j in range(len(slices))]
        steps.append(dict(method="update", label=str(t), args=[{"visible": visible},
                                                               {"title.text": _title(title, word, anchor, t)}]))
    fig = go.Figure(traces)
    fig.update_layout(
        title=_title(title, word, anchor, slices[start or 0]), hovermode="closest", template="plotly_white",
        xaxis=dict(visible=False), yaxis=dict(visible=False, scaleanchor="x"), height=520,
        sliders=[dict(active=start or 0, currentvalue=dict(prefix="time slice: "), steps=steps, pad=dict(t=30))])
    return fig


def _title(title, word, anchor, t):
    base = title or (f"r̂({word!s} → {anchor!s}) over the social network" if word else "social network")
    return f"{base} · slice {t}"


def walk_flight_bars(wf: pd.DataFrame, title: str = "How the new association spread") -> go.Figure:
    """Stacked bars per slice: newly reached units with an earlier-reached neighbour (walk) vs none (flight)."""
    x = [str(t) for t in wf["time"]]
    fig = go.Figure([
        go.Bar(x=x, y=wf["walk"].tolist(), name="walk (neighbour had it)", marker_color="#2a9d8f",
               customdata=wf["walk_share"].tolist(), hovertemplate="slice %{x}: %{y} walk (share %{customdata:.2f})<extra></extra>"),
        go.Bar(x=x, y=wf["flight"].tolist(), name="flight (no neighbour had it)", marker_color="#e76f51",
               customdata=wf["flight_share"].tolist(), hovertemplate="slice %{x}: %{y} flight (share %{customdata:.2f})<extra></extra>"),
    ])
    fig.update_layout(barmode="stack", title=title, xaxis_title="time slice", yaxis_title="newly reached units",
                      template="plotly_white", legend=dict(orientation="h", y=-0.2))
    return fig


def rhat_heatmap(holds_or_rhat: pd.DataFrame, title: str = "r̂ per unit and slice") -> go.Figure:
    """Units x slices heatmap of r-hat (rhat frame with unit, time, rhat)."""
    grid = holds_or_rhat.pivot_table(index="unit", columns="time", values="rhat", aggfunc="mean")
    fig = go.Figure(go.Heatmap(z=grid.to_numpy().tolist(), x=[str(c) for c in grid.columns], y=list(grid.index),
                               colorscale="Viridis", colorbar=dict(title="r̂"),
                               hovertemplate="%{y} @ %{x}: r̂ = %{z:.1f}<extra></extra>"))
    fig.update_layout(title=title, xaxis_title="time slice", yaxis_title="unit", template="plotly_white",
                      height=max(300, 14 * len(grid)))
    return fig


def perplexity_bars(perplexity: dict, title: str = "Held-out MLM perplexity (lower is better)") -> go.Figure:
    """Bars of perplexity per model (dcwe, cwe, sa, ta[, start])."""
    names = {"dcwe": "DCWE", "cwe": "CWE (plain)", "sa": "SA (no social)", "ta": "TA (one social comp.)",
             "start": "before fine-tuning"}
    keys = [k for k in ("start", "cwe", "dcwe", "sa", "ta") if k in perplexity]
    fig = go.Figure(go.Bar(x=[names[k] for k in keys], y=[perplexity[k] for k in keys],
                           text=[f"{perplexity[k]:.2f}" for k in keys], textposition="outside",
                           marker_color=["#999999" if k == "start" else "#264653" if k == "dcwe" else "#8ab17d"
                                         for k in keys]))
    fig.update_layout(title=title, yaxis_title="perplexity", template="plotly_white")
    return fig


def variable_words_table(table: pd.DataFrame, title: str = "Most variable words (σ_sim)") -> go.Figure:
    """go.Table of ``sim_table``'s top words with contexts above / below the mean sim."""
    cols = ["word", "sigma_sim", "mean_sim", "above_context", "above_text", "below_context", "below_text"]
    missing = [c for c in cols if c not in table.columns]
    if missing:
        raise ValueError(f"variable_words_table: columns {missing} missing; pass sim_table(...)[0].")
    fmt = {"sigma_sim": "{:.4f}", "mean_sim": "{:.4f}"}
    values = [[fmt[c].format(v) if c in fmt else v for v in table[c]] for c in cols]
    fig = go.Figure(go.Table(
        header=dict(values=["word", "σ_sim", "mean sim", "context (sim > mean)", "example", "context (sim < mean)",
                            "example"], align="left", fill_color="#264653", font=dict(color="white")),
        cells=dict(values=values, align="left")))
    fig.update_layout(title=title, height=120 + 60 * len(table))
    return fig
