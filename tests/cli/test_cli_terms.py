"""A fix raised under the CLI names what a user of the command line can do: the command's option
(``--time-unit s``, not ``time_unit='s'``), or, where no option sets a library argument (``min_posts``,
``pos``, ``slices``, ``year_range``), a fix in the files the command reads. The same library call in
Python keeps its Python terms. Every fit and model load fails the test if reached."""
from __future__ import annotations

import warnings

import pytest

from tempo_analysis.cli import main
from tempo_analysis.data import DataError, Timelines
from tempo_analysis.data.errors import cli_options, in_cli_terms
from tests.robustness.builders import dwug_row, write_dwug

WORK = ["tempo_analysis.evaluation.classification.cross_validate",
        "tempo_analysis.semantic_change.estimator.SemanticChangeRanker.fit",
        "tempo_analysis.diffusion.DiffusionMapper.fit", "tempo_analysis.future_text.estimator.FutureTextModel.fit",
        "tempo_analysis.encoders.load_encoder", "tempo_analysis.causal_lm.load_causal_lm"]


def _fail(*args, **kwargs):
    raise AssertionError("the command started working before it read its data")


@pytest.fixture
def no_work(monkeypatch):
    for target in WORK:
        monkeypatch.setattr(target, _fail)


def error_of(line, capsys) -> str:
    rc = main(line)
    err = capsys.readouterr().err
    assert rc == 2, err
    assert err.startswith("tempo-analysis: error: ") and err.count("\n") == 1, err
    return err


def posts(tmp_path, rows: str, name: str = "posts.csv"):
    path = tmp_path / name
    path.write_text("timeline_id,post_id,timestamp,text,label\n" + rows)
    return path


NUMERIC = "t1,a,1500000000,one,O\nt1,b,1500000060,two,IS\nt2,c,1500000100,three,O\nt2,d,1500000200,four,IS\n"


def test_numbers_without_a_unit_name_the_time_unit_option(tmp_path, no_work, capsys):
    err = error_of(["stream", "evaluate", "--data", f"csv:{posts(tmp_path, NUMERIC)}", "--out",
                    str(tmp_path / "r.json")], capsys)
    assert "pass --time-unit one of s, ms, min, h, D (e.g. --time-unit s for epoch seconds)" in err, err
    assert "time_unit" not in err, err


def test_a_timestamp_in_the_wrong_unit_names_the_option_and_its_value(tmp_path, no_work, capsys):
    rows = NUMERIC.replace("1500000", "1500000000")       # epoch milliseconds read as seconds
    err = error_of(["stream", "evaluate", "--data", f"csv:{posts(tmp_path, rows)}", "--time-unit", "s", "--out",
                    str(tmp_path / "r.json")], capsys)
    assert "with --time-unit s lie outside" in err and "check --time-unit (e.g. --time-unit ms" in err, err
    assert "time_unit" not in err, err


def test_a_timeline_of_one_post_says_to_drop_it_from_the_file(tmp_path, no_work, capsys):
    path = posts(tmp_path, "t1,a,2017-01-01,one,O\nt1,b,2017-01-02,two,IS\nt2,c,2017-01-03,alone,O\n")
    err = error_of(["stream", "evaluate", "--data", f"csv:{path}", "--out", str(tmp_path / "r.json")], capsys)
    assert "fewer than 2 posts" in err and "drop them from the file" in err and "'t2'" in err, err
    assert "pass min_posts" not in err and "min_posts=2" not in err, err


def test_the_order_only_rule_names_the_option(tmp_path, no_work, capsys):
    path = tmp_path / "posts.csv"
    path.write_text("timeline_id,post_id,text,label\nt1,a,one,O\nt1,b,two,IS\n")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        main(["stream", "evaluate", "--data", f"csv:{path}", "--out", str(tmp_path / "r.json")])
    texts = [str(w.message) for w in seen if "no 'timestamp' column" in str(w.message)]
    assert texts and "Pass --time-unit position to say so" in texts[0], texts


def test_mixed_time_slices_in_a_social_csv_give_a_fix_in_the_file(tmp_path, no_work, capsys):
    docs, edges = tmp_path / "docs.csv", tmp_path / "edges.csv"
    docs.write_text("doc_id,unit,time,text\nd1,a,1,cloud talk\nd2,b,late,cloud server\n")
    edges.write_text("source,target,weight\na,b,1.0\n")
    err = error_of(["diffusion", "train", "--data", f"csv:{docs},{edges}", "--out", str(tmp_path / "run")], capsys)
    assert "use one type for every time slice (all numbers, or all strings)" in err, err
    assert "slices=" not in err, err


def test_a_typo_year_in_a_yearly_csv_says_to_correct_it(tmp_path, no_work, capsys):
    path = tmp_path / "years.csv"
    path.write_text("year,text\n2019,a text\n20201,a typo\n2021,more text\n")
    err = error_of(["future-text", "train", "--variant", "freq", "--data", f"csv:{path}", "--out",
                    str(tmp_path / "ft")], capsys)
    assert "20201" in err and "correct" in err and "the command line reads years 1000-2100" in err, err
    assert "year_range" not in err, err


def test_two_dwug_lemmas_that_become_one_word_name_the_folders_to_move(tmp_path, no_work, capsys):
    root = write_dwug(tmp_path / "dwug", {
        "plane_nn": [dwug_row("plane_nn", 1, "p1", "the plane of the table"),
                     dwug_row("plane_nn", 2, "p2", "the plane landed late")],
        "plane_vb": [dwug_row("plane_vb", 1, "v1", "they plane the wood"),
                     dwug_row("plane_vb", 2, "v2", "we plane it smooth")]})
    err = error_of(["semantic-change", "rank", "--data", f"dwug:{root}", "--out", str(tmp_path / "r.tsv")], capsys)
    assert "both become 'plane'" in err and "move one of the two lemma folders out of DIR/data" in err, err
    assert str(root / "data" / "plane_vb") in err, err
    assert "Fix: pos='keep'" not in err, err


def test_python_callers_keep_the_library_terms(tmp_path):
    with pytest.raises(DataError, match=r"pass time_unit= one of .* \(e.g. time_unit='s' for epoch seconds\)"):
        Timelines.from_csv(posts(tmp_path, NUMERIC))
    with pytest.raises(DataError, match=r"pass min_posts=1 to keep them"):
        Timelines.from_csv(posts(tmp_path, "t1,a,2017-01-01,one,O\n", name="one.csv"))


def test_in_cli_terms_names_the_running_commands_option_or_falls_back():
    assert in_cli_terms("time_unit='s'", "{option} s", option="time_unit") == "time_unit='s'"
    with cli_options({"time_unit": "--time-unit"}):
        assert in_cli_terms("time_unit='s'", "{option} s", option="time_unit") == "--time-unit s"
        assert in_cli_terms("pass min_posts=1", "drop them") == "drop them"
    with cli_options({}):       # a command without the option keeps the library's words
        assert in_cli_terms("time_unit='s'", "{option} s", option="time_unit") == "time_unit='s'"
    assert in_cli_terms("pass min_posts=1", "drop them") == "pass min_posts=1"    # the block has ended
