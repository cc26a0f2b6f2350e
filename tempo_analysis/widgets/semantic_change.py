"""What-if widgets for notebook 02 (thin ipywidgets wrappers around a fitted
:class:`~tempo_analysis.semantic_change.SemanticChangeRanker`; the logic is library code).

- :func:`scoring_whatif` -- change h (layers), n (usages per period) or the scorer and watch a word's
  score and rank move (re-scores the stored vectors: no re-embedding, instant).
- :func:`word_explorer` -- pick a word: its usage map (UMAP, coloured by period, sentence on hover)
  and its nearest words per period.
- :func:`sentence_probe` -- type a sentence with the word: where it lands on the map, and which
  period it looks like.
"""
from __future__ import annotations

import ipywidgets as W
import plotly.graph_objects as go

from ..evaluation.ranking import correlate
from ..figures import semantic_change as figs


def _fw(fig):
    """A FigureWidget when anywidget is available, else the plain figure in an Output."""
    try:
        return go.FigureWidget(fig)
    except Exception:  # noqa: BLE001 - no widget frontend: fall back to static output
        out = W.Output()
        with out:
            fig.show()
        return out


def rescore(ranker, *, layers, n, scorer, zscore=None):
    """Scores and metrics of the stored vectors under new settings (what the what-if widget shows);
    ``zscore=None``: the ranker's own setting."""
    df = ranker.rescore(scorer=scorer, layers=layers, n=n, zscore=zscore)
    truth = ranker.truth_
    return df, (correlate(df, truth) if truth is not None and "graded" in truth else {})


def scoring_whatif(ranker, *, word=None):
    """Sliders for h and n, a scorer dropdown, a word dropdown -> the score bar chart and a summary line."""
    cfg, targets = ranker.config_, ranker.targets_
    top = max(ranker.vectors_.layers)
    n_max = int(max(ranker.scores_.filter(like="n_").max()))
    w_word = W.Dropdown(options=list(targets), value=word or targets[0], description="word")
    w_h = W.IntSlider(value=cfg.layers if isinstance(cfg.layers, int) else top, min=1, max=top,
                      description="h (layers)")
    w_n = W.IntSlider(value=n_max, min=2, max=n_max, description="n (usages)")
    w_s = W.Dropdown(options=["cosine", "prt", "apd", "apd-within", "jsd"], value=cfg.scorer, description="scorer")
    w_z = W.Checkbox(value=bool(cfg.zscore), description="z-score")
    df0, _ = rescore(ranker, layers=w_h.value, n=w_n.value, scorer=w_s.value, zscore=w_z.value)
    base_rank = dict(zip(df0["word"], df0["rank"]))
    fig = _fw(figs.score_bars(df0, highlight=w_word.value))
    label = W.HTML()

    def update(*_):
        df, m = rescore(ranker, layers=w_h.value, n=w_n.value, scorer=w_s.value, zscore=w_z.value)
        row = df.set_index("word").loc[w_word.value]
        moved = base_rank[w_word.value] - row["rank"]
        label.value = (f"<b>{w_word.value}</b>: score {row['score']:.4f}, rank {row['rank']:.0f} of {len(df)} "
                       f"({'+' if moved > 0 else ''}{moved:.0f} vs. the starting settings)"
                       + (f" — Spearman {m['spearman']:.3f}" if m.get("spearman") == m.get("spearman") and m else ""))
        new = figs.score_bars(df, highlight=w_word.value)
        if isinstance(fig, go.FigureWidget):
            with fig.batch_update():
                fig.data[0].x, fig.data[0].y = new.data[0].x, new.data[0].y
                fig.data[0].marker.color = new.data[0].marker.color
                fig.layout.title.text = new.layout.title.text

    for w in (w_word, w_h, w_n, w_s, w_z):
        w.observe(update, names="value")
    update()
    return W.VBox([W.HBox([w_word, w_s, w_z]), W.HBox([w_h, w_n]), label, fig])


def _map(ranker, word, maps, method):
    """The word's usage map, computed once per word (``maps`` is a shared cache)."""
    if word not in maps:
        maps[word] = ranker.usage_map(word, method=method)
    return maps[word]


def word_explorer(ranker, *, word=None, k=10, method="umap", maps=None):
    """Word dropdown -> UMAP usage map + nearest words per period (``maps``: shared cache of maps)."""
    maps = {} if maps is None else maps
    targets = ranker.targets_
    w_word = W.Dropdown(options=list(targets), value=word or targets[0], description="word")
    out = W.Output()

    def show(*_):
        m = _map(ranker, w_word.value, maps, method)
        out.clear_output(wait=True)
        with out:
            ranker.visualize_usage_map(w_word.value, precomputed=m).show()
            ranker.visualize_neighbours(w_word.value, k=k).show()

    w_word.observe(show, names="value")
    show()
    return W.VBox([w_word, out])


def sentence_probe(ranker, *, word=None, text=None, method="umap", maps=None):
    """Type a sentence using the word -> a star on the word's map and the period it looks like."""
    maps = {} if maps is None else maps
    targets, periods, compared = ranker.targets_, ranker.periods_, ranker.compared_
    w_word = W.Dropdown(options=list(targets), value=word or targets[0], description="word")
    w_text = W.Text(value=text or "", placeholder="a sentence that uses the word", description="sentence",
                    layout=W.Layout(width="80%"))
    w_period = W.Dropdown(options=[str(p) for p in periods], value=str(compared[-1]),
                          description="run as")
    button = W.Button(description="Place it", button_style="primary")
    out = W.Output()
    def place(*_):
        out.clear_output(wait=True)
        with out:
            try:
                m = _map(ranker, w_word.value, maps, method)
                period = periods[[str(p) for p in periods].index(w_period.value)]
                where = m.place(ranker.embed_sentence(w_text.value, w_word.value, period), compared)
                print(f"looks like: {where['period']}  (cosine distance to each period's mean: "
                      + ", ".join(f"{p} {where[f'dist_{p}']:.4f}" for p in compared) + ")")
                figs.usage_map(m.coords, m.periods, m.sentences, word=w_word.value, compared=compared,
                               extra={**where, "text": w_text.value}).show()
            except ValueError as e:
                print(f"⚠ {e}")

    button.on_click(place)
    if text:
        place()
    return W.VBox([W.HBox([w_word, w_period]), w_text, button, out])
