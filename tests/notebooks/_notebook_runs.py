"""The notebooks on disk, and one nbclient run of each per pytest session.

The `notebook_runs` fixture (conftest.py) is session-scoped and executes each notebook at most
once (whichever test asks first), so test_execute.py and test_browser.py share one headless run.
Both that run and the JupyterLab server of the browser test see the same environment:

- TEMPO_ANALYSIS_DATA    the project's data/ (so temporary copies of notebooks find it);
- TEMPO_ANALYSIS_CACHE   one cache folder for the session: steps a notebook wraps in
                         tempo_analysis.notebook.cached() are computed by the nbclient run and
                         reused by the browser run (same notebook, same parameters); a fresh
                         temporary one, or $TEMPO_ANALYSIS_TEST_CACHE when that is set;
- TEMPO_ANALYSIS_SUMMARY a per-run summary.json under the session's temporary folder, so tests
                         never touch build/summary.json (that is `make demo`'s).

Executed copies are written to build/test-notebooks/<name>.ipynb for inspection.
Per-notebook time limit: $TEMPO_ANALYSIS_NOTEBOOK_TIMEOUT seconds (default 1500: a ceiling against hangs,
not the lesson budget of about 4 minutes). The notebooks
tested are notebooks/*.ipynb, or $TEMPO_ANALYSIS_NOTEBOOKS_DIR/*.ipynb when that is set.
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest

import notebook_exec as nbx

from tempo_analysis import notebook as nbk
from tempo_analysis.data.locations import ENV_DATA, data_dir

ROOT = Path(__file__).resolve().parents[2]
# $TEMPO_ANALYSIS_NOTEBOOKS_DIR points the tests at another folder of notebooks (e.g. drafts)
NOTEBOOKS_DIR = Path(os.environ.get("TEMPO_ANALYSIS_NOTEBOOKS_DIR", ROOT / "notebooks")).resolve()
NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("*.ipynb"))
NOTEBOOK_TIMEOUT = float(os.environ.get("TEMPO_ANALYSIS_NOTEBOOK_TIMEOUT", 1500))
EXECUTED_DIR = ROOT / "build" / "test-notebooks"
# notebook -> (headless seconds, browser seconds), printed at the end of the session
TIMINGS: dict[str, tuple[float, float]] = {}
# notebook -> seconds the browser test spent moving its what-if widgets (after the run)
WIDGET_SECONDS: dict[str, float] = {}


def notebook_param(path: Path):
    """The pytest.param of one notebook, named by it; skipped, with the reason, when it reads the real
    data folder and none is found here (tempo_analysis.notebook.missing_data_reason)."""
    reason = nbk.missing_data_reason(path.stem)
    return pytest.param(path, id=path.stem, marks=[pytest.mark.skip(reason=reason)] if reason else [])


def notebook_params():
    """One pytest.param per notebooks/*.ipynb, with the notebook's name as the test id."""
    return [notebook_param(path) for path in NOTEBOOKS]


class NotebookRuns:
    """Executes each notebook once with nbclient and remembers the result."""

    def __init__(self, work: Path):
        self.work = work
        # $TEMPO_ANALYSIS_TEST_CACHE: a folder kept across sessions (for development: trained steps
        # are reused while the library's code is unchanged); CI leaves it unset: a fresh cache
        self.cache = Path(os.environ.get("TEMPO_ANALYSIS_TEST_CACHE") or work / "cache")
        self.cache.mkdir(parents=True, exist_ok=True)
        self.runs: dict[Path, nbx.NotebookRun] = {}

    def env(self, summary: Path) -> dict[str, str]:
        """Environment for a kernel (nbclient's or JupyterLab's) in this session."""
        return {
            ENV_DATA: str(data_dir(ROOT)),
            nbk.ENV_CACHE: str(self.cache),
            nbk.ENV_SUMMARY: str(summary),
        }

    def summary(self, kind: str) -> Path:
        return self.work / f"summary-{kind}.json"

    def get(self, path: Path) -> nbx.NotebookRun:
        if path not in self.runs:
            # In a thread of its own: nbclient drives its kernel with asyncio, and must not share
            # this thread with Playwright's sync API (its event loop), which deadlocks.
            with ThreadPoolExecutor(max_workers=1) as pool:
                run = pool.submit(
                    nbx.execute_notebook,
                    path,
                    timeout=NOTEBOOK_TIMEOUT,
                    cwd=NOTEBOOKS_DIR,
                    env=self.env(self.summary("nbclient")),
                ).result()
            EXECUTED_DIR.mkdir(parents=True, exist_ok=True)
            nbformat.write(run.nb, EXECUTED_DIR / path.name)
            self.runs[path] = run
        return self.runs[path]

    def values(self, path: Path, kind: str = "nbclient") -> dict:
        """Key numbers the notebook recorded with record_summary in that run."""
        data = nbk.read_summary(self.summary(kind))
        return data["notebooks"].get(path.stem, {}).get("values", {})
