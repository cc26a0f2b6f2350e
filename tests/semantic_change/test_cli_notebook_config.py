"""`semantic-change rank` reaches notebook 02's settings and the frequency baseline.

The command that ``tempo-analysis semantic-change rank``'s own docstring gives for notebook 02's
settings builds ``notebook_config(method)`` for every notebook method; the post-training options reach the config; ``--method frequency`` ranks by
relative-frequency change without loading any model."""
from __future__ import annotations

import json
import math
import shlex

import pytest

import tempo_analysis.cli.semantic_change as cli_module
from tempo_analysis.cli import build_parser, main
from tempo_analysis.cli.semantic_change import check_rank_options, rank_config
from tempo_analysis.semantic_change import NOTEBOOK_METHODS, notebook_config

from .test_loaders import write_semeval

DOC_COMMAND = "tempo-analysis semantic-change rank --data world --method temporal-attention --scorer cosine --samples 30 "
TRAIN_FLAGS = ("--head-steps", "--time-lr")


def documented_argv() -> list[str]:
    text = cli_module.__doc__.replace("\\\n", " ")         # continuation lines joined
    lines = [" ".join(line.split()) for line in text.splitlines() if line.strip().startswith(DOC_COMMAND)]
    lines = [line.partition("(")[0] for line in lines if line.endswith("(notebook 02's settings)")]
    assert len(lines) == 1, f"the rank command's docstring shows notebook 02's command once, starting {DOC_COMMAND!r}"
    return shlex.split(lines[0])[1:]


def config_of(argv: list[str]):
    args = build_parser().parse_args(argv)
    check_rank_options(args)
    return rank_config(args)


def comparable(cfg) -> dict:
    d = cfg.to_dict()
    d.pop("progress")
    if d.get("train"):
        d["train"] = {k: v for k, v in d["train"].items() if k != "progress"}
    return d


def with_method(argv: list[str], method: str) -> list[str]:
    out = list(argv)
    out[out.index("--method") + 1] = method
    if method == "plain":   # not post-trained: its training options would be refused
        for flag in TRAIN_FLAGS:
            i = out.index(flag)
            del out[i:i + 2]
    return out


@pytest.mark.parametrize("method", NOTEBOOK_METHODS)
def test_the_documented_command_builds_the_notebooks_config(method):
    assert comparable(config_of(with_method(documented_argv(), method))) == comparable(notebook_config(method))


def test_the_cli_runs_the_cli_preset_and_the_notebooks_settings_are_not_it():
    from tempo_analysis.semantic_change import RankConfig, SemanticChangeRanker

    default = comparable(config_of(["semantic-change", "rank", "--out", "r.tsv"]))
    assert default == comparable(RankConfig()) == comparable(SemanticChangeRanker().get_config())
    assert default != comparable(notebook_config("temporal-attention"))
    assert default["train"]["time_lr"] != notebook_config("temporal-attention").train.time_lr


@pytest.mark.parametrize("flag, field, value", [("--head-steps", "head_steps", 7), ("--time-lr", "time_lr", 5e-3),
                                                ("--body-lr", "body_lr", 0.0)])
def test_each_post_training_option_reaches_the_config(flag, field, value):
    default = config_of(["semantic-change", "rank", "--out", "r.tsv"]).train
    train = config_of(["semantic-change", "rank", "--out", "r.tsv", flag, str(value)]).train
    assert getattr(train, field) == value != getattr(default, field)
    assert {k for k, v in train.to_dict().items() if v != default.to_dict()[k]} == {field}


def test_frequency_ranks_by_frequency_change_without_a_model(tmp_path, monkeypatch, capsys):
    def no_model(*args, **kwargs):
        raise AssertionError("--method frequency loaded a model")

    for target in ("tempo_analysis.encoders.load_encoder", "tempo_analysis.encoders.check_encoder",
                   "tempo_analysis.semantic_change.estimator.SemanticChangeRanker.fit"):
        monkeypatch.setattr(target, no_model)
    root = write_semeval(tmp_path / "semeval")   # 4 sentences a period: plane 1 -> 1, tip 1 -> 2, risk 1 -> 0
    out, js = tmp_path / "f.tsv", tmp_path / "f.json"
    assert main(["semantic-change", "rank", "--data", f"semeval:{root}", "--method", "frequency",
                 "--out", str(out), "--json", str(js)]) == 0
    rows = [line.split("\t") for line in out.read_text().splitlines() if not line.startswith("#")]
    assert [w for w, _ in rows] == ["risk", "tip", "plane"]
    scores = {w: float(s) for w, s in rows}
    assert scores["risk"] == pytest.approx(math.log2(1.5 / 0.5), abs=1e-6)
    assert scores["tip"] == pytest.approx(math.log2(2.5 / 1.5), abs=1e-6) and scores["plane"] == 0.0
    printed = capsys.readouterr().out
    assert "frequency" in printed and "Spearman -1.000" in printed and "binary accuracy" in printed
    payload = json.loads(js.read_text())
    assert payload["metrics"]["spearman"] == pytest.approx(-1.0) and payload["config"] == {"method": "frequency"}
    assert {r["word"]: (r["n_corpus1"], r["n_corpus2"]) for r in payload["counts"]}["risk"] == (1, 0)
