"""Exercises in the notebooks: solutions marked as nbgrader marks them, and checks that can fail.

A notebook's exercise is three cells:

1. a markdown cell that asks the question;
2. a code cell holding the answer between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` lines
   (nbgrader's markers, so nbgrader's ``generate_assignment`` can also strip them);
3. a check cell, tagged ``check`` (in the paired ``.py``: ``# %% tags=["check"]``), that calls
   :func:`check` on what the answer computed (and :func:`check_prediction` on a "predict first"
   answer, which it compares with a stored digest so that the check cell does not show it).

:func:`student_version` removes every solution: the lines between the markers become
``# YOUR CODE HERE`` and ``raise NotImplementedError()``, as nbgrader writes them. It also tags
each answer cell and each check cell ``raises-exception``, so that a Run All (JupyterLab, or
nbclient, which Voila and ``scripts/notebook_exec.py`` use) goes on past an unanswered or wrong
exercise and runs every check. Handed out like that, every check cell fails, which is what
``tests/notebooks/test_exercise_runs.py`` proves by executing both versions of each notebook;
with the solutions in, every check passes (the notebooks run with them in ``make demo``).
:func:`grade` counts the passed checks of an executed submission. The exercises themselves are
listed in docs/TEACHING.md.

    python scripts/make_exercises.py          # make exercises: build/exercises/<name>.ipynb
"""

from __future__ import annotations

import copy
import hashlib
import numbers
import re

BEGIN = "### BEGIN SOLUTION"
END = "### END SOLUTION"
CHECK_TAG = "check"
#: the cell tag that lets JupyterLab's Run All and nbclient (Voila, headless runs) go on after the
#: cell raises; :func:`student_version` puts it on every answer cell and every check cell
RAISES_TAG = "raises-exception"
PLACEHOLDER = ("# YOUR CODE HERE", "raise NotImplementedError()")
TICK = "\N{CHECK MARK}"

_BLOCK = re.compile(rf"^([ \t]*){re.escape(BEGIN)}[ \t]*\n.*?^[ \t]*{re.escape(END)}[ \t]*$\n?", re.M | re.S)

#: "predict first" answers, as :func:`prediction_digest` digests, by "<notebook>/<exercise>" (any
#: one of a key's digests is right; the answer itself is the ``prediction = ...`` line of the
#: notebook's solution). To add one: ``python -c "from tempo_analysis.exercises import
#: prediction_digest as d; print(d('NN_name/K', 'answer'))"`` and list the digest under its key;
#: tests/teaching/test_notebook_exercises.py checks that each solution's prediction passes.
PREDICTIONS: dict[str, tuple[str, ...]] = {
    "01_stream_classification/1": ("529eeca52d97691b31a89cdefa9a2cebfbb90717007ae62419c2fe6ae4c2de4f",),
    "02_semantic_change/1": ("a7f24130ba3fa401289ae139dca09f709ff52ca7e304846e6a1b735eeaf07989",
                             "6f6bb7f60bea73fb46e950ec498b734c9ce67d39cc4008c6cdbc1c701c537ee4"),
    "03_social_diffusion/1": ("db2b85ec9007f78e52a212ddbda6fe15f5315e5f317ae8f9bf01b1163d830447",
                              "af06d901b86e539cdd31790695fd454a2827149f582002e1e4fbbabccf212b0c"),
}


class ExerciseFormatError(ValueError):
    """A solution block is not closed, is nested or sits outside a code cell: the notebook names the cell."""


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


def _tag(cell, tag: str) -> None:
    tags = cell.setdefault("metadata", {}).setdefault("tags", [])
    if tag not in tags:
        tags.append(tag)


def student_version(nb, *, name: str = "notebook"):
    """A copy of the notebook with every solution stripped and every output cleared.

    Answer cells and check cells are tagged ``raises-exception`` (see :data:`RAISES_TAG`). A
    solution marker in a markdown or raw cell is refused (:class:`ExerciseFormatError`): only code
    cells are stripped, so such a cell would be handed out with its answer.
    """
    nb = copy.deepcopy(nb)
    for i, cell in enumerate(nb.cells):
        where = f"{name}, cell {i}"
        source = cell.get("source", "")
        if cell.cell_type != "code":
            if BEGIN in source or END in source:
                raise ExerciseFormatError(f"{where}: a {cell.cell_type} cell holds a solution marker, and only "
                                          "code cells are stripped (it would be handed out as it is). Fix: "
                                          "put the solution in a code cell, or remove the marker.")
            continue
        if BEGIN in source or END in source:  # an END without its BEGIN is refused by strip_solutions
            cell.source = strip_solutions(source, where=where)
            _tag(cell, RAISES_TAG)
        if is_check(cell):
            _tag(cell, RAISES_TAG)
        cell.outputs = []
        cell.execution_count = None
    nb.metadata.pop("widgets", None)
    return nb


