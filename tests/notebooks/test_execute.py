"""Test 1: every notebooks/*.ipynb executes headless with nbclient and shows no error output.

Notebooks are found on disk, so a new notebook is tested without touching this file. Each one is
executed once per session by the `notebook_runs` fixture (conftest.py, _notebook_runs.py): the kernel is the
"python3" kernelspec of the interpreter running pytest (the project's .venv under `make test`),
the working directory is notebooks/, widget state is not stored, and the whole notebook gets one
time budget. A failure lists each error output (cell index, exception) and any stderr stream that
carries a Traceback. The executed copy is left in build/test-notebooks/ for inspection.

After the run, the lesson's figures are in figures/NN_*.html beside the summary.

Also checked per notebook, without executing it: a cell tagged "parameters"; a paired jupytext
py:percent file whose cells match the .ipynb; and a committed .ipynb without outputs.
"""
from __future__ import annotations

import jupytext
import nbformat
import pytest
from _notebook_runs import NOTEBOOK_TIMEOUT, NOTEBOOKS, NOTEBOOKS_DIR, ROOT, notebook_params

import notebook_exec as nbx


FIX = "fix: python scripts/sync_notebooks.py (pairs .py and .ipynb with jupytext, clears outputs)"


def test_suite_has_notebooks():
    assert NOTEBOOKS, f"no notebooks found in {NOTEBOOKS_DIR}"
    if NOTEBOOKS_DIR == ROOT / "notebooks":
        assert NOTEBOOKS_DIR / "00_overview.ipynb" in NOTEBOOKS


@pytest.mark.slow
@pytest.mark.parametrize("path", notebook_params())
def test_notebook_executes_without_errors(path, notebook_runs):
    run = notebook_runs.get(path)
    assert not run.timed_out, f"{path.name} ran past its {NOTEBOOK_TIMEOUT:.0f} s budget: {run.errors}"
    assert run.ok, f"{path.name} produced error output:\n" + "\n".join(run.errors)
    code = [c for c in run.nb.cells if c.cell_type == "code" and c.source.strip()]
    assert code and all(c.execution_count for c in code), f"{path.name}: not every code cell ran"
    assert "widgets" not in run.nb.metadata, "widget state must not be stored"
    chatter = nbx.stderr_outputs(run.nb)
    assert not chatter, f"{path.name}: output on stderr (a warning or a loading bar in the lesson): {chatter}"
    blank = nbx.blank_figures(run.nb)
    assert not blank, f"{path.name}: a figure with empty axes and no note saying why: {blank}"
    # every lesson exports its figures as standalone HTML beside the summary (tempo_analysis.notebook.show)
    number = path.stem.split("_")[0]
    exported = sorted((notebook_runs.summary("nbclient").parent / "figures").glob(f"{number}_*.html"))
    assert exported, f"{path.name}: no figure exported to figures/{number}_*.html (use tempo_analysis.notebook.show)"
    assert all(p.stat().st_size > 1_000_000 for p in exported), "each exported figure carries plotly.js"


@pytest.mark.parametrize("path", notebook_params())
def test_notebook_has_parameters_cell(path):
    nb = nbformat.read(path, as_version=4)
    index = nbx.parameters_cell_index(nb)
    assert index is not None, f"{path.name}: tag one code cell 'parameters' (jupytext: # %% tags=[\"parameters\"])"
    assert nb.cells[index].cell_type == "code" and nb.cells[index].source.strip()


@pytest.mark.parametrize("path", notebook_params())
def test_notebook_is_paired_with_percent_script(path):
    script = path.with_suffix(".py")
    assert script.exists(), f"{path.name} has no paired {script.name}; {FIX}"
    text = script.read_text(encoding="utf-8")
    assert "# %%" in text, f"{script.name} is not in jupytext's py:percent format; {FIX}"
    from_ipynb = nbformat.read(path, as_version=4)
    from_py = jupytext.read(script, fmt="py:percent")

    def cells(nb):
        return [(c.cell_type, c.source.strip()) for c in nb.cells if c.source.strip()]

    a, b = cells(from_ipynb), cells(from_py)
    for i, (x, y) in enumerate(zip(a, b)):
        assert x == y, f"{path.name} and {script.name} differ at cell {i}:\n{x}\n---\n{y}\n{FIX}"
    assert len(a) == len(b), f"{path.name} has {len(a)} cells, {script.name} {len(b)}; {FIX}"


@pytest.mark.parametrize("path", notebook_params())
def test_committed_notebook_has_no_outputs(path):
    nb = nbformat.read(path, as_version=4)
    dirty = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and (c.outputs or c.execution_count)]
    assert not dirty, f"{path.name}: cells {dirty} carry outputs; {FIX}"
    assert "widgets" not in nb.metadata, f"{path.name} stores widget state; {FIX}"
