"""World.save and `tempo-analysis world`: whose folder it is, atomic replacement, option errors, --check, docs.

Each test here failed before its fix (see docs/ROBUSTNESS.md, *Output policy* and *Bad values at the
command line*, for the rows they hold).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import tempo_analysis.world as world_pkg
import tempo_analysis.world.world as world_mod
from tempo_analysis.cli import main
from tempo_analysis.outputs import TEMP_MARK, OutputExistsError
from tempo_analysis.world import FILES, ChangeWorldConfig, WorldConfig, generate_world, load_world

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "data" / "world"


@pytest.fixture(scope="module")
def world0():
    return generate_world(WorldConfig(seed=0))


@pytest.fixture(scope="module")
def world1():
    return generate_world(WorldConfig(seed=1))


@pytest.fixture
def no_generation(monkeypatch):
    """Any generation fails the test: a refusal must come before the world is generated."""
    def fail(*a, **k):
        raise AssertionError("the world was generated before the refusal")

    monkeypatch.setattr(world_pkg, "generate_world", fail)


def listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def snapshot(folder: Path) -> dict:
    return {n: (folder / n).read_bytes() for n in listing(folder)}


def dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


# --------------------------------------------------------------------------------------------------
# 1. a folder is ours only when its config.json carries the marker
# --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("config", ['{"learning_rate": 0.1}\n', "not json at all\n", '["format_version"]\n',
                                    '{"format_version": "1"}\n'])
def test_a_users_config_json_is_not_replaced_without_overwrite(config, world0, tmp_path):
    d = tmp_path / "world"
    d.mkdir()
    (d / "config.json").write_text(config)
    with pytest.raises(OutputExistsError) as e:
        world0.save(d)
    msg = str(e.value)
    assert str(d) in msg and "--overwrite" in msg and "\n" not in msg
    assert listing(d) == ["config.json"] and (d / "config.json").read_text() == config
    # with overwrite=True it is replaced; a world written by us is then replaced without it
    world0.save(d, overwrite=True)
    assert world_mod.is_world_folder(d) and load_world(d).config.seed == 0
    world0.save(d)


def test_cli_refuses_a_users_config_json_before_generating(tmp_path, capsys, no_generation):
    (tmp_path / "world").mkdir()
    (tmp_path / "world" / "config.json").write_text('{"mine": true}\n')
    assert main(["world", "--out", str(tmp_path)]) == 2       # not 1 (the generator was not reached)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(tmp_path / "world") in err and "--overwrite" in err
    assert (tmp_path / "world" / "config.json").read_text() == '{"mine": true}\n'


def test_is_world_folder(world0, tmp_path):
    assert not world_mod.is_world_folder(tmp_path)
    world0.save(tmp_path / "w")
    assert world_mod.is_world_folder(tmp_path / "w") and world_mod.is_world_folder(COMMITTED)


# --------------------------------------------------------------------------------------------------
# 2. the save is atomic for the folder
# --------------------------------------------------------------------------------------------------
class Killed(BaseException):
    """Stands for a kill: not an Exception, so no handler of the writer may swallow it."""


def test_an_interrupted_save_leaves_the_previous_world_complete(world0, world1, tmp_path, monkeypatch):
    d = tmp_path / "world"
    world0.save(d)
    before = snapshot(d)
    real = world_mod.write_csv
    written = []

    def write_csv(df, path):
        written.append(Path(path).name)
        if len(written) == 2:                  # the third file: config.json, timelines.csv, timelines_truth.csv
            raise Killed
        return real(df, path)

    monkeypatch.setattr(world_mod, "write_csv", write_csv)
    with pytest.raises(Killed):
        world1.save(d)
    assert written == ["timelines.csv", "timelines_truth.csv"]
    assert snapshot(d) == before                              # not one byte of the new world in place
    assert listing(tmp_path) == ["world"]                      # no temporary left behind
    back = load_world(d)
    assert back.config.seed == 0
    pd.testing.assert_frame_equal(back.frames["timelines"], world0.frames["timelines"])
    monkeypatch.setattr(world_mod, "write_csv", real)
    world1.save(d)                                             # the next save works and replaces it all
    assert load_world(d).config.seed == 1 and listing(tmp_path) == ["world"]


def test_a_failure_between_the_renames_puts_the_previous_world_back(world0, world1, tmp_path, monkeypatch):
    d = tmp_path / "world"
    world0.save(d)
    before = snapshot(d)
    real = os.replace
    calls = []

    def replace(a, b):
        calls.append((Path(a).name, Path(b).name))
        if len(calls) == 2:                    # old world set aside; the new one not yet in place
            raise Killed
        return real(a, b)

    monkeypatch.setattr(world_mod.os, "replace", replace)
    with pytest.raises(Killed):
        world1.save(d)
    monkeypatch.setattr(world_mod.os, "replace", real)
    assert snapshot(d) == before and listing(tmp_path) == ["world"]


def test_a_world_set_aside_by_a_killed_save_is_found_again(world0, tmp_path):
    world0.save(tmp_path / "world")
    aside = tmp_path / f".world.tempo_analysis-old-{dead_pid()}-0a1b2c3d4e5f6071"
    (tmp_path / "world" / TEMP_MARK).write_text("0a1b2c3d4e5f6071")                  # marked as a save does
    os.replace(tmp_path / "world", aside)                                            # killed between renames
    assert load_world(tmp_path).config.seed == 0
    assert listing(tmp_path) == ["world"]


def test_a_sigkill_during_a_save_keeps_the_previous_world(world0, tmp_path):
    """A real kill (SIGKILL, in a child process) while the new world's files are being written."""
    d = tmp_path / "world"
    world0.save(d)
    before = snapshot(d)
    child = f"""
import sys, time
import tempo_analysis.world.world as w
real = w.write_csv
def slow(df, path):
    out = real(df, path)
    if path.name == "timelines_truth.csv":
        print("WRITING", flush=True)
        time.sleep(120)
    return out
w.write_csv = slow
w.generate_world(w.WorldConfig(seed=1)).save({str(d)!r})
"""
    proc = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert proc.stdout.readline().strip() == "WRITING"
    finally:
        proc.kill()
        proc.wait()
    assert snapshot(d) == before and load_world(d).config.seed == 0
    assert any(str(proc.pid) in n for n in listing(tmp_path))    # the kill left its temporary behind
    world0.save(d)                                                 # the next save removes it
    assert listing(tmp_path) == ["world"]


