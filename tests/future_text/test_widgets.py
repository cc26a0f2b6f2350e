"""Notebook 04's what-if widgets (widgets/future_text.py) on the tiny fitted model: what each control
starts at, what a click asks the library for, and what it shows."""

from __future__ import annotations

import plotly.graph_objects as go
import pytest
import torch

from tempo_analysis.data.errors import DataError

from .conftest import GEN

pytest.importorskip("ipywidgets")


def _fake_generate(calls, tag="text", used=None):
    """A generate_together stand-in that records (models, year, n, seed, alphas) in ``calls`` and the
    settings in ``used``, and returns labelled texts."""
    used = [] if used is None else used

    def generate_together(models, tok, year, n, settings=None, alphas=None):
        calls.append((tuple(models), year, n, settings.seed, list(alphas) if alphas is not None else None))
        used.append(settings)
        k = len(calls)
        return tuple([f"{tag}{k} side{i} year{year}"] * n for i in range(len(models)))
    return generate_together


def test_generation_explorer_controls_and_what_a_click_generates(exp, monkeypatch):
    """The year list is every year with a previous-year history, the test year first shown; α starts at
    the model's learned α; a click generates baseline and model in one batch, the baseline unbiased
    (α None) and the model at the slider's α with the typed seed; a repeated setting is not generated
    again; the table shows the two sides under their titles."""
    from tempo_analysis.widgets import future_text as wft

    calls, shown = [], []
    monkeypatch.setattr(wft, "generate_together", _fake_generate(calls))
    monkeypatch.setattr(wft, "display", shown.append)
    model, baseline = exp.models_["freq"], exp.models_["baseline"]
    learned = float(model.alpha.detach())
    with torch.no_grad():
        model.alpha.fill_(1.374)                                     # a learned α, not its start
    try:
        box = wft.generation_explorer(exp, "baseline", "freq", ["kernel"], n=2, settings=GEN, run_now=False)
    finally:
        with torch.no_grad():
            model.alpha.fill_(learned)
    year, alpha, seed, go_btn = box.children[0].children
    h = model.history_years
    assert list(year.options) == list(range(h[0] + 1, h[-1] + 2)) and year.value == exp.test_year_
    assert alpha.value == pytest.approx(1.37)
    assert (alpha.min, alpha.max) == (0.0, 5.0) and seed.value == GEN.seed
    assert not calls and not shown                                   # run_now=False: nothing until the click

    go_btn.click()
    assert calls == [((baseline, model), exp.test_year_, 2, GEN.seed, [None, alpha.value])]
    bar = box.children[1]
    assert (bar.max, bar.value, bar.layout.visibility) == (1, 1, "hidden")   # one step, done, hidden again
    cells = shown[-1].data[0].cells.values
    assert [c.split("<br>")[0] for c in cells[0]] == [f"text1 side0 year{exp.test_year_}"] * 2   # baseline left
    assert cells[1][0].startswith("text1 side1")
    header = shown[-1].data[0].header.values
    assert "baseline" in header[0] and f"(α={alpha.value:g})" in header[1] and "freq" in header[1]
    assert str(exp.test_year_) in shown[-1].layout.title.text

    go_btn.click()                                                   # the same setting: shown again, not redrawn
    assert len(calls) == 1 and len(shown) == 2
    alpha.value = 0.5                                                # α alone moved: drawn again at the new α
    go_btn.click()
    assert len(calls) == 2 and calls[-1][-1] == [None, 0.5]
    seed.value, alpha.value, year.value = 7, 2.5, year.options[0]
    go_btn.click()
    assert calls[-1] == ((baseline, model), year.options[0], 2, 7, [None, 2.5])
    assert len(shown) == 4


def test_both_widgets_run_at_once_by_default_with_three_texts_and_the_settings_given(exp, monkeypatch):
    """By default each widget generates at once, three texts a side, with the fitted model's own
    generation settings; settings given are used as they are."""
    from tempo_analysis.widgets import future_text as wft

    calls, used = [], []
    monkeypatch.setattr(wft, "generate_together", _fake_generate(calls, used=used))
    monkeypatch.setattr(wft, "display", lambda x: None)
    wft.generation_explorer(exp, "baseline", "freq")
    wft.trend_injector(exp, "freq-nolstm", ["kernel"])
    assert [c[2] for c in calls] == [3, 3]
    own = exp.generation_settings()
    assert own.max_new_tokens != GEN.max_new_tokens                    # so the two cases below differ
    assert [u.to_dict() for u in used] == [own.to_dict()] * 2
    wft.generation_explorer(exp, "baseline", "freq", n=1, settings=GEN)
    wft.trend_injector(exp, "freq-nolstm", ["kernel"], n=1, settings=GEN)
    assert [u.to_dict() for u in used[2:]] == [GEN.to_dict()] * 2


