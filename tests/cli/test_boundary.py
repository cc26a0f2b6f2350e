"""The CLI's error boundary and output policy, command by command.

Every command checks its output paths before it loads data or a model: a file or folder that
tempo_analysis did not write is refused in one line (exit 2) unless ``--overwrite`` is given. Bad
input is one line and exit 2; any other exception is one line naming its type with a ``--debug``
hint (exit 1); ``--debug`` shows the traceback.
"""

from __future__ import annotations

import json
import warnings

import pytest

import tempo_analysis.cli.diffusion as cli_diffusion
import tempo_analysis.cli.world as cli_world
from tempo_analysis.cli import main
from tempo_analysis.data import DataError
from tempo_analysis.outputs import OutputExistsError, stamp, text_header


@pytest.fixture
def user_files(tmp_path):
    """A user's JSON file, TSV file and non-empty folder that tempo_analysis did not write."""
    (tmp_path / "mine.json").write_text('{"keep": true}')
    (tmp_path / "mine.tsv").write_text("my\tnotes\n")
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "config.json").write_text('{"keep": true}')
    return tmp_path


def _no_work(*args, **kwargs):
    raise AssertionError("the command started working before it checked its output path")


# command line, what it would load if it got past the output check (module, attribute)
REFUSED = {
    "stream evaluate --out FILE": (["stream", "evaluate", "--out", "{d}/mine.json"],
                                   "tempo_analysis.resolve", "load_timelines"),
    "stream time-effect --out FILE": (["stream", "time-effect", "--out", "{d}/mine.json"],
                                      "tempo_analysis.resolve", "load_timelines"),
    "semantic-change rank --out TSV": (["semantic-change", "rank", "--out", "{d}/mine.tsv"],
                                       "tempo_analysis.resolve", "load_change_data"),
    "semantic-change rank --json FILE": (["semantic-change", "rank", "--out", "{d}/new.tsv", "--json",
                                          "{d}/mine.json"], "tempo_analysis.resolve", "load_change_data"),
    "semantic-change rank --save-model DIR": (["semantic-change", "rank", "--out", "{d}/new.tsv", "--save-model",
                                               "{d}/mine"], "tempo_analysis.resolve", "load_change_data"),
    "diffusion train --out DIR": (["diffusion", "train", "--out", "{d}/mine"],
                                  "tempo_analysis.resolve", "load_social"),
    "diffusion analyze --out FILE": (["diffusion", "analyze", "--checkpoint", "{d}/run", "--word", "cloud",
                                      "--anchor", "server", "--out", "{d}/mine.json"],
                                     "tempo_analysis.diffusion", "DiffusionMapper"),
    "future-text train --out DIR": (["future-text", "train", "--variant", "freq", "--out", "{d}/mine"],
                                    "tempo_analysis.resolve", "load_yearly"),
    "future-text what-if --out FILE": (["future-text", "what-if", "--checkpoint", "{d}/run", "--words", "kernel",
                                        "--out", "{d}/mine.json"], "tempo_analysis.cli.future_text", "load_checkpoint"),
    "future-text evaluate --out FILE": (["future-text", "evaluate", "--checkpoint", "{d}/run", "--year", "2020",
                                         "--out", "{d}/mine.json"], "tempo_analysis.cli.future_text", "load_checkpoint"),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_a_users_output_is_refused_before_any_work(case, user_files, monkeypatch, capsys):
    argv, module, attr = REFUSED[case]
    monkeypatch.setattr(f"{module}.{attr}", _no_work)
    before = {p: p.read_bytes() for p in user_files.rglob("*") if p.is_file()}
    rc = main([a.format(d=user_files) for a in argv])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert err.startswith("tempo-analysis: error: ") and err.count("\n") == 1, err
    assert "--overwrite" in err and ("not written by tempo_analysis" in err or "not created by tempo_analysis" in err)
    after = {p: p.read_bytes() for p in user_files.rglob("*") if p.is_file()}
    assert after == before, "a refused command must leave the user's files as they were"


def test_our_own_outputs_are_recognised(tmp_path):
    """Re-running a command over its own earlier output is allowed without --overwrite."""
    from tempo_analysis.outputs import prepare_output_file

    (tmp_path / "r.json").write_text(json.dumps(stamp({"a": 1}, "stream-evaluate")))
    (tmp_path / "r.tsv").write_text(text_header("semantic-change rank") + "w\t0.5\n")
    prepare_output_file(tmp_path / "r.json")
    prepare_output_file(tmp_path / "r.tsv")
    (tmp_path / "u.tsv").write_text("w\t0.5\n# tempo_analysis later\n")
    with pytest.raises(OutputExistsError):
        prepare_output_file(tmp_path / "u.tsv")


def test_world_refuses_a_folder_with_foreign_files(tmp_path, capsys):
    (tmp_path / "world").mkdir()
    (tmp_path / "world" / "thesis.tex").write_text("keep me")
    assert main(["world", "--out", str(tmp_path)]) == 2
    assert "thesis.tex" in capsys.readouterr().err
    assert (tmp_path / "world" / "thesis.tex").read_text() == "keep me"
    assert not (tmp_path / "world" / "timelines.csv").exists()


@pytest.mark.parametrize("exc, rc, says", [
    (DataError("column 'text' at rows [3]: empty. Fix: drop the row."), 2, "tempo-analysis: error: column 'text'"),
    (ValueError("--window 0: use a positive size"), 2, "tempo-analysis: error: --window 0"),
    (FileNotFoundError("no such folder 'x'"), 2, "tempo-analysis: error: no such folder"),
    (KeyError("unknown unit 'u9'"), 2, "tempo-analysis: error: unknown unit 'u9'"),
    (TypeError("unsupported operand"), 1, "tempo-analysis: internal error (TypeError): unsupported operand"),
    (RuntimeError("CUDA out of memory"), 1, "tempo-analysis: internal error (RuntimeError)"),
])
def test_one_line_per_failure_and_the_right_exit_code(exc, rc, says, monkeypatch, tmp_path, capsys):
    def boom(args):
        raise exc

    monkeypatch.setattr(cli_world, "run", boom)
    assert main(["world", "--out", str(tmp_path)]) == rc
    err = capsys.readouterr().err
    assert err.startswith(says), err
    assert "Traceback" not in err
    assert ("--debug" in err) == (rc == 1), "only an internal error points to --debug"


@pytest.mark.parametrize("where", ["before", "after"])
def test_debug_shows_the_traceback(where, monkeypatch, tmp_path):
    def boom(args):
        raise TypeError("a bug")

    monkeypatch.setattr(cli_world, "run", boom)
    argv = ["world", "--out", str(tmp_path)]
    argv = ["--debug", *argv] if where == "before" else [*argv, "--debug"]
    with pytest.raises(TypeError, match="a bug"):
        main(argv)


def test_interrupt_is_one_line(monkeypatch, tmp_path, capsys):
    def stop(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_world, "run", stop)
    assert main(["world", "--out", str(tmp_path)]) == 130
    assert capsys.readouterr().err == "tempo-analysis: interrupted\n"


def test_warnings_print_as_one_line(monkeypatch, tmp_path, capsys):
    seen = {}

    def warn(args):
        seen["line"] = warnings.formatwarning("slices [1, 3] are missing", UserWarning, "corpus.py", 7)
        with pytest.warns(UserWarning, match="missing"):  # recording still works inside a command
            warnings.warn("slices [1, 3] are missing", UserWarning)
        return 0

    before = warnings.formatwarning
    monkeypatch.setattr(cli_diffusion, "run_train", warn)
    assert main(["diffusion", "train", "--out", str(tmp_path / "run")]) == 0
    assert seen["line"] == "tempo-analysis: warning: slices [1, 3] are missing\n"
    assert warnings.formatwarning is before, "the CLI's warning format does not leak out of main()"
