"""The FutureTextModel facade, generation, what-if helpers and figures on tiny settings; the CLI; the
planted-world claim at notebook defaults."""

from __future__ import annotations

import dataclasses
import json
import warnings

import numpy as np
import pandas as pd
import pytest
import torch

from tempo_analysis.resolve import load_yearly
from tempo_analysis.figures import future_text as figs
from tempo_analysis.future_text.generation import GenerationSettings, generate_texts, generate_together
from tempo_analysis.future_text.model import TemporalBiasProcessor
from tempo_analysis.base import NotFittedError
from tempo_analysis.future_text.config import FutureTextSettings
from tempo_analysis.future_text.estimator import FutureTextModel
from tempo_analysis.data.errors import DataError
from tempo_analysis.future_text.whatif import (bias_by_factor, expected_token_probs, forecast_bias, injected_trend,
                                               shown_tokens, trend_frame, word_pieces, word_token)

from .conftest import GEN, TINY, toy_frame


def started(**overrides) -> FutureTextModel:
    """A FutureTextModel on tiny settings whose settings are resolved (``config_``), for its private steps."""
    model = FutureTextModel(**{**TINY, **overrides})
    model._start_fit()
    return model

def test_the_pretrained_lm_stays_frozen(exp):
    """Only the bias models train: the frozen LM's cached states would go stale otherwise."""
    assert not any(p.requires_grad for p in exp.base_.parameters()) and not exp.base_.training


def test_fit_score_and_summary_keys(exp):
    r = exp.results_
    assert r["model"].tolist() == ["baseline", "last-1", "freq-nolstm", "freq"] == list(exp.models_)
    assert np.isfinite(r[["dev_ppl", "test_ppl", "dev_content_ppl", "test_content_ppl"]].to_numpy()).all()
    assert ((r["test_content_meteor"] >= 0) & (r["test_content_meteor"] <= 1)).all()
    assert (exp.dev_year_, exp.test_year_) == (2014, 2015) and exp.train_years_ == [2010, 2011, 2012, 2013]
    assert exp.models_["last-1"].config.train_years == [2013]
    keys = exp.summary()
    assert set(keys) == ({f"future_text.{m}.{k}" for m in r["model"] for k in ("ppl", "content_ppl")}
                         | {"future_text.freq-nolstm.alpha", "future_text.freq.alpha", "future_text.copy_rate"})
    assert 0 <= keys["future_text.copy_rate"] <= 1
    # history: first training year .. the year before the test year (dev text is past at test time)
    assert exp.models_["freq"].history_years == [2010, 2011, 2012, 2013, 2014]


def test_a_planted_trend_word_spelled_null_or_nan_survives_save_and_load(exp, tmp_path, monkeypatch):
    truth = pd.DataFrame({"word": ["null", "nan", "graph"], "kind": ["rising", "falling", "steady"],
                          "start_year": [2011, np.nan, 2012]})
    monkeypatch.setattr(exp, "trend_truth_", truth)
    exp.save(tmp_path / "run")
    pd.testing.assert_frame_equal(FutureTextModel.load(tmp_path / "run").trend_truth_, truth)


def test_variant_names_and_bad_names():
    m = started(last_n=(1, 2), variants=("last-n", "last-3", "freq"))
    assert m._jobs() == [("last-n", 1, "last-1"), ("last-n", 2, "last-2"), ("last-n", 3, "last-3"), ("freq", None, "freq")]
    with pytest.raises(ValueError, match="variants: 'nope' is not a variant"):
        FutureTextModel(variants=("nope",)).fit(toy_frame())          # checked by fit, before any work
    with pytest.raises(ValueError, match="variants: 'nope'"):
        FutureTextSettings(variants="nope")


def test_presets_are_the_documented_defaults_and_the_notebooks():
    from tempo_analysis.future_text.config import PRESETS, preset

    assert FutureTextModel().get_config() == PRESETS["cli"] == FutureTextSettings()
    nb = FutureTextModel("notebook", lm="tiny").get_config()
    assert nb.variants == ("baseline", "last-n", "freq", "context", "context2") and nb.lm == "tiny"
    assert PRESETS["notebook"].lm == "default"                           # the preset itself untouched
    assert preset("notebook", seed=3).seed == 3 and preset("notebook") is not PRESETS["notebook"]
    with pytest.raises(DataError, match="unknown future-text preset 'papers'"):
        preset("papers")
    with pytest.raises(DataError, match="unknown preset 'papers'"):
        FutureTextModel("papers").fit(toy_frame())


def test_save_and_load_roundtrip(exp, tmp_path):
    exp.save(tmp_path / "run")
    back = FutureTextModel.load(tmp_path / "run")
    assert list(back.models_) == list(exp.models_) and back.train_years_ == exp.train_years_
    assert (back.dev_year_, back.test_year_) == (exp.dev_year_, exp.test_year_)
    pd.testing.assert_frame_equal(back.frame_, exp.frame_)
    pd.testing.assert_frame_equal(back.results_, exp.results_)
    assert back.generated_ == exp.generated_ and len(exp.generated_["freq"]) == 2   # score's texts too
    assert back.freq_table_.fingerprint == exp.freq_table_.fingerprint and len(back.tokenizer_) == len(exp.tokenizer_)
    assert back.base_ is not None and back.config_ == exp.config_
    assert back.model_ is back.models_["baseline"] and back.history_ == exp.history_ == exp.histories_["baseline"]
    for name in ("baseline", "freq"):
        assert back.evaluate(name, 2015) == pytest.approx(exp.evaluate(name, 2015), rel=1e-6)   # the same numbers
    assert back.generate("freq", 2, settings=GEN) == exp.generate("freq", 2, settings=GEN)
    assert json.loads((tmp_path / "run" / "config.json").read_text()) == exp.config_.to_dict()
    with pytest.raises(FileNotFoundError, match="has no config.json"):
        FutureTextModel.load(tmp_path)
    exp.save(tmp_path / "run")                                   # our own folder: replaced as a whole
    user = tmp_path / "user"
    user.mkdir()
    (user / "keep.txt").write_text("x")
    with pytest.raises(ValueError, match="overwrite"):
        exp.save(user)
    assert sorted(p.name for p in user.iterdir()) == ["keep.txt"]


