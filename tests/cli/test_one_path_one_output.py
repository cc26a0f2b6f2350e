"""Two outputs never share a path, and a list of seeds names each seed once: refused in one line,
before any data or model is loaded (every loader the command could reach fails the test)."""
from __future__ import annotations

import pytest

import tempo_analysis.resolve as resolve
from tempo_analysis.cli import main


@pytest.fixture
def no_loading(monkeypatch):
    def fail(*a, **k):
        raise AssertionError("the command loaded data before refusing its options")
    for name in ("load_timelines", "load_change_data", "load_social", "load_yearly"):
        monkeypatch.setattr(resolve, name, fail)


@pytest.mark.parametrize("argv, says", [
    ("semantic-change rank --out {d}/same.tsv --json {d}/same.tsv", ["--out", "--json", "the same path"]),
    ("semantic-change rank --save-model {d}/sm --out {d}/sm/rank.tsv --overwrite",
     ["--out", "--save-model", "one inside the other"]),
    ("stream compare {d}/a.json --out {d}/x.md --json {d}/x.md", ["--out", "--json", "the same path"]),
    ("stream evaluate --seeds 0 0 --out {d}/r.json", ["--seeds", "0", "more than once"]),
])
def test_refused_before_any_work(argv, says, tmp_path, capsys, no_loading):
    (tmp_path / "a.json").write_text("{}")
    assert main(argv.format(d=tmp_path).split()) == 2
    err = capsys.readouterr().err
    assert err.startswith("tempo-analysis: error: ") and err.count("\n") == 1
    for s in says:
        assert s in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json"]
