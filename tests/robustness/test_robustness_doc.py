"""docs/ROBUSTNESS.md names a test for each case: every `tests/FILE.py::name` it cites must exist."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_test_the_robustness_page_cites_exists():
    doc = (ROOT / "docs" / "ROBUSTNESS.md").read_text(encoding="utf-8")
    cited = re.findall(r"`(tests/[\w/]+\.py)::(\w+)", doc)
    assert len(cited) >= 10
    missing = [f"{path}::{name}" for path, name in cited
               if not re.search(rf"^def {name}\(", (ROOT / path).read_text(encoding="utf-8"), re.M)]
    assert not missing, f"docs/ROBUSTNESS.md cites tests that do not exist: {missing}"