def test_generation_is_seeded_and_alpha_zero_is_the_plain_lm(exp):
    m, tok = exp.models_["freq-nolstm"], exp.tokenizer_
    with torch.no_grad():
        m.bias.scale.fill_(3.0)                       # make the bias matter
    a = generate_texts(m, tok, 2015, 3, settings=GEN)
    assert a == generate_texts(m, tok, 2015, 3, settings=GEN) and len(a) == 3 and all(a)
    # alpha = 0: no temporal bias, only the head adaptation every variant shares (= the baseline's shape)
    plain = exp._build("baseline")
    shared = {k: v.detach().clone() for k, v in m.state_dict().items() if k == "offset" or k.startswith("adapter.")}
    assert any(k.startswith("adapter.") for k in shared)                # the context adapter is shared too
    plain.load_state_dict(shared, strict=False)
    assert generate_texts(m, tok, 2015, 3, alpha=0.0, settings=GEN) == generate_texts(plain, tok, None, 3, settings=GEN)
    other = GenerationSettings(**{**GEN.to_dict(), "seed": 1})
    assert generate_texts(m, tok, 2015, 3, settings=other) != a
    with pytest.raises(ValueError, match="needs a target year"):
        generate_texts(m, tok, None, 1, settings=GEN)


@pytest.mark.parametrize("beams", [1, 2])
def test_generate_together_gives_each_model_its_own_rows(exp, beams):
    """Two models' texts from one batched generate: each block of rows is its own model's (its bias, its
    alpha, the decoder states of its own rows for the context adapter), as if the batch held only it."""
    s = GenerationSettings(**{**GEN.to_dict(), "num_beams": beams})
    tok, base, m = exp.tokenizer_, exp.models_["baseline"], exp.models_["freq-nolstm"]
    assert base.reads_hidden and m.reads_hidden            # the adapter reads each row's own state
    scale = m.bias.scale.detach().clone()
    try:
        with torch.no_grad():
            m.bias.scale.fill_(3.0)                        # make the bias matter
        pair = generate_together([base, m], tok, 2015, 3, settings=s)
        assert [len(texts) for texts in pair] == [3, 3] and all(all(texts) for texts in pair)
        assert pair[0] != pair[1]
        assert pair[1] == generate_together([m, m], tok, 2015, 3, settings=s)[1]
        assert pair[0] == generate_together([base, base], tok, 2015, 3, settings=s)[0]
        # one alpha per model: the other model's alpha does not move the baseline's texts
        other = generate_together([base, m], tok, 2015, 3, alphas=[None, 0.0], settings=s)
        assert other[0] == pair[0] and other[1] != pair[1]
    finally:
        with torch.no_grad():
            m.bias.scale.copy_(scale)
    with pytest.raises(ValueError, match="same LM"):
        generate_together([m, exp.base_], tok, 2015, 1, settings=s)
    with pytest.raises(ValueError, match="one alpha per model"):
        generate_together([base, m], tok, 2015, 1, alphas=[None], settings=s)


def test_generate_together_takes_biases_made_before_and_inside_an_injected_trend(exp):
    """The trend what-if's one batch: a TemporalBiasProcessor keeps the bias of the moment it was made,
    so texts from a processor made inside ``injected_trend`` are the injected model's texts, generated
    after the injection has ended, next to the as-trained texts in the same batch."""
    m, tok = exp.models_["freq-nolstm"], exp.tokenizer_
    assert m.reads_hidden                                   # the context adapter: the bias is read while generating
    scale = m.bias.scale.detach().clone()
    ids = word_pieces(tok, "kernel")
    try:
        with torch.no_grad():
            m.bias.scale.fill_(3.0)                         # a bias that trusts the history strongly
        as_trained = TemporalBiasProcessor(m, 2015)
        with injected_trend(m, exp.freq_table_, ids, last=3, factor=32.0):
            injected = TemporalBiasProcessor(m, 2015)
            inside = generate_together([m, m], tok, 2015, 3, settings=GEN)
        outside = generate_together([m, m], tok, 2015, 3, settings=GEN)
        before, after = generate_together([as_trained, injected], tok, 2015, 3, settings=GEN)
        assert after == inside[1] and before == outside[0] and before != after
        with pytest.raises(ValueError, match="own alpha"):
            generate_together([as_trained, injected], tok, 2015, 1, alphas=[None, 0.5], settings=GEN)
    finally:
        with torch.no_grad():
            m.bias.scale.copy_(scale)


