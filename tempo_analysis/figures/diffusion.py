"""Figures for social diffusion: the network map as small multiples (one panel per time slice) or
with a time slider, walk-vs-flight bars, r-hat heatmap, perplexity bars, top-variable-words table.
Pure functions -> go.Figure."""
from __future__ import annotations

import networkx as nx
import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from tempo_analysis.figures.tables import table_figure, wrap_text
from tempo_analysis.figures.text import hover_text


def graph_layout(graph: nx.Graph, seed: int = 0) -> dict:
    """Seeded spring layout {node: (x, y)} (isolated nodes included), started from the Kamada-Kawai
    layout of the largest connected part so nodes spread evenly; the same graph and seed give the same
    positions, so every panel or slider step of a map can share one."""
    if graph.number_of_nodes() == 0:
        raise ValueError("graph_layout: the graph has no nodes.")
    g = graph.to_undirected() if graph.is_directed() else graph
    init = None
    if g.number_of_nodes() > 2 and nx.is_connected(g):
        init = nx.kamada_kawai_layout(g)
    pos = nx.spring_layout(g, pos=init, seed=seed, iterations=20 if init else 50)
    return {n: (float(p[0]), float(p[1])) for n, p in pos.items()}


def _edge_lines(graph: nx.Graph, layout: dict) -> tuple[list, list]:
    """x and y of one line trace that draws every edge: its two ends, then None to lift the pen."""
    ex, ey = [], []
    for a, b in graph.edges:
        ex += [layout[a][0], layout[b][0], None]
        ey += [layout[a][1], layout[b][1], None]
    return ex, ey


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
    ex, ey = _edge_lines(graph, layout)
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
                sent = hover_text(row["example"]) if "example" in row and isinstance(row["example"], str) else ""
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


COMMUNITY_COLOURS = ("#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22")
COMMUNITY_SYMBOLS = ("circle", "square", "diamond", "triangle-up", "pentagon", "hexagon", "star", "triangle-down")


def _community_style(communities: dict, nodes: list) -> dict:
    """{community label: (outline colour, symbol)}, labels sorted (else in order of first appearance)."""
    labels = list(dict.fromkeys(communities.get(u, "?") for u in nodes))
    try:
        labels = sorted(labels)
    except TypeError:
        pass
    return {c: (COMMUNITY_COLOURS[i % len(COMMUNITY_COLOURS)], COMMUNITY_SYMBOLS[i % len(COMMUNITY_SYMBOLS)])
            for i, c in enumerate(labels)}


# what a small-multiples map can fill its nodes with, and its label ({word}, {anchor} filled in)
VALUE_LABELS = {"rhat": "r̂({word} → {anchor})", "anchor_prob": "p({anchor} | {word}, unit, slice)"}


