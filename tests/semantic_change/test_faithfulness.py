"""Faithfulness and correctness of the ranking pipeline: the pure time formula from the CLI, training and
extraction lengths, per-word seeded sampling, padded vocabularies, the head warm-up's general text,
oracle vs unsupervised thresholds, DWUG offsets and periods, --targets on the world, --layers ranges,
the time-blind control and the Both variant, the bootstrap CI and the frequency baseline."""
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from tempo_analysis.cli import main
from tempo_analysis.data import DataError
from tempo_analysis.data.change import ChangeData
from tempo_analysis.resolve import load_change_data
from tempo_analysis.evaluation.ranking import correlate, spearman_ci
from tempo_analysis.semantic_change import PostTrainConfig, RankConfig, SemanticChangeRanker, cli_config
from tempo_analysis.semantic_change.baselines import frequency_change
from tempo_analysis.semantic_change.config import parse_layers, preset
from tempo_analysis.semantic_change.pipeline import add_target_tokens, build_model, evaluate_scores, sample_usages
from tempo_analysis.semantic_change.training import post_train

from tests.robustness.builders import dwug_row, write_dwug

FIX = Path(__file__).parent / "fixtures"


# --- the paper's pure formula, from RankConfig and the CLI ----------------------------------------
def test_time_residual_false_reaches_the_model_from_config_and_cli(tiny_path, tmp_path):
    data = load_change_data(f"dwug:{FIX / 'dwug'}").data
    r = SemanticChangeRanker(RankConfig(encoder=tiny_path, time_residual=False, train=None, layers=1,
                                        samples=3)).fit(data)
    assert r.model_.model.config.time_residual is False
    assert all(not layer.attention.residual for layer in r.model_.model.temporal.layers)
    assert cli_config(time_residual=False).time_residual is False and preset("cli").time_residual is True
    js = tmp_path / "m.json"
    rc = main(["semantic-change", "rank", "--data", f"dwug:{FIX / 'dwug'}", "--model", tiny_path,
               "--no-time-residual", "--train-epochs", "0", "--layers", "1-2", "--samples", "3",
               "--out", str(tmp_path / "r.tsv"), "--json", str(js)])
    assert rc == 0
    cfg = json.loads(js.read_text())["config"]
    assert cfg["time_residual"] is False and cfg["layers"] == [1, 2]


def test_layers_take_a_count_a_list_or_a_range(tmp_path, capsys):
    assert parse_layers(4) == 4 and parse_layers("4") == 4
    assert parse_layers("8,9,10") == [8, 9, 10] and parse_layers("7-12") == [7, 8, 9, 10, 11, 12]
    assert parse_layers("1-3,6") == [1, 2, 3, 6] and parse_layers([3, 1]) == [1, 3]
    assert RankConfig(layers="2-4").layers == [2, 3, 4]
    for bad in ("4-2", "a", "1,,2", []):
        with pytest.raises(ValueError):
            parse_layers(bad)
    rc = main(["semantic-change", "rank", "--data", "world", "--layers", "3-x", "--out", str(tmp_path / "x.tsv")])
    assert rc == 2 and "--layers" in capsys.readouterr().err


# --- training and extraction read the same number of tokens ---------------------------------------
def test_post_training_max_length_is_the_extraction_max_length():
    cli = preset("cli")
    for cfg in (cli, preset("notebook"), replace(cli, max_length=96)):
        assert cfg.train_config().max_length == cfg.max_length
    own = replace(cli, train=replace(cli.train, max_length=32))
    assert own.train_config().max_length == 32          # an explicit value is kept (documented)


# --- a word's sample does not depend on the other targets -----------------------------------------
def test_usage_sample_is_seeded_per_word():
    data = load_change_data("world").data
    both, _ = sample_usages(data, 5, seed=3)
    sub = ChangeData(data.name, data.corpus, ["mouse"], data.truth, data.usages)
    alone, _ = sample_usages(sub, 5, seed=3)
    assert [u for u in both if u.word == "mouse"] == alone
    rev = ChangeData(data.name, data.corpus, list(reversed(data.targets)), data.truth, data.usages)
    again, _ = sample_usages(rev, 5, seed=3)
    assert sorted(map(repr, again)) == sorted(map(repr, both))
    other, _ = sample_usages(sub, 5, seed=4)
    assert other != alone or len(alone) <= 5


