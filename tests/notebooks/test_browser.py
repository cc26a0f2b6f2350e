"""Test 2: every notebook runs in a real JupyterLab, driven by headless Chromium.

For the whole module: copy notebooks/ to a temporary folder, start `python -m jupyter lab` on
127.0.0.1 and a free port serving that copy (with a random token, so no other local user can
reach its kernels), with
TEMPO_ANALYSIS_DATA pointing at the real data/; launch Debian's chromium through Playwright
(`executable_path=shutil.which("chromium")`; never `playwright install`).

For each notebook, in its own fresh Lab workspace: open /lab/.../tree/<name>.ipynb, wait for the
status bar's "Idle", click Run -> Run All Cells, check that cells really started executing, wait
until every code cell has an execution count and the kernel is Idle again, then assert:
- no error output: no stderr output area holding a Traceback or an "XxxError:" line, and, after
  saving the notebook from the browser, no error output in the saved file;
- nothing on stderr (no library warning, no weight-loading bar: this run reads the cache) and no
  figure with empty axes that does not say why (notebook_exec.stderr_outputs, .blank_figures);
- at least one plotly figure rendered (an SVG inside .js-plotly-plot), via plotly's JupyterLab
  mime renderer that ships in the `plotly` package (offline; no CDN);
- at least one ipywidget view rendered (.jupyter-widgets), none showing "Error displaying widget";
- the run recorded the same key numbers (record_summary keys) as the headless run.
A full-page screenshot goes to build/screenshots/<name>.png, also when the test fails. At the end
the server is stopped by its process id (terminate, wait, kill).

Not running notebooks twice at full cost. `make test` runs each notebook twice: headless here in
test_execute.py (nbclient) and in the browser. The two runs share the session's `notebook_runs`
fixture: this test first asks for the notebook's nbclient run (executed once per session, reused by
test_execute.py), and only then runs it in the browser, with the same TEMPO_ANALYSIS_CACHE. Steps a
notebook wraps in `tempo_analysis.notebook.cached(name, params, compute)` (its training) are
computed by the nbclient run and loaded, not recomputed, by the browser run. The browser run is
still a full run: every cell executes in a Lab kernel, at the notebook's defaults, and every figure
and widget is built live; only the memoised training is skipped, and it was proved minutes earlier
in the same session, with the same parameters, by the headless run. If the headless run failed,
the browser run is not attempted (that failure is already reported by test_execute.py).

Then every what-if widget is moved, in the same page with the kernel still alive (_widgets.py: the
table of controls per notebook, and how each is found, moved and timed): a widget whose output does
not change fails the test. The median time from a move to the redrawn output is recorded in
build/summary.json as `ui.latency_ms.<notebook>` (with `ui.responds.<notebook>` and
`ui.widgets.<notebook>`, the number of controls moved), next to its target (median <= 1 s for
widgets that re-score or re-plot, <= 3 s for those that train or generate, which must also show a
progress bar while they work): `ui.latency_target_met.<notebook>.<light|heavy>` records whether it
was met, and a miss is a warning, never a failure (no timed assertions).

Skips, with the reason, when chromium or playwright is missing, unless CI=true: then it fails.
"""
from __future__ import annotations

import importlib.util
import os
import shutil
import time
import warnings

import nbformat
import pytest
from _notebook_runs import (EXECUTED_DIR, NOTEBOOK_TIMEOUT, NOTEBOOKS_DIR, ROOT, TIMINGS, WIDGET_SECONDS,
                            notebook_params)

import _widgets as wd
import notebook_exec as nbx

from tempo_analysis.notebook import record_summary


pytestmark = [pytest.mark.browser, pytest.mark.slow]

SCREENSHOTS = ROOT / "build" / "screenshots"
VIEWPORT = {"width": 1400, "height": 900}
# the project's summary: the browser test is where ui.* (widget latency) is measured, so it records there
SUMMARY = ROOT / "build" / "summary.json"


def missing_requirements() -> list[str]:
    missing = []
    if shutil.which("chromium") is None:
        missing.append("Debian's chromium (apt-get install -y chromium)")
    if importlib.util.find_spec("playwright") is None:
        missing.append("playwright (pip install -e '.[test]')")
    return missing


def require_browser() -> None:
    """Skip when chromium or playwright is missing; under CI=true, fail instead."""
    missing = missing_requirements()
    if missing:
        message = "browser test needs " + " and ".join(missing)
        if os.environ.get("CI") == "true":
            pytest.fail(message + "; CI=true, so this test must run, not skip")
        pytest.skip(message)


