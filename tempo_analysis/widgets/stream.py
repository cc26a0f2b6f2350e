"""Thin ipywidgets for notebook 01 (stream classification); the logic is in tempo_analysis.stream.

- `timeline_viewer(clf, timelines)`: dropdown of timelines -> predicted change probability vs truth.
- `what_if_panel(clf, timelines)`: pick a post, edit its text, drag its gap to the previous post,
  change the window size -> the class probabilities update (`tempo_analysis.stream.time_effect.what_if`).
- `gap_sweep_panel(models, timelines)`: pick a post -> p(change) against its gap for each model
  (`tempo_analysis.stream.time_effect.gap_sweep`); drag the gap slider to move the markers.
"""

from __future__ import annotations

import math

import ipywidgets as W
import numpy as np
import plotly.graph_objects as go

from tempo_analysis.figures.stream import gap_sweep_chart, probability_plot
from tempo_analysis.stream.time_effect import change_posts, gap_sweep, gap_what_if, longest_gap, what_if


def timeline_viewer(clf, timelines, proba=None):
    """Dropdown over timelines; the figure shows P(change) per post against the true changes."""
    proba = clf.predict_proba(timelines) if proba is None else proba
    ids = timelines.timeline_ids
    pick = W.Dropdown(options=ids, value=ids[0], description="timeline")
    fig = go.FigureWidget(probability_plot(timelines, ids[0], proba, clf.label_names_))

    def show(change):
        new = probability_plot(timelines, change["new"], proba, clf.label_names_)
        with fig.batch_update():
            fig.data = []
            for tr in new.data:
                fig.add_trace(tr)
            fig.layout.title = new.layout.title

    pick.observe(show, names="value")
    return W.VBox([pick, fig])


def what_if_panel(clf, timelines, timeline_id=None, max_window: int = 20):
    """Edit one post (text, gap) or the window size and watch its predicted class probabilities."""
    ids = timelines.timeline_ids
    tl_pick = W.Dropdown(options=ids, value=timeline_id or ids[0], description="timeline")
    post_pick = W.Dropdown(description="post")
    text = W.Textarea(layout=W.Layout(width="95%", height="70px"), description="text", continuous_update=False)
    # the slider reaches the longest real gap (at least 4 days): a slider clamps its value, and a capped
    # gap would show the prediction for another gap than the post's own
    gap = W.FloatLogSlider(base=10, min=0, max=math.log10(longest_gap(timelines)), step=0.05, description="gap (s)",
                           continuous_update=False, readout_format=".0f")
    window = W.IntSlider(min=1, max=max_window, value=clf.window, description="window", continuous_update=False)
    status = W.HTML()
    fig = go.FigureWidget(go.Bar(x=list(clf.label_names_), y=[0] * len(clf.label_names_),
                                 marker_color="#4C78A8"))
    fig.update_layout(yaxis=dict(range=[0, 1], title="probability"), height=300, template="plotly_white",
                      title="predicted class probabilities of the chosen post")
    state = {"busy": False}

    def load_post(*_):
        df = timelines.timeline(tl_pick.value)
        state["busy"] = True
        post_pick.options = [(f"{i}: {t[:50]}", pid) for i, (pid, t) in enumerate(zip(df["post_id"], df["text"]))]
        post_pick.value = df["post_id"].iloc[min(3, len(df) - 1)]
        state["busy"] = False
        reset()

    def reset(*_):
        df = timelines.df
        row = df.index[df["post_id"] == post_pick.value][0]
        state["busy"] = True
        text.value = df.loc[row, "text"]
        prev = df.index[(df["timeline_id"] == df.loc[row, "timeline_id"]) & (df.index < row)]
        g = float(df.loc[row, "seconds"] - df.loc[prev[-1], "seconds"]) if len(prev) else 1.0
        gap.value, gap.disabled = max(1.0, g), not len(prev)
        state["busy"] = False
        update()

    def update(*_):
        if state["busy"] or post_pick.value is None:
            return
        p = what_if(clf, timelines, post_pick.value, text=text.value,
                    gap_seconds=None if gap.disabled else gap.value, window=window.value)
        fig.data[0].y = list(np.round(p, 4))
        truth = timelines.df.loc[timelines.df["post_id"] == post_pick.value, "label"]
        status.value = (f"true label: <b>{truth.iloc[0] if 'label' in timelines.df else '?'}</b> · "
                        f"predicted: <b>{clf.label_names_[int(np.argmax(p))]}</b>")

    tl_pick.observe(load_post, names="value")
    post_pick.observe(lambda c: None if state["busy"] else reset(), names="value")
    for w in (gap, window):
        w.observe(update, names="value")
    text.observe(update, names="value")
    button = W.Button(description="reset post")
    button.on_click(reset)
    load_post()
    return W.VBox([W.HBox([tl_pick, post_pick, button]), text, W.HBox([gap, window]), status, fig])


def gap_sweep_panel(models: dict, timelines, post_ids=None, post_id=None):
    """p(change) of one post against its gap to the previous post, one curve per model.

    models: {name: fitted classifier} (e.g. TempoFormer and its time-blind control); post_ids: the
    posts offered (default: the labelled change posts). Dragging the slider moves each model's
    marker to its prediction at that gap (computed, not interpolated).
    """
    ids = list(post_ids) if post_ids is not None else change_posts(timelines)
    if not ids:
        raise ValueError("no posts to offer: pass post_ids")
    df = timelines.df.set_index("post_id")
    pick = W.Dropdown(options=[(f"{p}: {str(df.loc[p, 'text'])[:50]}", p) for p in ids],
                      value=post_id if post_id in ids else ids[0], description="post")
    # the sweep and the slider reach the longest real gap (at least 4 days), so the post's own gap is on both
    top = longest_gap(timelines)
    gaps = np.geomspace(1.0, top, 41)
    gap = W.FloatLogSlider(base=10, min=0, max=math.log10(top), step=0.05, value=10.0,
                           description="gap (s)", continuous_update=False, readout_format=".0f")
    status = W.HTML()
    fig = go.FigureWidget()
    state = {}

    def actual_gap(pid):
        rows = timelines.df.index[timelines.df["post_id"] == pid]
        r = int(rows[0])
        same = r > 0 and timelines.df["timeline_id"].iloc[r - 1] == timelines.df["timeline_id"].iloc[r]
        return float(timelines.df["seconds"].iloc[r] - timelines.df["seconds"].iloc[r - 1]) if same else None

    def redraw(*_):
        pid = pick.value
        if state.get("post") != pid:
            state["post"] = pid
            state["sweeps"] = {name: gap_sweep(m, timelines, pid, gaps) for name, m in models.items()}
        now = {name: float(gap_what_if(m, timelines, [pid], [gap.value])[0, 0]) for name, m in models.items()}
        new = gap_sweep_chart(state["sweeps"], marker=gap.value, actual=actual_gap(pid), marker_y=now,
                              title=f"p(change) of {pid} against its gap")
        with fig.batch_update():
            fig.data = []
            for tr in new.data:
                fig.add_trace(tr)
            fig.layout = new.layout
        truth = df.loc[pid, "label"] if "label" in df else "?"
        status.value = (f"true label: <b>{truth}</b> · at a gap of {gap.value:,.0f} s: "
                        + " · ".join(f"{n} p(change) = <b>{p:.3f}</b>" for n, p in now.items()))

    pick.observe(redraw, names="value")
    gap.observe(redraw, names="value")
    redraw()
    return W.VBox([W.HBox([pick, gap]), status, fig])


__all__ = ["gap_sweep_panel", "timeline_viewer", "what_if_panel"]