# --- padded vocabularies --------------------------------------------------------------------------
def test_add_target_tokens_with_a_padded_vocabulary(tiny_path):
    data = load_change_data(f"dwug:{FIX / 'dwug'}").data
    cm = build_model("temporal-attention", data.periods, encoder=tiny_path)
    n_tok = len(cm.tokenizer)
    cm.model.grow_vocab([[5]] * 8, new_ids=list(range(n_tok, n_tok + 8)))   # 8 padding rows past the tokenizer
    padded = cm.model.config.vocab_size
    assert padded == n_tok + 8
    row_before = cm.model.temporal.word_embeddings.weight[n_tok + 7].clone()
    added = add_target_tokens(cm, ["unbelievableness"])
    new_id = cm.tokenizer.convert_tokens_to_ids("unbelievableness")
    assert added == ["unbelievableness"] and new_id == n_tok          # below the embedding size
    assert cm.model.config.vocab_size == padded                         # no growth needed
    pieces = cm.tokenizer("unbelievable ness", add_special_tokens=False)["input_ids"]
    w = cm.model.temporal.word_embeddings.weight
    assert not torch.allclose(w[new_id], w[5])                          # its own row was initialised
    assert torch.equal(w[n_tok + 7], row_before)                        # other padding rows untouched
    ids = cm.tokenizer("the unbelievableness", add_special_tokens=False, return_tensors="pt")["input_ids"]
    out = cm.model(input_ids=ids, time=torch.tensor([0]), output_hidden_states=True)
    assert torch.isfinite(out.logits).all() and len(pieces) > 1


# --- head warm-up sees general text, with and without a time token --------------------------------
@pytest.mark.parametrize("method", ["temporal-attention", "time-token"])
def test_head_warmup_sees_general_text(tiny_path, method):
    data = load_change_data(f"dwug:{FIX / 'dwug'}").data
    cm = build_model(method, data.periods, encoder=tiny_path)
    texts = data.corpus.df["text"].tolist()
    prefix = cm.prefix(data.corpus.df["period"].tolist())
    general = ["The weather was fine and the market was busy.", "She read the letter twice before bed."] * 5
    rep = post_train(cm.model, cm.tokenizer, texts, [cm.period_index(p) for p in data.corpus.df["period"]],
                     PostTrainConfig(head_steps=2, epochs=0, batch_size=8, progress=False),
                     general_text=general, prefix_ids=prefix, has_time_token=cm.time_token_ids is not None)
    assert rep["n_general_sentences"] == 10 and rep["n_head_examples"] == len(texts) + 10


# --- thresholds: oracle labelled, unsupervised added ----------------------------------------------
def test_binary_accuracy_oracle_and_unsupervised():
    scores = pd.DataFrame({"word": list("abcdef"), "score": [0.9, 0.8, 0.1, 0.12, 0.11, 0.13]})
    truth = pd.DataFrame({"word": list("abcdef"), "graded": [1, .9, 0, .1, 0, .2], "binary": [1, 1, 0, 0, 0, 1]})
    m = evaluate_scores(scores, truth)
    s = scores["score"].to_numpy()
    assert m["binary_threshold"] == pytest.approx(s.mean() + s.std())
    assert m["binary_accuracy"] == pytest.approx(5 / 6)            # a, b above mean+1std
    assert m["binary_accuracy_oracle"] == pytest.approx(1.0)       # top 3 (k from the truth) = a, b, f: it peeks
    assert m["binary_threshold_oracle"] < 0.13
    assert m["spearman_ci_low"] <= m["spearman"] <= m["spearman_ci_high"]


def test_spearman_ci_narrows_with_more_targets():
    rng = np.random.default_rng(0)
    widths = []
    for n in (15, 400):
        t = rng.random(n)
        s = t + rng.normal(0, 0.3, n)
        sc = pd.DataFrame({"word": map(str, range(n)), "score": s})
        tr = pd.DataFrame({"word": map(str, range(n)), "graded": t})
        lo, hi = spearman_ci(sc, tr, seed=1)
        assert lo < correlate(sc, tr)["spearman"] < hi
        widths.append(hi - lo)
    assert widths[1] < widths[0] / 2
    assert spearman_ci(sc, tr, seed=1) == spearman_ci(sc, tr, seed=1)


# --- DWUG: out-of-range offsets skipped and counted; one period refused -----------------------------
def test_dwug_out_of_range_offsets_are_skipped_with_a_count(tmp_path):
    bad = dwug_row("plane_nn", 2, "p3", "the plane landed")
    bad[-2] = "40:45"
    root = write_dwug(tmp_path, {"plane_nn": [dwug_row("plane_nn", 1, "p1", "the plane of the table"),
                                              dwug_row("plane_nn", 2, "p2", "the plane landed late"), bad]})
    with pytest.warns(UserWarning, match=r"skipped 1 DWUG usage.*'40:45'"):
        data = load_change_data(f"dwug:{root}").data
    assert len(data.usages) == 2


def test_dwug_single_period_is_a_clear_error(tmp_path):
    root = write_dwug(tmp_path, {"plane_nn": [dwug_row("plane_nn", 1, "p1", "the plane of the table"),
                                              dwug_row("plane_nn", 1, "p2", "the plane landed late")]})
    with pytest.raises(DataError, match=r"needs at least 2 periods"):
        load_change_data(f"dwug:{root}")


def test_mixed_grouping_types_are_a_clear_error(tmp_path):
    root = write_dwug(tmp_path, {"plane_nn": [dwug_row("plane_nn", 1, "p1", "the plane of the table"),
                                              dwug_row("plane_nn", "late", "p2", "the plane landed")]})
    with pytest.raises(DataError, match="mixes numbers"):
        load_change_data(f"dwug:{root}")