def test_the_context_adapter_is_kept_only_if_it_lowers_the_baselines_dev_loss(exp, tmp_path):
    """fit() trains the time-blind baseline with and without the context adapter and every model takes
    the one with the lower dev loss (an adapter that overfits from its first steps is dropped)."""
    choice = exp.adapter_choice_                                   # toy data: the adapter helps
    assert choice["rank"] == exp._adapter_rank == 64 and choice["dev_ppl_with_adapter"] < choice["dev_ppl_without"]
    assert all(m.adapter is not None for m in exp.models_.values())
    assert exp.histories_["baseline"]["adapter_choice"] == choice
    assert np.exp(exp.histories_["baseline"]["best_dev_loss"]) == pytest.approx(choice["dev_ppl_with_adapter"])
    # an adapter learning rate that makes it overfit at once: dropped for every model, the choice recorded
    bad = FutureTextModel(variants=["baseline", "freq"], **{**TINY, "bias_lr": 3.0}).fit(toy_frame())
    assert bad.adapter_choice_["rank"] == bad._adapter_rank == 0
    assert bad.adapter_choice_["dev_ppl_with_adapter"] > bad.adapter_choice_["dev_ppl_without"]
    assert all(m.adapter is None and not m.config.adapter_rank for m in bad.models_.values())
    assert np.exp(bad.histories_["baseline"]["best_dev_loss"]) == pytest.approx(bad.adapter_choice_["dev_ppl_without"])
    back = FutureTextModel.load(bad.save(tmp_path / "run"))         # the choice survives save / load
    assert back._adapter_rank == 0 and back.adapter_choice_ == bad.adapter_choice_
    # adapter_check=False keeps the setting's adapter, as before
    forced = FutureTextModel(variants=["baseline"], **{**TINY, "bias_lr": 3.0, "adapter_check": False}).fit(toy_frame())
    assert forced._adapter_rank == 64 and forced.adapter_choice_ is None and forced.models_["baseline"].adapter is not None


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
    # a word the tokenizer splits is refused by the measures that read one token, and named in the trend frame
    split = next(w for w in ("zqxvjk", "qqzzxxkkv", "kernelzqxv") if len(word_pieces(tok, w)) > 1)
    with pytest.raises(DataError, match="splits it into"):
        bias_by_factor(exp, "freq-nolstm", [split], factors=(1.0, 2.0))
    whole = next(w for w in ("the", "a", "of", "and", "in") if len(word_pieces(tok, w)) == 1)
    split_trend = trend_frame(exp, [split, whole], {})   # labelled, not dropped, and explained in attrs
    first = tok.convert_ids_to_tokens([word_token(tok, split)])[0]
    assert set(split_trend["word"]) == {f"{split} → {first!r} (1 of {len(word_pieces(tok, split))} pieces)", whole}
    assert len(split_trend.attrs["notes"]) == 1 and split in split_trend.attrs["notes"][0]


def test_forecast_probabilities_and_trend_figure(exp):
    p = expected_token_probs(exp.models_["freq"], exp.tokenizer_, exp._texts_of(2014), 2015, block_size=512)
    assert p.shape == (len(exp.tokenizer_),) and p.sum() == pytest.approx(1.0, abs=1e-4)
    trends = trend_frame(exp, ["transformer", "kernel"], {"baseline": exp.models_["baseline"], "freq": exp.models_["freq"]})
    assert set(trends["series"]) == {"actual", "forecast: baseline", "forecast: freq"}
    # the forecast (from cached states) is the full model's mean next-token probability (independent path)
    t = word_token(exp.tokenizer_, "transformer")
    label = dict(zip(["transformer", "kernel"], shown_tokens(exp.tokenizer_, ["transformer", "kernel"])[1]))
    got = trends[(trends["word"] == label["transformer"]) & (trends["series"] == "forecast: freq")]["value"].item()
    assert got == pytest.approx(float(p[t]), rel=1e-4)
    # the actual series is the token's relative frequency per year, counted directly
    actual = trends[(trends["word"] == label["kernel"]) & (trends["series"] == "actual")].set_index("year")["value"]
    k = word_token(exp.tokenizer_, "kernel")
    for y in (2010, 2015):
        ids = exp.tokenizer_(exp._texts_of(y), add_special_tokens=False)["input_ids"]
        flat = [i for d in ids for i in d]
        assert actual[y] == pytest.approx(flat.count(k) / len(flat))
    d = figs.frequency_trends(trends).to_dict()
    assert len(d["data"]) == 2 * 3 and d["data"][0]["name"] == f"{label['transformer']} (actual)"
    assert list(d["data"][0]["x"]) == list(range(2010, 2016))
    assert exp.visualize_trends(["transformer", "kernel"], ("baseline", "freq", "context2")).to_dict() == d   # unfitted names skipped


