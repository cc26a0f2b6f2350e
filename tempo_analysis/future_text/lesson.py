"""Lesson 04's headline computation, shared by the notebook and the seed study, and the notebook's steps.

    from tempo_analysis.future_text.lesson import fit_lesson, headline_numbers
    fitted = fit_lesson(frame)            # the notebook's settings: a seeded subset per year, two models
    headline_numbers(fitted)              # control_content_ppl, freq_content_ppl, gain, trend_response

The frequency model (``freq``) against the time-blind control (``baseline``, the same frozen LM and
adaptation over all training years), on the test year's content words; then the trend what-if:
inject a rising trend into falling words' histories and count how much more often they are written.

Notebook 04 runs the same comparison over every variant of the ``"notebook"`` preset, one call per
step; each heavy step is memoised with :func:`tempo_analysis.notebook.cached` under a key that
holds the data's contents and the model's settings (:func:`load_lesson`), so a rerun after
``make demo`` loads what it computed::

    setup = load_lesson("world", future)                  # the corpus, the LM's subset, the memo key
    future = fit_and_score(future, setup, meteor_texts=2)  # fit(frame, history=corpus), then score()
    comparison = compare_with_control(future)              # the best temporal model (on dev) vs baseline
    response = trend_whatif(future, setup, "freq", ["kernel", "lexicon"])
    summary_values(future, comparison, response)           # the build/summary.json keys
"""
from __future__ import annotations

import dataclasses
import math

import pandas as pd

from .config import FEATURE_KIND, GenerationSettings

# the notebook's what-if: two falling words made to rise, 96 sampled texts with and without
LESSON_INJECT = ("kernel", "lexicon")
LESSON_MAX_DOCS_PER_YEAR = 20
LESSON_N_WHATIF = 96
LESSON_FACTOR = 8.0
# the paper's first ACL year: where the notebook starts on DATA = "acl" unless told otherwise
ACL_FIRST_YEAR = 2003
# the what-if table's columns that the notebook shows
TREND_COLUMNS = ("word", "bias_before", "bias_after", "prob_ratio", "expected_ratio", "count_before", "count_after",
                 "ratio")
# the lesson's build/summary.json prefix (tempo_analysis.study.PREFIX["04"]; study imports this module)
PREFIX = "future_text"


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


# ----------------------------------------------------------------------------------------------
# notebook 04's steps, one call each
# ----------------------------------------------------------------------------------------------
def load_lesson(data, future, *, first_year: int | None = None,
                max_docs_per_year: int | None = LESSON_MAX_DOCS_PER_YEAR, seed: int = 0,
                corpus: pd.DataFrame | None = None) -> dict:
    """The notebook's data (a ``--data`` spec: ``world``, ``acl``, ``csv:FILE``) and the memo key of
    its steps, for the unfitted ``future`` (a :class:`~tempo_analysis.future_text.FutureTextModel`).

    Returns ``{"corpus", "truth", "frame", "first_year", "params"}``: every document (the frequency
    history counts them all), the planted trends (None for real data), the seeded subset of at most
    ``max_docs_per_year`` documents a year from ``first_year`` on that the LM reads (``acl`` starts at
    the paper's 2003 unless ``first_year`` says otherwise), and ``params``, the key under which every
    later step is memoised: the spec, the contents of the subset and of the corpus (so an edited
    ``csv:FILE`` or a regenerated world is trained on afresh), the subset's settings and ``future``'s
    settings (``get_config``: an unknown setting fails here, before any work). ``corpus``: the
    documents ``data`` names, already loaded (``doc_id, year, text``), so they are not read again."""
    from ..data.digest import frame_digest
    from ..resolve import Resolved, load_yearly
    from .splits import select_years

    if first_year is None and str(data).split(":")[0] == "acl":
        first_year = ACL_FIRST_YEAR
    loaded = load_yearly(data) if corpus is None else Resolved(corpus)
    frame = select_years(loaded.data, first_year, max_docs_per_year, seed)
    params = {"data": data, "data_fingerprint": [frame_digest(df, ["year", "text"]) for df in (frame, loaded.data)],
              "first": first_year, "max_docs": max_docs_per_year, "history": "corpus",
              "settings": future.get_config().to_dict()}
    return {"corpus": loaded.data, "truth": loaded.truth, "frame": frame, "first_year": first_year, "params": params}


