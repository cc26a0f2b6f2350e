"""The one data-spec parser and the real-data folder lookup (tempo_analysis.data.specs), and the world rule
(tempo_analysis.resolve.open_world)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from tempo_analysis import resolve
from tempo_analysis.data import DataError
from tempo_analysis.data import locations, specs

USAGES = {"world": "world[:DIR]", "csv": "csv:FILE", "rumoureval2017": "rumoureval2017[:DIR]"}


def test_parse_spec_splits_kind_and_parts():
    s = specs.parse_spec("csv:a.csv, b.csv", USAGES)
    assert (s.kind, s.parts, s.path) == ("csv", ("a.csv", "b.csv"), "a.csv")
    assert specs.parse_spec("world", USAGES).parts == ()
    assert specs.parse_spec("RumourEval:x", USAGES).kind == "rumoureval2017"  # alias, case-insensitive


def test_parse_spec_rejects_unknown_kind_naming_the_option_and_the_forms():
    with pytest.raises(DataError, match=r"--data 'semeval:x'.*world\[:DIR\], csv:FILE"):
        specs.parse_spec("semeval:x", USAGES)


def test_shared_path_prefers_the_given_folder_and_names_a_missing_one(tmp_path, monkeypatch):
    given = tmp_path / "mine"
    given.mkdir()
    assert specs.shared_path(specs.parse_spec(f"csv:{given}", USAGES), "x") == given
    with pytest.raises(DataError, match="does not exist"):
        specs.shared_path(specs.parse_spec(f"csv:{tmp_path / 'nope'}", USAGES), "x")


def test_shared_path_falls_back_to_the_shared_folder(tmp_path, monkeypatch):
    (tmp_path / "rumoureval2017").mkdir()
    monkeypatch.setenv(locations.ENV_SHARED_DATA, str(tmp_path))
    spec = specs.parse_spec("rumoureval2017", USAGES)
    assert specs.shared_path(spec, "rumoureval2017") == tmp_path / "rumoureval2017"
    monkeypatch.setenv(locations.ENV_SHARED_DATA, str(tmp_path / "missing"))
    with pytest.raises(DataError, match="no shared/data folder"):
        specs.shared_path(spec, "rumoureval2017")


def test_shared_data_dir_is_found_above_the_project(tmp_path, monkeypatch):
    monkeypatch.delenv(locations.ENV_SHARED_DATA, raising=False)
    project = tmp_path / "work" / "checkout"
    project.mkdir(parents=True)
    (project / "pyproject.toml").write_text("[project]\nname='x'\n")
    (tmp_path / "work" / "shared" / "data").mkdir(parents=True)
    assert locations.shared_data_dir(project) == tmp_path / "work" / "shared" / "data"
    (tmp_path / "work" / "shared" / "data").rmdir()
    assert locations.shared_data_dir(project) is None
    with pytest.raises(FileNotFoundError, match=locations.ENV_SHARED_DATA):
        locations.shared_data_dir(project, required=True)


def test_world_rule_missing_world_warns_and_returns_none(tmp_path, monkeypatch):
    monkeypatch.setenv(locations.ENV_DATA, str(tmp_path))
    with pytest.warns(UserWarning, match="generating the default world"):
        assert resolve.open_world() is None


def test_world_rule_broken_world_raises_instead_of_regenerating(tmp_path, monkeypatch):
    (tmp_path / "world").mkdir()
    (tmp_path / "world" / "config.json").write_text("{}")  # a world folder with its files missing
    monkeypatch.setenv(locations.ENV_DATA, str(tmp_path))
    with pytest.raises((FileNotFoundError, ValueError)):
        resolve.open_world()


def test_world_rule_reads_the_committed_world():
    world = resolve.open_world()
    assert world is not None and len(world.timelines) > 0


@pytest.mark.parametrize("spec, load", [
    ("rumoureval2017:{d},{d}", lambda s: resolve.load_timelines(s)),
    ("world:{d},{d}", lambda s: resolve.load_timelines(s)),
    ("world:{d},{d}", lambda s: resolve.load_yearly(s)),
])
def test_one_folder_specs_refuse_a_second_folder(spec, load, tmp_path):
    """``rumoureval2017:/a,/b`` read /a and silently ignored /b (likewise world, nltk, semeval, dwug: see
    tests/semantic_change/test_loaders.py); now the same 'give one folder' DataError as load_social."""
    text = spec.format(d=tmp_path)
    with pytest.raises(DataError, match=rf"--data '{text}': give one folder; the part\(s\) \['{tmp_path}'\] after the "
                                        r"comma would be ignored\. Fix: give one folder, e\.g\. "):
        load(text)


def test_real_data_tests_find_the_folder_through_shared_data_dir():
    """A test that builds <checkout>/../shared/data from its own path ignores $TEMPO_ANALYSIS_SHARED_DATA
    and a checkout elsewhere: real-data tests take the folder from locations.shared_data_dir()."""
    tests = Path(__file__).resolve().parents[1]
    quoted = re.compile(r"""["']shared["']""")
    offenders = [f"{f.relative_to(tests.parent)}:{i}" for f in sorted(tests.rglob("*.py"))
                 for i, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1)
                 if "__file__" in line and quoted.search(line)]
    assert not offenders, f"use tempo_analysis.data.locations.shared_data_dir() instead: {offenders}"
