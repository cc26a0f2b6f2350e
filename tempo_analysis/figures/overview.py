"""Figures for the overview notebook (00_overview): a tour of the planted-truth world.

Pure functions that take the world's tables and return ``plotly.graph_objects.Figure``; none calls
``.show()``. Data go in as plain lists, so ``fig.to_dict()`` reads back as the numbers plotted.
Each shows one planted truth, so a reader can see what the four methods should find:

- ``timelines_figure``: posts of a few timelines over time, coloured by label (ordinary, switch,
  escalation), with the text and the time gap in the hover;
- ``gap_figure``: the time gap before each post, by label: in the world, switches follow
  silences and escalations come in bursts, so time carries signal (TempoFormer's premise);
- ``change_figure``: each word's planted graded change between the two periods;
- ``diffusion_figure``: the unit graph coloured by the slice in which each unit adopted the new
  sense, next to the adoption curve per community (walk vs flight);
- ``trends_figure``: each trend word's planted yearly rate.
"""
from __future__ import annotations

import networkx as nx
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from tempo_analysis.figures.text import duration, hover_text

LABEL_NAMES = {"O": "ordinary", "IS": "switch (IS)", "IE": "escalation (IE)"}
LABEL_COLORS = {"O": "#9aa5b1", "IS": "#d62728", "IE": "#ff7f0e"}
KIND_COLORS = {"gain": "#1f77b4", "loss": "#d62728", "stable": "#9aa5b1"}
TREND_COLORS = {"rise": "#2ca02c", "fall": "#d62728", "flat": "#7f7f7f", "burst": "#9467bd"}
NEVER_COLOR = "#d9d9d9"


def _require(df: pd.DataFrame, columns: tuple, who: str) -> None:
    """A clear error naming the missing columns and where they come from."""
    if not isinstance(df, pd.DataFrame):
        raise ValueError(f"{who}: expected a pandas DataFrame, got {type(df).__name__}")
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(
            f"{who}: missing column(s) {missing}; pass the world's table with columns {list(columns)}"
        )


def post_gaps(df: pd.DataFrame) -> pd.Series:
    """Seconds since the previous post of the same timeline (NaN for each first post)."""
    _require(df, ("timeline_id", "timestamp"), "post_gaps")
    ordered = df.sort_values(["timeline_id", "timestamp"], kind="stable")
    gaps = ordered.groupby("timeline_id", sort=False)["timestamp"].diff().dt.total_seconds()
    return gaps.reindex(df.index)


# -----------------------------------------------------------------------------
# 1. timelines (stream classification)


def timelines_figure(df: pd.DataFrame, max_timelines: int = 12, timeline_ids=None) -> go.Figure:
    """Posts of the first `max_timelines` timelines (or `timeline_ids`) over days since each starts.

    One row per timeline; markers coloured by label; hover shows the text, label and time gap.
    """
    _require(df, ("timeline_id", "post_id", "timestamp", "text", "label"), "timelines_figure")
    if timeline_ids is None:
        if max_timelines < 1:
            raise ValueError(f"timelines_figure: max_timelines={max_timelines}; give at least 1")
        timeline_ids = list(pd.unique(df["timeline_id"]))[:max_timelines]
    unknown = set(timeline_ids) - set(df["timeline_id"])
    if unknown:
        raise ValueError(f"timelines_figure: unknown timeline_ids {sorted(unknown)}")
    part = df[df["timeline_id"].isin(timeline_ids)].sort_values(["timeline_id", "timestamp"]).copy()
    part["gap_s"] = post_gaps(part)
    start = part.groupby("timeline_id")["timestamp"].transform("min")
    part["day"] = (part["timestamp"] - start).dt.total_seconds() / 86400

    fig = go.Figure()
    # a thin line per timeline, so posts read as a sequence
    xs, ys = [], []
    for tid, posts in part.groupby("timeline_id", sort=False):
        xs += posts["day"].tolist() + [None]
        ys += [tid] * len(posts) + [None]
    fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", line=dict(color="#e0e0e0", width=1),
                             hoverinfo="skip", showlegend=False))  # fmt: skip
    for label in [lab for lab in LABEL_NAMES if lab in set(part["label"])] + sorted(
        set(part["label"].dropna()) - set(LABEL_NAMES)
    ):
        posts = part[part["label"] == label]
        hover = [
            f"<b>{tid} · {pid}</b><br>{ts:%Y-%m-%d %H:%M} UTC · gap {duration(gap) or 'first post'}<br>"
            f"label: {LABEL_NAMES.get(label, label)}<br><br>{hover_text(text, max_chars=240)}"
            for tid, pid, ts, gap, text in zip(
                posts["timeline_id"], posts["post_id"], posts["timestamp"], posts["gap_s"], posts["text"]
            )
        ]
        fig.add_trace(go.Scatter(
            x=posts["day"].tolist(), y=posts["timeline_id"].tolist(), mode="markers", name=LABEL_NAMES.get(label, label),
            marker=dict(color=LABEL_COLORS.get(label, "#17becf"), size=9 if label != "O" else 7,
                        line=dict(width=0.5, color="white")),
            hovertext=hover, hoverinfo="text",
        ))  # fmt: skip
    fig.update_layout(
        title="Timelines: posts over time, planted switches and escalations",
        xaxis_title="days since the timeline's first post",
        yaxis=dict(title="timeline", categoryorder="array", categoryarray=list(timeline_ids)[::-1]),
        legend=dict(orientation="h", y=1.02, x=1, xanchor="right", yanchor="bottom"),
        height=max(320, 26 * len(timeline_ids) + 140), template="plotly_white",
        margin=dict(l=70, r=20, t=80, b=50),
    )  # fmt: skip
    return fig


