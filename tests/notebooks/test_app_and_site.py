"""`make app` (Voila dashboards) and `make site` (static HTML), each opened in headless Chromium.

- The app: Voila serves notebooks/00_overview.ipynb on 127.0.0.1 with a random token (as `make
  app` does, there with --token), a request without the token is refused, the dashboard shows
  widgets and no code, and moving the time_signal slider (typing into its readout, as a person
  can) redraws the figure that it drives: 20 moves in each of 5 fresh starts, none retried.
- The site: scripts/build_site.py turns this session's executed notebooks into build/site-like
  pages; the index links every lesson, and a lesson page renders interactive plotly figures.
"""
from __future__ import annotations

import os
import re
import secrets
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import nbformat
import pytest
from _notebook_runs import NOTEBOOKS, NOTEBOOKS_DIR, ROOT
from test_browser import VIEWPORT, require_browser

from tempo_analysis import notebook as nbk

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# the option `make app` passes (see the Makefile: Voila's default kernel manager can stall a page)
VOILA_KERNELS = next(line.split(":=", 1)[1].strip() for line in (ROOT / "Makefile").read_text().splitlines()
                     if line.startswith("VOILA_KERNELS :="))


def _voila(notebook: Path, work: Path, env: dict, kernels: str = VOILA_KERNELS):
    import _jupyterlab as jl

    port, token = jl.free_port(), secrets.token_hex(16)
    cmd = [sys.executable, "-m", "voila", str(notebook), "--Voila.ip=127.0.0.1", f"--port={port}",
           f"--token={token}", "--no-browser", "--Voila.root_dir=" + str(notebook.parent), *kernels.split()]
    log = open(work / "voila.log", "wb")
    proc = subprocess.Popen(cmd, cwd=notebook.parent, env={**os.environ, **env}, stdout=log,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        if proc.poll() is not None:
            raise RuntimeError("voila exited:\n" + (work / "voila.log").read_text(errors="replace")[-3000:])
        try:
            urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=5).close()
            break
        except urllib.error.HTTPError:
            break  # it answers (voila may not serve /api/status): up
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)
    return proc, url, token


# what a lost kernel connection prints in Voila's log (tornado's write buffer broken by a write
# that raced another; jupyter-server's websocket then drops every later message)
WEBSOCKET_RACE = "assert 0 < size <= self._size"
# time_signal values the test moves to, each unlike the one before (the slider's step is 0.1)
MOVES = [0.2, 0.5, 0.9, 0.1, 0.6, 0.3, 0.7, 0.4, 1.0, 0.0] * 2
STARTS = 5