def test_trend_injector_controls_start_where_the_notebook_reads_them(exp, monkeypatch):
    """Word X is the first trending word ("kernel" when none is given); the rise starts at ×8 on a
    log-2 slider from ×1 to ×32; "last years" starts at 3 and reaches at most 5 or the history's length."""
    from tempo_analysis.widgets import future_text as wft

    box = wft.trend_injector(exp, "freq-nolstm", ["transformer", "kernel"], n=1, settings=GEN, run_now=False)
    word, factor, last, _ = box.children[0].children
    assert word.value == "transformer"
    assert (factor.value, factor.base, factor.min, factor.max) == (8.0, 2, 0, 5)
    n_hist = len(exp.models_["freq-nolstm"].history_years)
    assert (last.value, last.min, last.max) == (3, 1, min(5, n_hist))
    assert wft.trend_injector(exp, "freq-nolstm", (), n=1, settings=GEN, run_now=False).children[0].children[0].value \
        == "kernel"
    model = exp.models_["freq-nolstm"]
    monkeypatch.setattr(type(model), "history_years", property(lambda self: [2013, 2014]))   # a two-year history
    last = wft.trend_injector(exp, "freq-nolstm", (), n=1, settings=GEN, run_now=False).children[0].children[2]
    assert last.max == 2 and last.value <= 2
    monkeypatch.setattr(type(model), "history_years", property(lambda self: list(range(2005, 2012))))
    last = wft.trend_injector(exp, "freq-nolstm", (), n=1, settings=GEN, run_now=False).children[0].children[2]
    assert last.max == 5                                               # a long history: at most 5 years


def test_trend_injector_injects_the_typed_word_over_the_chosen_years(exp, monkeypatch):
    """A click injects the word X of the text box (its pieces) over the "last years" of the slider at the
    slider's factor, into the frequency table the model was fitted on, and titles the bars with them."""
    from tempo_analysis.widgets import future_text as wft

    seen, shown = [], []
    real = wft.injected_trend
    monkeypatch.setattr(wft, "injected_trend",
                        lambda model, table, ids, **kw: seen.append((table, list(ids), kw)) or real(model, table, ids, **kw))
    monkeypatch.setattr(wft, "generate_together", lambda models, tok, year, n, settings=None: ([""] * n, [""] * n))
    monkeypatch.setattr(wft, "display", shown.append)
    box = wft.trend_injector(exp, "freq-nolstm", ["kernel"], n=1, settings=GEN, run_now=False)
    word, factor, last, go_btn = box.children[0].children
    word.value, factor.value, last.value = "transformer", 4.0, 2
    go_btn.click()
    (table, ids, kw), = seen
    bar = box.children[1]
    assert (bar.max, bar.value, bar.layout.visibility) == (1, 1, "hidden")
    assert table is exp.freq_table_ and ids == wft.word_pieces(exp.tokenizer_, "transformer")
    assert kw == {"last": 2, "factor": 4.0}
    bars = [f for f in shown if isinstance(f, go.Figure) and "Forecast bias" in (f.layout.title.text or "")]
    assert len(bars) == 1 and "'transformer' ×4 over the last 2 years" in bars[0].layout.title.text


def test_trend_injector_shows_both_sides_from_one_batch(exp, monkeypatch):
    """The widget's click: one batched generate for the as-trained and the injected texts (on a CPU about
    the cost of one), the same as-trained texts on every click, and an injected side that moves."""
    from tempo_analysis.widgets import future_text as wft

    calls, shown = [], []
    real = wft.generate_together
    monkeypatch.setattr(wft, "generate_together", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    monkeypatch.setattr(wft, "display", lambda x: shown.append(x) if not isinstance(x, wft.W.HTML) else None)
    box = wft.trend_injector(exp, "freq-nolstm", ["kernel"], n=2, settings=GEN, run_now=True)
    assert len(calls) == 1 and len(calls[0]) == 2 and len(shown) == 2
    bias_fig, texts_fig = shown
    factor, go_btn = box.children[0].children[1], box.children[0].children[3]
    factor.value = 32.0
    go_btn.click()
    assert len(calls) == 2 and len(calls[1]) == 2 and len(shown) == 4
    assert shown[2].to_json() != bias_fig.to_json()        # the forecast bias moved with the factor
    assert shown[3].data[0].cells.values[0] == texts_fig.data[0].cells.values[0]   # as trained: the same draws



@pytest.mark.parametrize("typed, says", [("  ", "non-empty word"), ("unseen", "none of these tokens occurs")])
def test_trend_injector_shows_a_bad_word_in_its_output(exp, monkeypatch, typed, says):
    """A blank word, or one the history never saw, is said where the output goes (an exception raised in a
    button's callback reaches only JupyterLab's log, so the click looked like it did nothing); the
    previous output is cleared, not left to be read as this word's, and no text is generated."""
    from tempo_analysis.widgets import future_text as wft

    shown, calls = [], []
    monkeypatch.setattr(wft, "display", shown.append)
    monkeypatch.setattr(wft, "generate_together", lambda *a, **k: calls.append(a) or ([], []))
    real = wft.injected_trend

    def injected_trend(model, table, ids, **kw):   # "unseen": the library's refusal of a word the history lacks
        if typed == "unseen":
            raise DataError(f"token_ids={ids}: none of these tokens occurs in the history")
        return real(model, table, ids, **kw)
    monkeypatch.setattr(wft, "injected_trend", injected_trend)
    box = wft.trend_injector(exp, "freq-nolstm", ["kernel"], n=1, settings=GEN, run_now=False)
    word, go_btn = box.children[0].children[0], box.children[0].children[3]
    word.value = typed
    go_btn.click()
    assert len(shown) == 1 and isinstance(shown[0], wft.W.HTML) and says in shown[0].value
    assert not calls and not box.children[1].layout.visibility == "visible"   # the busy bar is hidden again


