#!/usr/bin/env python
"""Write the student versions of the notebooks: solutions removed, outputs cleared.

    python scripts/make_exercises.py                   # every notebooks/NN_*.ipynb -> build/exercises/
    python scripts/make_exercises.py --out DIR 01_stream_classification

`make exercises` runs this. Solutions are the code between ``### BEGIN SOLUTION`` and
``### END SOLUTION`` (nbgrader's markers); the answer and check cells are tagged
``raises-exception`` so that a Run All goes on to every check. A malformed solution block, or a
marker outside a code cell, stops it (exit status 1) with the notebook and cell named, before
anything of that notebook is written. See tempo_analysis/exercises.py and docs/TEACHING.md.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat

from tempo_analysis.data.locations import project_root
from tempo_analysis.exercises import ExerciseFormatError, exercise_count, student_version


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", help="names or stems (default: every numbered notebook)")
    parser.add_argument("--notebooks-dir", type=Path, default=project_root() / "notebooks")
    parser.add_argument("--out", type=Path, default=project_root() / "build" / "exercises")
    args = parser.parse_args(argv)

    paths = sorted(args.notebooks_dir.glob("[0-9]*.ipynb"))
    if args.notebooks:
        wanted = {Path(n).stem for n in args.notebooks}
        paths = [p for p in paths if p.stem in wanted]
        missing = wanted - {p.stem for p in paths}
        if missing:
            print(f"make_exercises: no notebook named {sorted(missing)} in {args.notebooks_dir}", file=sys.stderr)
            return 2
    args.out.mkdir(parents=True, exist_ok=True)
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        try:
            student = student_version(nb, name=path.name)
        except ExerciseFormatError as err:
            print(f"make_exercises: {err}", file=sys.stderr)
            return 1
        nbformat.write(student, args.out / path.name)
        print(f"{args.out / path.name}: {exercise_count(nb)} exercise(s), solutions removed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
