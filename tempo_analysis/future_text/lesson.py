"""Lesson 04's headline computation, shared by the notebook and the seed study.

    from tempo_analysis.future_text.lesson import fit_lesson, headline_numbers
    fitted = fit_lesson(frame)            # the notebook's settings: a seeded subset per year, two models
    headline_numbers(fitted)              # control_content_ppl, freq_content_ppl, gain, trend_response

The frequency model (``freq``) against the time-blind control (``baseline``, the same frozen LM and
adaptation over all training years), on the test year's content words; then the trend what-if:
inject a rising trend into falling words' histories and count how much more often they are written.
"""
from __future__ import annotations

import dataclasses

import pandas as pd

from .config import GenerationSettings

# the notebook's what-if: two falling words made to rise, 96 sampled texts with and without
LESSON_INJECT = ("kernel", "lexicon")
LESSON_MAX_DOCS_PER_YEAR = 20
LESSON_N_WHATIF = 96
LESSON_FACTOR = 8.0


def whatif_settings(generation: GenerationSettings) -> GenerationSettings:
    """The what-if's decoding: the model's own, sampled without beams, at half length."""
    return dataclasses.replace(generation, num_beams=1, max_new_tokens=generation.max_new_tokens // 2,
                               min_new_tokens=generation.min_new_tokens // 2)


def fit_lesson(corpus: pd.DataFrame, *, seed: int = 0, lm: str = "default", variants=("baseline", "freq"),
               inject=LESSON_INJECT, max_docs_per_year: int | None = LESSON_MAX_DOCS_PER_YEAR,
               n_whatif: int = LESSON_N_WHATIF, progress: bool = False, cache: bool = True, **settings) -> dict:
    """Fit the lesson's models on ``corpus`` (``doc_id, year, text``) and run the trend what-if.

    The LM reads ``max_docs_per_year`` documents a year (seeded); the word-frequency history counts
    every document. Returns ``{"model": FutureTextModel, "response": trend_response(...) or None,
    "settings": {...}}``. ``cache=False`` skips the LM state cache (a seed study's worlds are new)."""
    from .estimator import FutureTextModel
    from .splits import select_years
    from .whatif import trend_response

    frame = select_years(corpus, None, max_docs_per_year, seed)
    model = FutureTextModel("notebook", lm=lm, seed=seed, variants=tuple(variants), progress=progress,
                            **({} if cache else {"state_cache": False}), **settings)
    model.fit(frame, history=corpus)
    model.score()
    response = None
    if "freq" in model.models_ and inject:
        response = trend_response(model, "freq", list(inject), factor=LESSON_FACTOR, n=n_whatif,
                                  settings=whatif_settings(model.generation_settings()))
    return {"model": model, "response": response,
            "settings": {"variants": list(variants), "max_docs_per_year": max_docs_per_year, "inject": list(inject),
                         "factor": LESSON_FACTOR, "n_whatif": n_whatif, "lm": lm}}


def headline_numbers(fitted: dict) -> dict:
    """``control_content_ppl`` and ``freq_content_ppl`` (test year), ``gain`` = 1 − freq / control
    (positive when the frequency model is lower) and ``trend_response`` (NaN without the what-if)."""
    results = fitted["model"].results_.set_index("model")
    control = float(results.loc["baseline", "test_content_ppl"])
    freq = float(results.loc["freq", "test_content_ppl"]) if "freq" in results.index else float("nan")
    response = fitted.get("response")
    return {"control_content_ppl": control, "freq_content_ppl": freq, "gain": 1.0 - freq / control,
            "trend_response": float(response["trend_response"]) if response else float("nan")}
