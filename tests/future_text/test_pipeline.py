"""The FutureTextModel facade, generation, what-if helpers and figures on tiny settings; the CLI; the
planted-world claim at notebook defaults."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
import torch

from tempo_analysis.data.specs import load_yearly
from tempo_analysis.figures import future_text as figs
from tempo_analysis.future_text.generation import GenerationSettings, generate_texts
from tempo_analysis.future_text.pipeline import FutureTextModel, default_settings
from tempo_analysis.future_text.whatif import (expected_token_probs, forecast_bias, injected_trend, trend_frame,
                                               word_pieces, word_token)

from .conftest import toy_frame

TINY = dict(vocab_size=300, n_layer=1, n_embd=16, n_head=2, block_size=64, pretrain_epochs=1, finetune_steps=4,
            eval_every=2, batch_size=8, window=2, last_n=(1,), lstm_hidden=8)
GEN = GenerationSettings(max_new_tokens=12, min_new_tokens=4, num_beams=2)


@pytest.fixture(scope="module")
def exp():
    torch.set_num_threads(1)
    e = FutureTextModel(default_settings(**TINY), variants=["baseline", "last-n", "freq-nolstm", "freq"])
    assert e.fit(toy_frame()) is e
    e.score(meteor_texts=2, generation=GEN)
    return e


def test_fit_score_and_summary_keys(exp):
    r = exp.results_
    assert r["model"].tolist() == ["baseline", "last-1", "freq-nolstm", "freq"] == list(exp.models_)
    assert np.isfinite(r[["dev_ppl", "test_ppl", "dev_content_ppl", "test_content_ppl"]].to_numpy()).all()
    assert ((r["test_content_meteor"] >= 0) & (r["test_content_meteor"] <= 1)).all()
    assert (exp.dev_year_, exp.test_year_) == (2014, 2015) and exp.train_years_ == [2010, 2011, 2012, 2013]
    assert exp.models_["last-1"].config.train_years == [2013]
    keys = exp.summary()
    assert set(keys) == {f"future_text.{m}.{k}" for m in r["model"] for k in ("ppl", "content_ppl")}
    # history: first training year .. the year before the test year (dev text is past at test time)
    assert exp.models_["freq"].history_years == [2010, 2011, 2012, 2013, 2014]


def test_variant_names_and_bad_names():
    m = FutureTextModel(default_settings(last_n=(1, 2)), variants=("last-n", "last-3", "freq"))
    assert m.jobs() == [("last-n", 1, "last-1"), ("last-n", 2, "last-2"), ("last-n", 3, "last-3"), ("freq", None, "freq")]
    with pytest.raises(ValueError, match="variant='nope'"):
        FutureTextModel(variants=("nope",))


def test_save_and_load_roundtrip(exp, tmp_path):
    exp.save(tmp_path / "run", info={"data": "toy"})
    back = FutureTextModel.load(tmp_path / "run")
    assert list(back.models_) == list(exp.models_) and back.train_years_ == exp.train_years_
    assert (back.dev_year_, back.test_year_) == (exp.dev_year_, exp.test_year_)
    pd.testing.assert_frame_equal(back.frame_, exp.frame_)
    pd.testing.assert_frame_equal(back.results_, exp.results_)
    assert back.freq_table_.fingerprint == exp.freq_table_.fingerprint and len(back.tokenizer_) == len(exp.tokenizer_)
    assert back.base_ is not None and back.settings == exp.settings
    for name in ("baseline", "freq"):
        assert back.evaluate(name, 2015) == exp.evaluate(name, 2015)                 # the same numbers
    assert back.generate("freq", 2, settings=GEN) == exp.generate("freq", 2, settings=GEN)
    assert json.loads((tmp_path / "run" / "future_text.json").read_text())["info"] == {"data": "toy"}
    with pytest.raises(FileNotFoundError, match="future_text.json"):
        FutureTextModel.load(tmp_path)


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
    pd.testing.assert_frame_equal(exp.trends(["transformer", "kernel"], ("baseline", "freq", "context2")), trends)
    assert exp.visualize_trends(["transformer", "kernel"], ("baseline", "freq")).to_dict() == d


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
    # the facade's visualize_* are the same figures
    assert exp.visualize_results().to_dict() == figs.variants_table(exp.results_).to_dict()
    assert exp.visualize_metric("test_content_ppl").to_dict() == b
    texts = [exp.generate(m, 2, settings=GEN) for m in ("baseline", "freq")]
    g = exp.visualize_generations("baseline", "freq", ["transformer"], n=2, settings=GEN).to_dict()
    assert g == figs.side_by_side(*texts, ["transformer"], titles=("baseline", "freq")).to_dict()
    with pytest.raises(ValueError, match=r"call fit\(\) and score"):
        FutureTextModel().visualize_results()                         # not fitted, not scored


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
        assert (out / "models" / "freq" / "model.safetensors").is_file() and (out / "tokenizer.json").is_file()
        assert (out / "base_lm" / "config.json").is_file()
        meta = json.loads((out / "future_text.json").read_text())
        assert meta["test_year_"] == 2015 and set(meta["info"]["metrics"]) == {"dev", "test"}
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
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frame, truth = load_yearly("world")
    exp = FutureTextModel(default_settings(), variants=["baseline", "freq"]).fit(frame)
    r = exp.score().set_index("model")
    assert r.loc["freq", "test_content_ppl"] < r.loc["baseline", "test_content_ppl"]
    assert r.loc["freq", "dev_content_ppl"] < r.loc["baseline", "dev_content_ppl"]   # also with train-only history
    assert isinstance(truth, pd.DataFrame) and {"word", "year", "rate"} <= set(truth.columns)
