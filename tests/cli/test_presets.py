"""``--preset {notebook,cli,paper}`` and ``--print-config`` on every command (tempo_analysis.cli's module doc).

- ``--preset paper --print-config`` holds each paper's values where the library implements them
  (the papers in shared/papers), and names each paper setting it does not reach;
- the rule for a preset with an explicit option: **the option wins**, even typed at the cli default
  value, and ``--print-config`` shows it (and lists it under "explicit");
- an unknown preset name is one line naming the presets (exit 2), on every command;
- ``--print-config`` exits 0 before any data, checkpoint or model is read, writes nothing, and needs
  none of the options a run needs (--out, --checkpoint, ...);
- commands without method settings refuse a preset that cannot apply, in one line.
"""
from __future__ import annotations

import argparse
import json

import pytest

from tempo_analysis.cli import PRESET_NAMES, build_parser, main

WORK = ["tempo_analysis.evaluation.classification.cross_validate",
        "tempo_analysis.semantic_change.estimator.SemanticChangeRanker.fit",
        "tempo_analysis.diffusion.DiffusionMapper.fit", "tempo_analysis.diffusion.DiffusionMapper.load",
        "tempo_analysis.future_text.estimator.FutureTextModel.fit",
        "tempo_analysis.future_text.estimator.FutureTextModel.load",
        "tempo_analysis.encoders.load_encoder", "tempo_analysis.encoders.check_encoder",
        "tempo_analysis.causal_lm.load_causal_lm", "tempo_analysis.causal_lm.check_causal_lm",
        "tempo_analysis.encoder_mlm.brown_sentences", "tempo_analysis.world.generate_world",
        "tempo_analysis.study.run_study",
        *(f"tempo_analysis.resolve.{f}" for f in ("load_timelines", "load_change_data", "load_social", "load_yearly"))]


def _fail(*args, **kwargs):
    raise AssertionError("--print-config read data, a checkpoint or a model")


@pytest.fixture
def no_work(monkeypatch):
    for target in WORK:
        monkeypatch.setattr(target, _fail)


def leaf_commands() -> list[tuple[str, ...]]:
    """The command words of every runnable subcommand (a parser without subcommands of its own)."""
    out = []

    def walk(parser, words):
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            out.append(tuple(words))
        for a in subs:
            for name, child in a.choices.items():
                walk(child, [*words, name])

    walk(build_parser(), [])
    return [w for w in out if w]


COMMANDS = leaf_commands()
# what a command needs besides its options to parse at all (positionals)
POSITIONAL = {("stream", "compare"): ["a.json"], ("study",): ["02"]}
METHOD_COMMANDS = {("stream", "evaluate"), ("stream", "time-effect"), ("semantic-change", "rank"),
                   ("diffusion", "train"), ("diffusion", "analyze"), ("future-text", "train"),
                   ("future-text", "evaluate"), ("future-text", "generate"), ("future-text", "what-if")}


def printed(capsys, *argv) -> dict:
    rc = main(list(argv))
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    return json.loads(captured.out)


# ---------------------------------------------------------------------------------------------
# every command takes both options; an unknown name is one line
def test_the_walk_finds_every_command_and_each_takes_preset_and_print_config():
    assert len(COMMANDS) >= 13 and METHOD_COMMANDS <= set(COMMANDS)
    parser = build_parser()
    for words in COMMANDS:
        sub = parser
        for w in words:
            sub = next(a for a in sub._actions if isinstance(a, argparse._SubParsersAction)).choices[w]
        strings = {s for a in sub._actions for s in a.option_strings}
        assert {"--preset", "--print-config"} <= strings, words


