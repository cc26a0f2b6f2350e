"""The publishing scripts never present a failed or interrupted run as current (make site, make demo)."""

from __future__ import annotations

import json
import os

import nbformat

import build_site
import run_notebooks


def _lesson(folder, name, outputs=()):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(f"# {name}\n\nA lesson."), nbformat.v4.new_code_cell("1 + 1")]
    nb.cells[1].outputs = list(outputs)
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, folder / f"{name}.ipynb")
    return folder / f"{name}.ipynb"


def _site(tmp_path, outputs=(), status=None):
    src, executed, out = tmp_path / "src", tmp_path / "executed", tmp_path / "site"
    source = _lesson(src, "01_x")
    copy = _lesson(executed, "01_x", outputs)
    os.utime(copy, (source.stat().st_mtime + 10, source.stat().st_mtime + 10))  # newer: the copy is used
    if status is not None:
        (executed / "summary.json").write_text(json.dumps({"notebooks": {"01_x": {"status": status}}}))
    return build_site.main(["--notebooks-dir", str(src), "--executed", str(executed), "--out", str(out)]), out


def test_site_publishes_a_clean_run(tmp_path):
    rc, out = _site(tmp_path, [nbformat.v4.new_output("execute_result", {"text/plain": "2"}, execution_count=1)],
                    status="ok")
    assert rc == 0 and (out / "01_x.html").is_file() and (out / "index.html").is_file()


def test_site_refuses_a_copy_with_an_error_cell(tmp_path, capsys):
    error = nbformat.v4.new_output("error", ename="ZeroDivisionError", evalue="division by zero", traceback=[])
    rc, out = _site(tmp_path, [error], status="ok")
    assert rc == 1 and not out.exists()
    assert "ZeroDivisionError" in capsys.readouterr().err


def test_site_refuses_a_copy_whose_run_failed(tmp_path, capsys):
    rc, out = _site(tmp_path, [], status="timeout")
    assert rc == 1 and not out.exists()
    assert "'timeout'" in capsys.readouterr().err


def test_demo_runs_the_lessons_only(tmp_path):
    for name in ("00_a", "01_b", "Untitled"):
        _lesson(tmp_path, name)
    assert [p.stem for p in run_notebooks.find_notebooks([], tmp_path)] == ["00_a", "01_b"]


def test_an_interrupted_demo_leaves_no_copy_of_the_last_run(tmp_path, monkeypatch):
    """The old build/<name>.ipynb and .html go before the run starts: a run killed midway must not
    leave the previous run's outputs looking current."""
    src, out = tmp_path / "nb", tmp_path / "build"
    _lesson(src, "00_a")
    out.mkdir()
    for suffix in (".ipynb", ".html"):
        (out / f"00_a{suffix}").write_text("last run")

    def killed(*args, **kwargs):
        assert not (out / "00_a.ipynb").exists() and not (out / "00_a.html").exists()
        raise KeyboardInterrupt

    monkeypatch.setattr(run_notebooks.nbx, "execute_notebook", killed)
    try:
        run_notebooks.main(["--notebooks-dir", str(src), "--out", str(out)])
    except KeyboardInterrupt:
        pass
    assert not (out / "00_a.ipynb").exists() and not (out / "00_a.html").exists()
