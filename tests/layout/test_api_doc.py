"""docs/API.md is generated from the exported facades and must match the code."""
import subprocess
import sys
from pathlib import Path

import tempo_analysis

ROOT = Path(__file__).resolve().parents[2]


def test_api_page_matches_the_code():
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "api_doc.py"), "--check"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr


def test_facades_share_one_shape():
    """Each exported facade class: fit returning self is declared, save and load exist."""
    for name in tempo_analysis.__all__:
        obj = getattr(tempo_analysis, name)
        if not isinstance(obj, type):
            continue
        for method in ("fit", "save", "load"):
            assert callable(getattr(obj, method, None)), f"{name} has no {method}()"
        assert any(a.startswith("visualize_") for a in dir(obj)), f"{name} has no visualize_* method"