@pytest.fixture(scope="module")
def lab(tmp_path_factory, notebook_runs):
    """(LabServer, browser, root) for a JupyterLab serving a temporary copy of notebooks/."""
    require_browser()
    import _jupyterlab as jl
    from playwright.sync_api import sync_playwright

    work = tmp_path_factory.mktemp("jupyterlab")
    root = work / "notebooks"
    shutil.copytree(NOTEBOOKS_DIR, root, ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    env = notebook_runs.env(notebook_runs.summary("browser"))
    with jl.jupyterlab_server(root, work / "server", env=env) as server:
        with sync_playwright() as playwright:
            browser = jl.launch_chromium(playwright)
            try:
                yield server, browser, root
            finally:
                browser.close()


def executed_seconds(nb) -> float:
    """Wall time from the first cell's start to the last cell's reply, from cell metadata."""
    import datetime as dt

    stamps = [c.metadata.get("execution", {}) for c in nb.cells if c.cell_type == "code"]
    starts = [s["iopub.execute_input"] for s in stamps if "iopub.execute_input" in s]
    ends = [s["shell.execute_reply"] for s in stamps if "shell.execute_reply" in s]
    if not starts or not ends:
        return float("nan")
    parse = lambda s: dt.datetime.fromisoformat(s.replace("Z", "+00:00"))  # noqa: E731
    return (max(map(parse, ends)) - min(map(parse, starts))).total_seconds()


@pytest.mark.parametrize("path", notebook_params())
def test_notebook_runs_in_jupyterlab(path, lab, notebook_runs, record_property):
    import _jupyterlab as jl

    server, browser, root = lab
    headless = notebook_runs.get(path)  # first: fills the cache the browser run reuses
    if not headless.ok:
        pytest.fail(
            f"{path.name} failed headless (see test_execute.py), not run in the browser: "
            + "; ".join(headless.errors)
        )
    page = browser.new_page(viewport=VIEWPORT)
    state = drive = None
    try:
        state = jl.run_all_in_lab(page, server, path.name, timeout_s=NOTEBOOK_TIMEOUT, workspace=path.stem)
        saved = jl.save_notebook(page, root / path.name)
        nbformat.write(saved, EXECUTED_DIR / f"{path.stem}.lab.ipynb")  # for inspection
        # how much the shared cache saved: the headless run's time against the browser run's
        TIMINGS[path.stem] = (headless.seconds, executed_seconds(saved))
        record_property("headless_seconds", round(headless.seconds, 1))
        record_property("browser_seconds", round(TIMINGS[path.stem][1], 1))
        if not state["error_texts"] and path.stem in wd.MOVES:
            # the kernel is still alive: move every what-if control and time the redrawn output
            started = time.monotonic()
            drive = wd.drive_notebook(page, root / path.name, wd.MOVES[path.stem])
            WIDGET_SECONDS[path.stem] = time.monotonic() - started
            record_property("widgets_seconds", round(WIDGET_SECONDS[path.stem], 1))
    finally:
        try:
            jl.screenshot_notebook(page, SCREENSHOTS / f"{path.stem}.png")
        except Exception as err:  # never hide the real failure behind a screenshot error
            warnings.warn(f"{path.name}: no screenshot: {err}")
        finally:
            page.close()
            jl.shutdown_kernels(server)

    assert not state["error_texts"], f"{path.name}: error output in JupyterLab:\n" + "\n".join(state["error_texts"])
    saved_errors = nbx.notebook_errors(saved)
    assert not saved_errors, f"{path.name}: error output in the notebook saved by JupyterLab: {saved_errors}"
    chatter = nbx.stderr_outputs(saved)   # this run reads the cache: loading a saved model must be quiet too
    assert not chatter, f"{path.name}: output on stderr in JupyterLab (a warning or a loading bar): {chatter}"
    blank = nbx.blank_figures(saved)
    assert not blank, f"{path.name}: a figure with empty axes and no note saying why, in JupyterLab: {blank}"
    code = [c for c in saved.cells if c.cell_type == "code" and c.source.strip()]
    assert all(c.execution_count for c in code), f"{path.name}: not every code cell ran in JupyterLab"
    assert state["plotly_svgs"] > 0, f"{path.name}: no plotly figure rendered in JupyterLab ({state})"
    assert state["widget_views"] > 0, f"{path.name}: no ipywidget rendered in JupyterLab ({state})"
    assert not state["widget_errors"], f"{path.name}: widgets failed to display: {state['widget_errors']}"
    assert set(notebook_runs.values(path, "browser")) == set(notebook_runs.values(path)), (
        f"{path.name}: the browser run recorded other key numbers than the headless run"
    )
    assert (SCREENSHOTS / f"{path.stem}.png").stat().st_size > 10_000
    if drive is not None:
        check_widgets(drive, record_property)


def check_widgets(drive: wd.NotebookDrive, record_property) -> None:
    """Every control moved its output; record the median latency; hold each kind to its target."""
    name = drive.notebook
    median = drive.median_ms()
    values = {f"ui.responds.{name}": drive.responds, f"ui.widgets.{name}": len(drive.results)}
    if median is not None:
        values[f"ui.latency_ms.{name}"] = round(median, 1)
    record_summary(values, notebook=name, path=SUMMARY)
    record_property("widgets", "\n" + drive.report())
    inert = [r for r in drive.results if not r.changed]
    known = [wd.KNOWN_INERT.get((name, r.move.label)) for r in inert]
    assert all(known), (f"{name}: widgets whose output did not change:\n"
                        + "\n".join(r.line() for r in inert) + "\nall:\n" + drive.report())
    silent = [r.line() for r in drive.results if r.move.heavy and not r.progress_seen]
    assert not silent, f"{name}: widgets that train or generate without a progress indicator:\n" + "\n".join(silent)
    # latency is recorded against its target, never asserted (no timed assertions: a loaded CI
    # machine must not fail a correct widget); a miss is recorded and shown as a warning
    missed = []
    for kind, heavy in (("light", False), ("heavy", True)):
        med = drive.median_ms(heavy)
        if med is not None:
            record_summary({f"ui.latency_target_met.{name}.{kind}": bool(med <= wd.TARGET_MS[kind])},
                           notebook=name, path=SUMMARY)
        if med is not None and med > wd.TARGET_MS[kind]:
            missed.append(f"{name}: median latency of the widgets that "
                          f"{'train or generate' if heavy else 're-score or re-plot'} is {med:.0f} ms, over the "
                          f"{wd.TARGET_MS[kind]:.0f} ms target")
    if missed:
        why = f" (known: {wd.KNOWN_SLOW[name]})" if name in wd.KNOWN_SLOW else ""
        warnings.warn("; ".join(missed) + why)
    if inert:  # only known ones are left: report them as an expected failure, with the reason
        pytest.xfail("; ".join(f"{r.move.name} did not change its output (known: {k})" for r, k in zip(inert, known)))


def test_browser_run_sees_errors(lab):
    """The checks above can fail: a notebook that raises shows its error, and Run All stops there."""
    import _jupyterlab as jl
    import nbformat

    server, browser, root = lab
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(src) for src in ("x = 1", "1 / 0", "print('not reached')")]
    nbformat.write(nb, root / "zz_raises.ipynb")
    page = browser.new_page(viewport=VIEWPORT)
    try:
        state = jl.run_all_in_lab(page, server, "zz_raises.ipynb", timeout_s=120, workspace="zz_raises")
    finally:
        page.close()
        jl.shutdown_kernels(server)
        (root / "zz_raises.ipynb").unlink()
    assert any("ZeroDivisionError" in text for text in state["error_texts"]), state
    assert state["prompts"][:2] == ["[1]:", "[2]:"] and state["prompts"][2] != "[3]:", state
    assert state["plotly_svgs"] == 0 and state["widget_views"] == 0


