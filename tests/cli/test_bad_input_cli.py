"""Bad values a user types at the CLI: one clear line (exit 2) before any model is loaded or trained.

Each row once started training (``--max-folds 0`` ran every fold, ``--samples 0`` post-trained,
``--window 0`` loaded the LM), failed only after the work (a results file under a file), gave an
internal error (``diffusion train --batch-size 0``: ZeroDivisionError), lost the file name (a
0-byte ``future-text`` CSV), or silently ignored an option (``--dev-year`` given alone). Every
model fit is replaced by one that fails the test; the data loaders too, except for rows that
read a small CSV of their own.
"""

from __future__ import annotations

import pytest

from tempo_analysis.cli import main
from tempo_analysis.data import DataError

# command line -> substrings the one-line error must hold
ROWS = {
    "stream: --max-folds 0 (ran every fold)": ("stream evaluate --max-folds 0 --out {d}/o.json", ["--max-folds 0"]),
    "stream: --out under a file (failed after the first fold)": (
        "stream evaluate --out {d}/afile/o.json", ["afile", "is a file"]),
    "stream: --data csv: without a file ('file None not found')": (
        "stream evaluate --data csv: --out {d}/o.json", ["--data 'csv:'", "names no file"]),
    "future-text: --data csv: without a file": (
        "future-text train --variant freq --data csv: --out {d}/ft", ["--data 'csv:'", "names no file"]),
    "semantic-change: --samples 0 (post-trained first)": (
        "semantic-change rank --samples 0 --out {d}/r.tsv", ["--samples 0", ">= 1"]),
    "semantic-change: --out under a file": ("semantic-change rank --out {d}/afile/r.tsv", ["is a file"]),
    "diffusion: --batch-size 0 (ZeroDivisionError)": ("diffusion train --batch-size 0 --out {d}/run", ["--batch-size 0"]),
    "diffusion: --max-steps 0 (after loading the encoder)": (
        "diffusion train --max-steps 0 --out {d}/run", ["--max-steps 0"]),
    "diffusion: --years backwards": ("diffusion train --data acl:{d} --years 2020-2017 --out {d}/run",
                                     ["--years '2020-2017'", "backwards"]),
    "diffusion: --years typo": ("diffusion train --data acl:{d} --years 20171-20200 --out {d}/run",
                                ["--years", "outside 1000-2100"]),
    "future-text: 0-byte CSV (no file name)": ("future-text train --variant freq --data csv:{d}/empty.csv --out {d}/ft",
                                               ["empty.csv", "is empty"]),
    "future-text: typo --dev-year": ("future-text train --variant freq --dev-year 20061 --out {d}/ft",
                                     ["--dev-year 20061", "typo"]),
    "future-text: dev year after the test year": (
        "future-text train --variant freq --dev-year 2021 --test-year 2019 --out {d}/ft", ["must come before"]),
    "future-text: --first-year after every document": (
        "future-text train --variant freq --data csv:{d}/years.csv --first-year 2050 --out {d}/ft",
        ["--first-year 2050", "no documents"]),
    "future-text: --test-year alone with no earlier year": (
        "future-text train --variant freq --data csv:{d}/years.csv --test-year 2019 --out {d}/ft", ["no earlier year"]),
    "future-text: last-n longer than the training years (after loading the LM)": (
        "future-text train --variant last-n --n 5 --data csv:{d}/years.csv --out {d}/ft", ["--n 5", "1 <= n <= 1"]),
    "future-text: --window 0 (loaded the LM first)": ("future-text train --variant freq --window 0 --out {d}/ft",
                                                      ["--window 0"]),
    "future-text: --finetune-steps 0": ("future-text train --variant freq --finetune-steps 0 --out {d}/ft",
                                        ["--finetune-steps 0"]),
    "future-text: --max-docs-per-year 0": ("future-text train --variant freq --max-docs-per-year 0 --out {d}/ft",
                                           ["--max-docs-per-year 0"]),
    "future-text evaluate: --n-generate 0": ("future-text evaluate --checkpoint {d} --year 2020 --n-generate 0",
                                             ["--n-generate 0"]),
    "world: --out is a file": ("world --out {d}/afile", ["afile", "is a file"]),
    "world: --speed 0 (no diffusion)": ("world --out {d}/w --speed 0", ["--speed 0"]),
}


