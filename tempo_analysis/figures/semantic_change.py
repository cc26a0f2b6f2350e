"""Semantic-change figures: pure functions returning ``go.Figure`` (never shown here).

``SemanticChangeRanker.visualize_*`` (tempo_analysis.semantic_change.estimator) call these with a
fitted ranker's tables; they can as well be called on any frames of the same shape.

- :func:`rank_scatter` -- true rank vs predicted rank, word labels, Spearman in the title.
- :func:`method_comparison` -- Spearman per method, one bar group per scorer.
- :func:`ablation_bars` -- Spearman per method with its bootstrap 95% CI; time-blind methods greyed.
- :func:`usage_map` -- one word's usages on a 2-D map, coloured by period, sentence on hover, and
  optionally the user's own sentence as a star.
- :func:`score_bars` -- every word's score, the selected word highlighted (for the what-if widget).
- :func:`neighbours_table` -- nearest words per period.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from tempo_analysis.figures.tables import table_figure
from tempo_analysis.figures.text import hover_text

PERIOD_COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]


def rank_scatter(scores: pd.DataFrame, truth: pd.DataFrame, *, title: str | None = None,
                 metrics: dict | None = None) -> go.Figure:
    """Ground-truth rank (x) vs model rank (y), 1 = most changed; the diagonal is perfect agreement."""
    df = scores[["word", "score"]].merge(truth[["word", "graded"]], on="word", how="inner").dropna()
    if df.empty:
        raise ValueError("no word has both a score and a graded truth value; nothing to plot.")
    df["true_rank"] = df["graded"].rank(ascending=False)
    df["pred_rank"] = df["score"].rank(ascending=False)
    n = len(df)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[1, n], y=[1, n], mode="lines", line=dict(dash="dot", color="grey"),
                             name="perfect agreement", hoverinfo="skip"))
    fig.add_trace(go.Scatter(
        x=df["true_rank"].tolist(), y=df["pred_rank"].tolist(), mode="markers+text", text=df["word"].tolist(),
        textposition="top center",
        marker=dict(size=9, color=df["graded"].tolist(), colorscale="Viridis", showscale=True,
                    colorbar=dict(title="graded")),
        customdata=np.stack([df["graded"], df["score"]], axis=1).tolist(), name="words",
        hovertemplate="%{text}<br>true rank %{x}, model rank %{y}<br>graded %{customdata[0]:.3f}, "
                      "score %{customdata[1]:.4f}<extra></extra>"))
    rho = (metrics or {}).get("spearman")
    if rho is None:
        from scipy.stats import spearmanr
        rho = float(spearmanr(df["score"], df["graded"])[0])
    fig.update_layout(title=(title + " — " if title else "") + f"Spearman ρ = {rho:.3f} (n = {n})",
                      xaxis_title="ground-truth rank (1 = most changed)", yaxis_title="model rank",
                      template="plotly_white", height=520)
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(autorange="reversed")
    return fig


def method_comparison(table: pd.DataFrame, *, metric: str = "spearman") -> go.Figure:
    """Grouped bars: ``metric`` per method (x), one colour per scorer. ``table``: method, scorer, metric."""
    for c in ("method", "scorer", metric):
        if c not in table:
            raise ValueError(f"table needs columns method, scorer and {metric!r}; has {list(table.columns)}.")
    fig = go.Figure()
    for scorer, part in table.groupby("scorer", sort=False):
        fig.add_trace(go.Bar(x=part["method"].tolist(), y=part[metric].tolist(), name=str(scorer),
                             text=[f"{v:.2f}" for v in part[metric]], textposition="outside"))
    fig.update_layout(barmode="group", title=f"{metric.capitalize()} by method and scorer",
                      yaxis_title=metric, template="plotly_white", height=420, legend_title="scorer")
    return fig


def ablation_bars(table: pd.DataFrame, *, title: str | None = None) -> go.Figure:
    """Spearman per method (``table``: method, spearman, ci_low, ci_high, sees_time) with 95% CI whiskers;
    methods that see time in colour, time-blind ones (and baselines) in grey."""
    for c in ("method", "spearman", "ci_low", "ci_high", "sees_time"):
        if c not in table:
            raise ValueError(f"table needs columns method, spearman, ci_low, ci_high, sees_time; has {list(table.columns)}.")
    y = table["spearman"].astype(float)
    fig = go.Figure(go.Bar(
        x=table["method"].tolist(), y=y.tolist(), text=[f"{v:.2f}" for v in y], textposition="outside",
        marker_color=[PERIOD_COLOURS[1] if t else "#9e9e9e" for t in table["sees_time"]],
        error_y=dict(type="data", symmetric=False, array=(table["ci_high"] - y).tolist(),
                     arrayminus=(y - table["ci_low"]).tolist())))
    fig.update_layout(title=title or "Spearman by method (bars: 95% bootstrap CI over targets; grey: time-blind)",
                      yaxis_title="Spearman", template="plotly_white", height=420,
                      # from -0.5, or lower when an interval reaches below it, so no whisker is cut off
                      yaxis_range=[min(-0.5, float(table["ci_low"].min()) - 0.05), 1.05])
    return fig


def usage_map(coords, periods, sentences, *, word: str, compared=None, extra: dict | None = None) -> go.Figure:
    """Usages of ``word`` on a 2-D map coloured by period; hover shows the sentence.

    ``extra``: {"x", "y", "text", "period"} draws the user's own sentence as a star.
    """
    coords = np.asarray(coords)
    periods = [str(p) for p in periods]
    order = [str(p) for p in (compared or dict.fromkeys(periods))]
    fig = go.Figure()
    for i, p in enumerate(order):
        m = np.array([q == p for q in periods])
        if not m.any():
            continue
        fig.add_trace(go.Scatter(x=coords[m, 0].tolist(), y=coords[m, 1].tolist(), mode="markers", name=p,
                                 marker=dict(size=8, color=PERIOD_COLOURS[i % len(PERIOD_COLOURS)], opacity=0.75),
                                 text=[hover_text(s) for s, k in zip(sentences, m) if k],
                                 hovertemplate="%{text}<extra>" + p + "</extra>"))
    if extra is not None:
        fig.add_trace(go.Scatter(x=[extra["x"]], y=[extra["y"]], mode="markers", name="your sentence",
                                 marker=dict(symbol="star", size=18, color="black"),
                                 text=[hover_text(extra.get("text", ""))],
                                 hovertemplate="%{text}<br>looks like: " + str(extra.get("period", "?"))
                                               + "<extra>your sentence</extra>"))
    fig.update_layout(title=f"Usages of “{word}” (UMAP of contextual vectors)", template="plotly_white",
                      xaxis_title="UMAP 1", yaxis_title="UMAP 2", height=480, legend_title="period")
    return fig


def score_bars(scores: pd.DataFrame, *, highlight: str | None = None, title: str | None = None) -> go.Figure:
    """Every word's change score, most changed first; ``highlight`` marks one word."""
    df = scores.sort_values("score", ascending=False, na_position="last")
    colours = ["#d62728" if w == highlight else "#9ecae1" for w in df["word"]]
    fig = go.Figure(go.Bar(x=df["word"].tolist(), y=df["score"].tolist(), marker_color=colours,
                           hovertemplate="%{x}: %{y:.4f}<extra></extra>"))
    sub = ""
    if highlight is not None and highlight in set(df["word"]):
        r = int(np.flatnonzero(df["word"].to_numpy() == highlight)[0]) + 1
        sub = f" — “{highlight}” ranks {r} of {len(df)}"
    fig.update_layout(title=(title or "Change scores") + sub, yaxis_title="score", template="plotly_white",
                      height=360)
    return fig


def neighbours_table(neighbours: dict, *, word: str) -> go.Figure:
    """A table: one column per period with the word's nearest words there."""
    periods = list(neighbours)
    cols = [[w for w, _ in neighbours[p]] for p in periods]
    k = max((len(c) for c in cols), default=0)
    cols = [c + [""] * (k - len(c)) for c in cols]
    return table_figure([f"nearest words in “{p}”" for p in periods], cols,
                        title=f"“{word}”: nearest words per period")
