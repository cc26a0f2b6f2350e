"""Tables drawn as plotly figures, exactly as tall as their rows.

A ``go.Table`` lives inside a figure of fixed height: too short and its last rows hide behind a
scrollbar, too tall and an empty band sits under it. plotly.js also re-wraps any cell text that
holds a space to the column's width, which depends on the page, so a row's height cannot be known
in advance. ``table_figure`` takes that freedom away: a cell with explicit ``<br>`` lines (see
``wrap_text``) keeps exactly those lines, and the figure's height is the sum of the rows plotly.js
will draw. Texts that could be wider than their column must come wrapped: plotly.js re-wraps a
one-line cell only when it does not fit.

Row heights, read from plotly.js's table (cell padding 8 px, 12-px text):
a row of k > 1 lines, or of one line with markup, is ``FIRST_LINE_PX + LINE_PX * (k - 1)`` tall;
a plain one-line row is the row height asked for. ``tests/notebooks/test_tables_in_browser.py``
draws every table figure of the library in chromium: its rows must end within a few pixels of
the table's visible area.
"""

from __future__ import annotations

import textwrap
from typing import Sequence

import plotly.graph_objects as go

LINE_PX = 15.6         # one more line of 12-px text (plotly.js: 1.3 × the font size)
FIRST_LINE_PX = 30.0   # the first line with the cell's padding, when plotly.js sizes the row itself
ROW_PX = 24            # a plain one-line row


def wrap_text(text, width: int) -> str:
    """``text`` wrapped at ``width`` characters with ``<br>`` (every character kept; a word longer
    than ``width`` is broken)."""
    text = "" if text is None else str(text)
    return "<br>".join(textwrap.wrap(text, width, break_long_words=True)) if text.strip() else ""


def _lines(cell: str) -> int:
    return cell.lower().count("<br>") + 1


def _sized_by_plotly(cell: str) -> bool:
    # plotly.js measures a cell whose text has markup (<br>, <b>, &amp; ...) and grows its row to fit
    return any(ch in cell for ch in "<&>")


def row_height(cells: Sequence[str], row_px: float = ROW_PX) -> float:
    """The height plotly.js gives a row of these cells (strings, lines marked by ``<br>``)."""
    need = [FIRST_LINE_PX + LINE_PX * (_lines(c) - 1) for c in cells if _sized_by_plotly(c)]
    return max([float(row_px), *need])


def table_figure(header: Sequence[str], columns: Sequence[Sequence], *, title: str | None = None,
                 columnwidth: Sequence[float] | None = None, header_style: dict | None = None,
                 cell_style: dict | None = None, row_px: float = ROW_PX,
                 margin: dict | None = None) -> go.Figure:
    """A ``go.Table`` figure whose height fits its rows: none clipped, no empty band below.

    ``columns`` holds one list per column (shorter ones are padded with empty cells). Multi-line
    cells carry their own ``<br>`` (``wrap_text``)."""
    if len(header) != len(columns):
        raise ValueError(f"table_figure: {len(header)} header cells for {len(columns)} columns; give one per column")
    n = max((len(c) for c in columns), default=0)
    cols = [["" if v is None else v for v in c] + [""] * (n - len(c)) for c in columns]
    head = list(header)
    head_h = row_height([str(h) for h in head], row_px + 4)
    rows_h = [row_height([str(v) for v in r], row_px) for r in zip(*cols)]
    margin = {"l": 10, "r": 10, "t": 40 if title else 10, "b": 10, **(margin or {})}
    fig = go.Figure(go.Table(columnwidth=list(columnwidth) if columnwidth else None,
                             header=dict(values=head, height=row_px + 4, align="left", **(header_style or {})),
                             cells=dict(values=cols, height=row_px, align="left", **(cell_style or {}))))
    fig.update_layout(title=title, margin=margin,
                      height=int(round(margin["t"] + margin["b"] + head_h + sum(rows_h))) + 2)
    return fig