def fit_and_score(future, setup: dict, *, meteor_texts: int = 0, generation: dict | None = None, cache: bool = True):
    """``future.fit(setup["frame"], history=setup["corpus"])``, then ``future.score(meteor_texts=...)``
    (one row per model in ``results_``; ``meteor_texts`` texts per model for content METEOR and the copy
    rate, kept in ``generated_``, in the paper's decoding or with ``generation``'s changes to it, e.g.
    ``{"num_beams": 1}`` for plain sampling). Returns the fitted model: with ``cache``, memoised under
    ``setup["params"]`` (a warm cache loads the saved model, trains nothing)."""
    from ..notebook import cached
    from .estimator import FutureTextModel

    def fit():
        future.fit(setup["frame"], history=setup["corpus"])
        future.score(meteor_texts=meteor_texts, generation=future.generation_settings(**(generation or {})))
        return future

    if not cache:
        return fit()
    params = {**setup["params"], "meteor_texts": meteor_texts}
    if generation:
        params["generation"] = dict(generation)
    return cached("04_future_text", params, fit, save=FutureTextModel.save, load=FutureTextModel.load)


def describe_split(future) -> str:
    """One line: the documents the LM read, the train / dev / test years, the vocabulary."""
    years = future.frame_["year"]
    return (f"{len(future.frame_)} documents, {years.min()}-{years.max()}; train {future.train_years_[0]}-"
            f"{future.train_years_[-1]}, dev {future.dev_year_}, test {future.test_year_}; LM vocabulary "
            f"{len(future.tokenizer_)}, {len(future.token_ids_)} tokens seen in the history")


def compare_with_control(future) -> dict:
    """The best temporal model, picked on the dev year's content perplexity among the bias variants only
    (the ``last-n`` controls are time-blind too), against the time-blind control ``baseline`` on the
    test year: ``best`` (its name), ``best_content_ppl``, ``control_content_ppl``, ``gain`` (1 − best /
    control: positive when the temporal model is lower); and ``copy_rate`` (the largest share of
    generated 8-grams found verbatim in the training texts, NaN without generated texts) beside
    ``heldout_copy_rate``, the same share for the real test-year texts."""
    from .whatif import copy_rate

    results = future.results_
    best = results[results["variant"].isin(FEATURE_KIND)].sort_values("dev_content_ppl").iloc[0]
    control = float(results.set_index("model").loc["baseline", "test_content_ppl"])
    generated = float(results["copy_rate"].max()) if "copy_rate" in results else math.nan
    return {"best": best["model"], "best_content_ppl": float(best["test_content_ppl"]), "control_content_ppl": control,
            "gain": 1.0 - float(best["test_content_ppl"]) / control, "copy_rate": generated,
            "heldout_copy_rate": copy_rate(future.test_df_["text"].tolist(), future.train_df_["text"].tolist())}


def describe_comparison(comparison: dict) -> str:
    """:func:`compare_with_control` in two lines: the content perplexities, then the copy rates."""
    gain = 100 * comparison["gain"]
    return (f"time-blind control (baseline): test content ppl {comparison['control_content_ppl']:.3f}; best temporal "
            f"model on dev ({comparison['best']}): {comparison['best_content_ppl']:.3f} ({abs(gain):.1f}% "
            f"{'below' if gain >= 0 else 'above'} the control)\n"
            f"copy rate (share of generated 8-grams found verbatim in the training texts): "
            f"{comparison['copy_rate']:.3f}; the real test-year texts' own copy rate: {comparison['heldout_copy_rate']:.3f}")