def drive_dashboard(notebook: Path, work: Path, env: dict, kernels: str = VOILA_KERNELS,
                    moves=MOVES) -> tuple[list[bool], str]:
    """Start Voila afresh, open the dashboard and move time_signal to each of ``moves``.

    Returns (redrawn after each move, Voila's log). A move counts when the figure's title shows the
    new value within 30 s; a keystroke lost while the page settles is typed again (at most three
    times). An inert widget or a dropped kernel connection fails every later move.
    """
    import _jupyterlab as jl
    from playwright.sync_api import sync_playwright

    proc, url, token = _voila(notebook, work, env, kernels)
    done: list[bool] = []
    try:
        with urllib.request.urlopen(url + "/", timeout=60) as anonymous:
            assert "/login" in anonymous.geturl(), "without its token the dashboard sends you to a login page"
        with sync_playwright() as playwright:
            browser = jl.launch_chromium(playwright)
            try:
                page = browser.new_page(viewport=VIEWPORT)
                # offline, as on this machine: CDN extras (fonts, icons) fail at once instead of hanging
                page.route(re.compile(r"^https?://(?!127\.0\.0\.1[:/])"), lambda route: route.abort())
                page.goto(f"{url}/?token={token}", wait_until="domcontentloaded", timeout=180_000)
                page.wait_for_selector(".widget-slider", timeout=240_000)
                text = page.inner_text("body")
                assert "FloatSlider(" not in text and "import ipywidgets" not in text, "the code is hidden"
                slider = page.locator(".widget-slider", has_text="time_signal").first
                box = slider.locator("xpath=ancestor::div[contains(@class, 'widget-vbox')][1]")
                titles = box.locator(".gtitle")
                titles.first.wait_for(timeout=120_000)
                assert any("time_signal=0.8" in t for t in titles.all_text_contents())
                readout = slider.locator(".widget-readout")
                for value in moves:
                    def redrawn():
                        return any(f"time_signal={value:.1f}" in t for t in titles.all_text_contents())

                    for _ in range(3):
                        if readout.inner_text().strip() != f"{value:.2f}":
                            readout.click()
                            page.keyboard.press("Control+a")
                            page.keyboard.type(f"{value:.1f}")
                            page.keyboard.press("Enter")
                        deadline = time.monotonic() + 10
                        while not redrawn() and time.monotonic() < deadline:
                            page.wait_for_timeout(200)
                        if redrawn():
                            break
                    done.append(redrawn())
                    if not done[-1]:
                        break
                if done and done[-1]:
                    assert box.locator(".js-plotly-plot .main-svg").count() > 0, "the redrawn figure renders"
            finally:
                browser.close()
    finally:
        jl.stop_process(proc)
    return done, (work / "voila.log").read_text(errors="replace")


def test_app_dashboard_redraws_on_every_move_over_fresh_starts(tmp_path, notebook_runs):
    """5 fresh starts of the app, 20 slider moves in each: every move redraws, and no start loses
    its kernel connection. Nothing is retried or restarted."""
    require_browser()
    notebook = NOTEBOOKS_DIR / "00_overview.ipynb"
    env = notebook_runs.env(notebook_runs.summary("voila"))
    for start in range(STARTS):
        work = tmp_path / f"start{start}"
        work.mkdir()
        done, log = drive_dashboard(notebook, work, env)
        assert WEBSOCKET_RACE not in log, f"start {start}: the kernel connection broke:\n{log[-3000:]}"
        assert len(done) == len(MOVES) and all(done), (
            f"start {start}: move {len(done)} of {len(MOVES)} did not redraw; voila log:\n{log[-2000:]}")


def test_site_index_links_every_lesson_and_figures_render(tmp_path, notebook_runs):
    require_browser()
    import build_site
    import _jupyterlab as jl
    from playwright.sync_api import sync_playwright

    lessons = [p for p in NOTEBOOKS if p.name[:1].isdigit() and not nbk.missing_data_reason(p.stem)]
    src, executed, out = tmp_path / "src", tmp_path / "executed", tmp_path / "site"
    src.mkdir()
    executed.mkdir()
    for path in lessons:
        shutil.copy(path, src / path.name)
    for path in lessons:  # written after the sources: newer, so build_site uses them
        run = notebook_runs.get(path)
        assert run.ok, f"{path.name} failed headless: {run.errors}"
        nbformat.write(run.nb, executed / path.name)
    assert build_site.main(["--notebooks-dir", str(src), "--executed", str(executed), "--out", str(out)]) == 0
    assert sorted(p.name for p in out.glob("*.html")) == sorted(["index.html"] + [f"{p.stem}.html" for p in lessons])
    with sync_playwright() as playwright:
        browser = jl.launch_chromium(playwright)
        try:
            page = browser.new_page(viewport=VIEWPORT)
            page.goto((out / "index.html").as_uri())
            cards = page.locator(".ta-card a")
            assert cards.count() == len(lessons)
            cards.nth(1).click()  # a method lesson, not the overview
            page.wait_for_selector(".js-plotly-plot .main-svg", timeout=60_000)
            assert page.locator(".js-plotly-plot").count() >= 2
            assert page.locator("nav.ta-nav a").count() == len(lessons) + 1
        finally:
            browser.close()