def test_figures_to_dict(exp, tmp_path):
    t = figs.variants_table(exp.results_).to_dict()
    assert t["data"][0]["type"] == "table" and t["data"][0]["cells"]["values"][0] == exp.results_["model"].tolist()
    b = figs.metric_bars(exp.results_, "test_content_ppl").to_dict()
    assert list(b["data"][0]["x"]) == exp.results_["model"].tolist() and "(lower is better)" in b["layout"]["title"]["text"]
    meteor = [c for c in exp.results_.columns if "meteor" in c]
    if meteor:
        assert "(higher is better)" in figs.metric_bars(exp.results_, meteor[0]).to_dict()["layout"]["title"]["text"]
    s = figs.side_by_side(["a transformer helps"], ["the kernel and the transformer"], ["transformer"]).to_dict()
    cells = s["data"][0]["cells"]["values"]
    assert "<b><span style='color:#d62728'>transformer</span></b>" in cells[1][0]
    assert "(1 trending words)" in s["data"][0]["header"]["values"][0]
    url = "see https://github.com/" + "x" * 80 + " for the code"          # a word longer than a line
    kept = figs.side_by_side([url], [""], []).to_dict()["data"][0]["cells"]["values"][0][0]
    assert kept.replace("<br>", "").replace(" ", "") == url.replace(" ", "")
    # the figure is as tall as its wrapped lines: one short row leaves no empty band, long rows are not cut
    one_line = figs.side_by_side(["a short text"], ["another"], []).to_dict()["layout"]["height"]
    five_lines = figs.side_by_side(["word " * 70] * 3, [""] * 3, []).to_dict()["layout"]["height"]
    assert one_line < 160 and five_lines >= 3 * (5 * 16 + 10) + 60
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
    with pytest.raises(NotFittedError, match=r"call fit\(data\) first"):
        FutureTextModel().visualize_results()                         # not fitted
    fitted = FutureTextModel.load(exp.save(tmp_path / "run"))
    fitted.results_ = None
    with pytest.raises(ValueError, match=r"call fit\(\) and score"):
        fitted.visualize_results()                                    # fitted, not scored


def test_cli_train_evaluate_generate(tmp_path, capsys, monkeypatch):
    from tempo_analysis.cli import main

    csv = tmp_path / "t.csv"
    toy_frame().to_csv(csv, index=False)
    out = tmp_path / "run"
    flags = ["--lm", "tiny", "--vocab-size", "300", "--n-layer", "1", "--n-embd", "16", "--block-size", "64",
             "--pretrain-epochs", "1", "--finetune-steps", "3", "--window", "2", "--batch-size", "64"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["future-text", "train", "--data", f"csv:{csv}", "--variant", "freq", "--out", str(out), *flags]) == 0
        assert (out / "models" / "freq" / "head.safetensors").is_file() and (out / "tokenizer.json").is_file()
        assert (out / ".tempo_analysis.json").is_file()                      # ours: a later run may replace it
        assert (out / "base_lm" / "config.json").is_file()
        meta = json.loads((out / "future_text.json").read_text())
        info = json.loads((out / "train_info.json").read_text())
        assert meta["test_year_"] == 2015 and set(info["metrics"]) == {"dev", "test"} and info["model"] == "freq"
        assert json.loads((out / "config.json").read_text())["variants"] == ["freq"]
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
    # --lm (the LM to load a checkpoint around) does not apply to a checkpoint that holds its own LM
    assert main(["future-text", "generate", "--checkpoint", str(out), "--year", "2015", "--lm", "default"]) == 2
    assert "holds its own LM (base_lm/" in capsys.readouterr().err
    # output policy: a user's non-empty folder is refused before any work, unless --overwrite. The
    # refusal must come first: reading the data or fitting would fail the command another way (exit 1),
    # so a check that only came at save() time (which also refuses) fails this test
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")

    def no_work(*args, **kwargs):
        raise AssertionError("future-text train worked before it checked --out")

    monkeypatch.setattr("tempo_analysis.resolve.load_yearly", no_work)
    monkeypatch.setattr(FutureTextModel, "fit", no_work)
    assert main(["future-text", "train", "--data", f"csv:{csv}", "--variant", "freq", "--out", str(mine), *flags]) == 2
    err = capsys.readouterr().err
    assert "--overwrite" in err and "worked before" not in err and (mine / "notes.txt").read_text() == "keep me"
    assert sorted(p.name for p in mine.iterdir()) == ["notes.txt"]


@pytest.mark.parametrize("flag, counted", [([], 72), (["--history", "subset"], 18)])
def test_cli_train_counts_the_history_from_every_document(tmp_path, monkeypatch, flag, counted):
    """With --max-docs-per-year the LM reads a subset, and by default the frequency history counts
    every document (as notebook 04 does); --history subset counts the subset only."""
    from tempo_analysis.cli import main

    csv = tmp_path / "t.csv"
    toy_frame().to_csv(csv, index=False)                                   # 6 years x 12 documents
    seen = {}

    def record(self, data, history=None):
        seen["data"], seen["history"] = data, history
        raise RuntimeError("recorded")

    monkeypatch.setattr(FutureTextModel, "fit", record)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["future-text", "train", "--data", f"csv:{csv}", "--variant", "freq", "--lm", "tiny",
                     "--max-docs-per-year", "3", "--out", str(tmp_path / "r"), *flag]) != 0
    assert len(seen["data"]) == 18
    assert len(seen["data"] if seen["history"] is None else seen["history"]) == counted


def test_cli_offline_hub_name_fails_at_once(tmp_path, capsys, monkeypatch):
    from tempo_analysis.cli import main

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert main(["future-text", "train", "--data", "world", "--variant", "freq", "--out", str(tmp_path / "r"),
                 "--lm", "some-org/not-cached-lm"]) == 2
    err = capsys.readouterr().err
    assert "offline" in err and "local folder" in err and not (tmp_path / "r").exists()


