"""Every table figure of the library, drawn by plotly.js in chromium: no row hidden, no empty band.

A go.Table is drawn inside a figure of fixed height, and plotly.js sizes its rows itself (a row with
``<br>`` lines or markup grows to fit), so only a browser can tell whether the height is right.
Each figure is drawn at a laptop's width and a wide screen's, with content of the sizes the lessons
show (short cells, wrapped generated texts, a word longer than a line). The rows must end within
a few pixels of the table's visible area: a taller table hides rows behind a scrollbar, a shorter
one leaves an empty band under the table (both were seen in the lessons' screenshots).

Skips, with the reason, when chromium or playwright is missing, unless CI=true: then it fails.
"""
from __future__ import annotations

import pandas as pd
import pytest
from test_browser import require_browser

from tempo_analysis.figures import diffusion as diffusion_figs
from tempo_analysis.figures import future_text as future_figs
from tempo_analysis.figures import semantic_change as semantic_figs
from tempo_analysis.figures import stream as stream_figs
from tempo_analysis.figures.tables import FIRST_LINE_PX, LINE_PX, ROW_PX, row_height, table_figure, wrap_text

BAND_PX = 6   # the most empty space allowed under the last row

_MEASURE = r"""() => {
  const gd = document.querySelector('.js-plotly-plot');
  const visible = parseFloat(gd.querySelector('rect.scroll-background').getAttribute('height'));
  let bottom = 0;
  gd.querySelectorAll('g.column-cell').forEach(cell => {
    const shift = cell.transform.baseVal.consolidate();
    const rect = cell.querySelector('rect');
    if (shift && rect) bottom = Math.max(bottom, shift.matrix.f + parseFloat(rect.getAttribute('height')));
  });
  return {visible, bottom};
}"""


def _stream_results(models=("TempoFormer", "vanilla MHA", "no Gate&Norm", "BiLSTM", "time-aware BiLSTM", "FFN")):
    per_class = {"no_switch": {"mean": 0.9, "std": 0.01}, "switch": {"mean": 0.61, "std": 0.05}}
    return {m: {"summary": {"macro_f1": {"mean": 0.8 - 0.01 * i, "std": 0.02}, "f1": per_class}}
            for i, m in enumerate(models)}


def _sim_rows(n=8):
    text = "In slice 3 the community around u07 started writing cloud server where others still wrote cloud nine."
    return pd.DataFrame([{"word": f"word{i}", "sigma_sim": 0.0123, "mean_sim": 0.9876, "above_context": f"u{i:02d} @ 4",
                          "above_text": text, "below_context": f"u{i + 1:02d} @ 0", "below_text": text[: 20 + 9 * i]}
                         for i in range(n)])


GENERATED = ["We propose a transformer model for neural machine translation with attention " * 3,
             "short", "see https://github.com/" + "x" * 90 + " for the code"]

FIGURES = {
    "stream results table": lambda: stream_figs.results_table(_stream_results(), ["no_switch", "switch"],
                                                              reference="TempoFormer"),
    "nearest words, 10 per period": lambda: semantic_figs.neighbours_table(
        {p: [(f"neighbour{i}", 1.0) for i in range(10)] for p in ("1990s", "2000s", "2010s")}, word="cell"),
    "nearest words, uneven": lambda: semantic_figs.neighbours_table(
        {"old": [("cat", 1.0)], "new": [("click", 2.0), ("usb", 1.0)]}, word="mouse"),
    "generated texts": lambda: future_figs.side_by_side(GENERATED, GENERATED[::-1], ["transformer", "attention"]),
    "generated texts, one short row": lambda: future_figs.side_by_side(["a short text"], ["another"], []),
    "future-text variants": lambda: future_figs.variants_table(pd.DataFrame(
        {"model": ["baseline", "freq", "lstm"], "test_ppl": [40.51, 39.87, 39.12], "test_content_ppl": [1.5, 1.4, 1.3]})),
    "variable words (σ_sim)": lambda: diffusion_figs.variable_words_table(_sim_rows()),
    "helper, multi-line header": lambda: table_figure(["<b>model</b><br>(seed 0)", "score"],
                                                      [["a", "b"], [wrap_text("x " * 80, 30), "1"]], title="t"),
}


@pytest.fixture(scope="module")
def page():
    require_browser()
    import _jupyterlab as jl
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = jl.launch_chromium(playwright)
        try:
            yield browser.new_page()
        finally:
            browser.close()


def measure(page, fig, width: int) -> dict:
    page.set_viewport_size({"width": width, "height": 900})
    page.set_content(fig.to_html(include_plotlyjs=True, full_html=True))
    page.wait_for_selector(".js-plotly-plot g.table g.column-cell", timeout=30_000)
    return page.evaluate(_MEASURE)


@pytest.mark.browser
@pytest.mark.parametrize("width", [900, 1400])
@pytest.mark.parametrize("name", list(FIGURES))
def test_table_figure_is_as_tall_as_its_rows(page, name, width):
    got = measure(page, FIGURES[name](), width)
    assert got["bottom"] <= got["visible"] + 1, f"{name}: rows end at {got['bottom']:.0f} px, below the " \
                                                f"{got['visible']:.0f} px shown (the last rows are hidden)"
    assert got["visible"] - got["bottom"] <= BAND_PX, f"{name}: an empty band of " \
                                                      f"{got['visible'] - got['bottom']:.0f} px under the rows"


# -- the helper without a browser ---------------------------------------------------------------

def test_rows_are_sized_as_plotly_sizes_them():
    assert row_height(["plain", "1.0"]) == ROW_PX                         # plotly keeps the height asked for
    assert row_height(["<b>bold</b>", "x"]) == FIRST_LINE_PX              # markup: plotly measures the row
    assert row_height(["a<br>b<br>c", "x"]) == pytest.approx(FIRST_LINE_PX + 2 * LINE_PX)  # the tallest cell


def test_table_figure_pads_short_columns_keeps_values_and_adds_up_its_rows():
    fig = table_figure(["a", "b"], [[1.5, None], ["x<br>y"]], title="t")
    t = fig.data[0]
    assert list(t.cells.values[0]) == [1.5, ""] and list(t.cells.values[1]) == ["x<br>y", ""]
    rows = (ROW_PX + 4) + (FIRST_LINE_PX + LINE_PX) + ROW_PX            # header, the two-line row, the padded row
    assert fig.layout.height == round(40 + 10 + rows) + 2
    with pytest.raises(ValueError, match="one per column"):
        table_figure(["a"], [[1], [2]])


def test_wrap_text_keeps_every_character():
    url = "see https://github.com/" + "x" * 80 + " for the code"
    wrapped = wrap_text(url, 30)
    assert max(len(line) for line in wrapped.split("<br>")) <= 30
    assert wrapped.replace("<br>", "").replace(" ", "") == url.replace(" ", "")
    assert wrap_text(None, 30) == wrap_text("  ", 30) == ""
