"""Solutions are stripped as nbgrader strips them, and a stripped exercise cannot pass its check."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

import tempo_analysis.exercises as ex  # the newer names are read from the module, test by test
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


# --- a Run All reaches every check (the raises-exception tag) ----------------------------------

def _two_exercises():
    """Two exercises, as the method notebooks write them: names set to None, a solution, a check."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("from tempo_analysis.exercises import check"),
        nbformat.v4.new_markdown_cell("### Exercise 1"),
        nbformat.v4.new_code_cell("a = None\n### BEGIN SOLUTION\na = 1\n### END SOLUTION\n"),
        nbformat.v4.new_code_cell("check(lambda: a == 1, 'a is 1')", metadata={"tags": ["check"]}),
        nbformat.v4.new_markdown_cell("### Exercise 2"),
        nbformat.v4.new_code_cell("b = None\n### BEGIN SOLUTION\nb = 2\n### END SOLUTION\n"),
        nbformat.v4.new_code_cell("check(lambda: b == 2, 'b is 2')", metadata={"tags": ["check"]}),
        nbformat.v4.new_code_cell("print('the end')"),
    ]
    return nb


def test_student_version_tags_answer_and_check_cells_raises_exception():
    nb = _two_exercises()
    nb.cells[3].metadata["tags"] = ["check", "raises-exception"]  # already tagged: not tagged twice
    student = student_version(nb)
    tagged = [i for i, c in enumerate(student.cells) if "raises-exception" in c.get("metadata", {}).get("tags", [])]
    assert tagged == [2, 3, 5, 6]
    assert student.cells[3].metadata["tags"] == ["check", "raises-exception"]
    assert student.cells[6].metadata["tags"] == ["check", "raises-exception"]
    assert "tags" not in nb.cells[2].metadata, "the teacher's copy is left alone"
    nbformat.validate(student)


def test_a_run_all_of_the_student_version_reaches_every_check(tmp_path):
    """nbclient (what Voila and scripts/notebook_exec.py run) without allow_errors, as a Run All:
    the unanswered exercises fail in their own cells and execution goes on to the last cell."""
    from nbclient import NotebookClient

    student = student_version(_two_exercises())
    NotebookClient(student, kernel_name="python3", timeout=120, allow_errors=False,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    errors = {i: (o["ename"], o["evalue"]) for i, c in enumerate(student.cells) if c.cell_type == "code"
              for o in c.outputs if o.output_type == "error"}
    assert errors[2][0] == errors[5][0] == "NotImplementedError"
    assert errors[3] == ("AssertionError", "not yet: a is 1") and errors[6] == ("AssertionError", "not yet: b is 2")
    assert set(errors) == {2, 3, 5, 6}
    assert student.cells[7].execution_count is not None and "the end" in student.cells[7].outputs[0]["text"]


# --- solution markers outside code cells ---------------------------------------------------------

@pytest.mark.parametrize("make_cell", [nbformat.v4.new_markdown_cell, nbformat.v4.new_raw_cell],
                         ids=["markdown", "raw"])
@pytest.mark.parametrize("text", ["The answer:\n### BEGIN SOLUTION\n42\n### END SOLUTION\n", "42\n### END SOLUTION\n"],
                         ids=["block", "end-only"])
def test_a_solution_marker_outside_a_code_cell_is_refused(make_cell, text):
    nb = _notebook()
    nb.cells.insert(1, make_cell(text))
    with pytest.raises(ExerciseFormatError, match=r"t\.ipynb, cell 1: a (markdown|raw) cell holds a solution marker"):
        student_version(nb, name="t.ipynb")


def test_make_exercises_refuses_a_marker_outside_a_code_cell(tmp_path, capsys):
    import make_exercises

    src = tmp_path / "nb"
    src.mkdir()
    nb = _notebook()
    nb.cells.insert(1, nbformat.v4.new_markdown_cell("### BEGIN SOLUTION\n42\n### END SOLUTION\n"))
    nbformat.write(nb, src / "01_demo.ipynb")
    assert make_exercises.main(["--notebooks-dir", str(src), "--out", str(tmp_path / "out")]) == 1
    assert "01_demo.ipynb, cell 1: a markdown cell holds a solution marker" in capsys.readouterr().err
    assert not (tmp_path / "out" / "01_demo.ipynb").exists()


def test_a_code_cell_with_an_end_marker_only_is_refused():
    nb = _notebook()
    nb.cells.insert(1, nbformat.v4.new_code_cell("x = 42\n### END SOLUTION\n"))
    with pytest.raises(ExerciseFormatError, match=r"t\.ipynb, cell 1: 0 '### BEGIN SOLUTION'"):
        student_version(nb, name="t.ipynb")


# --- check says "not yet" to a wrong answer instead of crashing ----------------------------------

def test_check_takes_a_function_and_reports_what_it_raises_as_not_yet(capsys):
    import pandas as pd

    answer = pd.Series([0.0, 0.0])                      # a Series where a dict was asked for
    with pytest.raises(AssertionError, match=r"^not yet: zero bias\n\(the check could not use the answer: "
                                             r"TypeError: .*\)\nHint: a dict$"):
        check(lambda: all(v == 0 for v in answer.values()), "zero bias", hint="a dict")
    with pytest.raises(AssertionError, match=r"^not yet: one number\n\(the check could not use the answer: "
                                             r"ValueError: The truth value of a Series is ambiguous"):
        check(answer == 0, "one number")                # bool(Series) raises inside check
    with pytest.raises(AssertionError, match="not yet: false"):
        check(lambda: False, "false")                   # a function is called, not taken as true
    check(lambda: True, "true")
    assert capsys.readouterr().out == "\N{CHECK MARK} true\n"


# --- predict-first answers are compared with a digest ---------------------------------------------

def test_check_prediction_compares_with_a_stored_digest(capsys):
    import numpy as np

    for key, right in [("01_stream_classification/1", ["chance", " Chance ", "'chance'"]),
                       ("02_semantic_change/1", ["zero", "Zero", 0, 0.0, "0"]),
                       ("03_social_diffusion/1", [1, 1.0, np.int64(1), "1", "one"])]:
        for answer in right:
            ex.check_prediction(key, answer, "the prediction")
        for wrong in [None, "", "tempoformer", "like the temporal model", 2, True, [1]]:
            with pytest.raises(AssertionError, match="^not yet: the prediction\nHint: think$"):
                ex.check_prediction(key, wrong, "the prediction", hint="think")
    assert capsys.readouterr().out.count("\N{CHECK MARK} the prediction\n") == 13
    source = Path(ex.__file__).read_text()
    for digests in ex.PREDICTIONS.values():
        assert all(len(d) == 64 and d in source for d in digests)
    assert "chance" not in source and "zero" not in source, "the answers are not in the library's source"
    with pytest.raises(KeyError, match="no stored prediction"):
        ex.check_prediction("99_none/1", "x", "m")


# --- grading counts checks that ran and printed their tick ----------------------------------------

def _executed_check(source, *, count=1, text="\N{CHECK MARK} ok\n", error=None):
    outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)] if text else []
    if error:
        outputs.append(nbformat.v4.new_output("error", ename=error, evalue="not yet: x", traceback=[]))
    return nbformat.v4.new_code_cell(source, metadata={"tags": ["check"]}, execution_count=count, outputs=outputs)