def visualize_trends(future, setup: dict, words, models=("baseline", "freq", "context2"), *, cache: bool = True):
    """``future.visualize_trends(words, models)``, its forecasts memoised under ``setup["params"]``
    (each model reads the dev year's cached states: seconds per model on a CPU)."""
    from ..figures.future_text import frequency_trends
    from ..notebook import cached

    def compute():
        frame = future.trends(list(words), tuple(models))
        return {"columns": {c: frame[c].tolist() for c in frame.columns}, "notes": list(frame.attrs.get("notes", []))}

    params = {**setup["params"], "words": list(words), "models": list(models)}
    stored = cached("04_future_text-trends", params, compute) if cache else compute()
    frame = pd.DataFrame(stored["columns"])
    frame.attrs["notes"] = stored["notes"]
    return frequency_trends(frame)


def trend_whatif(future, setup: dict, model: str | None, words, *, factor: float = LESSON_FACTOR,
                 n: int = LESSON_N_WHATIF, settings: GenerationSettings | None = None, cache: bool = True) -> dict | None:
    """:func:`~tempo_analysis.future_text.whatif.trend_response` of ``model`` (the frequency model) with
    ``words`` made to rise ×``factor``, ``n`` texts sampled with and without at ``settings`` (default:
    :func:`whatif_settings` of the model's decoding); memoised under ``setup["params"]``. None when
    ``model`` is None (no frequency model was fitted)."""
    from ..notebook import cached
    from .whatif import trend_response

    if model is None:
        return None
    settings = settings or whatif_settings(future.generation_settings())

    def compute():
        return trend_response(future, model, list(words), factor=factor, n=n, settings=settings)

    if not cache:
        return compute()
    params = {**setup["params"], "model": model, "inject": list(words), "factor": factor, "n": n,
              "generation": settings.to_dict()}
    return cached("04_future_text-trend", params, compute)


def describe_trend(response: dict) -> str:
    """:func:`trend_whatif`'s result in lines: one generated text per injected word, then the three
    ratios (forecast probability in the real and the generated texts, occurrences per generated token)."""
    table = response["table"]
    lines = [f"with the injected trend, a generated text for '{w}': {text}"
             for w, text in zip(table["word"], table["text_after"])]
    lines.append(f"forecast probability ratio: {response['prob_response']:.2f} in the real dev texts, "
                 f"{response['expected_response']:.2f} in the generated ones; trend_response (occurrences per "
                 f"generated token) = {response['trend_response']:.2f} over {response['evidence']} of {len(table)} "
                 f"words, {response['occurrences']} occurrences counted (above 1: the injected words come more often)")
    return "\n".join(lines)


def summary_values(future, comparison: dict, response: dict | None = None) -> dict:
    """The notebook's ``build/summary.json`` keys: every model's test perplexities and α
    (``future.summary()``), the comparison with the control (:func:`compare_with_control`), the trend
    what-if's numbers (when ``response`` is given) and, when ``freq`` was fitted, the lesson's headline
    under the seed study's names (:func:`headline_numbers`: ``future_text.gain``, ...)."""
    values = {**future.summary(), f"{PREFIX}.best_temporal": comparison["best"],
              f"{PREFIX}.best_temporal.content_ppl": round(comparison["best_content_ppl"], 4),
              f"{PREFIX}.control.content_ppl": round(comparison["control_content_ppl"], 4),
              f"{PREFIX}.copy_rate.heldout": round(comparison["heldout_copy_rate"], 4)}
    if response is not None:
        rise = (response["table"]["bias_after"] - response["table"]["bias_before"]).mean()
        values.update({f"{PREFIX}.trend_response": round(response["trend_response"], 4),
                       f"{PREFIX}.trend_evidence": response["evidence"],
                       f"{PREFIX}.trend_occurrences": response["occurrences"],
                       f"{PREFIX}.trend_prob_ratio": round(response["prob_response"], 4),
                       f"{PREFIX}.trend_expected_ratio": round(response["expected_response"], 4),
                       f"{PREFIX}.trend_bias_rise": round(float(rise), 4)})
    if "freq" in future.models_:   # the headline: the frequency model against the control, and the what-if
        numbers = headline_numbers({"model": future, "response": response})
        values.update({f"{PREFIX}.{k}": v for k, v in numbers.items()})
    return values
