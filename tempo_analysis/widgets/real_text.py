"""What-if widgets for notebook 05 (thin ipywidgets wrappers; the logic is :mod:`tempo_analysis.real_text`).

- :func:`usage_viewer` -- pick a word: a few of its usages from each period, the evidence for its rank.
"""
from __future__ import annotations

import html

import ipywidgets as W

from ..real_text import usage_examples


def usage_table_html(frame) -> str:
    """The usages as an HTML table (period, usage), the word in capitals."""
    rows = "".join(f"<tr><td style='padding-right:1em'>{html.escape(str(p))}</td><td>{html.escape(u)}</td></tr>"
                   for p, u in zip(frame["period"], frame["usage"]))
    return f"<table><tr><th>period</th><th>usage</th></tr>{rows}</table>"


def usage_viewer(data, words, *, per_period: int = 3, seed: int = 0):
    """A word dropdown and a seed box: ``per_period`` seeded usages of the word from each period."""
    words = list(words)
    w_word = W.Dropdown(options=words, value=words[0], description="word")
    w_seed = W.BoundedIntText(value=seed, min=0, max=10_000, description="sample seed")
    out = W.HTML()

    def update(*_):
        out.value = usage_table_html(usage_examples(data, w_word.value, per_period=per_period, seed=w_seed.value))

    w_word.observe(update, "value")
    w_seed.observe(update, "value")
    update()
    return W.VBox([W.HBox([w_word, w_seed]), out])