@pytest.mark.parametrize("words", COMMANDS, ids=[" ".join(w) for w in COMMANDS])
def test_an_unknown_preset_is_one_line_naming_the_presets(words, capsys, no_work, tmp_path):
    rc = main([*words, *POSITIONAL.get(words, []), "--preset", "papr", "--print-config"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1, err
    assert err[0].startswith("tempo-analysis: error: --preset 'papr'") and all(n in err[0] for n in PRESET_NAMES)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("words", sorted(set(COMMANDS) - METHOD_COMMANDS), ids=lambda w: " ".join(w))
def test_a_command_without_method_settings_refuses_a_preset_in_one_line(words, capsys, no_work):
    taken = "notebook" if words == ("study",) else None      # study always runs the lessons' notebook settings
    for name in PRESET_NAMES:
        rc = main([*words, *POSITIONAL.get(words, []), "--preset", name, "--print-config"])
        captured = capsys.readouterr()
        if name == taken:
            assert rc == 0 and json.loads(captured.out)["preset"] == name
            continue
        err = captured.err.strip().splitlines()
        assert rc == 2 and len(err) == 1 and "--preset" in err[0] and "drop --preset" in err[0], err


@pytest.mark.parametrize("words", sorted(METHOD_COMMANDS), ids=lambda w: " ".join(w))
@pytest.mark.parametrize("name", PRESET_NAMES)
def test_print_config_reads_nothing_writes_nothing_and_needs_no_run_options(words, name, capsys, no_work, tmp_path):
    out = printed(capsys, *words, "--preset", name, "--print-config")
    assert out["command"] == " ".join(words) and out["preset"] == name and out["explicit"] == []
    assert ("not_as_in_paper" in out) == (name == "paper" and words not in {
        ("future-text", "evaluate"), ("future-text", "generate"), ("future-text", "what-if"), ("diffusion", "analyze")})
    assert list(tmp_path.iterdir()) == []


def test_print_config_with_an_output_path_writes_nothing(capsys, no_work, tmp_path):
    printed(capsys, "stream", "evaluate", "--out", str(tmp_path / "r.json"), "--print-config")
    printed(capsys, "diffusion", "train", "--out", str(tmp_path / "run"), "--print-config")
    assert list(tmp_path.iterdir()) == []


def test_no_preset_is_the_cli_preset(capsys, no_work):
    for words in (["stream", "evaluate"], ["semantic-change", "rank"], ["diffusion", "train"], ["future-text", "train"]):
        plain = printed(capsys, *words, "--print-config")
        cli = printed(capsys, *words, "--preset", "cli", "--print-config")
        assert plain["settings"] == cli["settings"] and plain["preset"] == "cli"


# ---------------------------------------------------------------------------------------------
# the paper presets hold the papers' values
def test_tempoformer_paper_preset(capsys, no_work):
    """TempoFormer on LRS: bert-base-uncased, window 20, 4 epochs, patience 3, one learning rate 1e-5, 512 tokens,
    the [CLS] summary, rotary base 1e4 over log-seconds gaps, 5 timeline folds x seeds 0, 1, 12, 123."""
    for words in (["stream", "evaluate"], ["stream", "time-effect"]):
        out = printed(capsys, *words, "--preset", "paper", "--print-config")
        protocol, model = out["settings"]["protocol"], out["settings"]["model"]
        assert protocol["data"] == "rumoureval2017" and protocol["folds"] == 5
        assert protocol["window"] in ([20], 20)
        if words[1] == "evaluate":
            assert protocol["seeds"] == [0, 1, 12, 123]
        assert (model["encoder"], model["epochs"], model["patience"], model["lr"], model["head_lr"],
                model["max_length"], model["summary"], model["freeze_local"]) == (
            "bert-base-uncased", 4, 3, 1e-5, 1e-5, 512, "cls", False)
        assert model["model_kwargs"]["rope_theta"] == 1e4 and model.get("model_kwargs", {}).get(
            "time_transform", "log1p") == "log1p"
        assert model["grad_accum_steps"] >= 1 and "grad_accum_steps" in out["not_as_in_paper"]
        assert {"lr", "batch_size"} <= set(out["not_as_in_paper"])


def test_temporal_attention_paper_preset(capsys, no_work):
    """SemEval-2020 English: bert-base-uncased, the pure faithful formula with each head's own ‖T_h‖, h = 12
    layers, cosine distance, no z-scoring, 128 tokens, the targets added to the vocabulary, 2 epochs at 1e-9,
    every sentence (no cap)."""
    out = printed(capsys, "semantic-change", "rank", "--preset", "paper", "--print-config")
    r = out["settings"]["ranker"]
    assert (r["method"], r["form"], r["time_residual"], r["time_norm"], r["layers"], r["scorer"], r["zscore"],
            r["encoder"], r["add_targets"], r["max_length"]) == (
        "temporal-attention", "faithful", False, "per_head", 12, "cosine", False, "bert-base-uncased", True, 128)
    t = r["train"]
    assert (t["epochs"], t["body_lr"], t["time_lr"], t["head_lr_stage1"], t["max_sentences"]) == (2.0, 1e-9, 1e-9, 1e-9,
                                                                                                   None)
    assert {"data", "bert-tiny recipe", "layers"} <= set(out["not_as_in_paper"])


def test_dcwe_paper_preset(capsys, no_work):
    """DCWE: lr 3e-6 (every weight), batch 4, 7 epochs, lambda_w = 100 with lambda_a = 1e-3 * lambda_w, 512 tokens,
    a dynamic vocabulary of the 100k most frequent words, BERT-base uncased, social vectors of 50, 4 GAT heads."""
    out = printed(capsys, "diffusion", "train", "--preset", "paper", "--print-config")
    t = out["settings"]["train"]
    assert (t["lr"], t["dynamic_lr"], t["head_lr"], t["batch_size"], t["epochs"], t["max_steps"], t["lambda_w"],
            t["lambda_a"], t["max_length"], t["top_k"], t["encoder"], t["social_dim"], t["gat_heads"],
            t["offset_dropout"]) == (3e-6, 3e-6, 3e-6, 4, 7, None, 100.0, None, 512, 100000, "bert-base-uncased", 50,
                                     4, 0.2)
    assert set(t["variants"]) == {"dcwe", "cwe", "sa", "ta"}
    assert {"max_length", "preprocessing", "dev perplexity, Wilcoxon test", "classifier head"} <= set(
        out["not_as_in_paper"])
    analyze = printed(capsys, "diffusion", "analyze", "--preset", "paper", "--print-config")["settings"]
    assert (analyze["n"], analyze["read"]) == (100, "neighbours")


def test_future_text_paper_preset(capsys, no_work):
    """ACL 2003-2019 / 2020 / 2021, GPT-2, every model variant, the alpha grid 1 ... 1e-5, eq. 6's Frequency
    model, the paper's decoding (beam 5, top-k 50, top-p 0.92, no repeated 2-gram); the fine-tuning and the
    three runs named as not reached."""
    out = printed(capsys, "future-text", "train", "--preset", "paper", "--print-config")
    s, m, g = out["settings"], out["settings"]["model"], out["settings"]["generation"]
    assert (s["data"], s["first_year"], m["dev_year"], m["test_year"], m["train_years"], m["lm"]) == (
        "acl", 2003, 2020, 2021, [2003, 2019], "gpt2")
    assert m["variants"] == ["baseline", "last-n", "freq-nolstm", "freq", "context", "context2"]
    assert (m["alpha_search"], m["last_n"], m["lstm_hidden"], m["freq_bias"]) == ("grid", [2, 3], 32, "paper")
    assert (g["num_beams"], g["do_sample"], g["top_k"], g["top_p"], g["no_repeat_ngram_size"]) == (5, True, 50, 0.92, 2)
    assert {"fine-tuning", "runs"} <= set(out["not_as_in_paper"]) and "freq" not in out["not_as_in_paper"]
    from tempo_analysis.future_text.config import ALPHA_GRID

    assert ALPHA_GRID == (1.0, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5)


# ---------------------------------------------------------------------------------------------
# the rule: an explicit option wins over the preset, even at the cli default value
def test_an_explicit_option_wins_over_the_preset_and_print_config_shows_it(capsys, no_work):
    out = printed(capsys, "stream", "evaluate", "--preset", "paper", "--window", "5", "--lr", "3e-5", "--seeds", "0",
                  "--rope-theta", "10", "--no-freeze-local", "--print-config")
    p, m = out["settings"]["protocol"], out["settings"]["model"]
    assert p["window"] == [5] and p["seeds"] == [0] and p["folds"] == 5 and p["data"] == "rumoureval2017"
    assert m["lr"] == 3e-5 and m["model_kwargs"]["rope_theta"] == 10.0 and m["head_lr"] == 1e-5 and not m["freeze_local"]
    assert {"--window", "--lr", "--seeds", "--rope-theta", "--freeze-local"} <= set(out["explicit"])
    # an abbreviated or --opt=value spelling counts as given too
    out = printed(capsys, "stream", "time-effect", "--preset", "paper", "--wind=5", "--print-config")
    assert out["settings"]["protocol"]["window"] == 5 and out["explicit"] == ["--window"]

    r = printed(capsys, "semantic-change", "rank", "--preset", "paper", "--model", "default", "--layers", "4",
                "--time-residual", "--time-norm", "all_heads", "--seed", "0", "--print-config")
    rk = r["settings"]["ranker"]
    assert (rk["encoder"], rk["layers"], rk["time_residual"], rk["time_norm"], rk["scorer"]) == (
        "default", 4, True, "all_heads", "cosine")
    assert {"--model", "--layers", "--time-residual", "--time-norm", "--seed"} <= set(r["explicit"])

    d = printed(capsys, "diffusion", "train", "--preset", "paper", "--epochs", "2", "--batch-size", "16",
                "--batches", "slice", "--lambda-w", "1", "--print-config")["settings"]["train"]
    assert (d["epochs"], d["batch_size"], d["slice_batches"], d["lambda_w"], d["lr"]) == (2, 16, True, 1.0, 3e-6)

    f = printed(capsys, "future-text", "train", "--preset", "paper", "--lm", "default", "--data", "world",
                "--dev-year", "2019", "--alpha-search", "learn", "--variant", "freq", "--print-config")
    fm = f["settings"]["model"]
    assert (f["settings"]["data"], fm["lm"], fm["dev_year"], fm["alpha_search"], fm["variants"]) == (
        "world", "default", 2019, "learn", ["freq"])
    assert fm["train_years"] is None       # a year option given: --first-year and the dev year bound the training years
    f = printed(capsys, "future-text", "train", "--preset", "paper", "--variant", "freq", "--freq-bias", "monotone",
                "--adapter-rank", "0", "--print-config")
    assert (f["settings"]["model"]["freq_bias"], f["settings"]["model"]["adapter_rank"]) == ("monotone", 0)
    assert {"--freq-bias", "--adapter-rank"} <= set(f["explicit"])
    f = printed(capsys, "future-text", "train", "--variant", "context", "--context-encoder", "default", "--print-config")
    assert f["settings"]["model"]["context_encoder"] == "default"

    nb = printed(capsys, "stream", "evaluate", "--preset", "notebook", "--epochs", "3", "--print-config")
    assert nb["settings"]["model"]["epochs"] == 3 and nb["settings"]["model"]["lr"] == 1e-4   # the rest: notebook's


def test_the_notebook_presets_are_the_lessons(capsys, no_work):
    from tempo_analysis.diffusion.config import PRESETS as DIFFUSION
    from tempo_analysis.semantic_change.config import notebook_config
    from tempo_analysis.stream.config import PRESETS as STREAM

    s = printed(capsys, "stream", "evaluate", "--preset", "notebook", "--print-config")["settings"]
    assert s["protocol"]["window"] == [STREAM["notebook"].window]
    assert {k: s["model"][k] for k in ("epochs", "lr", "head_lr", "batch_size", "freeze_local")} == {
        k: getattr(STREAM["notebook"], k) for k in ("epochs", "lr", "head_lr", "batch_size", "freeze_local")}
    r = printed(capsys, "semantic-change", "rank", "--preset", "notebook", "--print-config")["settings"]["ranker"]
    assert r == dict(notebook_config("temporal-attention", data="world").to_dict(), progress=False)
    d = printed(capsys, "diffusion", "train", "--preset", "notebook", "--print-config")["settings"]["train"]
    assert (d["epochs"], d["max_steps"], d["lr"], d["dynamic_lr"], d["lambda_w"], d["mlm_probability"],
            d["slice_batches"], tuple(d["variants"])) == (10, 40, 1e-4, 1e-3, 1.0, 0.3, False, ("dcwe", "cwe"))
    assert DIFFUSION["notebook"].max_steps == 40
