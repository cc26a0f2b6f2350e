"""Each command group typed alone prints its own help and exits 2; a missing required option is named."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from tempo_analysis import __version__
from tempo_analysis.cli import main

GROUPS = {"stream": ["evaluate", "compare", "time-effect"], "semantic-change": ["rank"],
          "diffusion": ["train", "analyze"], "future-text": ["train", "evaluate", "generate", "what-if"],
          "encoder": ["mlm-eval"]}


@pytest.mark.parametrize("group", list(GROUPS))
def test_a_group_alone_prints_its_own_help_and_exits_2(group, capsys):
    assert main([group]) == 2
    out = capsys.readouterr().out
    assert out.startswith(f"usage: tempo-analysis {group} "), out[:120]
    assert all(command in out for command in GROUPS[group])


def test_version_prints_the_packages_version(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"tempo-analysis {__version__}"
    pyproject = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'^version = "([^"]+)"', pyproject, re.M).group(1) == __version__   # one version, not two


# command line without one required option, the option the error must name
MISSING = {
    "diffusion train": (["diffusion", "train"], "--out"),
    "diffusion analyze without --checkpoint": (["diffusion", "analyze", "--word", "a", "--anchor", "b", "--out", "o"],
                                               "--checkpoint"),
    "diffusion analyze without --word": (["diffusion", "analyze", "--checkpoint", "c", "--anchor", "b", "--out", "o"],
                                         "--word"),
    "diffusion analyze without --anchor": (["diffusion", "analyze", "--checkpoint", "c", "--word", "a", "--out", "o"],
                                           "--anchor"),
    "diffusion analyze without --out": (["diffusion", "analyze", "--checkpoint", "c", "--word", "a", "--anchor", "b"],
                                        "--out"),
    "stream evaluate": (["stream", "evaluate"], "--out"),
    "stream time-effect": (["stream", "time-effect"], "--out"),
    "semantic-change rank": (["semantic-change", "rank"], "--out"),
    "world": (["world"], "--out"),
}


@pytest.mark.parametrize("case", list(MISSING))
def test_a_missing_required_option_is_named(case, capsys):
    argv, option = MISSING[case]
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "the following arguments are required" in err and option in err.split("required:")[1], err


def test_stream_evaluate_and_time_effect_share_their_documented_defaults():
    """5 timeline folds, seed 0, window 5, a quarter of the training timelines as dev, split seed 0 (the
    help texts); time-effect runs fold 0 of the same split."""
    from tempo_analysis.cli import build_parser

    ev = build_parser().parse_args(["stream", "evaluate", "--out", "x"])
    te = build_parser().parse_args(["stream", "time-effect", "--out", "x"])
    assert (ev.folds, ev.seeds, ev.window, ev.dev_fraction, ev.split_seed) == (5, [0], [5], 0.25, 0)
    assert (te.folds, te.fold, te.seed, te.window, te.dev_fraction, te.split_seed) == (5, 0, 0, 5, 0.25, 0)