def test_a_checkpoint_on_a_local_lm_folder_loads_from_anywhere_and_names_a_moved_lm(tmp_path, capsys, monkeypatch):
    """`--lm mylm` (a relative folder) was saved as "mylm": from another working directory the checkpoint
    failed with "not a local folder and the hub cannot be reached" (online it would have fetched a hub repo
    of that name), and evaluate/generate had no way to point at the moved LM. Now the folder is recorded
    by its absolute path, a missing one is named, and --lm loads the checkpoint around the moved LM."""
    import shutil

    from tempo_analysis import hub
    from tempo_analysis.causal_lm import tiny_causal_lm
    from tempo_analysis.cli import main
    from tempo_analysis.future_text.tokenizer import ensure_special_tokens, train_bpe_tokenizer

    monkeypatch.setenv("TEMPO_ANALYSIS_CACHE_DIR", str(tmp_path / "cache"))      # the LM-state cache
    monkeypatch.setattr(hub, "_connect", lambda host, port, timeout: False)       # the hub does not answer
    monkeypatch.setattr(hub, "hub_cached", lambda name, filename="config.json": False)
    frame = toy_frame()
    work = tmp_path / "work"
    work.mkdir()
    frame.to_csv(work / "t.csv", index=False)
    tok = ensure_special_tokens(train_bpe_tokenizer(frame["text"], 300))
    tiny_causal_lm(tokenizer=tok, n_layer=1, n_embd=16, n_head=2, seed=0).save_pretrained(work / "mylm")
    tok.save_pretrained(work / "mylm")
    monkeypatch.chdir(work)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["future-text", "train", "--data", "csv:t.csv", "--variant", "baseline", "--lm", "mylm",
                     "--finetune-steps", "2", "--batch-size", "64", "--out", "run"]) == 0
        meta = json.loads((work / "run" / "config.json").read_text())
        assert meta["lm"] == str((work / "mylm").resolve())
        assert not (work / "run" / "base_lm").exists()
        # the library alike: FutureTextModel(settings(lm="mylm")) records the folder's absolute path
        settings = FutureTextSettings(lm="mylm", finetune_steps=2, batch_size=64, adapter_rank=0)
        lib = FutureTextModel(settings, variants=["baseline"]).fit(frame)
        lib.save(work / "lib")
        assert json.loads((work / "lib" / "config.json").read_text())["lm"] == meta["lm"] == lib.config_.lm
        assert settings.lm == "mylm" and lib.overrides == {"variants": ["baseline"]}   # the user's settings untouched
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        monkeypatch.chdir(elsewhere)
        generate = ["future-text", "generate", "--checkpoint", str(work / "run"), "--year", "2015", "--n", "1",
                    "--max-new-tokens", "4", "--num-beams", "1"]
        capsys.readouterr()
        assert main(generate) == 0
        texts = capsys.readouterr().out
        shutil.move(work / "mylm", tmp_path / "moved")
        assert main(generate) == 2
        err = capsys.readouterr().err
        assert f"the LM this checkpoint was trained on ({work / 'mylm'}) is missing" in err
        assert "--lm DIR" in err and err.count("\n") == 1
        assert main([*generate, "--lm", str(tmp_path / "moved")]) == 0          # the same LM, moved
        assert capsys.readouterr().out == texts
        assert main(["future-text", "evaluate", "--checkpoint", str(work / "run"), "--year", "2015", "--n-generate",
                     "1", "--max-new-tokens", "4", "--num-beams", "1", "--lm", str(tmp_path / "moved")]) == 0
        capsys.readouterr()
        assert main([*generate, "--lm", str(tmp_path / "nope")]) == 2
        assert "--lm path" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.lm
def test_frequency_model_beats_all_years_baseline_on_planted_world():
    """Notebook 04's claim at its defaults (SmolLM2, frozen, 20 documents per year): the frequency
    bias beats its time-blind control (same LM, same adaptation) in content perplexity."""
    from tempo_analysis.future_text.splits import select_years

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loaded = load_yearly("world")
        frame, truth = loaded.data, loaded.truth
    exp = FutureTextModel(variants=["baseline", "freq"]).fit(select_years(frame, None, 20, 0),
                                                                                 history=frame)
    r = exp.score().set_index("model")
    assert r.loc["freq", "test_content_ppl"] < r.loc["baseline", "test_content_ppl"]
    assert r.loc["freq", "dev_content_ppl"] < r.loc["baseline", "dev_content_ppl"]   # also with train-only history
    assert isinstance(truth, pd.DataFrame) and {"word", "year", "rate"} <= set(truth.columns)


def test_copy_rate_counts_verbatim_8grams():
    from tempo_analysis.future_text.whatif import copy_rate

    gen = ["A b c d e f g h i", "q r s"]                      # two 8-grams; the second text has none
    assert copy_rate(gen, ["x a b c d e f g h y"]) == 0.5     # "a b ... h" is in the training text
    assert copy_rate(gen, ["a b c d e f g h i"]) == 1.0
    assert copy_rate(gen, ["b c d e f g h"]) == 0.0 and copy_rate(["short text"], ["short text"]) == 0.0


