"""Evaluation refuses data of one class (every model would score 100), and `stream evaluate` never
replaces a complete results file with a partial one: progress goes to NAME.partial.json until the end."""
from __future__ import annotations

import json

import pandas as pd
import pytest

import tempo_analysis.evaluation.classification as classification
from tempo_analysis.cli import main
from tempo_analysis.data import DataError, Timelines
from tempo_analysis.evaluation.classification import check_classes


def timelines(labels):
    rows = [{"timeline_id": f"t{i // 3}", "post_id": f"p{i}", "text": "a post", "label": lab,
             "timestamp": f"2020-01-01T00:00:{i:02d}Z"} for i, lab in enumerate(labels)]
    return Timelines.from_frame(pd.DataFrame(rows))


def test_one_class_is_refused_by_name():
    with pytest.raises(DataError, match=r"1 class\(es\) \('IS'\).*at least two"):
        check_classes(timelines(["IS"] * 6))
    check_classes(timelines(["IS", "IE"] * 3))


def test_the_cli_refuses_a_one_class_file(tmp_path, capsys):
    f = tmp_path / "posts.csv"
    timelines(["IS"] * 6).df[["timeline_id", "post_id", "timestamp", "text", "label"]].to_csv(f, index=False)
    assert main(["stream", "evaluate", "--baseline", "random", "--data", f"csv:{f}", "--folds", "2",
                 "--out", str(tmp_path / "r.json")]) == 2
    assert "at least two" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()


def test_a_killed_rerun_keeps_the_complete_results(tmp_path, monkeypatch):
    out = tmp_path / "r.json"
    argv = ["stream", "evaluate", "--baseline", "random", "--folds", "3", "--seeds", "0", "1", "--out", str(out)]
    assert main(argv) == 0
    complete = json.loads(out.read_text())
    assert complete["complete"] is True and not (tmp_path / "r.partial.json").exists()
    real, calls = classification.cross_validate, []

    def killed_after_one_run(*a, on_run=None, **k):
        def one(run):
            on_run(run)
            calls.append(1)
            raise KeyboardInterrupt            # the kill, after the first run was written
        return real(*a, on_run=one, **k)
    monkeypatch.setattr("tempo_analysis.evaluation.classification.cross_validate", killed_after_one_run)
    assert main(argv) == 130
    assert calls and json.loads(out.read_text()) == complete               # untouched
    partial = json.loads((tmp_path / "r.partial.json").read_text())
    assert partial["complete"] is False and len(next(iter(partial["by_window"].values()))["runs"]) == 1
    monkeypatch.setattr("tempo_analysis.evaluation.classification.cross_validate", real)
    assert main(argv) == 0 and not (tmp_path / "r.partial.json").exists()
