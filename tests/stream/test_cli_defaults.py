"""The stream commands' defaults are the wing's settings module's (tempo_analysis.stream.config): an option
left unset gives what `TempoFormerClassifier()` and the experiment protocol document, and `--help` says so."""
from __future__ import annotations

import dataclasses

import pytest

from tempo_analysis.cli import build_parser
from tempo_analysis.cli.stream_options import settings_from_args
from tempo_analysis.cli.stream_time_effect import time_effect_settings
from tempo_analysis.stream import config as stream_config
from tempo_analysis.stream.config import CLI_EXPERIMENT, PRESETS, StreamConfig
from tempo_analysis.stream.estimator import TempoFormerClassifier
from tempo_analysis.stream.experiment import make_classifier


def test_evaluate_and_time_effect_default_to_the_cli_preset_and_protocol():
    ev = build_parser().parse_args(["stream", "evaluate", "--out", "x.json"])
    d, exp = StreamConfig(), CLI_EXPERIMENT
    assert ev.window == [d.window] and ev.device == d.device and ev.data == exp.data
    assert (ev.folds, ev.seeds, ev.dev_fraction, ev.split_seed) == (exp.folds, list(exp.seeds), exp.dev_fraction,
                                                                    exp.split_seed)
    te = build_parser().parse_args(["stream", "time-effect", "--out", "x.json"])
    assert (te.window, te.folds, te.fold, te.seed) == (d.window, exp.folds, exp.fold, d.seed)
    # no option given: the classifier the command builds runs the documented defaults
    name, settings = time_effect_settings(te)
    built = make_classifier(name, **settings).get_config()
    assert dataclasses.replace(built, progress=True) == PRESETS["cli"] == TempoFormerClassifier().get_config()
    explicit, _ = settings_from_args(ev)
    assert explicit == {}


def test_the_cli_follows_the_settings_module(monkeypatch):
    """Change a default in config.py and the parser changes with it (the CLI keeps no copy of its own)."""
    monkeypatch.setattr(StreamConfig, "window", 11)
    monkeypatch.setattr(stream_config, "CLI_EXPERIMENT", dataclasses.replace(CLI_EXPERIMENT, folds=7))
    monkeypatch.setattr("tempo_analysis.cli.stream.CLI_EXPERIMENT", stream_config.CLI_EXPERIMENT)
    monkeypatch.setattr("tempo_analysis.cli.stream_options.CLI_EXPERIMENT", stream_config.CLI_EXPERIMENT)
    ev = build_parser().parse_args(["stream", "evaluate", "--out", "x.json"])
    assert ev.window == [11] and ev.folds == 7
    te = build_parser().parse_args(["stream", "time-effect", "--out", "x.json"])
    assert te.window == 11 and te.folds == 7


@pytest.mark.parametrize("command", [["stream", "evaluate"], ["stream", "time-effect"]])
def test_help_names_the_defaults(command, capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args([*command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    d = StreamConfig()
    for said in (f"(default {d.window})", f"TempoFormer {d.epochs})", f"TempoFormer {d.lr:g})",
                 f"(default {d.head_lr:g})", f"TempoFormer {d.batch_size})", f"(default {d.max_length})",
                 f"(default {d.summary})", f"(default {CLI_EXPERIMENT.folds})",
                 f"default {CLI_EXPERIMENT.dev_fraction})", f"(default: {CLI_EXPERIMENT.data};"):
        assert said in text, said
