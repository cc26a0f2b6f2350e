"""Figures of lesson 05 (the four methods on real text). Pure functions -> go.Figure."""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from tempo_analysis.figures.diffusion import _edge_lines, graph_layout

PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b")
ROLE_COLOURS = {"expected to change": "#d62728", "stable control": "#7f7f7f"}


def abstracts_per_year(frame: pd.DataFrame, *, title: str = "ACL abstracts per year") -> go.Figure:
    """Bars of abstracts per year, split by where they come from (the published files or the XML)."""
    source = frame["source"] if "source" in frame else pd.Series("file", index=frame.index)
    counts = frame.assign(source=source).groupby(["year", "source"]).size().unstack(fill_value=0)
    fig = go.Figure()
    names = {"file": "published abstract files", "xml": "Anthology XML (2018, 2020, 2021)"}
    for i, col in enumerate(counts.columns):
        fig.add_trace(go.Bar(x=counts.index, y=counts[col], name=names.get(col, str(col)),
                             marker_color=PALETTE[i % len(PALETTE)],
                             hovertemplate="%{x}: %{y} abstracts<extra></extra>"))
    fig.update_layout(barmode="stack", title=title, xaxis_title="year (2000 holds every paper up to 2000)",
                      yaxis_title="abstracts", template="plotly_white", height=360)
    return fig


def venue_graph(venues, *, seed: int = 0, title: str = "Venue families linked by shared authors") -> go.Figure:
    """The venue network: one node per venue family (size: its abstracts), an edge where authors overlap."""
    graph = venues.graph
    layout = graph_layout(graph, seed=seed)
    sizes = venues.df["unit"].value_counts()
    ex, ey = _edge_lines(graph, layout)
    nodes = list(graph.nodes)
    fig = go.Figure([
        go.Scatter(x=ex, y=ey, mode="lines", line=dict(color="#cccccc", width=1), hoverinfo="skip", showlegend=False),
        go.Scatter(x=[layout[n][0] for n in nodes], y=[layout[n][1] for n in nodes], mode="markers+text",
                   text=nodes, textposition="top center", textfont=dict(size=9), showlegend=False,
                   marker=dict(size=[6 + 2 * sizes.get(n, 0) ** 0.5 for n in nodes], color="#1f77b4"),
                   customdata=[[sizes.get(n, 0), graph.degree(n)] for n in nodes],
                   hovertemplate="%{text}: %{customdata[0]} abstracts, %{customdata[1]} neighbours<extra></extra>")])
    fig.update_layout(title=title, template="plotly_white", height=520, xaxis=dict(visible=False),
                      yaxis=dict(visible=False))
    return fig


def change_scores(table: pd.DataFrame, methods, *, title: str = "Change score per word") -> go.Figure:
    """One panel per method: each word's change score, coloured by role (changing or stable control)."""
    fig = make_subplots(rows=1, cols=len(methods), subplot_titles=list(methods), shared_yaxes=True)
    order = table.index.tolist()[::-1]
    for c, method in enumerate(methods, start=1):
        col = table.loc[order, f"{method} score"]
        fig.add_trace(go.Bar(x=col, y=order, orientation="h", showlegend=False,
                             marker_color=[ROLE_COLOURS.get(r, "#1f77b4") for r in table.loc[order, "role"]],
                             hovertemplate="%{y}: %{x:.3f}<extra></extra>"), row=1, col=c)
    for role, colour in ROLE_COLOURS.items():    # a legend for the two colours
        fig.add_trace(go.Bar(x=[None], y=[None], name=role, marker_color=colour), row=1, col=1)
    fig.update_layout(title=title, template="plotly_white", height=80 + 24 * len(order), barmode="overlay",
                      legend=dict(orientation="h", y=-0.08))
    return fig


def layer_sweep_chart(sweep: pd.DataFrame, *, title: str = "Layer sweep: how far the changing words score "
                                                                 "above the stable controls") -> go.Figure:
    """Separation (changing words against controls, in pooled standard deviations) per layer choice,
    one line per method; the hover shows the top 3 words at that choice."""
    fig = go.Figure()
    for i, (method, part) in enumerate(sweep.groupby("method", sort=False)):
        fig.add_trace(go.Scatter(x=part["layers"], y=part["separation"], mode="lines+markers", name=method,
                                 line=dict(color=PALETTE[i % len(PALETTE)]), customdata=part[["top 3"]],
                                 hovertemplate="last %{x} layers: %{y:.2f}<br>top 3: %{customdata[0]}<extra></extra>"))
    fig.add_hline(y=0, line_dash="dot", line_color="#999999")
    fig.update_layout(title=title, template="plotly_white", height=380,
                      xaxis=dict(title="layers averaged (the last h)", dtick=1),
                      yaxis=dict(title="separation (pooled s.d.)"))
    return fig


def reach_chart(reached: dict, *, title: str) -> go.Figure:
    """Venues holding the association (r̂ > 0) by each year, one line per model."""
    fig = go.Figure()
    for i, (model, r) in enumerate(reached.items()):
        years = list(r["by_year"])
        fig.add_trace(go.Scatter(x=years, y=[r["by_year"][y] for y in years], mode="lines+markers", name=model,
                                 line=dict(color=PALETTE[i % len(PALETTE)]),
                                 hovertemplate=f"{model} %{{x}}: %{{y}} of {r['venues']} venues<extra></extra>"))
    fig.update_layout(title=title, template="plotly_white", height=360, xaxis=dict(title="year", dtick=1),
                      yaxis=dict(title="venues reached", rangemode="tozero"))
    return fig