def test_overwrite_keeps_the_users_other_files_and_hidden_files_are_carried_over(world0, tmp_path):
    d = tmp_path / "world"
    (d / "notes").mkdir(parents=True)
    (d / "notes" / "a.txt").write_text("a")
    (d / "thesis.tex").write_text("keep me")
    with pytest.raises(OutputExistsError, match="thesis.tex"):
        world0.save(d)
    world0.save(d, overwrite=True)
    assert (d / "thesis.tex").read_text() == "keep me" and (d / "notes" / "a.txt").read_text() == "a"
    assert set(FILES) <= set(listing(d))
    # a world folder of ours with a hidden file: replaced, the hidden file kept
    e = tmp_path / "w2"
    world0.save(e)
    (e / ".gitkeep").write_text("")
    (e / ".timelines.csv.x1y2.tmp").write_text("orphan of the old writer")
    world0.save(e)
    assert listing(e) == sorted([".gitkeep", *FILES])


# --------------------------------------------------------------------------------------------------
# 3. bad values name the CLI flag and the range
# --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("argv, says", [
    (["--seed", "-1"], "--seed -1: use a number >= 0."),
    (["--change-strength", "2"], "--change-strength 2: use a number from 0 to 1.5"),
    (["--change-strength", "-0.5"], "--change-strength -0.5: use a number from 0 to 1.5"),
])
def test_bad_seed_and_change_strength_name_the_flag(argv, says, tmp_path, capsys, no_generation):
    # (nan and inf are refused by the parser itself, as for every number option: tests/cli/test_finite_numbers.py)
    assert main(["world", "--out", str(tmp_path), *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tempo-analysis: error: ") and err.count("\n") == 1
    assert says in err and "WorldConfig" not in err and "None" not in err
    assert listing(tmp_path) == []


def test_the_cli_range_of_change_strength_is_the_configs():
    from tempo_analysis.cli.world import CHANGE_STRENGTH_RANGE

    lo, hi = CHANGE_STRENGTH_RANGE
    ChangeWorldConfig(change_strength=lo).validate()
    ChangeWorldConfig(change_strength=hi).validate()
    for bad in (lo - 1e-9, hi + 1e-9):
        with pytest.raises(ValueError):
            ChangeWorldConfig(change_strength=bad).validate()


# --------------------------------------------------------------------------------------------------
# 4. python -m tempo_analysis.cli.world is the same command, with the same error boundary
# --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("exc, rc, says", [
    (PermissionError(13, "Permission denied", "/proc/sys/x"), 2, "tempo-analysis: error: [Errno 13] Permission denied"),
    (RuntimeError("a bug"), 1, "tempo-analysis: internal error (RuntimeError): a bug"),
])
def test_module_main_has_the_cli_error_boundary(exc, rc, says, tmp_path, capsys, monkeypatch):
    from tempo_analysis.cli.world import main as module_main

    def boom(*a, **k):
        raise exc

    monkeypatch.setattr(world_pkg, "generate_world", boom)
    assert module_main(["--out", str(tmp_path)]) == rc
    err = capsys.readouterr().err
    assert err.startswith(says) and "Traceback" not in err
    with pytest.raises(type(exc)):
        module_main(["--out", str(tmp_path), "--debug"])


def test_python_dash_m_world_prints_one_line(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "tempo_analysis.cli.world", "--out", str(tmp_path), "--seed", "-1"],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr == "tempo-analysis: error: --seed -1: use a number >= 0.\n"


