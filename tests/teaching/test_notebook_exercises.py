"""The exercises in the four method notebooks, read without executing them.

Each method notebook ends with an "## Exercises" section of 2-4 exercises: a question (markdown), a
solution cell (nbgrader's markers, the answer's names set to None before the block so that a
stripped answer reaches its check), and a check cell tagged "check". Running them both ways is
tests/notebooks/test_exercise_runs.py.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import nbformat
import pytest

import tempo_analysis.exercises as ex
from tempo_analysis.exercises import BEGIN, exercise_count, has_solution, is_check, strip_solutions, student_version

ROOT = Path(__file__).resolve().parents[2]
METHOD_NOTEBOOKS = sorted(p for p in (ROOT / "notebooks").glob("0[1-9]_*.ipynb"))


def test_the_method_notebooks_are_here():
    # 01-04: one method each; 05: all four on real text
    assert [p.stem[:2] for p in METHOD_NOTEBOOKS] == ["01", "02", "03", "04", "05"]


def _exercises(nb):
    """[(question, solution, check)] from the notebook's "## Exercises" heading on; raises if malformed."""
    heads = [i for i, c in enumerate(nb.cells) if c.cell_type == "markdown" and c.source.startswith("## Exercises")]
    assert len(heads) == 1, "one '## Exercises' heading"
    start = heads[0]
    before = [i for i, c in enumerate(nb.cells[:start]) if has_solution(c) or is_check(c)]
    assert not before, f"exercise cells {before} sit before the Exercises section (keep them at the end)"
    found, question, solution = [], None, None
    for cell in nb.cells[start + 1:]:
        if cell.cell_type == "markdown" and cell.source.startswith("### Exercise"):
            assert question is None, "a question without its check"
            question = cell
        elif has_solution(cell):
            assert question is not None and solution is None, "a solution needs a question before it"
            solution = cell
        elif is_check(cell):
            assert question is not None and solution is not None, "a check needs a question and a solution"
            found.append((question, solution, cell))
            question = solution = None
    assert question is None and solution is None, "the last exercise has no check"
    return found


@pytest.mark.parametrize("path", METHOD_NOTEBOOKS, ids=lambda p: p.stem)
def test_each_method_notebook_ends_with_two_to_four_exercises(path):
    nb = nbformat.read(path, as_version=4)
    exercises = _exercises(nb)
    assert 2 <= len(exercises) == exercise_count(nb) <= 4
    for question, solution, check_cell in exercises:
        assert "check(" in check_cell.source and BEGIN not in check_cell.source
        stripped = strip_solutions(solution.source, where=path.name)
        compile(stripped, path.name, "exec")
        # the names the check reads exist (as None) before the solution block, so a student's
        # empty answer fails the check with its own message instead of a NameError
        preamble = solution.source.split(BEGIN)[0]
        assigned = {name.strip() for targets in re.findall(r"^(\w+(?:\s*,\s*\w+)*)\s*=[^=]", preamble, re.M)
                    for name in targets.split(",")}
        assert assigned, f"{path.name}: set the answer's names to None before '{BEGIN}'"
        assert assigned & set(re.findall(r"\b(\w+)\b", check_cell.source)), (
            f"{path.name}: the check does not read the answer ({sorted(assigned)})")


@pytest.mark.parametrize("path", METHOD_NOTEBOOKS, ids=lambda p: p.stem)
def test_the_student_version_keeps_the_lesson_and_drops_the_answers(path):
    nb = nbformat.read(path, as_version=4)
    student = student_version(nb, name=path.name)
    assert len(student.cells) == len(nb.cells)
    for mine, theirs in zip(nb.cells, student.cells):
        if has_solution(mine):
            answer = mine.source.split(BEGIN)[1].split("### END SOLUTION")[0].strip()
            assert answer and answer not in theirs.source and "raise NotImplementedError()" in theirs.source
        else:
            assert theirs.source == mine.source
        # a Run All goes on past an unanswered exercise: its answer and check cells may raise
        tags = theirs.get("metadata", {}).get("tags", [])
        assert ("raises-exception" in tags) == (has_solution(mine) or is_check(mine)), tags


def _solution(cell) -> str:
    return cell.source.split(BEGIN)[1].split("### END SOLUTION")[0]


def _hints(check_cell) -> list[str]:
    return [kw.value.value for node in ast.walk(ast.parse(check_cell.source)) if isinstance(node, ast.Call)
            for kw in node.keywords if kw.arg == "hint" and isinstance(kw.value, ast.Constant)]


@pytest.mark.parametrize("path", METHOD_NOTEBOOKS, ids=lambda p: p.stem)
def test_the_check_cells_do_not_hand_out_the_answers(path):
    """A predict-first answer is checked against a digest, so the check cell does not show it (and the
    solution's prediction passes); a hint is guidance in words, not an expression to paste."""
    nb = nbformat.read(path, as_version=4)
    for number, (_, solution, check_cell) in enumerate(_exercises(nb), start=1):
        predicted = re.findall(r"^prediction = (.+)$", _solution(solution), re.M)
        if predicted:
            key = f"{path.stem}/{number}"
            assert f'check_prediction("{key}", prediction,' in check_cell.source
            assert not re.search(r"\bprediction\s*(==|!=|\bin\b)", check_cell.source), "compared in plain sight"
            answer = ast.literal_eval(predicted[0].split("#")[0].strip())
            call = next(node for node in ast.walk(ast.parse(check_cell.source)) if isinstance(node, ast.Call)
                        and getattr(node.func, "id", "") == "check_prediction")
            said = ast.get_source_segment(check_cell.source, call).replace(key, "")
            assert not re.search(rf"\b{re.escape(str(answer))}\b", said), f"the prediction's check says {answer!r}"
            ex.check_prediction(key, answer, "the solution's prediction")  # raises if it would not pass
        else:
            assert "check_prediction" not in check_cell.source
        for hint in _hints(check_cell):
            with pytest.raises(SyntaxError):
                compile(hint, "hint", "eval")  # a hint that is a Python expression is the answer


def test_make_exercises_hands_out_the_method_notebooks(tmp_path, capsys):
    import make_exercises

    assert make_exercises.main(["--out", str(tmp_path)] + [p.stem for p in METHOD_NOTEBOOKS]) == 0
    said = capsys.readouterr().out
    for path in METHOD_NOTEBOOKS:
        teacher = nbformat.read(path, as_version=4)
        student = nbformat.read(tmp_path / path.name, as_version=4)
        assert f"{path.name}: {exercise_count(teacher)} exercise(s)" in said
        assert not any(has_solution(c) for c in student.cells), f"{path.name}: a solution was handed out"
        assert exercise_count(student) == exercise_count(teacher)
