"""The seed study: lesson names, the per-seed rows, the table, the claims, and the CLI's refusals.

The headline computations themselves are heavy (minutes per seed); each wing's own tests run them at
the notebook's seed. Here a stand-in runner gives the rows, so the plumbing is checked in seconds."""
import json

import pytest

from tempo_analysis import study
from tempo_analysis.cli import main


@pytest.mark.parametrize("name", ["02", "2", "02_semantic_change", "semantic_change", "notebooks/02_semantic_change.ipynb"])
def test_lesson_id_takes_numbers_and_names(name):
    assert study.lesson_id(name) == "02"


def test_unknown_lesson_names_the_choices():
    with pytest.raises(ValueError, match="01 .*04"):
        study.lesson_id("05")


@pytest.fixture
def fake_runner(monkeypatch):
    calls = []

    def runner(seed, progress):
        calls.append(seed)
        return {"time_effect": 0.05 * seed, "tempoformer_macro_f1": 0.8, "control_macro_f1": 0.8 - 0.05 * seed}, {"window": 3}

    monkeypatch.setitem(study._RUNNERS, "01", runner)
    return calls


def test_run_study_gives_one_row_per_seed_with_the_lesson_keys(fake_runner):
    seen = []
    result = study.run_study("01", [1, 3, 4], progress=False, on_row=lambda s: seen.append(len(s["rows"])))
    assert fake_runner == [1, 3, 4] and seen == [1, 2, 3]
    assert [r["seed"] for r in result["rows"]] == [1, 3, 4]
    for row in result["rows"]:
        assert set(study.KEYS["01"]) <= set(row) and row["settings"] == {"window": 3} and row["seconds"] >= 0
    assert result["command"].startswith("tempo-analysis study 01 --seeds 1 3 4")
    assert result["chosen_on"] == list(study.CHOSEN_ON) and result["code_version"]
    table = study.study_table(result)
    assert list(table.index) == [1, 3, 4, "mean", "std"]
    assert table.loc["mean", "time_effect"] == pytest.approx(0.05 * 8 / 3)
    held = study.holds(result)          # time_effect >= 0.10 at seeds 3 and 4 (0.15, 0.20), not at 1 (0.05)
    assert held.loc[0, "held"] == 2 and held.loc[0, "of"] == 3


def test_run_study_refuses_bad_seeds_before_any_work(fake_runner):
    for seeds, match in (([], "at least one"), ([1, 1], "twice"), ([-1], "non-negative"), ([1.5], "integer")):
        with pytest.raises(ValueError, match=match):
            study.run_study("01", seeds, progress=False)
    assert fake_runner == []


def test_a_runner_that_misses_a_key_is_an_error(monkeypatch):
    monkeypatch.setitem(study._RUNNERS, "01", lambda seed, progress: ({"time_effect": 0.1}, {}))
    with pytest.raises(RuntimeError, match="tempoformer_macro_f1"):
        study.headline("01", 0)


def test_summary_keys_add_the_wing_prefix():
    assert study.summary_keys("03", {"walk.recovered_mode": "walk"}) == {"diffusion.walk.recovered_mode": "walk"}


def test_cli_writes_the_rows_and_prints_the_claims(fake_runner, tmp_path, capsys):
    out = tmp_path / "s.json"
    assert main(["study", "01", "--seeds", "2", "3", "--out", str(out), "--no-progress"]) == 0
    data = json.loads(out.read_text())
    assert [r["seed"] for r in data["rows"]] == [2, 3] and "tempo_analysis" in data
    assert "holds at 2 of 2 seeds" in capsys.readouterr().out
    # a file it wrote is replaced without --overwrite
    assert main(["study", "01", "--seeds", "4", "--out", str(out), "--no-progress"]) == 0


@pytest.mark.parametrize("argv, match", [
    (["study", "07", "--seeds", "1"], "unknown lesson"),
    (["study", "01", "--seeds", "1", "1"], "more than once"),
    (["study", "01", "--seeds", "-2"], "non-negative"),
])
def test_cli_refuses_bad_input_before_any_work(fake_runner, tmp_path, capsys, argv, match):
    out = tmp_path / "s.json"
    assert main(argv + ["--out", str(out)]) == 2
    assert match in capsys.readouterr().err and not out.exists() and fake_runner == []


def test_cli_refuses_a_users_file_and_keeps_it(fake_runner, tmp_path, capsys):
    out = tmp_path / "notes.json"
    out.write_text("my notes")
    assert main(["study", "01", "--seeds", "1", "--out", str(out)]) == 2
    assert "--overwrite" in capsys.readouterr().err and out.read_text() == "my notes" and fake_runner == []


def test_cli_refuses_seeds_that_are_not_integers(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        main(["study", "01", "--seeds", "x", "--out", str(tmp_path / "s.json")])
    assert e.value.code == 2 and "--seeds" in capsys.readouterr().err


@pytest.mark.parametrize("lesson", sorted(study.LESSONS))
def test_every_lesson_ships_a_recorded_study_on_seeds_it_did_not_choose_on(lesson):
    recorded = study.recorded_seed_study(lesson)
    seeds = [r["seed"] for r in recorded["rows"]]
    # the command it names regenerates exactly these rows, on seeds the settings were not chosen on
    assert recorded["lesson"] == lesson
    assert recorded["command"] == f"tempo-analysis study {lesson} --seeds {' '.join(map(str, seeds))} --out FILE.json"
    assert seeds and not set(seeds) & set(study.CHOSEN_ON)
    for row in recorded["rows"]:
        assert set(study.KEYS[lesson]) <= set(row)
    assert len(study.study_table(recorded)) == len(seeds) + 2
