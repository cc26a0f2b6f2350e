"""Every numeric option of every command, given ``nan``, ``inf``, ``-1`` and ``0``: a value the option
takes parses; any other is refused in one line (exit 2) naming the option, in well under 5 s and
before any data, checkpoint or model is read (every loader and fit the command could reach fails
the test if called).

The options are found from ``build_parser()``: an option added later is walked too, and must be
either refused for these values or listed in ``LEGAL`` with the reason the value means something.
"""
from __future__ import annotations

import time

import pytest

from _parser_walk import options_of

from tempo_analysis.cli import build_parser, finite_number, main

VALUES = ("nan", "inf", "-1", "0")

# (option, value) pairs a command takes on purpose, per command
LEGAL = {
    # seeds may be 0
    **{(cmd, "--seed", "0"): "a seed" for cmd in ("world", "stream time-effect", "semantic-change rank",
                                                  "diffusion train", "future-text train", "encoder mlm-eval")},
    ("stream evaluate", "--seeds", "0"): "a seed",
    ("study", "--seeds", "0"): "a seed",
    **{(cmd, opt, "0"): "a seed" for cmd in ("stream evaluate", "stream time-effect") for opt in ("--split-seed",)},
    **{(cmd, "--gen-seed", "0"): "a seed" for cmd in ("future-text evaluate", "future-text generate",
                                                      "future-text what-if")},
    ("diffusion train", "--world-seed", "0"): "a seed",
    # folds are numbered from 0
    ("stream evaluate", "--only-folds", "0"): "fold 0",
    ("stream time-effect", "--fold", "0"): "fold 0",
    # 0 means "none" where the help says so
    ("world", "--change-strength", "0"): "plants no change",
    ("stream evaluate", "--dev-fraction", "0"): "no dev split",
    ("stream time-effect", "--dev-fraction", "0"): "no dev split",
    ("stream evaluate", "--dropout", "0"): "no dropout",
    ("semantic-change rank", "--train-epochs", "0"): "no post-training",
    ("semantic-change rank", "--head-steps", "0"): "no head warm-up",
    ("semantic-change rank", "--body-lr", "0"): "freezes the body",
    ("diffusion train", "--shared-warmup-steps", "0"): "no shared warm-up",
    ("diffusion train", "--lambda-w", "0"): "no random-walk prior",
    ("diffusion train", "--theta", "0"): "venues linked by any shared author",
    ("diffusion analyze", "--threshold", "0"): "the default: r-hat above 0",
    ("future-text train", "--pretrain-epochs", "0"): "no pretraining of the tiny LM",
    ("future-text train", "--adapter-rank", "0"): "no low-rank adapter: the per-token offset only",
    **{(cmd, "--no-repeat-ngram", "0"): "no n-gram blocking" for cmd in ("future-text evaluate",
                                                                       "future-text generate", "future-text what-if")},
    # the bias strength is a signed weight: 0 turns the bias off, a negative value reverses it
    ("future-text train", "--alpha", "0"): "no bias (fixed) or learned from 0",
    ("future-text train", "--alpha", "-1"): "a signed weight",
    ("future-text generate", "--alpha", "0"): "no bias",
    ("future-text generate", "--alpha", "-1"): "the bias reversed",
}