def test_groupings_spelled_differently_are_one_period(tmp_path):
    # another lemma's file writes its periods as 1.0 / 2.0 (a spreadsheet export): still two periods, not four
    root = write_dwug(tmp_path, {"plane_nn": [dwug_row("plane_nn", 1, "p1", "the plane of the table"),
                                              dwug_row("plane_nn", 2, "p2", "the plane landed late")],
                                 "tip_vb": [dwug_row("tip_vb", "1.0", "t1", "tip the waiter"),
                                            dwug_row("tip_vb", " 2.0", "t2", "tip the balance")]})
    data = load_change_data(f"dwug:{root}").data
    assert data.periods == ["1", "2"]
    assert sorted(u.period for u in data.usages) == ["1", "1", "2", "2"]


# --- --targets applies to the world ---------------------------------------------------------------
def test_targets_apply_to_the_world_and_unknown_ones_are_rejected():
    data = load_change_data("world", targets=["cell", "table"]).data
    assert data.targets == ["cell", "table"] and sorted(data.truth["word"]) == ["cell", "table"]
    assert {u.word for u in data.usages} == {"cell", "table"}
    with pytest.raises(DataError, match="zebra"):
        load_change_data("world", targets=["cell", "zebra"])


# --- the time-blind control and the Both variant --------------------------------------------------
def test_no_time_control_feeds_one_period_and_both_has_token_and_attention(tiny_path):
    data = load_change_data(f"dwug:{FIX / 'dwug'}").data
    ta = build_model("temporal-attention", data.periods, encoder=tiny_path)
    nt = build_model("no-time", data.periods, encoder=tiny_path)
    assert [nt.period_index(p) for p in data.periods] == [0, 0]
    assert [ta.period_index(p) for p in data.periods] == [0, 1]
    for a, b in zip(ta.model.state_dict().values(), nt.model.state_dict().values()):   # same model, same seed
        assert torch.equal(a, b)
    both = build_model("both", data.periods, encoder=tiny_path)
    assert both.model.config.time_attention == "faithful" and both.time_token_ids is not None
    assert both.prefix(data.periods) == [[both.time_token_ids[0]], [both.time_token_ids[1]]]
    # the no-time model reads the same text identically in both periods, however trained
    with torch.no_grad():
        for layer in nt.model.temporal.layers:
            layer.attention.time_gate.fill_(1.0)
    u = [x for x in data.usages if x.word == "plane"][:2]
    u2 = [replace(x, period=data.periods[1 - data.periods.index(x.period)]) for x in u]
    a, b = nt.embed(u, layers=[2]).vectors, nt.embed(u2, layers=[2]).vectors
    assert np.allclose(a, b)
    ta.model.load_state_dict(nt.model.state_dict())
    assert not np.allclose(ta.embed(u, layers=[2]).vectors, ta.embed(u2, layers=[2]).vectors)


def test_frequency_change_baseline():
    corpus = load_change_data("world").data.corpus
    df = pd.DataFrame({"period": ["a"] * 4 + ["b"] * 4,
                       "text": ["x cell", "x cell", "y", "z", "x cell", "y", "z", "w"] })
    from tempo_analysis.data import PeriodCorpus
    c = PeriodCorpus.from_frame(df, order=["a", "b"])
    data = ChangeData("toy", c, ["cell", "y"], None)
    out = frequency_change(data).set_index("word")
    assert out.loc["cell", "score"] == pytest.approx(abs(np.log2(1.5 / 2.5)))
    assert out.loc["y", "score"] == pytest.approx(0.0) and out.loc["cell", "n_a"] == 2
    assert len(corpus) > 0
    # given usages (DWUG, the world, the pseudoword benchmark) are counted per their own period
    from tempo_analysis.data.periods import TargetUsage
    given = [TargetUsage("cell", p, "x cell", 2, 6) for p in ["a", "b", "b", "b"]]
    out = frequency_change(ChangeData("toy", c, ["cell"], None, given)).set_index("word")
    assert (out.loc["cell", "n_a"], out.loc["cell", "n_b"]) == (1, 3)
    assert out.loc["cell", "score"] == pytest.approx(np.log2(3.5 / 1.5))


def test_scores_equal_up_to_float_noise_rank_nothing():
    truth = pd.DataFrame({"word": list("abcde"), "graded": [0.9, 0.5, 0.3, 0.1, 0.0]})
    noise = pd.DataFrame({"word": list("abcde"), "score": [4e-16, 3e-16, 2e-16, 1e-16, 0.0]})
    m = evaluate_scores(noise, truth)
    assert m["spearman"] == 0.0 and m["constant_scores"] and m["spearman_ci_low"] == m["spearman_ci_high"] == 0.0
    tiny = noise.assign(score=noise["score"] * 1e10)          # 1e-6-sized scores are a real ranking
    assert evaluate_scores(tiny, truth)["spearman"] == pytest.approx(1.0)