def diffusion_small_multiples(graph: nx.Graph, rhat: pd.DataFrame, slices: list, *, layout: dict | None = None,
                              communities: dict | None = None, top_words: dict | None = None,
                              cmax: float | None = None, word: str = "", anchor: str = "",
                              first: dict | None = None, cols: int | None = None, title: str | None = None,
                              height: int | None = None, colorscale: str = "YlOrRd", value: str = "rhat",
                              cmin: float = 0.0) -> go.Figure:
    """The unit graph once per time slice, side by side, nodes filled by r-hat of `word` towards `anchor`.

    rhat: columns unit, time, rhat (``rhat_scores`` / ``prediction_rhat``); units with no row in a
    slice are drawn light grey ("not observed"). layout: {unit: (x, y)}, one for every panel, so a
    unit stays in place across slices (default ``graph_layout(graph)``). communities: {unit: label};
    each community gets its own marker outline colour and symbol, named in the legend. top_words:
    {unit: [words]} for the hover text (with the unit's name, community, slice and r-hat).
    cmax: top of the colour scale (default max(1, largest r-hat)); first: {unit: first slice
    holding the association}, marked with a thick outline in that slice and named in the hover.
    One subplot per slice, ``cols`` per row (default: one row up to 4 slices, else 3 per row).
    value: the column that fills the nodes: ``"rhat"``, or ``"anchor_prob"`` (``prediction_rhat``'s
    graded view: the model's probability of the anchor; default cmax its largest value). cmin, cmax:
    the colour range; give the same range to maps that are compared.
    """
    if not len(slices):
        raise ValueError("diffusion_small_multiples: no slices given; pass the corpus' time slices.")
    if value not in VALUE_LABELS:
        raise ValueError(f"diffusion_small_multiples: value={value!r}; use one of {sorted(VALUE_LABELS)}.")
    missing_cols = [c for c in ("unit", "time", value) if c not in rhat.columns]
    if missing_cols:
        raise ValueError(f"diffusion_small_multiples: rhat has no column(s) {missing_cols}; pass rhat_scores(...) "
                         "or prediction_rhat(...) (anchor_prob comes from prediction_rhat only).")
    layout = layout or graph_layout(graph)
    nodes = list(graph.nodes)
    missing = [n for n in nodes if n not in layout]
    if missing:
        raise ValueError(f"diffusion_small_multiples: layout has no position for unit(s) {missing[:5]}; "
                         "recompute graph_layout.")
    communities = communities or {}
    top_words = top_words or {}
    style = _community_style(communities, nodes)
    n = len(slices)
    cols = cols or (n if n <= 4 else 3)
    rows = -(-n // cols)
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=[f"slice {t}" for t in slices],
                        horizontal_spacing=0.02, vertical_spacing=0.08 if rows > 1 else 0.0)
    if cmax is None:
        cmax = float(max(rhat["rhat"].max(), 1.0)) if value == "rhat" else float(rhat[value].max())
    by = rhat.groupby(["unit", "time"])[value].mean().to_dict()
    ex, ey = _edge_lines(graph, layout)
    xs = [p[0] for p in layout.values()]
    ys = [p[1] for p in layout.values()]
    pad_x, pad_y = 0.08 * (max(xs) - min(xs) or 1.0), 0.08 * (max(ys) - min(ys) or 1.0)
    xr, yr = [min(xs) - pad_x, max(xs) + pad_x], [min(ys) - pad_y, max(ys) + pad_y]
    pair = VALUE_LABELS[value].format(word=word, anchor=anchor) if word else VALUE_LABELS[value].split("(")[0]
    for k, t in enumerate(slices):
        r, c = k // cols + 1, k % cols + 1
        fig.add_trace(go.Scatter(x=ex, y=ey, mode="lines", line=dict(color="#c8c8c8", width=0.8), hoverinfo="skip",
                                 showlegend=False, name=f"edges {t}"), row=r, col=c)
        seen, unseen = [u for u in nodes if (u, t) in by], [u for u in nodes if (u, t) not in by]
        for group, observed in ((seen, True), (unseen, False)):
            if not group:
                continue
            hover = []
            for u in group:
                lines = [f"<b>{u}</b> · community {communities.get(u, '?')} · slice {t}",
                         f"{pair} = {by[(u, t)]:.{2 if value == 'rhat' else 4}f}" if observed else "word not used here (not observed)"]
                if first is not None:
                    lines.append(f"first holds it in slice {first.get(u)}" if first.get(u) is not None
                                 else "never holds it")
                if u in top_words:
                    lines.append("top words: " + ", ".join(map(str, top_words[u])))
                hover.append("<br>".join(lines))
            ring = [u for u in group if first is not None and first.get(u) == t]
            if ring:                          # first arrival in this slice: a dark ring around the node
                fig.add_trace(go.Scatter(x=[layout[u][0] for u in ring], y=[layout[u][1] for u in ring],
                                         mode="markers", hoverinfo="skip", showlegend=False, name=f"first {t}",
                                         marker=dict(size=27, symbol="circle-open", color="#222",
                                                     line=dict(width=2))), row=r, col=c)
            marker = dict(size=16, symbol=[style[communities.get(u, "?")][1] for u in group],
                          line=dict(color=[style[communities.get(u, "?")][0] for u in group], width=2.5))
            if observed:
                marker.update(color=[by[(u, t)] for u in group], coloraxis="coloraxis")
            else:
                marker.update(color="#e6e6e6")
            fig.add_trace(go.Scatter(
                x=[layout[u][0] for u in group], y=[layout[u][1] for u in group], mode="markers", marker=marker,
                name=f"slice {t}" + ("" if observed else " (not observed)"), text=[str(u) for u in group],
                customdata=[by.get((u, t), np.nan) for u in group], hovertext=hover,
                hovertemplate="%{hovertext}<extra></extra>", showlegend=False), row=r, col=c)
    for label, (colour, symbol) in style.items():      # legend: one entry per community
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=f"community {label}",
                                 marker=dict(size=12, color="white", symbol=symbol, line=dict(color=colour, width=2.5)),
                                 hoverinfo="skip", showlegend=True))
    if first is not None and any(first.get(u) in slices for u in nodes):
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name="first holds it in this slice",
                                 marker=dict(size=14, color="#222", symbol="circle-open",
                                             line=dict(color="#222", width=2)),
                                 hoverinfo="skip", showlegend=True))
    if any((u, t) not in by for t in slices for u in nodes):
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name="word not used (not observed)",
                                 marker=dict(size=12, color="#e6e6e6", line=dict(color="#999", width=1)),
                                 hoverinfo="skip", showlegend=True))
    fig.update_xaxes(visible=False, range=xr)
    fig.update_yaxes(visible=False, range=yr)
    base = title or (f"{pair} per unit, one panel per time slice" if word else "the social network per time slice")
    fig.update_layout(
        title=dict(text=base, x=0.01), template="plotly_white", hovermode="closest",
        height=height or (110 + 340 * rows), autosize=True, margin=dict(l=10, r=10, t=70, b=50),
        coloraxis=dict(colorscale=colorscale, cmin=float(cmin), cmax=float(cmax),
                       colorbar=dict(title=dict(text=pair, side="right"), thickness=14, len=0.9, x=1.0,
                                     xanchor="left")),
        legend=dict(orientation="h", yanchor="top", y=-0.01, x=0.0, xanchor="left"))
    return fig


