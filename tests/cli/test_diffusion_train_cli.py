"""`diffusion train` runs notebook 03's training: the command in the module's help builds the
notebook preset (``tempo_analysis.diffusion.config.PRESETS["notebook"]``, which notebook 03 reads),
its unset options are the cli preset, and each training option reaches the config."""
from __future__ import annotations

import dataclasses
import shlex
from pathlib import Path

import pytest

import tempo_analysis.cli.diffusion as cli_diffusion
from tempo_analysis.cli import build_parser
from tempo_analysis.cli.diffusion import check_train_options, train_config
from tempo_analysis.diffusion.config import PRESETS, DiffusionTrainConfig, preset

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "03_social_diffusion.py"
DOC_COMMAND = "tempo-analysis diffusion train --data world --out runs/notebook03 "


def documented_command() -> list[str]:
    """The notebook-03 command of ``tempo-analysis diffusion --help`` (the module docstring), lines joined."""
    text = cli_diffusion.__doc__          # (the backslash-newlines of the docstring join its lines)
    lines = [line.strip() for line in text.splitlines() if line.strip().startswith(DOC_COMMAND)]
    assert len(lines) == 1, f"`diffusion --help` shows notebook 03's command once, starting {DOC_COMMAND!r}"
    return shlex.split(lines[0].split("(", 1)[0])[1:]


def cli_config(argv: list[str]) -> DiffusionTrainConfig:
    args = build_parser().parse_args(argv)
    check_train_options(args)
    return train_config(args)


def comparable(cfg: DiffusionTrainConfig) -> dict:
    return {k: v for k, v in dataclasses.asdict(cfg).items() if k != "progress"}


def test_the_documented_command_trains_as_notebook_03_does():
    notebook = PRESETS["notebook"]
    assert comparable(cli_config(documented_command())) == comparable(notebook)
    # and the notebook's settings are not simply the CLI's defaults (the options matter)
    assert comparable(cli_config(["diffusion", "train", "--out", "x"])) != comparable(notebook)
    # notebook 03 trains with that preset, through the lesson module, as a user would
    source = NOTEBOOK.read_text(encoding="utf-8")
    lesson = (ROOT / "tempo_analysis" / "diffusion" / "lesson.py").read_text(encoding="utf-8")
    assert "fit_worlds(" in source and "DiffusionTrainConfig(" not in source
    assert 'preset("notebook"' in lesson


def test_the_presets_are_the_configs_and_preset_copies_them():
    assert PRESETS["cli"] == DiffusionTrainConfig()
    got = preset("notebook", max_steps=3)
    assert got.max_steps == 3 and PRESETS["notebook"].max_steps == 40 and got is not PRESETS["notebook"]
    with pytest.raises(ValueError, match="unknown diffusion preset 'paperz'"):
        preset("paperz")


@pytest.mark.parametrize("argv, field, value", [
    (["--dynamic-lr", "2e-3"], "dynamic_lr", 2e-3),
    (["--shared-warmup-steps", "7"], "shared_warmup_steps", 7),
    (["--shared-warmup-steps", "7", "--shared-warmup-lr", "3e-3"], "shared_warmup_lr", 3e-3),
    (["--mlm-probability", "0.25"], "mlm_probability", 0.25),
    (["--batches", "mixed"], "slice_batches", False),
    (["--lambda-w", "2"], "lambda_w", 2.0),
])
def test_each_training_option_reaches_the_config(argv, field, value):
    default = cli_config(["diffusion", "train", "--out", "x"])
    cfg = cli_config(["diffusion", "train", "--out", "x", *argv])
    assert getattr(cfg, field) == value != getattr(default, field)
    changed = {k for k, v in comparable(cfg).items() if comparable(default)[k] != v}
    assert changed == {field} | ({"shared_warmup_steps"} if "--shared-warmup-steps" in argv else set())


def test_the_cli_defaults_are_the_configs():
    """Unset options leave the cli preset's settings (lambda_w, dynamic_lr: None on the command line)."""
    cfg = cli_config(["diffusion", "train", "--out", "x"])
    assert comparable(cfg) == comparable(PRESETS["cli"])


@pytest.mark.parametrize("text, years", [("2017-2020", [2017, 2018, 2019, 2020]), ("2019-2019", [2019]),
                                         ("2019,2017,2020", [2019, 2017, 2020]), ("1000-1001", [1000, 1001]),
                                         ("2100", [2100])])
def test_years_are_an_inclusive_range_or_a_list(text, years):
    from tempo_analysis.cli.diffusion import _years

    assert _years(text) == years


@pytest.mark.parametrize("text", ["999-1001", "2099-2101", "2101"])
def test_years_outside_1000_to_2100_are_refused(text):
    from tempo_analysis.cli.diffusion import _years

    with pytest.raises(ValueError, match="outside 1000-2100"):
        _years(text)


def test_acl_defaults_reach_the_loader_as_documented(monkeypatch):
    """Unset ACL options take the documented defaults (help text, docs/methods/diffusion.md); set ones win."""
    from tempo_analysis.cli.diffusion import ACL_DEFAULTS, _load_corpus

    seen = {}
    monkeypatch.setattr("tempo_analysis.resolve.load_social", lambda spec, **kw: seen.update(spec=spec, **kw))
    _load_corpus(build_parser().parse_args(["diffusion", "train", "--data", "acl", "--out", "x"]))
    assert (seen["years"], seen["theta"], seen["min_papers"], seen["max_docs_per_unit_slice"], seen["world"]) == (
        [2017, 2018, 2019, 2020], 0.01, 30, 40, None)
    train = build_parser()._subparsers._group_actions[0].choices["diffusion"]._subparsers._group_actions[0].choices["train"]
    helps = {a.option_strings[0]: a.help for a in train._actions if a.option_strings}
    for flag, key in (("--years", "years"), ("--theta", "theta"), ("--min-papers", "min_papers"),
                      ("--max-docs", "max_docs")):
        assert f"default {ACL_DEFAULTS[key]})" in helps[flag], (flag, helps[flag])   # the help names the default
    _load_corpus(build_parser().parse_args(["diffusion", "train", "--data", "acl", "--out", "x", "--years", "2018",
                                            "--theta", "0.2", "--min-papers", "3", "--max-docs", "4", "--seed", "5"]))
    assert (seen["years"], seen["theta"], seen["min_papers"], seen["max_docs_per_unit_slice"], seen["seed"]) == (
        [2018], 0.2, 3, 4, 5)
    _load_corpus(build_parser().parse_args(["diffusion", "train", "--out", "x", "--mode", "flight", "--speed", "2",
                                            "--world-seed", "7"]))
    assert seen["spec"] == "world" and seen["world"] == {"mode": "flight", "speed": 2, "seed": 7}


@pytest.mark.parametrize("n", ["1", "100", "auto"])
def test_analyze_takes_any_positive_n_or_auto(n, tmp_path, monkeypatch, capsys):
    """--n 1 (one nearest neighbour) is a valid setting: the command gets past its checks to the checkpoint."""
    from tempo_analysis.cli import main

    def load(*args, **kwargs):
        raise ValueError("reached the checkpoint")

    monkeypatch.setattr("tempo_analysis.diffusion.DiffusionMapper.load", load)
    rc = main(["diffusion", "analyze", "--checkpoint", str(tmp_path), "--word", "cloud", "--anchor", "server",
               "--n", n, "--out", str(tmp_path / "a.json")])
    assert rc == 2 and "reached the checkpoint" in capsys.readouterr().err