def test_a_check_passes_only_when_it_ran_printed_its_tick_and_raised_nothing():
    assert ex.check_passed(_executed_check("check(1, 'ok')"))
    assert not ex.check_passed(_executed_check("check(1, 'ok')", count=None)), "never ran: stale outputs"
    assert not ex.check_passed(_executed_check("check(1, 'ok')", error="AssertionError")), "a later check failed"
    assert not ex.check_passed(_executed_check("check(1, 'ok')", text="")), "no tick (an emptied check)"
    assert not ex.check_passed(_executed_check("pass", text=None)), "ran, printed nothing"
    assert not ex.check_passed(nbformat.v4.new_markdown_cell("\N{CHECK MARK}"))


def test_grade_counts_the_teachers_checks():
    teacher = nbformat.v4.new_notebook()
    teacher.cells = [nbformat.v4.new_code_cell(f"check(x{i}, 'x{i}')", metadata={"tags": ["check"]})
                     for i in range(4)]
    submitted = nbformat.v4.new_notebook()
    submitted.cells = [
        _executed_check("check(x0, 'x0')  \n"),                 # passed (trailing spaces aside)
        _executed_check("check(x0, 'x0')"),                     # a copy of it: counted once
        # x1 deleted
        _executed_check("check(True, 'x2')"),                   # edited to pass: not the teacher's check
        _executed_check("check(x3, 'x3')", count=None),         # the run stopped before it (timeout, dead kernel)
    ]
    assert ex.grade(submitted, teacher) == (1, 4)
    submitted.cells[-1].execution_count = 9
    assert ex.grade(submitted, teacher) == (2, 4)
    assert ex.grade(nbformat.v4.new_notebook(), teacher) == (0, 4)


def test_the_grading_recipe_in_teaching_md_runs(tmp_path, monkeypatch):
    """docs/TEACHING.md's recipe, as written (less its two usage lines), on a two-exercise notebook
    handed in with the ticks of the student's own run: only the check that passes again counts."""
    root = Path(__file__).resolve().parents[2]
    docs = (root / "docs" / "TEACHING.md").read_text()
    recipe = docs.split("## Grading", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    recipe = "\n".join(line[2:] for line in recipe.splitlines())  # the block is indented in its list item
    definitions, usage = recipe.split("\n\n\npassed, total, ended = grade_submission(")
    monkeypatch.chdir(root)  # the recipe runs from the project root
    names: dict = {}
    exec(compile(definitions, "TEACHING.md", "exec"), names)

    (tmp_path / "teacher").mkdir()
    teacher = _two_exercises()
    nbformat.write(teacher, tmp_path / "teacher" / "01_demo.ipynb")
    handed_in = student_version(teacher)
    handed_in.cells[2].source = "a = 1\n"  # exercise 1 answered, exercise 2 not
    for cell in (handed_in.cells[3], handed_in.cells[6]):
        cell.execution_count, cell.outputs = 5, [nbformat.v4.new_output("stream", name="stdout", text="\N{CHECK MARK}")]
    nbformat.write(handed_in, tmp_path / "01_demo.ipynb")
    assert names["grade_submission"](str(tmp_path / "01_demo.ipynb"), teacher_dir=str(tmp_path / "teacher"),
                                     timeout=120) == (1, 2, "ran to the end")
