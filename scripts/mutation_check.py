"""Can these tests fail? Break one source file one small way at a time and see which breaks pass.

    python scripts/mutation_check.py tempo_analysis/evaluation/spread.py tests/diffusion/test_diffusion_analysis.py

Each mutant changes one token of the source (a comparison flipped or loosened, ``and``/``or``,
``True``/``False``, ``min``/``max``, ``any``/``all``, an integer moved by one) outside strings and
comments; the tests given run against it (``pytest -x -q``). A mutant the tests do not notice is
printed as SURVIVED with its line. Some survivors are equivalent (the code means the same, e.g. a
tie-break), the rest are behaviour no test pins down: write the test, then rerun this on that
one file. The file is restored after every mutant and on exit, also on Ctrl-C. CONTRIBUTING.md
says when to use it; it is not part of `make test` (a file takes minutes).
"""
from __future__ import annotations

import argparse
import io
import subprocess
import sys
import tokenize
from pathlib import Path

SWAPS = {"<": ["<=", ">"], "<=": ["<", ">="], ">": [">=", "<"], ">=": [">", "<="], "==": ["!="], "!=": ["=="],
         "and": ["or"], "or": ["and"], "True": ["False"], "False": ["True"], "min": ["max"], "max": ["min"],
         "any": ["all"], "all": ["any"], "is": ["is not"]}


def mutants(source: str) -> list[tuple[int, str, str]]:
    """(line number, the line, the mutated line) for every one-token mutation of ``source``."""
    lines = source.splitlines(keepends=True)
    out = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type not in (tokenize.OP, tokenize.NAME, tokenize.NUMBER) or tok.start[0] != tok.end[0]:
            continue
        if tok.type == tokenize.NUMBER:
            if not tok.string.isdigit():
                continue
            options = [str(int(tok.string) + 1)] + ([str(int(tok.string) - 1)] if int(tok.string) > 0 else [])
        else:
            options = SWAPS.get(tok.string, [])
        row, (c0, c1) = tok.start[0], (tok.start[1], tok.end[1])
        line = lines[row - 1]
        for new in options:
            out.append((row, line, line[:c0] + new + line[c1:]))
    return out


def run_tests(tests: list[str], timeout: float) -> bool:
    """True when the tests pass (the mutant survived)."""
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests]
    try:
        return subprocess.run(cmd, capture_output=True, timeout=timeout).returncode == 0
    except subprocess.TimeoutExpired:
        return False            # a mutant that hangs the tests is noticed


def write(path: Path, text: str) -> None:
    """Write ``text`` and drop the file's cached bytecode (a same-size edit in the same second could
    otherwise be run from the stale .pyc)."""
    path.write_text(text)
    for pyc in (path.parent / "__pycache__").glob(f"{path.stem}.*.pyc"):
        pyc.unlink(missing_ok=True)


def line_range(text: str) -> tuple[int, int]:
    """'120-200' -> (120, 200); '120-' -> (120, end of file); '120' -> (120, 120)."""
    first, sep, last = text.partition("-")
    try:
        lo = int(first)
        hi = int(last) if last else (10 ** 9 if sep else lo)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--lines {text!r}: give FIRST-LAST, FIRST- or LINE, e.g. 120-200") from None
    if lo < 1 or hi < lo:
        raise argparse.ArgumentTypeError(f"--lines {text!r}: lines count from 1 and FIRST must not exceed LAST")
    return lo, hi


def check(path: Path, tests: list[str], *, limit: int | None = None, timeout: float = 600,
          lines: tuple[int, int] | None = None) -> list[tuple[int, str, str]]:
    source = path.read_text()
    if not run_tests(tests, timeout):
        raise SystemExit(f"the tests fail on the unchanged {path}: fix them first")
    found = [m for m in mutants(source) if lines is None or lines[0] <= m[0] <= lines[1]][:limit]
    print(f"{len(found)} mutants of {path}", flush=True)
    lines, survivors = source.splitlines(keepends=True), []
    try:
        for row, old, new in found:
            write(path, "".join(lines[:row - 1] + [new] + lines[row:]))
            if run_tests(tests, timeout):
                survivors.append((row, old, new))
                print(f"SURVIVED line {row}: {old.strip()}  ->  {new.strip()}", flush=True)
    finally:
        write(path, source)
    print(f"{len(survivors)} of {len(found)} mutants survived")
    return survivors


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("source", type=Path, help="the one source file to mutate")
    ap.add_argument("tests", nargs="+", help="test files (or pytest node ids) that should notice")
    ap.add_argument("--max", type=int, default=None, help="stop after this many mutants")
    ap.add_argument("--lines", type=line_range, default=None,
                    help="mutate only these lines: FIRST-LAST, FIRST- (to the end) or LINE (resume or focus a pass)")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per test run (a hang counts as noticed)")
    a = ap.parse_args(argv)
    if not a.source.is_file():
        ap.error(f"{a.source} is not a file")
    return 1 if check(a.source, a.tests, limit=a.max, timeout=a.timeout, lines=a.lines) else 0


if __name__ == "__main__":
    sys.exit(main())
