"""Figures for stream classification. Pure functions returning plotly `go.Figure` (never shown).

- `timeline_plot`: posts over time, one row per timeline, coloured by label, changes marked.
- `probability_plot`: one timeline's predicted change probability over time against the truth.
- `comparison_chart`: per-class and macro F1 (mean ± std) of several models.
- `results_table`: a table figure (e.g. the ablation table) of per-class and macro F1.
- `confusion_heatmap`: a confusion matrix.
- `attention_heatmap`: temporal rotary attention of one window (query post x key post).
- `window_chart`: macro-F1 against the window size.
- `gap_sweep_chart`: p(change) of one post against its gap to the previous post, per model.
- `time_control_chart`: TempoFormer next to its time-blind control (macro-F1, recall per change kind).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from tempo_analysis.figures.tables import table_figure
from tempo_analysis.figures.text import duration, hover_text

PALETTE = ["#4C78A8", "#F58518", "#E45756", "#72B7B2", "#54A24B", "#EECA3B", "#B279A2", "#FF9DA6"]
NO_CHANGE = ("O", "no_switch", "N-Sw")


def _colors(label_names) -> dict:
    return {n: ("#B0B0B0" if n in NO_CHANGE else PALETTE[(i + 1) % len(PALETTE)])
            for i, n in enumerate(label_names)}


def timeline_plot(timelines, timeline_ids=None, max_timelines: int = 12, title: str | None = None) -> go.Figure:
    """Posts over time (x) per timeline (y); colour = label; change labels drawn larger."""
    ids = list(timeline_ids) if timeline_ids is not None else timelines.timeline_ids[:max_timelines]
    df = timelines.df[timelines.df["timeline_id"].isin(ids)]
    names = timelines.label_names or ["(unlabelled)"]
    colors = _colors(names)
    labels = df["label"].fillna("(unlabelled)") if "label" in df else ["(unlabelled)"] * len(df)
    df = df.assign(_label=list(labels))
    fig = go.Figure()
    for name in names + (["(unlabelled)"] if "(unlabelled)" not in names else []):
        part = df[df["_label"] == name]
        if part.empty:
            continue
        change = name not in NO_CHANGE and name != "(unlabelled)"
        fig.add_trace(go.Scatter(
            x=part["timestamp"], y=part["timeline_id"], mode="markers", name=str(name),
            marker=dict(size=13 if change else 8, color=colors.get(name, "#777"),
                        symbol="diamond" if change else "circle", line=dict(width=1, color="white")),
            text=[hover_text(t) for t in part["text"]], customdata=part["post_id"],
            hovertemplate="%{customdata} @ %{x}<br>%{text}<extra>" + str(name) + "</extra>"))
    fig.update_layout(title=title or f"{len(ids)} timelines: posts over time (◆ = change)",
                      xaxis_title="time", yaxis_title="timeline", template="plotly_white",
                      height=max(300, 28 * len(ids) + 120), legend_title="label")
    fig.update_yaxes(categoryorder="array", categoryarray=list(reversed(ids)))
    return fig


def probability_plot(timelines, timeline_id, proba: np.ndarray, label_names, title: str | None = None) -> go.Figure:
    """Predicted probability of each change class over one timeline's posts, with true changes marked.

    proba: [len(timelines.df), C] from a classifier's predict_proba on the same timelines.
    """
    df = timelines.timeline(timeline_id)
    p = np.asarray(proba)[df.index.to_numpy()]
    colors = _colors(label_names)
    fig = go.Figure()
    x = df["timestamp"]
    if pd.api.types.is_datetime64_any_dtype(x):
        # date strings, not datetime64: a FigureWidget redraw sends datetime64[ns] as integers (ns since
        # 1970); plotly.js reads "YYYY-MM-DD HH:MM:SS" (no offset: a zone's own clock time is shown)
        x = (x.dt.tz_localize(None) if x.dt.tz is not None else x).dt.strftime("%Y-%m-%d %H:%M:%S")
    for c, name in enumerate(label_names):
        if name in NO_CHANGE:
            continue
        fig.add_trace(go.Scatter(x=x, y=p[:, c], mode="lines+markers", name=f"P({name})",
                                 line=dict(color=colors[name]), text=[hover_text(t) for t in df["text"]],
                                 hovertemplate="%{x}<br>P=%{y:.2f}<br>%{text}<extra></extra>"))
        if "label" in df:
            hit = df["label"] == name
            fig.add_trace(go.Scatter(x=x[hit], y=np.ones(int(hit.sum())) * 1.05, mode="markers",
                                     name=f"true {name}", marker=dict(symbol="triangle-down", size=12,
                                                                      color=colors[name])))
    fig.update_layout(title=title or f"timeline {timeline_id}: predicted change probability vs truth",
                      xaxis_title="time", yaxis=dict(title="probability", range=[-0.02, 1.12]),
                      template="plotly_white", height=380)
    if pd.api.types.is_datetime64_any_dtype(df["timestamp"]):
        fig.update_xaxes(type="date")
    return fig


def _summary(res: dict) -> dict:
    return res["summary"] if "summary" in res else res


def comparison_chart(results: dict, label_names, title: str = "F1 by model (mean ± std)") -> go.Figure:
    """Grouped bars: one group per class plus macro-F1, one bar per model; error bars = std."""
    cats = list(label_names) + ["macro-F1"]
    fig = go.Figure()
    for i, (model, res) in enumerate(results.items()):
        s = _summary(res)
        means = [s["f1"][n]["mean"] for n in label_names] + [s["macro_f1"]["mean"]]
        stds = [s["f1"][n]["std"] for n in label_names] + [s["macro_f1"]["std"]]
        fig.add_trace(go.Bar(name=model, x=cats, y=means, marker_color=PALETTE[i % len(PALETTE)],
                             error_y=dict(type="data", array=stds, visible=True),
                             hovertemplate=model + " %{x}: %{y:.3f}<extra></extra>"))
    fig.update_layout(barmode="group", title=title, yaxis=dict(title="F1", range=[0, 1]),
                      template="plotly_white", height=400)
    return fig


def results_table(results: dict, label_names, title: str = "F1 (%)", reference: str | None = None) -> go.Figure:
    """Table figure: rows = models/ablations, columns = per-class F1, macro-F1 ± std, Δ vs reference."""
    rows = []
    ref = _summary(results[reference])["macro_f1"]["mean"] if reference in results else None
    for model, res in results.items():
        s = _summary(res)
        m = s["macro_f1"]
        cells = [model] + [f"{100 * s['f1'][n]['mean']:.1f}" if s['f1'][n]['mean'] is not None else "–"
                           for n in label_names]
        cells.append(f"{100 * m['mean']:.1f} ± {100 * m['std']:.1f}")
        if ref is not None:
            cells.append("" if model == reference else f"{100 * (m['mean'] - ref):+.1f}")
        rows.append(cells)
    header = ["model"] + list(label_names) + ["macro-F1"] + (["Δ macro"] if ref is not None else [])
    columns = [[r[i] for r in rows] for i in range(len(header))]
    return table_figure(header, columns, title=title, header_style=dict(fill_color="#E8EEF6"))


def confusion_heatmap(confusion, label_names, title: str = "confusion matrix (rows = truth)") -> go.Figure:
    """Counts heatmap; rows are true labels, columns predictions."""
    z = np.asarray(confusion)
    fig = go.Figure(go.Heatmap(z=z, x=list(label_names), y=list(label_names), colorscale="Blues",
                               text=z, texttemplate="%{text}", hovertemplate="true %{y} → pred %{x}: %{z}<extra></extra>"))
    fig.update_layout(title=title, xaxis_title="predicted", yaxis_title="true", template="plotly_white",
                      yaxis=dict(autorange="reversed"), height=360, width=420)
    return fig


def attention_heatmap(att: dict, layer: int = -1, head: int | None = None, texts=None,
                      title: str | None = None) -> go.Figure:
    """Temporal rotary attention of one window (from `TempoFormerClassifier.temporal_attention`).

    Rows are query posts, columns key posts, labelled by their gap to the current post.
    layer counts from 0 (negative: from the last); head=None averages the heads.
    """
    layers = np.asarray(att["attention"])           # [upper layers, heads, query posts, key posts]
    if not -len(layers) <= layer < len(layers):
        raise ValueError(f"attention_heatmap: layer={layer}, but the model has {len(layers)} upper layer(s); "
                         f"give 0 to {len(layers) - 1}, or -1 for the last")
    if head is not None and not 0 <= head < layers.shape[1]:
        raise ValueError(f"attention_heatmap: head={head}, but each layer has {layers.shape[1]} head(s); "
                         f"give 0 to {layers.shape[1] - 1}, or None for their mean")
    a = layers[layer].mean(0) if head is None else layers[layer][head]
    ticks = [f"{i}: {'−' + duration(g) if g else 'now'}" for i, g in enumerate(att["gaps"])]
    hover = None
    if texts is not None:
        hover = [[hover_text(texts[j], 50) for j in range(len(ticks))] for _ in range(len(ticks))]
    fig = go.Figure(go.Heatmap(z=a, x=ticks, y=ticks, colorscale="Viridis", zmin=0, zmax=float(a.max()),
                               text=hover, hovertemplate="query %{y}<br>key %{x}<br>weight %{z:.3f}"
                               + ("<br>%{text}" if hover else "") + "<extra></extra>"))
    which = "mean over heads" if head is None else f"head {head}"
    fig.update_layout(title=title or f"temporal rotary attention (upper layer {layer % len(layers) + 1} of {len(layers)}, {which})",
                      xaxis_title="key post (gap to current post)", yaxis_title="query post",
                      yaxis=dict(autorange="reversed"), template="plotly_white", height=420)
    return fig


def window_chart(by_window: dict, label_names=None, title: str = "window analysis") -> go.Figure:
    """Macro-F1 (± std) and per-class F1 against the window size; by_window = {w: cv result}."""
    ws = sorted(by_window, key=int)
    fig = go.Figure()
    s = [_summary(by_window[w]) for w in ws]
    fig.add_trace(go.Scatter(x=[int(w) for w in ws], y=[x["macro_f1"]["mean"] for x in s], name="macro-F1",
                             mode="lines+markers", error_y=dict(type="data", array=[x["macro_f1"]["std"] for x in s])))
    for i, n in enumerate(label_names or []):
        fig.add_trace(go.Scatter(x=[int(w) for w in ws], y=[x["f1"][n]["mean"] for x in s], name=f"F1 {n}",
                                 mode="lines+markers", line=dict(dash="dot", color=PALETTE[(i + 1) % len(PALETTE)])))
    fig.update_layout(title=title, xaxis_title="window size w", yaxis=dict(title="F1", range=[0, 1]),
                      template="plotly_white", height=360)
    return fig


def _gap_ticks():
    vals = [1, 10, 60, 600, 3600, 6 * 3600, 86400, 4 * 86400]
    return vals, ["1 s", "10 s", "1 min", "10 min", "1 h", "6 h", "1 day", "4 days"]


def gap_sweep_chart(sweeps: dict, *, marker: float | None = None, actual: float | None = None,
                    marker_y: dict | None = None,
                    title: str = "p(change) against the gap to the previous post") -> go.Figure:
    """One line per model: p(change) of one post (y) as its gap to the previous post moves (x, log).

    sweeps: {model name: DataFrame with columns gap_s, p_change} (`time_effect.gap_sweep`);
    marker: a gap to mark (e.g. a slider's value), drawn at ``marker_y[name]`` (the model's computed
    prediction there) where given, else interpolated along the sweep; actual: the post's real gap.
    """
    fig = go.Figure()
    for i, (name, df) in enumerate(sweeps.items()):
        fig.add_trace(go.Scatter(x=df["gap_s"], y=df["p_change"], name=str(name), mode="lines",
                                 line=dict(color=PALETTE[i % len(PALETTE)], width=3, dash="solid" if i == 0 else "dash"),
                                 hovertemplate=str(name) + ": gap %{x:.0f} s → p(change) %{y:.3f}<extra></extra>"))
        if marker is not None:
            y = (float(marker_y[name]) if marker_y is not None and name in marker_y else
                 float(np.interp(np.log(max(marker, 1e-9)), np.log(np.maximum(df["gap_s"], 1e-9)), df["p_change"])))
            fig.add_trace(go.Scatter(x=[marker], y=[y], mode="markers", showlegend=False,
                                     marker=dict(size=13, color=PALETTE[i % len(PALETTE)], line=dict(width=2, color="white")),
                                     hovertemplate=str(name) + ": %{y:.3f}<extra></extra>"))
    if actual is not None:
        fig.add_vline(x=actual, line=dict(color="#777", dash="dot"), annotation_text="as posted")
    vals, text = _gap_ticks()
    fig.update_layout(title=title, template="plotly_white", height=380, legend_title="model",
                      xaxis=dict(type="log", title="gap to the previous post", tickvals=vals, ticktext=text),
                      yaxis=dict(title="p(change)", range=[0, 1.02]))
    return fig


def time_control_chart(rows: dict, title: str = "TempoFormer vs its time-blind control") -> go.Figure:
    """Grouped bars: macro-F1 and recall on each change kind, one bar per model.

    rows: {model name: {"macro_f1": x, "recall_by_kind": {kind: {"recall": r, "n": n}}}} (as
    `time_effect.score_model` returns); a "chance" entry {"time": r} draws a reference line.
    """
    fig = go.Figure()
    kinds = sorted({k for r in rows.values() for k in r.get("recall_by_kind", {})})
    cats = ["macro-F1"] + [f"recall: {k} switches" if k == "time" else f"recall: {k} changes" for k in kinds]
    for i, (name, r) in enumerate(rows.items()):
        ys = [r["macro_f1"]] + [r.get("recall_by_kind", {}).get(k, {}).get("recall", float("nan")) for k in kinds]
        fig.add_trace(go.Bar(name=str(name), x=cats, y=ys, marker_color=PALETTE[i % len(PALETTE)],
                             text=[f"{y:.2f}" for y in ys], textposition="outside",
                             hovertemplate=str(name) + " %{x}: %{y:.3f}<extra></extra>"))
    fig.update_layout(barmode="group", title=title, yaxis=dict(title="score", range=[0, 1.1]),
                      template="plotly_white", height=400)
    return fig


__all__ = ["attention_heatmap", "comparison_chart", "confusion_heatmap", "gap_sweep_chart", "probability_plot",
           "results_table", "time_control_chart", "timeline_plot", "window_chart"]
