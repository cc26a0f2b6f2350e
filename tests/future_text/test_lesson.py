"""Notebook 04's steps in tempo_analysis.future_text.lesson, on stand-ins (no LM, no training): the memo keys
name the data's contents and the settings, a warm cache computes nothing, and the lines and summary keys
say what the results hold."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pandas as pd
import pytest

from tempo_analysis import notebook
from tempo_analysis.future_text import lesson, whatif
from tempo_analysis.future_text.config import GenerationSettings
from tempo_analysis.future_text.estimator import FutureTextModel
from tempo_analysis.study import summary_keys

from .conftest import TINY, toy_frame

RESULTS = pd.DataFrame({
    "model": ["baseline", "last-2", "freq", "context"], "variant": ["baseline", "last-n", "freq", "context"],
    "alpha": [0.0, 0.0, 1.2, 0.9], "dev_content_ppl": [3.2, 2.0, 2.9, 2.95],   # last-2 is lowest on dev, but time-blind
    "test_content_ppl": [3.00456, 2.5, 2.81234, 2.7], "test_ppl": [2.5, 2.4, 2.3, 2.35], "copy_rate": [0.5, 0.7, 0.6, 0.4]})
TABLE = pd.DataFrame({"word": ["kernel", "lexicon"], "bias_before": [0.5, 1.0], "bias_after": [2.50012, 2.0],
                      "prob_ratio": [6.0, 4.0], "expected_ratio": [5.0, 3.0], "count_before": [0, 2],
                      "count_after": [3, 12], "ratio": [4.0, 13 / 3], "text_after": ["a kernel text", "a lexicon text"]})
RESPONSE = {"trend_response": 25 / 6, "evidence": 2, "occurrences": 17, "prob_response": 5.123456, "expected_response": 4.000051,
            "table": TABLE, "before": ["a text"]}


def stand_in(results=RESULTS, models=("baseline", "last-2", "freq", "context")) -> SimpleNamespace:
    """What the functions read from a fitted FutureTextModel."""
    frame = toy_frame()
    return SimpleNamespace(results_=results, models_=dict.fromkeys(models), frame_=frame,
                           train_df_=frame[frame["year"] < 2014], test_df_=frame[frame["year"] == 2015],
                           train_years_=[2010, 2011, 2012, 2013], dev_year_=2014, test_year_=2015,
                           tokenizer_=[0] * 300, token_ids_=[0] * 42,
                           summary=lambda: {"future_text.baseline.content_ppl": 3.0},
                           generation_settings=lambda: GenerationSettings(num_beams=5, max_new_tokens=60,
                                                                          min_new_tokens=30))


@pytest.fixture
def csv_data(tmp_path):
    path = tmp_path / "docs.csv"
    toy_frame().to_csv(path, index=False)
    return path


@pytest.fixture
def keys(monkeypatch):
    """Record the (name, params) of every cached() call and compute nothing."""
    seen = []
    monkeypatch.setattr(notebook, "cached", lambda name, params, compute, **kw: seen.append((name, params)) or "stored")
    return seen


def test_load_lesson_subsets_each_year_and_keys_on_the_datas_contents_and_the_settings(csv_data, keys):
    future = FutureTextModel(**TINY)
    setup = lesson.load_lesson(f"csv:{csv_data}", future, max_docs_per_year=5, seed=1)
    assert len(setup["corpus"]) == 72 and setup["frame"].groupby("year").size().eq(5).all()
    assert setup["truth"] is None and setup["first_year"] is None
    assert set(setup["frame"]["doc_id"]) <= set(setup["corpus"]["doc_id"])
    params = setup["params"]
    assert params["settings"] == future.get_config().to_dict() and params["max_docs"] == 5
    assert lesson.load_lesson(f"csv:{csv_data}", future, max_docs_per_year=5, seed=1)["params"] == params
    # a changed text, another subset, another setting: another key
    edited = toy_frame()
    edited.loc[len(edited) - 1, "text"] += " Indeed."
    edited.to_csv(csv_data, index=False)
    again = lesson.load_lesson(f"csv:{csv_data}", future, max_docs_per_year=5, seed=1)["params"]
    assert again["data_fingerprint"][1] != params["data_fingerprint"][1]
    assert lesson.load_lesson(f"csv:{csv_data}", future, max_docs_per_year=5, seed=2)["params"]["data_fingerprint"][0] \
        != again["data_fingerprint"][0]
    other = lesson.load_lesson(f"csv:{csv_data}", FutureTextModel(**{**TINY, "window": 3}), max_docs_per_year=5, seed=1)
    assert other["params"]["settings"] != again["settings"]
    assert lesson.load_lesson(f"csv:{csv_data}", future, first_year=2012)["frame"]["year"].min() == 2012
    default = lesson.load_lesson(f"csv:{csv_data}", future, max_docs_per_year=5)["params"]     # seed 0 by default
    assert default == lesson.load_lesson(f"csv:{csv_data}", future, max_docs_per_year=5, seed=0)["params"] != again


def test_load_lesson_starts_acl_at_the_papers_first_year_and_refuses_an_unknown_setting(csv_data, monkeypatch):
    from tempo_analysis import resolve
    from tempo_analysis.data.errors import DataError

    real = resolve.load_yearly
    monkeypatch.setattr(resolve, "load_yearly", lambda spec: real(f"csv:{csv_data}"))
    future = FutureTextModel(**TINY)
    assert lesson.load_lesson("acl", future)["first_year"] == lesson.ACL_FIRST_YEAR == 2003
    assert lesson.load_lesson("acl", future, first_year=2012)["first_year"] == 2012
    assert lesson.load_lesson("world", future)["first_year"] is None
    with pytest.raises(DataError, match="unknown setting 'no_such_knob'"):
        lesson.load_lesson("world", FutureTextModel(no_such_knob=1))


def test_fit_and_score_fits_on_the_subset_with_the_whole_history_and_memoises_under_the_lessons_key(keys):
    calls = []
    future = SimpleNamespace(fit=lambda frame, history: calls.append(("fit", len(frame), len(history))),
                             generation_settings=lambda **changes: changes,
                             score=lambda meteor_texts, generation: calls.append(("score", meteor_texts, generation)))
    setup = {"frame": toy_frame()[:10], "corpus": toy_frame(), "params": {"data_fingerprint": ["a", "b"]}}
    assert lesson.fit_and_score(future, setup, meteor_texts=2) == "stored" and calls == []
    lesson.fit_and_score(future, setup)
    assert keys[-1][1]["meteor_texts"] == 0 and len(keys) == 2                       # no generated texts by default
    del keys[-1]
    assert keys == [("04_future_text", {"data_fingerprint": ["a", "b"], "meteor_texts": 2})]
    assert lesson.fit_and_score(future, setup, meteor_texts=3, cache=False) is future
    assert calls == [("fit", 10, 72), ("score", 3, {})]
    # a change to the decoding reaches score() and is part of the key
    lesson.fit_and_score(future, setup, meteor_texts=3, generation={"num_beams": 1}, cache=False)
    assert calls[-1] == ("score", 3, {"num_beams": 1})
    lesson.fit_and_score(future, setup, meteor_texts=2, generation={"num_beams": 1})
    assert keys[-1][1]["generation"] == {"num_beams": 1}


def test_an_edited_file_is_trained_on_afresh(csv_data, keys):
    """The fit's memo key names the data's contents, not only its spec."""
    future = FutureTextModel(**TINY)
    lesson.fit_and_score(future, lesson.load_lesson(f"csv:{csv_data}", future))
    toy_frame().assign(text=lambda df: df["text"] + " Indeed.").to_csv(csv_data, index=False)
    lesson.fit_and_score(future, lesson.load_lesson(f"csv:{csv_data}", future))
    (_, first), (_, second) = keys
    assert first["data"] == second["data"] == f"csv:{csv_data}"
    assert first["data_fingerprint"] != second["data_fingerprint"] and first["settings"] == second["settings"]


def test_describe_split_names_the_documents_years_and_vocabulary():
    assert lesson.describe_split(stand_in()) == ("72 documents, 2010-2015; train 2010-2013, dev 2014, test 2015; "
                                                 "LM vocabulary 300, 42 tokens seen in the history")


def test_compare_with_control_picks_the_best_temporal_model_on_dev_never_a_time_blind_one():
    c = lesson.compare_with_control(stand_in())
    assert c["best"] == "freq"                          # context is better on test, last-2 on dev: neither counts
    assert (c["best_content_ppl"], c["control_content_ppl"]) == (2.81234, 3.00456)
    assert c["gain"] == pytest.approx(1 - 2.81234 / 3.00456) and c["copy_rate"] == 0.7
    assert c["heldout_copy_rate"] == whatif.copy_rate(stand_in().test_df_["text"].tolist(),
                                                      stand_in().train_df_["text"].tolist())
    assert 0 < c["heldout_copy_rate"] <= 1
    no_texts = lesson.compare_with_control(stand_in(RESULTS.drop(columns="copy_rate")))
    assert math.isnan(no_texts["copy_rate"]) and no_texts["best"] == "freq"


def test_describe_comparison_says_below_or_above_the_control():
    c = {"best": "freq", "best_content_ppl": 2.7918, "control_content_ppl": 3.0091, "gain": 1 - 2.7918 / 3.0091,
         "copy_rate": 0.8421, "heldout_copy_rate": 0.4995}
    first, second = lesson.describe_comparison(c).split("\n")
    assert first == ("time-blind control (baseline): test content ppl 3.009; best temporal model on dev (freq): "
                     "2.792 (7.2% below the control)")
    assert second.endswith("training texts): 0.842; the real test-year texts' own copy rate: 0.499")
    worse = lesson.describe_comparison(dict(c, best_content_ppl=3.1, gain=1 - 3.1 / 3.0091))
    assert "3.100 (3.0% above the control)" in worse


def test_visualize_trends_memoises_the_forecasts_exactly(tmp_path, monkeypatch):
    monkeypatch.setenv(notebook.ENV_CACHE, str(tmp_path))
    calls = []

    def trends(words, models):
        calls.append((words, models))
        frame = pd.DataFrame({"word": ["kernel"] * 3, "year": [2014, 2015, 2015],
                              "series": ["actual", "actual", "forecast: freq"], "value": [0.1, 1 / 3, 0.123456789012345]})
        frame.attrs["notes"] = ["a note"]
        return frame

    future = SimpleNamespace(trends=trends)
    setup = {"params": {"data_fingerprint": ["a"]}}
    first = lesson.visualize_trends(future, setup, ["kernel"], models=("baseline", "freq"))
    second = lesson.visualize_trends(future, setup, ["kernel"], models=("baseline", "freq"))
    assert calls == [(["kernel"], ("baseline", "freq"))]            # the warm call reads the stored forecasts
    assert second.to_dict() == first.to_dict()
    assert [t["y"] for t in second.to_dict()["data"]] == [[0.1, 1 / 3], [0.123456789012345]]
    lesson.visualize_trends(future, {"params": {"data_fingerprint": ["b"]}}, ["kernel"], models=("baseline", "freq"))
    assert len(calls) == 2                                          # other data: computed afresh


def test_trend_whatif_runs_the_frequency_models_response_once_at_the_whatif_decoding(tmp_path, monkeypatch):
    monkeypatch.setenv(notebook.ENV_CACHE, str(tmp_path))
    calls = []

    def response(fitted, model, words, *, factor, n, settings):
        calls.append((model, words, factor, n, settings))
        return {"trend_response": 2.5, "table": TABLE}

    monkeypatch.setattr(whatif, "trend_response", response)
    future, setup = stand_in(), {"params": {"data_fingerprint": ["a"]}}
    assert lesson.trend_whatif(future, setup, None, ["kernel"]) is None and calls == []
    got = lesson.trend_whatif(future, setup, "freq", ("kernel", "lexicon"), n=8)
    assert got["trend_response"] == 2.5 and got["table"].equals(TABLE)
    settings = calls[0][4]
    assert calls[0][:4] == ("freq", ["kernel", "lexicon"], lesson.LESSON_FACTOR, 8)
    assert (settings.num_beams, settings.max_new_tokens, settings.min_new_tokens) == (1, 30, 15)
    again = lesson.trend_whatif(future, setup, "freq", ("kernel", "lexicon"), n=8)
    assert len(calls) == 1 and again["trend_response"] == 2.5       # warm: nothing generated
    lesson.trend_whatif(future, setup, "freq", ("kernel", "lexicon"), n=16)
    lesson.trend_whatif(future, {"params": {"data_fingerprint": ["b"]}}, "freq", ("kernel", "lexicon"), n=8)
    assert len(calls) == 3


def test_describe_trend_gives_one_text_per_word_then_the_ratios():
    lines = lesson.describe_trend(RESPONSE).split("\n")
    assert lines[:2] == ["with the injected trend, a generated text for 'kernel': a kernel text",
                         "with the injected trend, a generated text for 'lexicon': a lexicon text"]
    assert lines[2] == ("forecast probability ratio: 5.12 in the real dev texts, 4.00 in the generated ones; "
                        "trend_response (occurrences per generated token) = 4.17 over 2 of 2 words, 17 occurrences "
                        "counted (above 1: the injected words come more often)")


def test_summary_values_hold_the_comparison_the_whatif_and_the_headline_under_the_study_names():
    future = stand_in()
    c = lesson.compare_with_control(future)
    values = lesson.summary_values(future, c, RESPONSE)
    assert values["future_text.baseline.content_ppl"] == 3.0                        # future.summary() first
    assert values["future_text.best_temporal"] == "freq" and values["future_text.control.content_ppl"] == 3.0046
    assert values["future_text.best_temporal.content_ppl"] == 2.8123                 # rounded to 4 digits
    assert values["future_text.copy_rate.heldout"] == round(c["heldout_copy_rate"], 4)
    assert values["future_text.trend_bias_rise"] == 1.5001 and values["future_text.trend_occurrences"] == 17
    assert (values["future_text.trend_prob_ratio"], values["future_text.trend_expected_ratio"]) == (5.1235, 4.0001)
    assert values["future_text.trend_evidence"] == 2
    headline = summary_keys("04", lesson.headline_numbers({"model": future, "response": RESPONSE}))
    assert {k: values[k] for k in headline} == headline                             # the seed study's names
    assert values["future_text.trend_response"] == 25 / 6                           # the headline's, not rounded
    assert values["future_text.gain"] == pytest.approx(1 - 2.81234 / 3.00456)
    nolstm = lesson.summary_values(stand_in(models=("baseline", "freq-nolstm")), c, RESPONSE)   # no headline
    assert nolstm["future_text.trend_response"] == 4.1667 and not any(k.endswith(".gain") for k in nolstm)
    without = lesson.summary_values(stand_in(models=("baseline", "freq-nolstm")), c, None)
    assert not any("trend" in k or k.endswith(".gain") for k in without) and "future_text.best_temporal" in without
    no_response = lesson.summary_values(future, c, None)
    assert math.isnan(no_response["future_text.trend_response"]) and "future_text.trend_evidence" not in no_response