def test_trend_injection_raises_the_bias_monotonically_and_the_word_in_generations(exp):
    """The what-if does what it says, with the right sign and scale: a rising trend injected into
    'kernel' (a falling word) raises its bias by exactly scale * log(factor) in a model whose bias
    follows last year's (per-token centred) log-frequency, and generations at the same seeds then
    use the word >= 2x as often."""
    from tempo_analysis.future_text.whatif import trend_response

    m, tok = exp.models_["freq-nolstm"], exp.tokenizer_
    assert m.config.center_tokens
    with torch.no_grad():
        m.bias.scale.fill_(1.0)
        m.alpha.fill_(1.0)
    k = word_token(tok, "kernel")
    c = exp.freq_table_.counts
    n_last = c[-1].sum()
    biases = []
    for factor in (1.0, 2.0, 4.0, 8.0, 16.0):
        with injected_trend(m, exp.freq_table_, word_pieces(tok, "kernel"), last=3, factor=factor):
            biases.append(float(forecast_bias(m, 2015)[k]))
    assert np.all(np.diff(biases) > 0), biases
    # scale: the last history year's feature log((c+1)/(N+V)) moves by log((f c + 1)/(c + 1)) - log((N'+V)/(N+V))
    ck = max(c[-1, k], 1.0)
    added = (16.0 - 1.0) * sum(max(c[-1, t], 1.0) for t in set(word_pieces(tok, "kernel")))
    want = np.log((16.0 * ck + 1) / (c[-1, k] + 1)) - np.log((n_last + added + c.shape[1]) / (n_last + c.shape[1]))
    assert biases[-1] - biases[0] == pytest.approx(want, rel=1e-4)
    with torch.no_grad():
        m.bias.scale.fill_(3.0)                   # a bias that trusts the history strongly
    word = next(w for w in ("kernel", "method", "encoder", "helps", "model") if len(word_pieces(tok, w)) == 1)
    r = trend_response(exp, m, [word], factor=16.0, n=4, settings=GEN)   # a one-token word: the tiny LM can write it
    row = r["table"].iloc[0]
    assert row["bias_after"] > row["bias_before"] and r["trend_response"] >= 2.0, r["table"]


def test_expected_occurrences_in_generated_texts_follow_the_bias_with_its_sign_and_scale(exp):
    """The decoder's expected count of a word in texts it generated (``generated_word_probs``, as
    ``trend_response`` reports it) is the sum of the word's next-token probability from the model's own
    forward pass, and an injected rise multiplies it by the exact softmax of the forward logits plus the
    bias change: above 1 (sign) and, for a x16 rise taken at face value, well above 2 (scale)."""
    from dataclasses import replace

    from tempo_analysis.future_text.whatif import generated_states, generated_word_probs

    m, tok, year = exp.models_["freq-nolstm"], exp.tokenizer_, exp.test_year_
    with torch.no_grad():
        m.bias.scale.fill_(1.0)
        m.alpha.fill_(1.0)
    word = next(w for w in ("kernel", "method", "encoder", "helps", "model") if len(word_pieces(tok, w)) == 1)
    k = word_token(tok, word)
    texts = generate_texts(m, tok, year, 6, settings=replace(GEN, num_beams=1))
    bos = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
    enc = [[bos] + tok(t, add_special_tokens=False)["input_ids"] for t in texts]
    with torch.no_grad():   # the reference: FutureLM.forward, one text at a time (no padding)
        logits = torch.cat([m(input_ids=torch.tensor([e]), years=[year]).logits[0, :-1] for e in enc])
    hidden = generated_states(m, tok, texts)
    assert hidden.shape[0] == logits.shape[0] == sum(len(e) - 1 for e in enc)
    before = generated_word_probs(m, hidden, year, [k])[k]
    assert before == pytest.approx(float(torch.softmax(logits, -1)[:, k].sum()), rel=1e-4)
    b0 = torch.as_tensor(forecast_bias(m, year))
    with injected_trend(m, exp.freq_table_, word_pieces(tok, word), last=3, factor=16.0):
        after = generated_word_probs(m, hidden, year, [k])[k]
        delta = torch.as_tensor(forecast_bias(m, year)) - b0
    want = float(torch.softmax(logits + delta, -1)[:, k].sum())
    assert after == pytest.approx(want, rel=1e-4)
    assert delta[k] > 2.0 and after / before >= 2.0, (before, after, float(delta[k]))


def test_trained_frequency_models_respond_to_a_rising_trend(exp):
    """Sign and scale of the trained freq model's what-if: a rising trend injected into a word raises
    its bias strictly with the factor, each step by at least the linear skip's share
    alpha * softplus(skip) * (rise of the last year's centred feature) (the monotone LSTM can only
    add) and at most that plus alpha * ||softplus(A)||_1 (the LSTM term lies in [0, ||A||_1])."""
    m, tok = exp.models_["freq"], exp.tokenizer_
    assert m.config.monotone_trend
    sp = torch.nn.functional.softplus
    with torch.no_grad():
        alpha, skip, a1 = float(m.alpha), float(sp(m.bias.skip)), float(sp(m.bias.head.weight).sum())
    assert alpha > 0 and skip > 0
    S = m.token_ids.cpu().numpy()
    for word in ("transformer", "kernel"):
        k = word_token(tok, word)
        j = int(np.searchsorted(S, k))
        biases, last = [], []
        for factor in (1.0, 2.0, 4.0, 8.0, 16.0, 64.0):
            with injected_trend(m, exp.freq_table_, word_pieces(tok, word), last=3, factor=factor):
                biases.append(float(forecast_bias(m, 2015)[k]))
                last.append(float(m.history[-1, j, 0]))
        rise, floor = np.diff(biases), alpha * skip * np.diff(last)
        assert (floor > 0).all() and (rise >= floor - 1e-5).all(), (word, biases, floor)
        assert (rise <= floor + alpha * a1 + 1e-5).all(), (word, biases, floor)
        assert biases[-1] - biases[0] >= alpha * skip * (last[-1] - last[0]) - 1e-5 > 0