def _fail(*args, **kwargs):
    raise AssertionError("the command started working before it checked its input")


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "afile").write_text("a user's file")
    (tmp_path / "empty.csv").write_bytes(b"")
    (tmp_path / "years.csv").write_text("year,text\n" + "".join(f"{y},text of {y}\n" for y in range(2019, 2023)))
    return tmp_path


@pytest.mark.parametrize("case", list(ROWS))
def test_bad_command_line_is_one_clear_error_before_any_work(case, folder, monkeypatch, capsys):
    line, says = ROWS[case]
    work = ["tempo_analysis.evaluation.classification.cross_validate",
            "tempo_analysis.semantic_change.ranker.SemanticChangeRanker.fit",
            "tempo_analysis.diffusion.DiffusionMapper.fit", "tempo_analysis.future_text.pipeline.FutureTextModel.fit",
            "tempo_analysis.encoders.load_encoder", "tempo_analysis.causal_lm.load_causal_lm",
            "tempo_analysis.world.generate_world", "tempo_analysis.cli.future_text.load_checkpoint"]
    if "csv:" not in line:  # rows without a CSV of their own must not even read data
        work += [f"tempo_analysis.data.specs.{f}" for f in ("load_timelines", "load_change_data", "load_social",
                                                            "load_yearly")]
    for target in work:
        monkeypatch.setattr(target, _fail)
    before = sorted(p.name for p in folder.iterdir())
    rc = main(line.format(d=folder).split())
    err = capsys.readouterr().err
    assert rc == 2, err
    assert err.startswith("tempo-analysis: error: ") and err.count("\n") == 1, err
    assert all(s in err for s in says), (says, err)
    assert sorted(p.name for p in folder.iterdir()) == before and (folder / "afile").read_text() == "a user's file"


@pytest.mark.parametrize("given, split", [(["--dev-year", "2020"], (2020, 2021)), (["--test-year", "2021"], (2020, 2021)),
                                          ([], (None, None)), (["--dev-year", "2019", "--test-year", "2022"], (2019, 2022))])
def test_a_dev_or_test_year_given_alone_is_used_not_replaced_by_the_default_split(given, split, folder, monkeypatch,
                                                                                  capsys):
    """``--dev-year 2020`` alone used to be dropped (the default split took over): now the other
    year is completed from the data (the next / the previous year with documents)."""
    seen = {}

    class Model:
        def __init__(self, settings, variants, dev_year, test_year):
            seen["split"] = (dev_year, test_year)

        def fit(self, frame, history=None):
            raise DataError("stop here")

    monkeypatch.setattr("tempo_analysis.future_text.pipeline.FutureTextModel", Model)
    rc = main(["future-text", "train", "--variant", "freq", "--data", f"csv:{folder}/years.csv", "--out",
               str(folder / "ft"), *given])
    assert rc == 2 and "stop here" in capsys.readouterr().err
    assert seen["split"] == split


def test_an_unknown_time_unit_is_refused_for_every_data_source(monkeypatch, capsys, tmp_path):
    """--time-unit weeks with the world (no CSV to reject it) was dropped silently and training began."""
    from tempo_analysis.cli.stream import TIME_UNIT_CHOICES
    from tempo_analysis.data.timelines import POSITION, TIME_UNITS

    assert TIME_UNIT_CHOICES == (*TIME_UNITS, POSITION)
    monkeypatch.setattr("tempo_analysis.evaluation.classification.cross_validate", _fail)
    monkeypatch.setattr("tempo_analysis.data.specs.load_timelines", _fail)
    with pytest.raises(SystemExit) as e:
        main(["stream", "evaluate", "--time-unit", "weeks", "--out", str(tmp_path / "r.json")])
    assert e.value.code == 2 and "--time-unit: invalid choice: 'weeks'" in capsys.readouterr().err