@pytest.mark.parametrize("ci, outcome", [("true", pytest.fail.Exception), ("", pytest.skip.Exception)])
def test_missing_browser_fails_under_ci_and_skips_otherwise(monkeypatch, ci, outcome):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.setenv("CI", ci)
    with pytest.raises(outcome, match="chromium"):
        require_browser()


def test_widget_drive_fails_on_an_inert_widget(lab):
    """The widget checks can fail: of two sliders dragged in JupyterLab, the one whose callback
    ignores its value is reported as not changing its output; the live one changes it, and its
    latency is measured. A button that works for 2 s behind a progress bar: the bar is seen."""
    import _jupyterlab as jl

    server, browser, root = lab
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    panel = ("import ipywidgets as W\n"
             "s_{label} = W.IntSlider(value=5, min=0, max=10, description='{label}', continuous_update=False)\n"
             "out_{label} = W.HTML('value 5')\n"
             "s_{label}.observe(lambda c: setattr(out_{label}, 'value', {text}), names='value')\n"
             "W.VBox([s_{label}, out_{label}])")
    busy = ("import time\nfrom tempo_analysis.widgets.progress import Busy\n"
            "busy, done, go = Busy('working'), W.HTML('not yet'), W.Button(description='Go')\n"
            "def work(_):\n    with busy.steps(2) as step:\n        time.sleep(1); step(); time.sleep(1)\n"
            "    done.value = 'done'\n"
            "go.on_click(work)\nW.VBox([go, busy.bar, done])")
    nb.cells = [nbformat.v4.new_code_cell(panel.format(label="live", text="f\"value {c['new']}\"")),
                nbformat.v4.new_code_cell(panel.format(label="inert", text="'value 5'")),
                nbformat.v4.new_code_cell(busy)]
    path = root / "zz_widgets.ipynb"
    nbformat.write(nb, path)
    page = browser.new_page(viewport=VIEWPORT)
    try:
        state = jl.run_all_in_lab(page, server, path.name, timeout_s=120, workspace="zz_widgets")
        drive = wd.drive_notebook(page, path, [wd.Move("'live'", "live", "slider", 0.9),
                                               wd.Move("'inert'", "inert", "slider", 0.9, timeout_s=5),
                                               wd.Move("Busy('working')", "Go", "button", heavy=True)])
    finally:
        page.close()
        jl.shutdown_kernels(server)
        path.unlink()
    assert state["widget_views"] >= 2, state
    live, inert, working = drive.results
    assert live.changed and live.latency_ms is not None and live.latency_ms >= 0, drive.report()
    assert not inert.changed and "no change" in inert.note, drive.report()
    assert not drive.responds
    # a widget that works for 2 s: its progress bar is seen, and the latency covers the work
    assert working.changed and working.progress_seen and working.latency_ms >= 2000, drive.report()
