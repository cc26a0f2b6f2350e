"""Figures for future-text generation (notebook 04). Pure functions -> ``go.Figure``; never ``.show()``."""

from __future__ import annotations

import html
import re
from typing import Sequence

import pandas as pd
import plotly.graph_objects as go

from tempo_analysis.figures.tables import table_figure, wrap_text

PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf", "#7f7f7f"]


def frequency_trends(trends: pd.DataFrame, title: str = "Word frequency by year: actual and next-year forecast") -> go.Figure:
    """Lines of each word's actual relative frequency; markers for each model's forecast.

    ``trends``: columns word, year, series ("actual" or "forecast: <model>"), value
    (``whatif.trend_frame``).
    """
    need = {"word", "year", "series", "value"}
    if not need <= set(trends.columns):
        raise ValueError(f"trends needs columns {sorted(need)}, got {list(trends.columns)}")
    fig = go.Figure()
    symbols = ["diamond", "x", "star", "triangle-up", "square"]
    forecasts = sorted(s for s in trends["series"].unique() if s != "actual")
    for i, (word, g) in enumerate(trends.groupby("word", sort=False)):
        color = PALETTE[i % len(PALETTE)]
        a = g[g["series"] == "actual"].sort_values("year")
        fig.add_trace(go.Scatter(x=a["year"].tolist(), y=a["value"].tolist(), mode="lines+markers", name=f"{word} (actual)",
                                 line=dict(color=color), legendgroup=word))
        for j, s in enumerate(forecasts):
            f = g[g["series"] == s]
            fig.add_trace(go.Scatter(x=f["year"].tolist(), y=f["value"].tolist(), mode="markers", name=f"{word} ({s})",
                                     marker=dict(color=color, size=12, symbol=symbols[j % len(symbols)],
                                                 line=dict(width=1, color="black")), legendgroup=word))
    fig.update_layout(title=title, xaxis_title="year", yaxis_title="relative token frequency",
                      template="plotly_white", legend=dict(font=dict(size=10)))
    return fig


def variants_table(results: pd.DataFrame, title: str = "Variants: perplexity and content perplexity") -> go.Figure:
    """A table of ``FutureTextModel.score`` results (numbers rounded to 3 decimals)."""
    df = results.copy()
    for c in df.columns:
        if pd.api.types.is_float_dtype(df[c]):
            df[c] = df[c].round(3)
    return table_figure([f"<b>{c}</b>" for c in df.columns], [df[c].tolist() for c in df.columns], title=title)


def metric_bars(results: pd.DataFrame, metric: str = "test_content_ppl", reference: str = "baseline") -> go.Figure:
    """Bars of one metric per model; a dashed line at the reference model's value. The title says which
    way is better: lower for perplexity and loss, higher for METEOR, neither for the copy rate."""
    if metric not in results.columns:
        raise ValueError(f"metric={metric!r} is not a column; choose one of {list(results.columns)}")
    fig = go.Figure(go.Bar(x=results["model"].tolist(), y=results[metric].tolist(), marker_color=[
        PALETTE[1] if m == reference else PALETTE[0] for m in results["model"]]))
    ref = results.loc[results["model"] == reference, metric]
    if len(ref):
        fig.add_hline(y=float(ref.iloc[0]), line_dash="dash", annotation_text=reference)
    better = ("lower is better" if ("ppl" in metric or "loss" in metric)
              else "higher is better" if "meteor" in metric else "")
    fig.update_layout(title=f"{metric} by model" + (f" ({better})" if better else ""), yaxis_title=metric,
                      template="plotly_white")
    return fig


def highlight(text: str, words: Sequence[str], color: str = "#d62728") -> str:
    """HTML-escaped ``text`` with whole-word, case-insensitive matches of ``words`` in bold colour."""
    out = html.escape(text)
    if words:
        pat = re.compile(r"\b(" + "|".join(re.escape(html.escape(w)) for w in words) + r")\b", re.IGNORECASE)
        out = pat.sub(lambda m: f"<b><span style='color:{color}'>{m.group(1)}</span></b>", out)
    return out


def side_by_side(left: Sequence[str], right: Sequence[str], words: Sequence[str] = (),
                 titles: tuple[str, str] = ("baseline", "temporal bias"), title: str | None = None) -> go.Figure:
    """Generated texts in two columns with trending ``words`` highlighted (and counted)."""
    n = max(len(left), len(right))
    pad = lambda xs: list(xs) + [""] * (n - len(xs))  # noqa: E731
    L, R = pad(left), pad(right)

    def count(texts):
        return sum(len(re.findall(r"\b(" + "|".join(map(re.escape, words)) + r")\b", t, re.I)) for t in texts) if words else 0

    head = [f"<b>{titles[0]}</b> ({count(L)} trending words)", f"<b>{titles[1]}</b> ({count(R)} trending words)"]
    def cell(t):  # wrap the plain text at ~70 characters, then highlight line by line
        return "<br>".join(highlight(line, words) for line in wrap_text(t, 70).split("<br>")) if t else ""

    return table_figure(head, [[cell(t) for t in L], [cell(t) for t in R]], columnwidth=[1, 1],
                        title=title or "Generated texts (trending words highlighted)")


def bias_change(tokens: Sequence[str], before: Sequence[float], after: Sequence[float],
                title: str = "Forecast bias before and after the injected trend") -> go.Figure:
    """Grouped bars of the forecast bias for some tokens, before and after a what-if edit."""
    if not len(tokens) == len(before) == len(after):
        raise ValueError(f"tokens, before, after need equal lengths, got {len(tokens)}, {len(before)}, {len(after)}")
    fig = go.Figure([go.Bar(name="before", x=list(tokens), y=[float(v) for v in before], marker_color=PALETTE[7]),
                     go.Bar(name="after", x=list(tokens), y=[float(v) for v in after], marker_color=PALETTE[1])])
    fig.update_layout(barmode="group", title=title, yaxis_title="bias added to the logit", template="plotly_white")
    return fig
