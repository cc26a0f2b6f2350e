"""Pipeline, generation, what-if helpers and figures on tiny settings; the planted-world claim at notebook defaults."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
import torch

from tempo_analysis.figures import future_text as figs
from tempo_analysis.future_text.generation import GenerationSettings, generate_texts
from tempo_analysis.future_text.pipeline import FutureTextExperiment, default_settings
from tempo_analysis.future_text.whatif import (expected_token_probs, forecast_bias, injected_trend, trend_frame,
                                               word_pieces, word_token)

from .conftest import toy_frame

TINY = dict(vocab_size=300, n_layer=1, n_embd=16, n_head=2, block_size=64, pretrain_epochs=1, finetune_steps=4,
            eval_every=2, batch_size=8, window=2, last_n=(1,), lstm_hidden=8)
GEN = GenerationSettings(max_new_tokens=12, min_new_tokens=4, num_beams=2)


@pytest.fixture(scope="module")
def exp():
    torch.set_num_threads(1)
    e = FutureTextExperiment(toy_frame(), settings=default_settings(**TINY))
    e.results_ = e.run(["baseline", "last-n", "freq-nolstm", "freq"], meteor_texts=2, generation=GEN)
    return e


def test_run_results_and_summary_keys(exp):
    r = exp.results_
    assert r["model"].tolist() == ["baseline", "last-1", "freq-nolstm", "freq"]
    assert np.isfinite(r[["dev_ppl", "test_ppl", "dev_content_ppl", "test_content_ppl"]].to_numpy()).all()
    assert ((r["test_content_meteor"] >= 0) & (r["test_content_meteor"] <= 1)).all()
    assert (exp.dev_year, exp.test_year) == (2014, 2015) and exp.train_years == [2010, 2011, 2012, 2013]
    assert exp.models_["last-1"].config.train_years == [2013]
    keys = exp.summary(r)
    assert set(keys) == {f"future_text.{m}.{k}" for m in r["model"] for k in ("ppl", "content_ppl")}
    # history: first training year .. the year before the test year (dev text is past at test time)
    assert exp.models_["freq"].history_years == [2010, 2011, 2012, 2013, 2014]


def test_generation_is_seeded_and_alpha_zero_is_the_plain_lm(exp):
    m, tok = exp.models_["freq-nolstm"], exp.tokenizer_
    with torch.no_grad():
        m.bias.scale.fill_(3.0)                       # make the bias matter
    a = generate_texts(m, tok, 2015, 3, settings=GEN)
    assert a == generate_texts(m, tok, 2015, 3, settings=GEN) and len(a) == 3 and all(a)
    assert generate_texts(m, tok, 2015, 3, alpha=0.0, settings=GEN) == generate_texts(m.lm, tok, None, 3, settings=GEN)
    other = GenerationSettings(**{**GEN.to_dict(), "seed": 1})
    assert generate_texts(m, tok, 2015, 3, settings=other) != a
    with pytest.raises(ValueError, match="needs a target year"):
        generate_texts(m, tok, None, 1, settings=GEN)


def test_injected_trend_raises_the_forecast_bias(exp):
    m, tok = exp.models_["freq-nolstm"], exp.tokenizer_
    with torch.no_grad():
        m.bias.scale.fill_(1.0)
    k = word_token(tok, "kernel")
    before = forecast_bias(m, 2015)
    with injected_trend(m, exp.freq_table_, word_pieces(tok, "kernel"), last=3, factor=8.0):
        after = forecast_bias(m, 2015)
    assert after[k] > before[k] + 1.0                            # log(8) ~ 2.1 on the last year's feature
    np.testing.assert_allclose(forecast_bias(m, 2015), before)  # restored
    with pytest.raises(ValueError, match="only frequency models"):
        with injected_trend(exp.models_["baseline"], exp.freq_table_, [k]):
            pass


def test_forecast_probabilities_and_trend_figure(exp):
    p = expected_token_probs(exp.models_["freq"], exp.tokenizer_, exp.texts_of(2014), 2015, block_size=64)
    assert p.shape == (len(exp.tokenizer_),) and p.sum() == pytest.approx(1.0, abs=1e-4)
    trends = trend_frame(exp, ["transformer", "kernel"], {"baseline": exp.models_["baseline"], "freq": exp.models_["freq"]})
    assert set(trends["series"]) == {"actual", "forecast: baseline", "forecast: freq"}
    d = figs.frequency_trends(trends).to_dict()
    assert len(d["data"]) == 2 * 3 and d["data"][0]["name"] == "transformer (actual)"
    assert list(d["data"][0]["x"]) == list(range(2010, 2016))


def test_figures_to_dict(exp):
    t = figs.variants_table(exp.results_).to_dict()
    assert t["data"][0]["type"] == "table" and t["data"][0]["cells"]["values"][0] == exp.results_["model"].tolist()
    b = figs.metric_bars(exp.results_, "test_content_ppl").to_dict()
    assert list(b["data"][0]["x"]) == exp.results_["model"].tolist()
    s = figs.side_by_side(["a transformer helps"], ["the kernel and the transformer"], ["transformer"]).to_dict()
    cells = s["data"][0]["cells"]["values"]
    assert "<b><span style='color:#d62728'>transformer</span></b>" in cells[1][0]
    assert "(1 trending words)" in s["data"][0]["header"]["values"][0]
    c = figs.bias_change(["a", "b"], [0.0, 1.0], [0.5, 2.0]).to_dict()
    assert [tr["name"] for tr in c["data"]] == ["before", "after"]
    with pytest.raises(ValueError, match="metric="):
        figs.metric_bars(exp.results_, "nope")


def test_cli_train_evaluate_generate(tmp_path, capsys):
    from tempo_analysis.cli import main

    csv = tmp_path / "t.csv"
    toy_frame().to_csv(csv, index=False)
    out = tmp_path / "run"
    flags = ["--vocab-size", "300", "--n-layer", "1", "--n-embd", "16", "--block-size", "64", "--pretrain-epochs", "1",
             "--finetune-steps", "3", "--window", "2"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["future-text", "train", "--data", f"csv:{csv}", "--variant", "freq", "--out", str(out), *flags]) == 0
        assert (out / "model.safetensors").is_file() and (out / "tokenizer.json").is_file()
        meta = json.loads((out / "future_text.json").read_text())
        assert meta["test_year"] == 2015 and set(meta["metrics"]) == {"dev", "test"}
        assert main(["future-text", "evaluate", "--checkpoint", str(out), "--year", "2015", "--out",
                     str(tmp_path / "m.json"), "--n-generate", "2", "--max-new-tokens", "8", "--num-beams", "2"]) == 0
        m = json.loads((tmp_path / "m.json").read_text())
        assert {"ppl", "content_ppl", "content_meteor"} <= set(m) and m["meteor_stages"] == "exact+stem"
        capsys.readouterr()
        assert main(["future-text", "generate", "--checkpoint", str(out), "--year", "2015", "--n", "2",
                     "--max-new-tokens", "8", "--num-beams", "2"]) == 0
        assert "[2]" in capsys.readouterr().out
        # bad input: a year without previous-year history is one clear line, exit code 2
        assert main(["future-text", "generate", "--checkpoint", str(out), "--year", "2030", "--n", "1"]) == 2
    assert "no previous-year history" in capsys.readouterr().err


@pytest.mark.slow
def test_frequency_model_beats_all_years_baseline_on_planted_world():
    """Notebook 04's claim, at the notebook's defaults (default_settings()): content ppl freq < baseline."""
    from tempo_analysis.future_text.data import load_world_yearly

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frame, truth = load_world_yearly()
    exp = FutureTextExperiment(frame, settings=default_settings())
    r = exp.run(["baseline", "freq"]).set_index("model")
    assert r.loc["freq", "test_content_ppl"] < r.loc["baseline", "test_content_ppl"]
    assert r.loc["freq", "dev_content_ppl"] < r.loc["baseline", "dev_content_ppl"]   # also with train-only history
    assert isinstance(truth, pd.DataFrame) and {"word", "year", "rate"} <= set(truth.columns)
