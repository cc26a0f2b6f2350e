"""scripts/mutation_check.py: it lists the mutants the tests miss, and always restores the file."""
import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "mutation_check.py"
spec = importlib.util.spec_from_file_location("mutation_check", SCRIPT)
mutation_check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mutation_check)

TOY = "def above_one(x):\n    return x > 1  # a comment with > and and\n\n\nLABEL = \"a > b and c\"\n"


def test_mutants_touch_code_tokens_only():
    got = [new.strip() for _, _, new in mutation_check.mutants(TOY)]
    assert got == ["return x >= 1  # a comment with > and and", "return x < 1  # a comment with > and and",
                   "return x > 2  # a comment with > and and", "return x > 0  # a comment with > and and"]


def test_survivors_are_the_mutants_the_tests_miss_and_the_file_is_restored(tmp_path):
    (tmp_path / "toy.py").write_text(TOY)
    test = tmp_path / "test_toy.py"
    test.write_text(f"import sys\nsys.path.insert(0, {str(tmp_path)!r})\nfrom toy import above_one\n\n"
                    "def test_it():\n    assert above_one(2) and not above_one(0)\n")
    survivors = mutation_check.check(tmp_path / "toy.py", [str(test)], timeout=120)
    assert [new.strip().split("  #")[0] for _, _, new in survivors] == ["return x >= 1", "return x > 0"]
    assert (tmp_path / "toy.py").read_text() == TOY
    test.write_text(test.read_text() + "\ndef test_the_edge():\n    assert not above_one(1)\n")
    survivors = mutation_check.check(tmp_path / "toy.py", [str(test)], timeout=120)
    assert survivors == []                                             # the edge at 1 pins both


def test_tests_that_fail_already_are_refused(tmp_path):
    (tmp_path / "toy.py").write_text(TOY)
    test = tmp_path / "test_toy.py"
    test.write_text("def test_it():\n    assert False\n")
    with pytest.raises(SystemExit, match="fix them first"):
        mutation_check.check(tmp_path / "toy.py", [str(test)], timeout=120)


def test_a_line_range_limits_the_mutants_to_those_lines(tmp_path):
    (tmp_path / "toy.py").write_text("A = 1 < 2\nB = 3 < 4\nC = 5 < 6\n")
    test = tmp_path / "test_toy.py"
    test.write_text("def test_nothing():\n    pass\n")
    rows = {row for row, _, _ in mutation_check.check(tmp_path / "toy.py", [str(test)], timeout=120, lines=(2, 3))}
    assert rows == {2, 3}
    assert mutation_check.line_range("2-") == (2, 10 ** 9) and mutation_check.line_range("7") == (7, 7)
    for bad in ("x", "0-3", "5-2"):
        with pytest.raises(Exception, match="--lines"):
            mutation_check.line_range(bad)
