"""Solutions are stripped as nbgrader strips them, and a stripped exercise cannot pass its check."""

from __future__ import annotations

import nbformat
import pytest

from tempo_analysis.exercises import (ExerciseFormatError, check, exercise_count, strip_solutions,
                                      student_version)

ANSWER = '''import math
def answer(x):
    """Double it."""
    ### BEGIN SOLUTION
    y = 2 * x
    return y
    ### END SOLUTION
top = 1
### BEGIN SOLUTION
top = answer(21)
### END SOLUTION
'''


def test_solutions_become_nbgraders_placeholder_at_their_indentation():
    out = strip_solutions(ANSWER)
    assert "2 * x" not in out and "answer(21)" not in out and "SOLUTION" not in out
    assert '    """Double it."""\n    # YOUR CODE HERE\n    raise NotImplementedError()\n' in out
    assert out.endswith("top = 1\n# YOUR CODE HERE\nraise NotImplementedError()\n")
    compile(out, "student", "exec")  # still valid Python
    assert strip_solutions("x = 1\n") == "x = 1\n"


@pytest.mark.parametrize("bad", [
    "### BEGIN SOLUTION\nx = 1\n",                                                  # never closed
    "x = 1\n### END SOLUTION\n",                                                    # never opened
    "### BEGIN SOLUTION\n### BEGIN SOLUTION\nx\n### END SOLUTION\n### END SOLUTION\n",  # nested
    "x = 1  ### BEGIN SOLUTION\ny\n### END SOLUTION\n",                             # not on its own line
])
def test_malformed_blocks_are_refused_with_the_cell_named(bad):
    with pytest.raises(ExerciseFormatError, match="nb.ipynb, cell 3"):
        strip_solutions(bad, where="nb.ipynb, cell 3")


def _notebook():
    nb = nbformat.v4.new_notebook()
    ask = nbformat.v4.new_markdown_cell("### Exercise: double 21")
    work = nbformat.v4.new_code_cell(ANSWER, outputs=[nbformat.v4.new_output("stream", text="hi")],
                                     execution_count=3)
    chk = nbformat.v4.new_code_cell("check(top == 42, 'top is 42')", metadata={"tags": ["check"]})
    nb.cells = [ask, work, chk]
    nb.metadata["widgets"] = {"state": {}}
    return nb


def test_student_version_strips_clears_and_leaves_the_original_alone():
    nb = _notebook()
    student = student_version(nb, name="t.ipynb")
    assert exercise_count(student) == exercise_count(nb) == 1
    assert "2 * x" in nb.cells[1].source, "the teacher's copy keeps its solution"
    assert "2 * x" not in student.cells[1].source
    assert student.cells[1].outputs == [] and student.cells[1].execution_count is None
    assert "widgets" not in student.metadata


def test_the_check_passes_with_the_solution_and_fails_without_it(capsys):
    nb = _notebook()
    teacher = {"check": check}
    exec(nb.cells[1].source, teacher)
    exec(nb.cells[2].source, teacher)
    assert "top is 42" in capsys.readouterr().out
    student = {"check": check}
    with pytest.raises(NotImplementedError):
        exec(student_version(nb).cells[1].source, student)
    with pytest.raises(AssertionError, match="not yet: top is 42"):
        exec(nb.cells[2].source, {**student, "top": 1})


def test_make_exercises_writes_every_notebook(tmp_path):
    import make_exercises

    src = tmp_path / "nb"
    src.mkdir()
    nbformat.write(_notebook(), src / "01_demo.ipynb")
    nbformat.write(nbformat.v4.new_notebook(), src / "notes.ipynb")  # not a numbered lesson
    assert make_exercises.main(["--notebooks-dir", str(src), "--out", str(tmp_path / "out")]) == 0
    written = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert written == ["01_demo.ipynb"]
    assert "2 * x" not in (tmp_path / "out" / "01_demo.ipynb").read_text()
    assert make_exercises.main(["--notebooks-dir", str(src), "--out", str(tmp_path / "o2"), "99_none"]) == 2
