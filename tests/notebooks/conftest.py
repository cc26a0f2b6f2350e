"""Fixtures for the notebook tests; the machinery lives in _notebook_runs.py and _jupyterlab.py."""
import sys
from pathlib import Path

import pytest

# the helper modules sit next to this file; make them importable under any --import-mode
sys.path.insert(0, str(Path(__file__).resolve().parent))
# headless notebook execution is a project script, not library code (scripts/notebook_exec.py)
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

from _notebook_runs import TIMINGS, WIDGET_SECONDS, NotebookRuns  # noqa: E402


@pytest.fixture(scope="session")
def notebook_runs(tmp_path_factory) -> NotebookRuns:
    return NotebookRuns(tmp_path_factory.mktemp("notebook-runs"))


def pytest_terminal_summary(terminalreporter):
    """How long each notebook ran headless (nbclient), then in JupyterLab, then moving its widgets."""
    if TIMINGS:
        terminalreporter.section("notebook run times (seconds)")
        terminalreporter.write_line(f"{'notebook':<28}{'headless':>10}{'browser':>10}{'widgets':>10}")
        for name, (headless, browser) in TIMINGS.items():
            widgets = WIDGET_SECONDS.get(name, float("nan"))
            terminalreporter.write_line(f"{name:<28}{headless:>10.1f}{browser:>10.1f}{widgets:>10.1f}")