def test_history_frame_gives_the_frequency_counts_and_must_cover_the_training_years():
    """fit(data, history=full): the frequency history counts every document of the full frame before
    the test year (not only the LM's subsample), and never the test year's."""
    full = toy_frame(docs_per_year=12, seed=3)
    sub = full.groupby("year").head(4)
    e = started(variants=["baseline"])
    e._setup(sub, history=full)
    tok = e.tokenizer_
    past = full[full["year"] < e.test_year_]
    want = sum(len(tok(t, add_special_tokens=False)["input_ids"]) for t in past["text"])
    assert e.freq_table_.counts.sum() == want
    assert e.freq_table_.years == list(range(2010, e.test_year_))
    k = word_token(tok, "kernel")

    def n_k(texts):
        return sum(tok(t, add_special_tokens=False)["input_ids"].count(k) for t in texts)

    assert e.freq_table_.counts[:, k].sum() == n_k(past["text"]) > n_k(sub[sub["year"] < e.test_year_]["text"])
    with pytest.raises(ValueError, match="history: no documents for the training years"):
        e._setup(sub, history=full[full["year"] != 2011])


def test_generation_decodes_inside_packed_linears(exp, monkeypatch):
    """generate_together decodes inside cpu_linears.packed_linears, told the batch's rows (texts x beams)."""
    from tempo_analysis.future_text import generation

    seen = []
    real = generation.packed_linears
    monkeypatch.setattr(generation, "packed_linears",
                        lambda lm, rows=4: seen.append((lm, rows)) or real(lm, rows=rows))
    m = exp.models_["baseline"]
    generate_together([m, m], exp.tokenizer_, 2015, 3, settings=GEN)
    assert seen == [(m.lm, 2 * 3 * GEN.num_beams)]


def test_the_frequency_history_counts_every_year_before_the_test_year():
    # training years that stop before the dev year: 2013's documents are real text, not a carried copy
    frame = toy_frame(years=range(2010, 2017))
    fm = started(variants=["baseline"], dev_year=2015, test_year=2016, train_years=(2010, 2012))
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)      # no "no documents" warning for 2013
        fm._setup(frame)
    assert fm.freq_table_.years == list(range(2010, 2016)) and 2013 not in fm.freq_table_.filled_years
    ids = fm.tokenizer_(frame.loc[frame["year"] == 2013, "text"].tolist(), add_special_tokens=False)["input_ids"]
    k = word_token(fm.tokenizer_, "kernel")
    assert fm.freq_table_.counts[3, k] == sum(d.count(k) for d in ids)


def test_load_refuses_a_frequency_table_counted_with_another_tokenizer(exp, tmp_path):
    from tempo_analysis.future_text.frequency import FrequencyTable
    from tempo_analysis.future_text.tokenizer import train_bpe_tokenizer

    run = exp.save(tmp_path / "run")
    frame = toy_frame()
    frame = frame[frame["year"] <= 2014]
    other = train_bpe_tokenizer(frame["text"], vocab_size=320)
    FrequencyTable.from_texts(frame["text"].tolist(), frame["year"].tolist(), other,
                              year_range=(2010, 2014)).save(run / "frequency_table.safetensors")
    with pytest.raises(DataError, match="differs from the frequency table"):
        FutureTextModel.load(run)


def test_a_split_word_is_labelled_as_its_first_piece_with_a_note(exp, monkeypatch):
    from tempo_analysis.future_text.whatif import shown_tokens

    tok = exp.tokenizer_
    whole = next(t[1:] for t in sorted(tok.get_vocab()) if t.startswith("\u0120") and t[1:].isalpha()
                 and len(t) > 3 and len(word_pieces(tok, t[1:])) == 1)
    split = "kernel"
    assert len(word_pieces(tok, split)) > 1
    ids, labels, notes = shown_tokens(tok, [split, whole, split])
    assert ids == [word_token(tok, split), word_token(tok, whole)]
    assert labels[1] == whole and labels[0].startswith(f"{split} → ") and "pieces" in labels[0]
    assert len(notes) == 1 and split in notes[0] and "first piece" in notes[0]
    pytest.importorskip("ipywidgets")
    from tempo_analysis.widgets import future_text as wft

    shown = []
    monkeypatch.setattr(wft, "display", shown.append)
    wft.trend_injector(exp, "freq-nolstm", [split, whole], n=1, settings=GEN, run_now=True)
    assert "first piece" in shown[0].value and "kernel" in shown[0].value   # the note comes before the bars
    bars = " ".join(str(list(tr.x)) + str(list(tr.y)) for tr in shown[1].data)
    assert "kernel → " in bars and whole in bars


@pytest.mark.parametrize("given, expected", [({"dev_year": 2013}, (2013, 2014)), ({"test_year": 2014}, (2013, 2014)),
                                             ({}, (2015, 2016))])
def test_a_year_given_alone_is_completed_not_replaced_by_the_default_split(given, expected):
    """dev_year alone: the next year with documents is the test year; test_year alone: the last year
    before it is dev. The default split (the last two years) would have trained on the asked test year."""
    fm = started(variants=["baseline"], **given)
    fm._setup(toy_frame(years=range(2010, 2017)))
    assert (fm.dev_year_, fm.test_year_) == expected and max(fm.train_years_) < expected[0]


def test_the_window_check_binds_only_the_variants_that_read_a_window():
    """Five years, three of them for training: window 3 is too long for freq's LSTM, but the baseline,
    last-n and freq-nolstm read no window and must not be refused for it (the CLI refuses --window for them)."""
    frame = toy_frame(years=range(2010, 2015))
    for variant in ("baseline", "last-n", "freq-nolstm"):
        started(window=3, variants=[variant])._setup(frame)
    with pytest.raises(ValueError, match="window=3 is longer than the 2 training years"):
        started(window=3, variants=["baseline", "freq"])._setup(frame)
    started(window=2, variants=["freq"])._setup(frame)                    # every training year but the first


