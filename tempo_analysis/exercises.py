"""Exercises in the notebooks: solutions marked as nbgrader marks them, and checks that can fail.

A notebook's exercise is three cells:

1. a markdown cell that asks the question;
2. a code cell holding the answer between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` lines
   (nbgrader's markers, so nbgrader's ``generate_assignment`` can also strip them);
3. a check cell, tagged ``check`` (in the paired ``.py``: ``# %% tags=["check"]``), that calls
   :func:`check` on what the answer computed.

:func:`student_version` removes every solution: the lines between the markers become
``# YOUR CODE HERE`` and ``raise NotImplementedError()``, as nbgrader writes them. Handed out
like that, every check cell fails, which is what ``tests/notebooks/test_exercise_runs.py`` proves
by executing both versions of each notebook; with the solutions in, every check passes (the
notebooks run with them in ``make demo``). The exercises themselves are listed in docs/TEACHING.md.

    python scripts/make_exercises.py          # make exercises: build/exercises/<name>.ipynb
"""

from __future__ import annotations

import copy
import re

BEGIN = "### BEGIN SOLUTION"
END = "### END SOLUTION"
CHECK_TAG = "check"
PLACEHOLDER = ("# YOUR CODE HERE", "raise NotImplementedError()")

_BLOCK = re.compile(rf"^([ \t]*){re.escape(BEGIN)}[ \t]*\n.*?^[ \t]*{re.escape(END)}[ \t]*$\n?", re.M | re.S)


class ExerciseFormatError(ValueError):
    """A solution block is not closed, or is nested: the notebook names the cell."""


def strip_solutions(source: str, *, where: str = "cell") -> str:
    """The code with every solution block replaced by nbgrader's placeholder (same indentation)."""
    opens, closes = source.count(BEGIN), source.count(END)
    if opens != closes:
        raise ExerciseFormatError(f"{where}: {opens} '{BEGIN}' line(s) but {closes} '{END}' line(s). "
                                  "Fix: close every solution block.")

    def placeholder(m: re.Match) -> str:
        indent = m.group(1)
        return "".join(f"{indent}{line}\n" for line in PLACEHOLDER)

    out = _BLOCK.sub(placeholder, source)
    if BEGIN in out or END in out:
        raise ExerciseFormatError(f"{where}: a solution block is nested or its markers are not on lines of "
                                  "their own. Fix: one flat block per answer.")
    return out


def has_solution(cell) -> bool:
    """Whether a notebook cell holds a solution block."""
    return cell.get("cell_type") == "code" and BEGIN in cell.get("source", "")


def is_check(cell) -> bool:
    """Whether a notebook cell is an exercise check (tagged ``check``)."""
    return cell.get("cell_type") == "code" and CHECK_TAG in cell.get("metadata", {}).get("tags", [])


def student_version(nb, *, name: str = "notebook"):
    """A copy of the notebook with every solution stripped and every output cleared."""
    nb = copy.deepcopy(nb)
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        if has_solution(cell):
            cell.source = strip_solutions(cell.source, where=f"{name}, cell {i}")
        cell.outputs = []
        cell.execution_count = None
    nb.metadata.pop("widgets", None)
    return nb


def exercise_count(nb) -> int:
    """How many check cells (one per exercise) a notebook has."""
    return sum(1 for c in nb.cells if is_check(c))


def check(ok, message: str, *, hint: str = "") -> None:
    """Print a tick when ``ok`` holds; otherwise raise AssertionError with the message and a hint."""
    if not bool(ok):
        raise AssertionError(f"not yet: {message}" + (f"\nHint: {hint}" if hint else ""))
    print(f"\N{CHECK MARK} {message}")


__all__ = ["BEGIN", "END", "CHECK_TAG", "ExerciseFormatError", "check", "exercise_count", "has_solution",
           "is_check", "strip_solutions", "student_version"]
