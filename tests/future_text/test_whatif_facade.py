"""whatif.py's functions that read a fitted facade (``trend_frame``, ``trend_response``, ``bias_by_factor``),
on a stand-in facade over the tiny world of :mod:`.whatif_world`; generation is replaced by scripted texts, so the
counts, rates and add-one ratios are known exactly.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tempo_analysis.data.errors import DataError
from tempo_analysis.future_text import generation
from tempo_analysis.future_text.generation import GenerationSettings
from tempo_analysis.future_text.whatif import (bias_by_factor, forecast_bias, generated_states, generated_word_probs,
                                               injected_trend, shown_tokens, states_token_probs,
                                               trend_frame, trend_response, word_pieces, word_token)

from .whatif_world import DEV, HISTORY, TEST, facade, future, hand_mean_probs, pieces_of, texts_of, words_with




# ------------------------------------------------------------------------------------------------
# the facade functions on a stand-in facade
# ------------------------------------------------------------------------------------------------


def _relative(tok, texts, t):
    flat = [i for x in texts for i in tok.convert_tokens_to_ids(tok.tokenize(x))]
    return flat.count(t) / len(flat)


def test_trend_frame_gives_the_actual_frequencies_and_each_models_forecast(world):
    tok = world.tok
    models = {"freq": future(world, "freq"), "baseline": future(world, "baseline")}
    whole, split = "the", words_with(tok, 3)[0]
    assert len(pieces_of(tok, whole)) == 1
    frame = trend_frame(facade(world), [whole, split, whole], models)
    ids, labels, notes = shown_tokens(tok, [whole, split])
    assert frame.attrs["notes"] == notes and len(notes) == 1
    assert list(dict.fromkeys(frame["word"])) == labels
    assert set(frame["series"]) == {"actual", "forecast: freq", "forecast: baseline"}
    years = list(range(HISTORY[0], TEST + 1))
    for t, label in zip(ids, labels):
        actual = frame[(frame["word"] == label) & (frame["series"] == "actual")]
        assert actual["year"].tolist() == years
        np.testing.assert_allclose(actual["value"], [_relative(tok, texts_of(world, y), t) for y in years], rtol=1e-9)
        for name, m in models.items():
            row = frame[(frame["word"] == label) & (frame["series"] == f"forecast: {name}")]
            assert row["year"].tolist() == [TEST]
            want = hand_mean_probs(m, tok, texts_of(world, DEV), TEST, 512)[t]
            assert row["value"].item() == pytest.approx(want, rel=1e-4)
    assert len(frame) == 2 * (len(years) + len(models))
    other = trend_frame(facade(world), [whole], {"freq": models["freq"]}, contexts_year=2012)
    got = other.loc[other["series"] == "forecast: freq", "value"].item()
    want = hand_mean_probs(models["freq"], tok, texts_of(world, 2012), TEST, 512)[ids[0]]
    assert got == pytest.approx(want, rel=1e-4)
    assert got != pytest.approx(frame.loc[(frame["word"] == whole) & (frame["series"] == "forecast: freq"),
                                          "value"].item(), rel=1e-3)


class Scripted:
    """Stands in for generate_texts: hands out the given texts call by call and records each call
    (with the forecast bias the model has at that moment)."""

    def __init__(self, script):
        self.script, self.calls = list(script), []

    def __call__(self, model, tokenizer, year, n, *, settings=None, **kw):
        self.calls.append(dict(year=year, n=n, settings=settings, bias=forecast_bias(model, year)))
        return self.script[len(self.calls) - 1]


def _tokens(tok, texts):
    return sum(len(tok.tokenize(t)) for t in texts)


def test_trend_response_counts_rates_and_add_one_ratios(world, monkeypatch):
    tok = world.tok
    words = ["the", "model", "we", "study"]
    assert all(len(pieces_of(tok, x)) == 1 for x in words)
    before = [" the"]
    after = {"the": [""], "model": [" model models", " a"], "we": [" we"], "study": [" a", " the"]}
    gen = Scripted([before] + [after[x] for x in words])
    monkeypatch.setattr(generation, "generate_texts", gen)
    m = future(world, "freq")
    settings = GenerationSettings(max_new_tokens=7)
    fitted = facade(world, {"freq": m}, gen=settings)
    plain_bias = forecast_bias(m, TEST)
    r = trend_response(fitted, "freq", words)
    assert [c["n"] for c in gen.calls] == [96] * 5 and all(c["year"] == TEST for c in gen.calls)
    assert all(c["settings"] is settings for c in gen.calls)
    np.testing.assert_array_equal(forecast_bias(m, TEST), plain_bias)             # the model is restored
    table = r["table"].set_index("word")
    assert list(table.index) == words and r["before"] == before
    n_model = _tokens(tok, after["model"])
    assert table["count_before"].tolist() == [1, 0, 0, 0] and table["count_after"].tolist() == [0, 2, 1, 0]
    assert table["tokens_before"].tolist() == [1] * 4
    assert table["tokens_after"].tolist() == [0, n_model, 1, 2]
    np.testing.assert_allclose(table["rate_before"], [1000.0, 0, 0, 0])
    np.testing.assert_allclose(table["rate_after"], [0, 2000.0 / n_model, 1000.0, 0])
    ratios = [(0 + 1) / 1 / ((1 + 1) / 1), (2 + 1) / n_model / 1.0, (1 + 1) / 1 / 1.0]
    np.testing.assert_allclose(table["ratio"].iloc[:3], ratios)
    assert np.isnan(table.loc["study", "ratio"])                                  # no evidence either way
    assert r["trend_response"] == pytest.approx(np.mean(ratios)) and r["evidence"] == 3 and r["occurrences"] == 4
    assert table["text_after"].tolist() == ["", " model models", " we", " a"]
    # bias and probabilities: the model with and without a x8 rise over the last 3 years, dev-year contexts
    hidden = generated_states(m, tok, before)
    for k, x in enumerate(words):
        t = word_token(tok, x)
        prob0 = states_token_probs(fitted, m, world.rows[DEV], TEST)[t]
        exp0 = generated_word_probs(m, hidden, TEST, [t])[t]
        with injected_trend(m, world.table, word_pieces(tok, x), last=3, factor=8.0):
            bias1 = forecast_bias(m, TEST)[t]
            prob1 = states_token_probs(fitted, m, world.rows[DEV], TEST)[t]
            exp1 = generated_word_probs(m, hidden, TEST, [t])[t]
        row = table.loc[x]
        assert row["bias_before"] == pytest.approx(plain_bias[t]) and row["bias_after"] == pytest.approx(bias1)
        assert gen.calls[k + 1]["bias"][t] == pytest.approx(bias1)                # generated inside the injection
        assert row["bias_after"] > row["bias_before"] + 1e-3
        assert row["prob_before"] == pytest.approx(prob0, rel=1e-5)
        assert row["prob_after"] == pytest.approx(prob1, rel=1e-5)
        assert row["prob_ratio"] == pytest.approx(prob1 / prob0, rel=1e-5)
        assert row["expected_before"] == pytest.approx(exp0, rel=1e-5)
        assert row["expected_after"] == pytest.approx(exp1, rel=1e-5)
        assert row["expected_ratio"] == pytest.approx(exp1 / exp0, rel=1e-5)
    assert r["prob_response"] == pytest.approx(table["prob_ratio"].mean())
    assert r["expected_response"] == pytest.approx(table["expected_ratio"].mean())


def test_trend_response_with_its_own_year_contexts_and_settings_and_an_empty_before(world, monkeypatch):
    tok = world.tok
    gen = Scripted([[""], [" we"]])
    monkeypatch.setattr(generation, "generate_texts", gen)
    m = future(world, "freq")
    fitted = facade(world, gen=GenerationSettings())
    mine = GenerationSettings(max_new_tokens=3)
    r = trend_response(fitted, m, ["we"], factor=4.0, last=2, n=3, settings=mine, year=2014, contexts_year=2012)
    assert [(c["year"], c["n"]) for c in gen.calls] == [(2014, 3), (2014, 3)]
    assert all(c["settings"] is mine for c in gen.calls)
    row = r["table"].iloc[0]
    assert (row["count_before"], row["count_after"], row["tokens_before"], row["tokens_after"]) == (0, 1, 0, 1)
    assert row["rate_before"] == 0.0 and row["rate_after"] == 1000.0
    assert row["ratio"] == pytest.approx(2.0)                          # ((1 + 1) / 1) / ((0 + 1) / 1)
    assert row["expected_before"] == 0.0 and row["expected_after"] == 0.0 and row["expected_ratio"] == 0.0
    t = word_token(tok, "we")
    with injected_trend(m, world.table, word_pieces(tok, "we"), last=2, factor=4.0):
        bias1 = forecast_bias(m, 2014)[t]
        prob1 = states_token_probs(fitted, m, world.rows[2012], 2014)[t]
    assert row["bias_before"] == pytest.approx(forecast_bias(m, 2014)[t]) and row["bias_after"] == pytest.approx(bias1)
    assert row["bias_after"] > row["bias_before"] + 1e-3
    assert row["prob_after"] == pytest.approx(prob1, rel=1e-5)
    assert row["prob_before"] == pytest.approx(states_token_probs(fitted, m, world.rows[2012], 2014)[t], rel=1e-5)


def test_trend_response_refuses_a_split_word_before_generating(world, monkeypatch):
    gen = Scripted([])
    monkeypatch.setattr(generation, "generate_texts", gen)
    split = words_with(world.tok, 2)[0]
    with pytest.raises(DataError, match="splits it into"):
        trend_response(facade(world), future(world, "freq"), ["the", split], n=2)
    assert gen.calls == []


def test_bias_by_factor_is_the_forecast_bias_under_each_injected_rise(world):
    tok = world.tok
    m = future(world, "freq")
    fitted = facade(world, {"freq": m})
    words = ["the", "model"]
    got = bias_by_factor(fitted, "freq", words, factors=(1.0, 2.0, 8.0))
    assert isinstance(got, pd.DataFrame) and list(got.index) == words and list(got.columns) == ["x1", "x2", "x8"]
    for x in words:
        t = word_token(tok, x)
        assert got.loc[x, "x1"] == pytest.approx(forecast_bias(m, TEST)[t], abs=1e-6)    # factor 1: as trained
        for f in (2.0, 8.0):
            with injected_trend(m, world.table, word_pieces(tok, x), last=3, factor=f):
                assert got.loc[x, f"x{f:g}"] == pytest.approx(forecast_bias(m, TEST)[t], abs=1e-6)
        assert got.loc[x, "x1"] < got.loc[x, "x2"] < got.loc[x, "x8"]
    at = bias_by_factor(fitted, m, ["we"], factors=(4.0,), last=2, year=2014)
    t = word_token(tok, "we")
    with injected_trend(m, world.table, word_pieces(tok, "we"), last=2, factor=4.0):
        assert at.loc["we", "x4"] == pytest.approx(forecast_bias(m, 2014)[t], abs=1e-6)
        assert at.loc["we", "x4"] != pytest.approx(forecast_bias(m, TEST)[t], abs=1e-4)
    with pytest.raises(DataError, match="splits it into"):
        bias_by_factor(fitted, m, [words_with(tok, 2)[0]])