# --------------------------------------------------------------------------------------------------
# 5. --out pointing at a world folder itself
# --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("extra", [[], ["--check"], ["--overwrite"]])
def test_out_that_already_is_a_world_folder_is_refused(extra, world0, tmp_path, capsys, monkeypatch):
    world0.save(tmp_path / "data" / "world")
    out = tmp_path / "data" / "world"
    monkeypatch.setattr(world_pkg, "generate_world", lambda *a, **k: pytest.fail("generated"))
    assert main(["world", "--out", str(out), *extra]) == 2
    err = capsys.readouterr().err
    assert "already is a world folder" in err and f"pass its parent (--out {tmp_path / 'data'})" in err
    assert not (out / "world").exists()


# --------------------------------------------------------------------------------------------------
# 6. --check: the full command to run, and a missing folder reported as missing
# --------------------------------------------------------------------------------------------------
def test_check_prints_the_command_with_the_options_given(world0, tmp_path, capsys):
    world0.save(tmp_path / "world")
    argv = ["--out", str(tmp_path), "--seed", "3", "--mode", "flight", "--speed", "2", "--change-strength", "0.5"]
    assert main(["world", *argv, "--check"]) == 1
    out = capsys.readouterr().out
    assert f"`tempo-analysis world {' '.join(argv)}`" in out and "(same options)" not in out


def test_check_reports_a_missing_folder_and_missing_files_as_missing(world0, tmp_path, capsys):
    assert main(["world", "--out", str(tmp_path), "--check"]) == 1
    out = capsys.readouterr().out
    assert "missing" in out and "differs" not in out and f"`tempo-analysis world --out {tmp_path}`" in out
    world0.save(tmp_path / "world")
    (tmp_path / "world" / "yearly.csv").unlink()
    assert main(["world", "--out", str(tmp_path), "--check"]) == 1
    out = capsys.readouterr().out
    assert "missing ['yearly.csv']" in out and "differs" not in out


# --------------------------------------------------------------------------------------------------
# 7. the docs agree with the files and the modules
# --------------------------------------------------------------------------------------------------
def test_files_descriptions_name_every_column_and_key_of_the_committed_world():
    implied = {"per word": {"word"}, "per word and year": {"word", "year"}}   # the row keys
    for name, desc in FILES.items():
        head, colon, body = desc.partition(":")
        listed = set(re.findall(r"\w+", re.sub(r"\([^)]*\)", "", body if colon else desc)))
        if name.endswith(".csv"):
            cols = set(pd.read_csv(COMMITTED / name, nrows=0).columns)
            assert cols - implied.get(head, set()) <= listed, f"FILES[{name!r}] misses {sorted(cols - listed)}"
            assert listed <= cols, f"FILES[{name!r}] lists {sorted(listed - cols)}, not columns of the file"
        elif name == "diffusion_truth.json":
            keys = set(json.loads((COMMITTED / name).read_text()))
            assert listed == keys, (f"FILES[{name!r}]: not in the file {sorted(listed - keys)}, "
                                    f"missing {sorted(keys - listed)}")


def test_data_readme_sizes_match_the_committed_world():
    readme = (ROOT / "data" / "README.md").read_text(encoding="utf-8")
    for name in FILES:
        if not name.endswith(".csv"):
            continue
        row = re.search(rf"^\| `{re.escape(name)}` \| ([^|]+) \|", readme, re.M)
        assert row, name
        first = re.match(r"(~?)([\d,]+)", row.group(1).strip())
        n = len(pd.read_csv(COMMITTED / name, dtype=str, keep_default_na=False))
        if first.group(1) != "~":
            assert int(first.group(2).replace(",", "")) == n, f"data/README.md: {name} has {n:,} rows"
    size = sum((COMMITTED / n).stat().st_size for n in FILES) / 1e6
    claim = float(re.search(r"whole folder is about ([\d.]+) MB", readme).group(1))
    assert abs(claim - size) <= 0.1, f"data/README.md says about {claim} MB, the files take {size:.2f} MB"


@pytest.mark.parametrize("path", ["world/social.py", "world/text_social.py", "evaluation/ranking.py"])
def test_architecture_file_map_agrees_with_the_docstring(path):
    import ast

    doc = ast.get_docstring(ast.parse((ROOT / "tempo_analysis" / path).read_text(encoding="utf-8")))
    first = " ".join(doc.split("\n\n")[0].split())
    arch = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    section = arch[arch.index(f"tempo_analysis/{path.split('/')[0]}/"):]
    line = re.search(rf"^  {re.escape(path.split('/')[1])} +(.+)$", section, re.M).group(1).strip()
    text = line[:-3].rstrip() if line.endswith("...") else line
    assert first.startswith(text), f"docs/ARCHITECTURE.md: {path}: {line!r} vs the docstring {first!r}"