def gap_figure(df: pd.DataFrame, title: str | None = None) -> go.Figure:
    """Box plots of the time gap before each post (log scale), one box per label."""
    _require(df, ("timeline_id", "timestamp", "label"), "gap_figure")
    gaps = post_gaps(df)
    frame = pd.DataFrame({"label": df["label"], "gap_h": gaps / 3600}).dropna()
    frame = frame[frame["gap_h"] > 0]
    if frame.empty:
        raise ValueError("gap_figure: no timeline has two posts at different times; nothing to plot")
    fig = go.Figure()
    for label in [lab for lab in LABEL_NAMES if lab in set(frame["label"])]:
        values = frame.loc[frame["label"] == label, "gap_h"]
        fig.add_trace(go.Box(
            y=values.tolist(), name=f"{LABEL_NAMES[label]}<br>n={len(values)}", marker_color=LABEL_COLORS[label],
            boxpoints="outliers", hovertemplate="%{y:.2f} h<extra>" + LABEL_NAMES[label] + "</extra>",
        ))  # fmt: skip
    fig.update_layout(
        title=title or "Time gap before a post, by its label",
        yaxis=dict(title="hours since the previous post (log)", type="log", dtick=1),
        showlegend=False, template="plotly_white", height=380, margin=dict(l=70, r=20, t=60, b=60),
    )  # fmt: skip
    return fig


# -----------------------------------------------------------------------------
# 2. two-period corpus (semantic change)


def change_figure(change_truth: pd.DataFrame, threshold: float | None = None) -> go.Figure:
    """Horizontal bars: each word's planted graded change, coloured by kind (gain, loss, stable)."""
    _require(change_truth, ("word", "graded", "kind"), "change_figure")
    truth = change_truth.sort_values(["graded", "word"], ascending=[True, False])
    fig = go.Figure()
    for kind in [k for k in KIND_COLORS if k in set(truth["kind"])] + sorted(set(truth["kind"]) - set(KIND_COLORS)):
        part = truth[truth["kind"] == kind]
        hover = []
        for _, row in part.iterrows():
            line = f"<b>{row['word']}</b> ({kind})<br>graded change {row['graded']:.2f}"
            if {"senses", "share_old", "share_new", "changing_sense"} <= set(row.index):
                line += (f"<br>senses: {row['senses']}<br>share of '{row['changing_sense']}': "
                         f"{row['share_old']:.2f} → {row['share_new']:.2f}")  # fmt: skip
            hover.append(line)
        fig.add_trace(go.Bar(
            x=part["graded"].tolist(), y=part["word"].tolist(), orientation="h", name=kind,
            marker_color=KIND_COLORS.get(kind, "#17becf"), hovertext=hover, hoverinfo="text",
        ))  # fmt: skip
    if threshold is not None:
        fig.add_vline(x=threshold, line=dict(dash="dash", color="#444"),
                      annotation_text=f"binary threshold {threshold:g}", annotation_position="top")  # fmt: skip
    fig.update_layout(
        title="Two periods: how much each word's sense distribution moved (planted)",
        xaxis=dict(title="graded change (share of usages that moved sense)", range=[0, 1.0]),
        yaxis=dict(title="", categoryorder="array", categoryarray=truth["word"].tolist()),
        barmode="overlay", template="plotly_white", height=max(320, 22 * len(truth) + 120),
        legend=dict(orientation="h", y=1.02, x=1, xanchor="right", yanchor="bottom"),
        margin=dict(l=80, r=20, t=80, b=50),
    )  # fmt: skip
    return fig


# -----------------------------------------------------------------------------
# 3. social graph (diffusion)