def exercise_count(nb) -> int:
    """How many check cells (one per exercise) a notebook has."""
    return sum(1 for c in nb.cells if is_check(c))


def check(ok, message: str, *, hint: str = "") -> None:
    """Print a tick when ``ok`` holds; otherwise raise AssertionError("not yet: <message>") and the hint.

    ``ok`` is a value or a function of no arguments (``lambda: ...``) that check calls: pass a
    function when computing ``ok`` from the student's answer can raise (an answer of the wrong type
    or shape), so that it says "not yet" instead of crashing. An exception from calling ``ok`` or
    from its truth value (a pandas Series, a NumPy array) is reported the same way, with its message.
    """
    problem = ""
    try:
        held = bool(ok() if callable(ok) else ok)
    except Exception as err:  # noqa: BLE001 - any wrong answer is "not yet", never a crash
        held = False
        problem = f"\n(the check could not use the answer: {type(err).__name__}: {err})"
    if not held:
        raise AssertionError(f"not yet: {message}{problem}" + (f"\nHint: {hint}" if hint else "")) from None
    print(f"{TICK} {message}")


def _normalised(answer) -> str:
    """A prediction as a comparable text: words lower-cased with quotes and extra spaces dropped,
    whole numbers written as integers (1, 1.0, "1" and np.int64(1) are the same)."""
    if isinstance(answer, bool) or answer is None:
        return repr(answer)
    if isinstance(answer, numbers.Real):
        value = float(answer)
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(answer, str):
        return " ".join(answer.strip().strip("'\"").casefold().split())
    return repr(answer)


def prediction_digest(key: str, answer) -> str:
    """The sha256 digest of a "predict first" answer for exercise ``key`` (see :data:`PREDICTIONS`)."""
    return hashlib.sha256(f"{key}\n{_normalised(answer)}".encode("utf-8")).hexdigest()


def check_prediction(key: str, prediction, message: str, *, hint: str = "") -> None:
    """:func:`check` that ``prediction`` is the stored answer of exercise ``key``.

    The answer is kept as a digest in :data:`PREDICTIONS`, so the check cell does not give it away.
    """
    if key not in PREDICTIONS:
        raise KeyError(f"no stored prediction for {key!r}; known: {sorted(PREDICTIONS)}")
    check(lambda: prediction is not None and prediction_digest(key, prediction) in PREDICTIONS[key],
          message, hint=hint)


def _text(output) -> str:
    text = output.get("text", "")
    return "".join(text) if isinstance(text, list) else text


def check_passed(cell) -> bool:
    """Whether an executed check cell passed: it ran to its end (it has an execution count), it
    printed a tick and it has no error output. A cell that never ran, or that a timeout or a dead
    kernel cut short, has no execution count: it did not pass."""
    if cell.get("cell_type") != "code" or cell.get("execution_count") is None:
        return False
    outputs = cell.get("outputs", [])
    if any(o.get("output_type") == "error" for o in outputs):
        return False
    return any(o.get("output_type") == "stream" and TICK in _text(o) for o in outputs)


def _code(source) -> str:
    source = "".join(source) if isinstance(source, list) else source
    return "\n".join(line.rstrip() for line in source.strip().splitlines())


def grade(executed, teacher) -> tuple[int, int]:
    """(passed, total) for a submission executed from cleared outputs, against the teacher's notebook.

    total is the number of check cells of ``teacher``. A teacher's check counts as passed when a
    code cell of ``executed`` with the same code (trailing spaces aside) passed (:func:`check_passed`),
    so a deleted or edited check cell counts as not passed, and a copied one counts once.
    Execute the submission with its outputs cleared first: a cell that the run did not reach
    keeps the outputs it was handed in with.
    """
    passed = {_code(c.get("source", "")) for c in executed.cells if check_passed(c)}
    wanted = [_code(c.get("source", "")) for c in teacher.cells if is_check(c)]
    return sum(code in passed for code in wanted), len(wanted)


__all__ = ["BEGIN", "END", "CHECK_TAG", "PREDICTIONS", "RAISES_TAG", "TICK", "ExerciseFormatError", "check",
           "check_passed", "check_prediction", "exercise_count", "grade", "has_solution", "is_check",
           "prediction_digest", "strip_solutions", "student_version"]
