"""`future-text what-if`: notebook 04's trend what-if on a saved checkpoint, from the command line."""
from __future__ import annotations

import dataclasses
import json
import warnings

import numpy as np
import pytest
import torch

from tempo_analysis.cli import main
from tempo_analysis.future_text.estimator import FutureTextModel
from tempo_analysis.future_text.whatif import trend_response, word_pieces

from .conftest import toy_frame
from .conftest import TINY


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    torch.set_num_threads(1)
    exp = FutureTextModel(variants=["baseline", "last-n", "freq-nolstm", "freq"], **TINY)
    exp.fit(toy_frame())
    with torch.no_grad():                      # a bias that trusts the history, so that a trend shows
        exp.models_["freq-nolstm"].bias.scale.fill_(3.0)
        exp.models_["freq-nolstm"].alpha.fill_(1.0)
    d = tmp_path_factory.mktemp("ft") / "run"
    exp.save(d)
    return d


def one_token_word(tok):
    return next(w for w in ("kernel", "method", "encoder", "helps", "model") if len(word_pieces(tok, w)) == 1)


def test_what_if_reports_what_trend_response_measures(run_dir, capsys):
    fitted = FutureTextModel.load(run_dir)
    word = one_token_word(fitted.tokenizer_)
    out = run_dir.parent / "w.json"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rc = main(["future-text", "what-if", "--checkpoint", str(run_dir), "--model", "freq-nolstm", "--words", word,
                   "--factor", "16", "--n", "4", "--out", str(out)])
    assert rc == 0, capsys.readouterr().err
    got = json.loads(out.read_text())
    # the command's defaults: sampling without beams at half the usual length, the test year
    settings = fitted.generation_settings(num_beams=1)
    half = dict(max_new_tokens=settings.max_new_tokens // 2, min_new_tokens=settings.min_new_tokens // 2)
    assert got["generation"]["num_beams"] == 1 and got["generation"]["do_sample"] is True
    assert {k: got["generation"][k] for k in half} == half
    assert got["year"] == fitted.test_year_ and (got["factor"], got["last"], got["n"]) == (16.0, 3, 4)
    want = trend_response(fitted, "freq-nolstm", [word], factor=16.0, n=4, year=fitted.test_year_,
                          settings=dataclasses.replace(settings, **half))
    for key in ("trend_response", "prob_response", "expected_response", "occurrences", "evidence"):
        assert got[key] == pytest.approx(want[key], nan_ok=True), key
    row = got["table"][0]
    assert row["word"] == word and row["bias_after"] > row["bias_before"]
    assert got["bias_rise"] == pytest.approx(row["bias_after"] - row["bias_before"])
    assert got["bias_by_factor"][word]["x16"] == pytest.approx(row["bias_after"])
    assert got["bias_by_factor"][word]["x1"] == pytest.approx(row["bias_before"])
    assert np.isfinite(row["prob_ratio"]) and row["prob_ratio"] > 1
    assert "forecast probability ratio" in capsys.readouterr().out


@pytest.mark.parametrize("argv, says", [
    (["--model", "baseline"], "does not read word frequencies"),
    (["--model", "last-1"], "does not read word frequencies"),
    (["--model", "freq-nolstm", "--factor", "0"], "--factor 0.0: use a positive number"),
    (["--model", "freq-nolstm", "--words", ","], "names no word"),
    (["--model", "freq-nolstm", "--last", "0"], "--last 0"),
    (["--model", "freq-nolstm", "--year", "20151"], "typo"),
    (["--model", "freq-nolstm", "--greedy", "--top-p", "0.5"], "--top-p"),
])
def test_what_if_refuses_what_cannot_apply(run_dir, capsys, argv, says, monkeypatch):
    def no_work(*args, **kwargs):
        raise AssertionError("the what-if generated although its options were refused")

    monkeypatch.setattr("tempo_analysis.future_text.whatif.trend_response", no_work)
    base = ["future-text", "what-if", "--checkpoint", str(run_dir), "--words", "kernel"]
    if "--words" in argv:
        base = base[:-2]
    assert main([*base, *argv]) == 2
    assert says in capsys.readouterr().err


def test_what_if_passes_the_year_and_the_trend_length(run_dir, capsys):
    """--year and --last reach both the bias table and the generations (the freq model reads a window of
    years, so a two-year trend differs from a three-year one)."""
    from tempo_analysis.future_text.whatif import bias_by_factor

    fitted = FutureTextModel.load(run_dir)
    word = one_token_word(fitted.tokenizer_)
    year = fitted.dev_year_
    assert year != fitted.test_year_
    out = run_dir.parent / "w2.json"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rc = main(["future-text", "what-if", "--checkpoint", str(run_dir), "--model", "freq", "--words", word,
                   "--factor", "16", "--last", "2", "--year", str(year), "--n", "1", "--max-new-tokens", "6",
                   "--out", str(out)])
    assert rc == 0, capsys.readouterr().err
    got = json.loads(out.read_text())
    assert got["year"] == year and got["last"] == 2
    want = bias_by_factor(fitted, "freq", [word], factors=(1.0, 16.0), last=2, year=year)
    other = bias_by_factor(fitted, "freq", [word], factors=(1.0, 16.0), last=3, year=year)
    assert got["bias_by_factor"][word]["x16"] == pytest.approx(want.loc[word, "x16"], rel=1e-6)
    assert want.loc[word, "x16"] != other.loc[word, "x16"]
    assert got["table"][0]["bias_after"] == pytest.approx(want.loc[word, "x16"], rel=1e-6)
    assert got["generation"]["max_new_tokens"] == 6           # a given length is not halved
