"""`diffusion train` runs notebook 03's training: the command documented in docs/methods/diffusion.md
builds the same DiffusionTrainConfig as the notebook's constants, and each training option reaches
the config."""
from __future__ import annotations

import ast
import dataclasses
import shlex
from pathlib import Path

import pytest

from tempo_analysis.cli import build_parser
from tempo_analysis.cli.diffusion import check_train_options, train_config
from tempo_analysis.diffusion import DiffusionTrainConfig

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "03_social_diffusion.py"
DOC = ROOT / "docs" / "methods" / "diffusion.md"
DOC_COMMAND = "tempo-analysis diffusion train --data world --out runs/notebook03 "


def notebook_config() -> DiffusionTrainConfig:
    """The DiffusionTrainConfig(...) call of notebook 03, evaluated with the notebook's literal constants."""
    tree = ast.parse(NOTEBOOK.read_text(encoding="utf-8"))
    names = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                names[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                pass   # computed values: the config call must not need them
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)
             and isinstance(node.func, ast.Name) and node.func.id == "DiffusionTrainConfig"]
    assert len(calls) == 1, "notebook 03 builds its training config in one DiffusionTrainConfig(...) call"
    code = compile(ast.Expression(calls[0]), str(NOTEBOOK), "eval")
    return eval(code, {"DiffusionTrainConfig": DiffusionTrainConfig, **names})


def cli_config(argv: list[str]) -> DiffusionTrainConfig:
    args = build_parser().parse_args(argv)
    check_train_options(args)
    return train_config(args)


def comparable(cfg: DiffusionTrainConfig) -> dict:
    return {k: v for k, v in dataclasses.asdict(cfg).items() if k != "progress"}


def test_the_documented_command_trains_as_notebook_03_does():
    lines = [line.strip() for line in DOC.read_text(encoding="utf-8").splitlines()
             if line.strip().startswith(DOC_COMMAND)]
    assert len(lines) == 1, f"docs/methods/diffusion.md shows notebook 03's command once, starting {DOC_COMMAND!r}"
    argv = shlex.split(lines[0])[1:]
    assert comparable(cli_config(argv)) == comparable(notebook_config())
    # and the notebook's settings are not simply the CLI's defaults (the options matter)
    assert comparable(cli_config(["diffusion", "train", "--out", "x"])) != comparable(notebook_config())


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
    """Unset options leave DiffusionTrainConfig's own defaults (lambda_w, dynamic_lr: None on the command line)."""
    cfg = cli_config(["diffusion", "train", "--out", "x"])
    assert comparable(cfg) == comparable(DiffusionTrainConfig(progress=False))


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
    monkeypatch.setattr("tempo_analysis.data.specs.load_social", lambda spec, **kw: seen.update(spec=spec, **kw))
    _load_corpus(build_parser().parse_args(["diffusion", "train", "--data", "acl", "--out", "x"]))
    assert (seen["years"], seen["theta"], seen["min_papers"], seen["max_docs_per_unit_slice"], seen["world"]) == (
        [2017, 2018, 2019, 2020], 0.01, 30, 40, None)
    synopsis = "--years {years} --theta {theta} --min-papers {min_papers} --max-docs {max_docs}".format(**ACL_DEFAULTS)
    assert synopsis in DOC.read_text(encoding="utf-8")
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
