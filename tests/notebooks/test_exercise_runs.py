"""The exercises of the method notebooks run both ways: the solutions pass, the student version fails.

- Solved: the session's headless run of the notebook (the `notebook_runs` fixture, shared with
  test_execute.py, so it costs nothing more here): every check cell printed its ticks.
- Handed out: `tempo_analysis.exercises.student_version` of the same notebook (what `make exercises`
  writes), executed in the same session cache (the training the solved run did is loaded, not
  repeated) as a Run All is: without allow_errors, so that only the cells the student version tags
  `raises-exception` may fail without stopping the run (as in JupyterLab and Voila). Every solution
  cell raises nbgrader's NotImplementedError, every check cell runs and fails with the exercise's own
  AssertionError ("not yet: ..."), and no other cell fails: the lesson before the exercises runs for
  a student exactly as for the teacher.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import nbformat
import pytest
from _notebook_runs import NOTEBOOK_TIMEOUT, NOTEBOOKS, NOTEBOOKS_DIR, notebook_param

import notebook_exec as nbx

from tempo_analysis.exercises import exercise_count, has_solution, is_check, student_version

pytestmark = pytest.mark.slow

WITH_EXERCISES = [p for p in NOTEBOOKS if exercise_count(nbformat.read(p, as_version=4))]


def _text(cell) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream")


def _errors(cell) -> list:
    return [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]


@pytest.mark.parametrize("path", [notebook_param(p) for p in WITH_EXERCISES])
def test_solutions_pass_and_the_student_version_fails(path, notebook_runs, tmp_path):
    solved = notebook_runs.get(path)
    assert solved.ok, f"{path.name} (with solutions) failed:\n" + "\n".join(solved.errors)
    checks = [(i, c) for i, c in enumerate(solved.nb.cells) if is_check(c)]
    for i, cell in checks:
        assert "\N{CHECK MARK}" in _text(cell) and not _errors(cell), f"{path.name}, check cell {i} did not pass"

    teacher = nbformat.read(path, as_version=4)
    student_path = tmp_path / path.name
    nbformat.write(student_version(teacher, name=path.name), student_path)
    with ThreadPoolExecutor(max_workers=1) as pool:  # nbclient's asyncio kept off Playwright's thread
        run = pool.submit(nbx.execute_notebook, student_path, timeout=NOTEBOOK_TIMEOUT, cwd=NOTEBOOKS_DIR,
                          env=notebook_runs.env(notebook_runs.summary("student")), allow_errors=False).result()
    assert not run.timed_out, f"the student version of {path.name} timed out: {run.errors}"
    assert len(run.nb.cells) == len(teacher.cells)
    failed_checks = 0
    for i, (mine, theirs) in enumerate(zip(teacher.cells, run.nb.cells)):
        errors = [(e["ename"], e["evalue"]) for e in _errors(theirs)]
        if is_check(mine):
            assert errors and errors[0][0] == "AssertionError" and errors[0][1].startswith("not yet"), (
                f"{path.name}, check cell {i} did not fail for the student (a check that cannot fail): {errors}")
            failed_checks += 1
        elif has_solution(mine):
            assert errors and errors[0][0] == "NotImplementedError", f"{path.name}, cell {i}: {errors}"
        else:
            assert not errors, f"{path.name}, cell {i} fails in the student version: {errors}"
    assert failed_checks == len(checks) == exercise_count(teacher)
