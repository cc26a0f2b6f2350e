"""Fixtures for the notebook tests; the machinery lives in _notebook_runs.py and _jupyterlab.py."""
import sys
from pathlib import Path

import pytest

# the helper modules sit next to this file; make them importable under any --import-mode
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _notebook_runs import NotebookRuns  # noqa: E402


@pytest.fixture(scope="session")
def notebook_runs(tmp_path_factory) -> NotebookRuns:
    return NotebookRuns(tmp_path_factory.mktemp("notebook-runs"))
