"""What-if widgets for notebook 04 (thin ipywidgets wrappers; the logic is in future_text.whatif).

Both take a fitted :class:`tempo_analysis.future_text.estimator.FutureTextModel` and models by
name (``"freq"``) or as FutureLM objects.

- ``generation_explorer``: target year + bias strength alpha -> regenerate baseline vs biased texts.
- ``trend_injector``: "make word X rise over the last 3 years" -> the forecast bias and the
  generations of a frequency model change.
"""

from __future__ import annotations

import html

import ipywidgets as W
from IPython.display import display

from tempo_analysis.figures.future_text import bias_change, side_by_side
from tempo_analysis.future_text.generation import GenerationSettings, generate_together
from tempo_analysis.future_text.model import TemporalBiasProcessor
from tempo_analysis.future_text.whatif import forecast_bias, injected_trend, model_of, shown_tokens, word_pieces
from tempo_analysis.widgets.progress import Busy


def _years(model) -> list[int]:
    h = model.history_years
    return list(range(h[0] + 1, h[-1] + 2))          # every year with a previous-year history


def generation_explorer(fitted, baseline, model, words=(), n: int = 3, settings: GenerationSettings | None = None,
                        run_now: bool = True):
    """Dropdown (year), slider (alpha), seed, button -> side-by-side texts. Returns the widget box
    (``run_now=False``: nothing is generated until the button is clicked)."""
    settings = settings or fitted.generation_settings()
    baseline, model = model_of(fitted, baseline), model_of(fitted, model)
    year = W.Dropdown(options=_years(model), value=fitted.test_year_, description="target year")
    alpha = W.FloatSlider(value=round(float(model.alpha.detach()), 2), min=0.0, max=5.0, step=0.25,
                          description="bias α")
    seed = W.IntText(value=settings.seed, description="seed")
    go_btn = W.Button(description="Regenerate", button_style="primary")
    out, busy = W.Output(), Busy("generating")
    done = {}  # (year, seed, alpha) -> (baseline texts, model texts)

    def run(_=None):
        s = GenerationSettings(**{**settings.to_dict(), "seed": int(seed.value)})
        key = (year.value, s.seed, alpha.value)
        with busy.steps(1) as step:
            if key not in done:  # both sides in one batch: on a CPU about the cost of one side alone
                done[key] = generate_together([baseline, model], fitted.tokenizer_, year.value, n, settings=s,
                                              alphas=[None, alpha.value])
            step()
        left, right = done[key]
        out.clear_output(wait=True)
        with out:
            display(side_by_side(left, right, words, titles=("baseline", f"{model.config.variant} (α={alpha.value:g})"),
                                 title=f"Generated texts for {year.value}"))

    go_btn.on_click(run)
    box = W.VBox([W.HBox([year, alpha, seed, go_btn]), busy.bar, out])
    if run_now:
        run()
    return box


def trend_injector(fitted, model, words=(), n: int = 3, settings: GenerationSettings | None = None,
                   run_now: bool = True):
    """Text (word), slider (factor) and button -> bias before/after + generations before/after
    (``run_now=False``: nothing is generated until the button is clicked)."""
    settings = settings or fitted.generation_settings()
    model = model_of(fitted, model)
    word = W.Text(value=(list(words) or ["kernel"])[0], description="word X")
    factor = W.FloatLogSlider(value=8.0, base=2, min=0, max=5, step=0.5, description="rise ×")
    last = W.IntSlider(value=3, min=1, max=min(5, len(model.history_years)), description="last years")
    go_btn = W.Button(description="Inject trend", button_style="warning")
    out, busy = W.Output(), Busy("generating")

    def run(_=None):
        tok, year = fitted.tokenizer_, fitted.test_year_
        try:
            ids = word_pieces(tok, word.value)
            shown, labels, notes = shown_tokens(tok, [word.value, *words])
            with busy.steps(1) as step:
                before_bias, as_trained = forecast_bias(model, year), TemporalBiasProcessor(model, year)
                with injected_trend(model, fitted.freq_table_, ids, last=last.value, factor=factor.value):
                    after_bias, injected = forecast_bias(model, year), TemporalBiasProcessor(model, year)
                # both sides in one batch (on a CPU about the cost of one): the same draws every click
                before, after = generate_together([as_trained, injected], tok, year, n, settings=settings)
                step()
        except ValueError as e:   # a blank word, or one the history never saw: say so where the output goes
            out.clear_output(wait=True)
            with out:
                display(W.HTML(f"<b>⚠</b> {html.escape(str(e))}"))
            return
        out.clear_output(wait=True)
        with out:
            for note in notes:
                display(W.HTML(f"<b>Note:</b> {html.escape(note)}"))
            display(bias_change(labels, before_bias[shown], after_bias[shown],
                                title=f"Forecast bias for {year}: '{word.value}' ×{factor.value:g} over the last {last.value} years"))
            display(side_by_side(before, after, [word.value, *words], titles=("as trained", "with the injected trend")))

    go_btn.on_click(run)
    box = W.VBox([W.HBox([word, factor, last, go_btn]), busy.bar, out])
    if run_now:
        run()
    return box