@pytest.mark.parametrize("name", ["baseline", "freq"])
def test_evaluate_from_cached_states_equals_scoring_the_full_model(exp, name):
    """FutureTextModel.evaluate reads the cached LM states; its perplexity and content perplexity equal
    scoring the full model on the year's texts (metrics.perplexity, an independent path)."""
    from tempo_analysis.future_text.metrics import perplexity

    fast = exp.evaluate(name, exp.test_year_)
    full = perplexity(exp.models_[name], exp.tokenizer_, exp._texts_of(exp.test_year_), exp.test_year_,
                      block_size=None)
    assert (fast["tokens"], fast["content_tokens"]) == (full["tokens"], full["content_tokens"])
    assert fast["ppl"] == pytest.approx(full["ppl"], rel=1e-4)
    assert fast["content_ppl"] == pytest.approx(full["content_ppl"], rel=1e-4)


def test_context_history_is_read_over_the_models_tokens(exp, monkeypatch):
    """A context table over the whole vocabulary is cut to the model's tokens S; one already over S is read as is."""
    S = exp.token_ids_
    full = np.random.default_rng(0).normal(size=(3, len(exp.tokenizer_), 2))

    class Table:
        def __init__(self, feats):
            self.feats = feats

        def features(self):
            return self.feats

    monkeypatch.setattr(exp, "_context_table", lambda: Table(full))
    np.testing.assert_array_equal(exp._history("context"), full[:, S])
    monkeypatch.setattr(exp, "_context_table", lambda: Table(full[:, S]))
    np.testing.assert_array_equal(exp._history("context2"), full[:, S])


@pytest.mark.parametrize("search, learns", [("learn", True), ("grid", False), ("fixed", False)])
def test_alpha_is_a_trained_parameter_only_when_it_is_learned(exp, monkeypatch, search, learns):
    monkeypatch.setattr(exp, "config_", dataclasses.replace(exp.config_, alpha_search=search))
    model = exp._build("freq")
    assert model.alpha.requires_grad is learns and model.config.learn_alpha is learns


def test_the_lm_context_table_covers_the_years_before_the_test_year_over_the_models_tokens(exp, monkeypatch):
    """eq. 7 with the LM as the encoder: per-year means of the LM's own states, from the first training year up
    to the year before the test year (never the test year's text), computed once."""
    from tempo_analysis.future_text.states import state_context_table

    monkeypatch.setattr(exp, "context_table_", None)
    table = exp._context_table()
    first, last = exp.train_years_[0], exp.test_year_ - 1
    assert table.years == list(range(first, last + 1)) and exp._context_table() is table
    S = torch.as_tensor(exp.token_ids_)
    rows = np.flatnonzero((exp.frame_["year"] >= first).to_numpy() & (exp.frame_["year"] <= last).to_numpy())
    want = state_context_table(exp.terms_.states.select(sorted(rows)), S, first, last,
                               exp.base_.get_input_embeddings().weight.detach().cpu()[S])
    np.testing.assert_allclose(table.features(), np.asarray(want), atol=1e-6)
    assert table.features().shape[:2] == (len(table.years), len(S))
    np.testing.assert_array_equal(exp.token_ids_, np.union1d(np.flatnonzero(exp.freq_table_.counts.sum(0) > 0),
                                                             [exp.tokenizer_.eos_token_id]))


def test_figures_at_their_edges():
    """Pure-figure checks on hand-made tables (no model): each forecast series in its own markers, the
    reference model's bar and line, 3-decimal tables, padded columns and counted trending words."""
    trends = pd.DataFrame({"word": ["kernel"] * 4, "year": [2014, 2015, 2016, 2016],
                           "series": ["actual", "actual", "forecast: freq", "forecast: last-n"],
                           "value": [0.1, 0.2, 0.25, 0.3]})
    d = figs.frequency_trends(trends).to_dict()
    assert {t["name"]: list(t["y"]) for t in d["data"]} == {
        "kernel (actual)": [0.1, 0.2], "kernel (forecast: freq)": [0.25], "kernel (forecast: last-n)": [0.3]}
    with pytest.raises(ValueError, match="'series'"):
        figs.frequency_trends(trends.drop(columns="series"))
    assert figs.frequency_trends(trends.assign(extra=1)).to_dict()["data"]          # extra columns are fine
    results = pd.DataFrame({"model": ["baseline", "freq"], "test_ppl": [40.12345, 38.98765]})
    b = figs.metric_bars(results, "test_ppl").to_dict()
    assert b["data"][0]["marker"]["color"] == [figs.PALETTE[1], figs.PALETTE[0]]    # the reference stands out
    line = [s for s in b["layout"]["shapes"] if s["type"] == "line"]
    assert len(line) == 1 and line[0]["y0"] == pytest.approx(40.12345)              # at the reference's value
    assert figs.variants_table(results).to_dict()["data"][0]["cells"]["values"][1] == [40.123, 38.988]
    s = figs.side_by_side(["the transformer, a Transformer"], ["one", "two transformer"], ["transformer"]).to_dict()
    left, right = s["data"][0]["cells"]["values"]
    assert len(left) == len(right) == 2 and left[1] == ""                           # the shorter side is padded
    assert s["data"][0]["header"]["values"] == ["<b>baseline</b> (2 trending words)",
                                                "<b>temporal bias</b> (1 trending words)"]
    assert "(0 trending words)" in figs.side_by_side(["a transformer"], ["b"]).to_dict()["data"][0]["header"]["values"][0]