def diffusion_figure(
    graph: nx.Graph,
    first_slice: dict,
    community: dict,
    n_slices: int,
    *,
    title: str | None = None,
    layout_seed: int = 0,
) -> go.Figure:
    """Left: the unit graph, nodes coloured by adoption slice (grey: never). Right: the share of
    each community's units that adopted the new sense by each slice."""
    units = list(graph.nodes)
    missing = [u for u in units if u not in first_slice or u not in community]
    if missing:
        raise ValueError(
            f"diffusion_figure: units {missing[:5]} have no first_slice/community entry; pass "
            "world.diffusion_truth['first_slice'] and ['community'] for the same graph"
        )
    if n_slices < 1:
        raise ValueError(f"diffusion_figure: n_slices={n_slices}; give at least 1")
    pos = nx.spring_layout(graph, seed=layout_seed)
    fig = make_subplots(rows=1, cols=2, column_widths=[0.6, 0.4], horizontal_spacing=0.08,
                        subplot_titles=("who adopted the new sense, and when", "adoption by community"))  # fmt: skip
    ex, ey = [], []
    for a, b in graph.edges:
        ex += [pos[a][0], pos[b][0], None]
        ey += [pos[a][1], pos[b][1], None]
    fig.add_trace(go.Scatter(x=ex, y=ey, mode="lines", line=dict(color="#cccccc", width=1),
                             hoverinfo="skip", showlegend=False), row=1, col=1)  # fmt: skip
    symbols = ["circle", "square", "diamond", "triangle-up", "cross", "star", "hexagon", "x"]
    adopted = [u for u in units if first_slice[u] is not None]
    never = [u for u in units if first_slice[u] is None]
    if never:
        fig.add_trace(go.Scatter(
            x=[pos[u][0] for u in never], y=[pos[u][1] for u in never], mode="markers", name="never adopted",
            marker=dict(color=NEVER_COLOR, size=11, symbol=[symbols[community[u] % len(symbols)] for u in never],
                        line=dict(width=1, color="#888")),
            hovertext=[f"<b>{u}</b><br>community {community[u]}<br>never adopted" for u in never],
            hoverinfo="text",
        ), row=1, col=1)  # fmt: skip
    if adopted:
        fig.add_trace(go.Scatter(
            x=[pos[u][0] for u in adopted], y=[pos[u][1] for u in adopted], mode="markers", name="adopted",
            marker=dict(color=[first_slice[u] for u in adopted], cmin=0, cmax=max(n_slices - 1, 1),
                        colorscale="Viridis", size=13, showscale=True,
                        colorbar=dict(title="slice", x=0.53, len=0.8, thickness=12),
                        symbol=[symbols[community[u] % len(symbols)] for u in adopted],
                        line=dict(width=1, color="white")),
            hovertext=[f"<b>{u}</b><br>community {community[u]}<br>adopted in slice {first_slice[u]}"
                       for u in adopted],
            hoverinfo="text",
        ), row=1, col=1)  # fmt: skip
    # adoption curves: cumulative share of each community's units
    slices = list(range(n_slices))
    for c in sorted(set(community.values())):
        members = [u for u in units if community[u] == c]
        share = [sum(first_slice[u] is not None and first_slice[u] <= s for u in members) / len(members)
                 for s in slices]  # fmt: skip
        fig.add_trace(go.Scatter(x=slices, y=share, mode="lines+markers", name=f"community {c}",
                                 hovertemplate="slice %{x}: %{y:.0%} adopted<extra>community " + str(c) + "</extra>"),
                      row=1, col=2)  # fmt: skip
    fig.update_xaxes(visible=False, row=1, col=1)
    fig.update_yaxes(visible=False, row=1, col=1)
    fig.update_xaxes(title_text="time slice", dtick=1, row=1, col=2)
    fig.update_yaxes(title_text="share of units adopted", range=[0, 1.05], tickformat=".0%", row=1, col=2)
    fig.update_layout(title=title or "Social graph: a new sense spreads", template="plotly_white",
                      height=460, margin=dict(l=20, r=20, t=90, b=50),
                      legend=dict(orientation="h", y=-0.15))  # fmt: skip
    return fig


# -----------------------------------------------------------------------------
# 4. yearly documents (future text)


def trends_figure(trend_truth: pd.DataFrame, words=None, value: str = "rate") -> go.Figure:
    """One line per trend word: its planted yearly `value` (rate or doc_share), coloured by trend."""
    _require(trend_truth, ("word", "year", "trend", value), "trends_figure")
    words = list(pd.unique(trend_truth["word"])) if words is None else list(words)
    unknown = set(words) - set(trend_truth["word"])
    if unknown:
        raise ValueError(f"trends_figure: unknown words {sorted(unknown)}; choose from {sorted(set(trend_truth['word']))}")
    fig = go.Figure()
    seen = set()
    for word in words:
        part = trend_truth[trend_truth["word"] == word].sort_values("year")
        trend = part["trend"].iloc[0]
        fig.add_trace(go.Scatter(
            x=part["year"].tolist(), y=part[value].tolist(), mode="lines+markers", name=word, legendgroup=trend,
            legendgrouptitle_text=trend if trend not in seen else None,
            line=dict(color=TREND_COLORS.get(trend, "#17becf")),
            hovertemplate=f"<b>{word}</b> ({trend})<br>%{{x}}: %{{y:.3f}}<extra></extra>",
        ))  # fmt: skip
        seen.add(trend)
    fig.update_layout(
        title="Yearly documents: planted trends of terms",
        xaxis=dict(title="year", dtick=1), yaxis_title="share of documents using the word" if value != "rate"
        else "planted rate (share of documents)",
        template="plotly_white", height=420, margin=dict(l=70, r=20, t=60, b=50),
    )  # fmt: skip
    return fig