def _title(title, word, anchor, t):
    base = title or (f"r̂({word!s} → {anchor!s}) over the social network" if word else "social network")
    return f"{base} · slice {t}"


def walk_flight_bars(wf: pd.DataFrame, title: str = "How the new association spread") -> go.Figure:
    """Stacked bars per slice: the seeds (the first units to hold it, ``walk_flight``'s ``seeds``), then the
    newly reached units with an earlier-reached neighbour (walk) vs none (flight)."""
    x = [str(t) for t in wf["time"]]
    seeds = wf["seeds"].tolist() if "seeds" in wf else []
    fig = go.Figure(([go.Bar(x=x, y=seeds, name="seeds (first to hold it)", marker_color="#8d99ae",
                             hovertemplate="slice %{x}: %{y} seeds<extra></extra>")] if any(seeds) else []) + [
        go.Bar(x=x, y=wf["walk"].tolist(), name="walk (neighbour had it)", marker_color="#2a9d8f",
               customdata=wf["walk_share"].tolist(), hovertemplate="slice %{x}: %{y} walk (share %{customdata:.2f})<extra></extra>"),
        go.Bar(x=x, y=wf["flight"].tolist(), name="flight (no neighbour had it)", marker_color="#e76f51",
               customdata=wf["flight_share"].tolist(), hovertemplate="slice %{x}: %{y} flight (share %{customdata:.2f})<extra></extra>"),
    ])
    fig.update_layout(barmode="stack", title=title, xaxis_title="time slice", yaxis_title="newly reached units",
                      template="plotly_white", legend=dict(orientation="h", y=-0.2))
    if not any(seeds) and not wf["walk"].any() and not wf["flight"].any():   # an empty map: say so, not blank axes
        fig.add_annotation(text="no unit holds the association in any slice: nothing spread, so there is "
                                "no walk or flight to count", x=0.5, y=0.5, xref="paper", yref="paper",
                           showarrow=False, font=dict(size=14, color="#6c757d"))
        fig.update_yaxes(range=[0, 1], showticklabels=False)
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
    def cell(column, value):   # numbers to 4 decimals, the example sentences wrapped to fit a laptop's width
        if column in ("sigma_sim", "mean_sim"):
            return f"{value:.4f}"
        return wrap_text(value, 30) if column.endswith("_text") else value

    return table_figure(["word", "σ_sim", "mean sim", "context<br>(sim > mean)", "example", "context<br>(sim < mean)",
                         "example"], [[cell(c, v) for v in table[c]] for c in cols], title=title,
                        columnwidth=[1, 1, 1, 1.5, 3, 1.5, 3],
                        header_style=dict(fill_color="#264653", font=dict(color="white")))