# the options each command needs, and what makes an option apply (so that its value is what is checked)
REQUIRED = {
    "world": ["--out", "{d}/w"],
    "stream evaluate": ["--out", "{d}/r.json"],
    "stream time-effect": ["--out", "{d}/r.json"],
    "semantic-change rank": ["--out", "{d}/r.tsv"],
    "diffusion train": ["--out", "{d}/run"],
    "diffusion analyze": ["--checkpoint", "{d}/run", "--word", "cloud", "--anchor", "server", "--out", "{d}/a.json"],
    "future-text train": ["--variant", "freq", "--out", "{d}/ft"],
    "future-text evaluate": ["--checkpoint", "{d}/ft", "--year", "2020"],
    "future-text generate": ["--checkpoint", "{d}/ft", "--year", "2020"],
    "future-text what-if": ["--checkpoint", "{d}/ft", "--words", "kernel"],
    "encoder mlm-eval": [],
    "study": ["02", "--seeds", "1", "--out", "{d}/s.json"],
}
APPLIES = {
    ("stream evaluate", "--shots"): ["--baseline", "llm_few_shot"],
    ("stream evaluate", "--hidden"): ["--baseline", "bilstm"],
    ("stream evaluate", "--dropout"): ["--baseline", "bilstm"],
    ("semantic-change rank", "--max-sentences"): ["--data", "nltk"],
    ("diffusion train", "--shared-warmup-lr"): ["--shared-warmup-steps", "1"],
    **{("diffusion train", o): ["--data", "acl"] for o in ("--theta", "--min-papers", "--max-docs")},
    ("future-text train", "--n"): ["--variant", "last-n"],
    **{("future-text train", o): ["--lm", "tiny"] for o in ("--vocab-size", "--n-layer", "--n-embd", "--n-head",
                                                            "--block-size", "--pretrain-epochs")},
}
WORK = ["tempo_analysis.evaluation.classification.cross_validate",
        "tempo_analysis.semantic_change.estimator.SemanticChangeRanker.fit",
        "tempo_analysis.diffusion.DiffusionMapper.fit", "tempo_analysis.diffusion.DiffusionMapper.load",
        "tempo_analysis.future_text.estimator.FutureTextModel.fit",
        "tempo_analysis.future_text.estimator.FutureTextModel.load",
        "tempo_analysis.encoders.load_encoder", "tempo_analysis.causal_lm.load_causal_lm",
        "tempo_analysis.encoder_mlm.brown_sentences", "tempo_analysis.world.generate_world",
        "tempo_analysis.study.run_study",
        *(f"tempo_analysis.resolve.{f}" for f in ("load_timelines", "load_change_data", "load_social", "load_yearly"))]


def numeric_options():
    """(command, option) for every option parsed as an int or a float, in every subcommand."""
    return [(" ".join(words), option) for words, option in options_of((int, float, finite_number))]


OPTIONS = numeric_options()


def command_line(command: str, option: str, value: str, folder) -> list[str]:
    required = list(REQUIRED[command])
    if option in required:        # the option under test replaces the value the command needs
        i = required.index(option)
        del required[i:i + 2]
    extra = APPLIES.get((command, option), [])
    return [*command.split(), *(a.format(d=folder) for a in required), *extra, f"{option}={value}"]


def _fail(*args, **kwargs):
    raise AssertionError("the command started working before it checked its options")


def test_the_walk_finds_every_command_and_the_tables_name_real_options():
    commands = {c for c, _ in OPTIONS}
    assert commands == set(REQUIRED), commands ^ set(REQUIRED)
    assert len(OPTIONS) >= 100
    options = set(OPTIONS)
    assert {(c, o) for c, o, _ in LEGAL} <= options, {(c, o) for c, o, _ in LEGAL} - options
    assert set(APPLIES) <= options


@pytest.mark.parametrize("value", VALUES)
@pytest.mark.parametrize("command, option", OPTIONS, ids=[f"{c} {o}" for c, o in OPTIONS])
def test_a_numeric_option_takes_its_legal_values_and_refuses_the_rest_at_once(command, option, value, tmp_path,
                                                                             monkeypatch, capsys):
    line = command_line(command, option, value, tmp_path)
    if (command, option, value) in LEGAL:
        build_parser().parse_args(line)         # parses; the command would run with it
        return
    for target in WORK:
        monkeypatch.setattr(target, _fail)
    start = time.perf_counter()
    try:
        rc = main(line)
    except SystemExit as e:                     # argparse: not a number, or not finite
        rc = e.code
    seconds = time.perf_counter() - start
    err = capsys.readouterr().err
    assert rc == 2, (line, err)
    assert option in err, (line, err)
    assert ": error: " in err.strip().splitlines()[-1], err     # argparse's line, or the command's one line
    assert seconds < 5, (line, seconds)
    assert sorted(p.name for p in tmp_path.iterdir()) == []     # nothing written
