"""Drive a real JupyterLab in headless Chromium: start a server, open a notebook, Run All, inspect.

Used by test_browser.py. Everything here is plain functions so a failing step names itself.

- `jupyterlab_server(root_dir, log_path, env)`: starts `python -m jupyter lab` on 127.0.0.1 and a
  free port with a random token (no other local user can reach the kernels while tests run), with
  throwaway config, runtime, settings and workspace folders so nothing from the user's own Jupyter
  setup leaks in; waits until /api/status answers with the token (and checks that it refuses a
  request without it); yields a `LabServer` (url, token, proc); stops the server by its process id
  (terminate, wait, kill).
- `launch_chromium(playwright)`: Debian's chromium via `shutil.which("chromium")`, never a
  Playwright-downloaded browser.
- `run_all_in_lab(page, server, name)`: opens /lab/tree/<name>?token=..., waits for the status bar's
  "Idle", clicks Run -> Run All Cells, waits until every code cell has an execution count (or an
  error stopped the run) and the kernel is idle again, and returns what the page shows.
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import NamedTuple

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]

# Lab settings for the throwaway server: no news or update checks (no internet here, and their
# toast would cover the notebook in screenshots); record cell timings.
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
    # per-cell execution times in the saved notebook, to compare with the headless run
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"recordTiming": True},
}


class LabServer(NamedTuple):
    """A running test JupyterLab: its base URL, its random token and its process."""

    url: str
    token: str
    proc: subprocess.Popen

    def api(self, path: str, method: str = "GET", timeout: float = 10):
        """An authenticated REST call; returns the decoded JSON (None for an empty reply)."""
        req = urllib.request.Request(self.url + path, method=method,
                                     headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            body = resp.read()
        return json.loads(body) if body else None

    def page_url(self, path: str) -> str:
        """A browser URL that logs in with the token (Jupyter then keeps a login cookie)."""
        return f"{self.url}{path}{'&' if '?' in path else '?'}token={self.token}"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _log_tail(path: Path, n: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return "(no log)"


def stop_process(proc: subprocess.Popen, grace: float = 20.0) -> None:
    """Stop a process by its id: SIGTERM (the server then shuts its kernels down), wait, SIGKILL."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()  # its kernels notice their parent is gone and exit (ipykernel's parent poller)
        proc.wait(timeout=grace)


@contextlib.contextmanager
def jupyterlab_server(root_dir: Path, work_dir: Path, env: dict | None = None, startup_timeout=180):
    """Start JupyterLab on 127.0.0.1:<free port> serving `root_dir` with a random token; yield a LabServer."""
    work_dir.mkdir(parents=True, exist_ok=True)
    settings_dir = work_dir / "lab-settings"
    for rel, values in LAB_SETTINGS.items():
        target = settings_dir / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(values))
    port = free_port()
    token = secrets.token_hex(24)
    cmd = [
        sys.executable, "-m", "jupyter", "lab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root_dir}",
        f"--LabApp.user_settings_dir={settings_dir}",
        f"--LabApp.workspaces_dir={work_dir / 'lab-workspaces'}",
        # no PyPI queries from the extension manager (offline machines, quiet logs)
        "--LabApp.extension_manager=readonly",
    ]  # fmt: skip
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")  # CI containers run as root
    full_env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(work_dir / "jupyter-config"),
        "JUPYTER_RUNTIME_DIR": str(work_dir / "jupyter-runtime"),
        "PYTHONUNBUFFERED": "1",
        **(env or {}),
    }
    log_path = work_dir / "jupyterlab.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            cmd, cwd=root_dir, env=full_env, stdout=log, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
    server = LabServer(f"http://127.0.0.1:{port}", token, proc)
    base_url = server.url
    try:
        deadline = time.monotonic() + startup_timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(
                    f"JupyterLab exited with code {proc.returncode} before answering:\n"
                    + _log_tail(log_path)
                )
            try:
                server.api("/api/status", timeout=5)
                break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"JupyterLab did not answer on {base_url} within {startup_timeout} s:\n"
                    + _log_tail(log_path)
                )
            time.sleep(0.5)
        try:  # the token is really required: an anonymous request is refused
            urllib.request.urlopen(base_url + "/api/kernels", timeout=5).close()
        except urllib.error.HTTPError as err:
            if err.code != 403:
                raise
        else:
            raise RuntimeError(f"JupyterLab on {base_url} answered /api/kernels without its token")
        yield server
    finally:
        stop_process(proc)


def launch_chromium(playwright):
    """Debian's chromium, headless, with the flags this machine needs."""
    executable = shutil.which("chromium")
    if executable is None:
        raise RuntimeError("chromium is not on PATH; install it with `apt-get install -y chromium`")
    return playwright.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)


# -----------------------------------------------------------------------------
# inside the page

_STATE_JS = r"""
() => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  const bar = document.querySelector('#jp-main-statusbar');
  if (!panel) return {ready: false, status: bar ? bar.innerText : ''};
  const prompts = [...panel.querySelectorAll('.jp-CodeCell .jp-InputArea .jp-InputPrompt')]
      .map(e => e.textContent.trim());
  const stderr = [...panel.querySelectorAll(
      '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')]
      .map(e => e.textContent).filter(t => t.includes('Traceback'));
  // textContent, not innerText: Lab's contentVisibility windowing skips rendering off-screen
  // cells, and innerText of a skipped element is empty.
  // error outputs render with the stderr mime type too; match a traceback or an "XxxError:" line
  const errors = [...panel.querySelectorAll(
      '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')]
      .map(e => e.textContent)
      .filter(t => t.includes('Traceback') || /^\s*[A-Za-z_][\w.]*(Error|Exception)(:|$)/m.test(t));
  return {
    ready: true,
    status: bar ? bar.innerText : '',
    prompts: prompts,
    stderr_tracebacks: stderr,
    error_texts: errors,
    plotly: panel.querySelectorAll('.js-plotly-plot, .plotly').length,
    plotly_svgs: panel.querySelectorAll('.js-plotly-plot .main-svg').length,
    widget_views: [...panel.querySelectorAll('.jp-OutputArea-output .jupyter-widgets')]
      .filter(e => !/Error displaying widget/i.test(e.textContent)).length,
    widget_errors: [...panel.querySelectorAll('.jupyter-widgets')]
      .map(e => e.textContent).filter(t => /Error displaying widget|model not found/i.test(t)),
  };
}
"""


def page_state(page) -> dict:
    """What the open notebook shows: prompts, kernel status text, error/figure/widget counts."""
    return page.evaluate(_STATE_JS)


def kernel_idle(state: dict) -> bool:
    """True when the status bar reads '<kernel name> | Idle'."""
    return bool(re.search(r"\|\s*Idle\b", state.get("status", "")))


def wait_for(page, predicate, timeout_s: float, what: str, poll_s: float = 0.5) -> dict:
    """Poll page_state until predicate(state) holds; raise TimeoutError naming `what`."""
    deadline = time.monotonic() + timeout_s
    while True:
        state = page_state(page)
        if predicate(state):
            return state
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout_s:.0f} s waiting for {what}; last state: {state}")
        page.wait_for_timeout(int(poll_s * 1000))


def _dismiss_kernel_dialog(page) -> None:
    """If Lab asks which kernel to use, accept its suggestion (the notebook's own kernelspec)."""
    dialog = page.locator(".jp-Dialog")
    if dialog.count() and dialog.first.is_visible():
        page.locator(".jp-Dialog .jp-mod-accept").first.click()


def open_notebook(page, server: LabServer, name: str, workspace: str, timeout_s: float = 120) -> dict:
    """Open <name> in a fresh Lab workspace and wait for its cells and an Idle kernel.

    A workspace per notebook keeps Lab from restoring (and starting kernels for) notebooks opened
    earlier in the session.
    """
    page.goto(server.page_url(f"/lab/workspaces/{workspace}/tree/{name}"), wait_until="domcontentloaded")
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=timeout_s * 1000)

    def idle(state):
        _dismiss_kernel_dialog(page)
        return state.get("ready") and kernel_idle(state)

    return wait_for(page, idle, timeout_s, f"{name}: kernel 'Idle' in the status bar")


def run_all_cells(page) -> None:
    """Menu bar: Run -> Run All Cells, as a user would click it."""
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
    item = page.locator(".lm-Menu-item:visible .lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$"))
    item.first.click()


def _run_finished(state: dict) -> bool:
    prompts = state.get("prompts", [])
    counted = [p for p in prompts if re.fullmatch(r"\[\d+\]:", p)]
    stopped_by_error = bool(state.get("error_texts")) and "[*]:" not in prompts
    return kernel_idle(state) and (len(counted) == len(prompts) or stopped_by_error)


def run_all_in_lab(page, server: LabServer, name: str, timeout_s: float, workspace: str) -> dict:
    """Open a notebook, Run All, wait until every code cell ran (or an error stopped it)."""
    before = open_notebook(page, server, name, workspace)
    assert before["prompts"], f"{name}: JupyterLab shows no code cells"
    started = time.monotonic()
    run_all_cells(page)
    # proof that Run All really started: a cell becomes [*] or gets a count
    wait_for(
        page,
        lambda s: any(p == "[*]:" or re.fullmatch(r"\[\d+\]:", p) for p in s.get("prompts", [])),
        60, f"{name}: Run All to start executing cells",
    )  # fmt: skip
    state = wait_for(page, _run_finished, timeout_s, f"{name}: all cells to run and 'Idle'")
    # let renderers (plotly, widget views) finish attaching after the last output arrives
    page.wait_for_timeout(2000)
    state = page_state(page)
    state["seconds"] = time.monotonic() - started
    return state


def save_notebook(page, path: Path, timeout_s: float = 60):
    """Save from the browser (Ctrl+S in the notebook) and return the notebook as saved on disk."""
    import nbformat

    before = path.stat().st_mtime_ns if path.exists() else 0
    page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook").first.click(position={"x": 5, "y": 5})
    page.keyboard.press("Escape")  # command mode, so Ctrl+S goes to the notebook
    page.keyboard.press("Control+s")
    deadline = time.monotonic() + timeout_s
    while not (path.exists() and path.stat().st_mtime_ns != before):
        if time.monotonic() > deadline:
            raise TimeoutError(f"JupyterLab did not save {path.name} within {timeout_s:.0f} s")
        page.wait_for_timeout(250)
    page.wait_for_timeout(500)  # let the write finish (the contents manager writes atomically)
    return nbformat.read(path, as_version=4)


def shutdown_kernels(server: LabServer) -> None:
    """Delete every session (and so its kernel) on the server, freeing the kernel's memory."""
    for session in server.api("/api/sessions"):
        with contextlib.suppress(urllib.error.URLError):
            server.api(f"/api/sessions/{session['id']}", method="DELETE", timeout=30)
    # and any kernel without a session; then wait until they are gone, so a finished notebook's
    # kernel never competes for the CPU with the next notebook's run
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        kernels = server.api("/api/kernels")
        if not kernels:
            return
        for kernel in kernels:
            with contextlib.suppress(urllib.error.URLError):
                server.api(f"/api/kernels/{kernel['id']}", method="DELETE", timeout=30)
        time.sleep(0.5)


_NOTEBOOK_HEIGHT_JS = """() => {
  const el = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer');
  if (!el) return document.body.scrollHeight;
  el.scrollTop = 0;
  const cells = el.querySelectorAll('.jp-Cell');
  if (!cells.length) return document.body.scrollHeight;
  const last = cells[cells.length - 1].getBoundingClientRect().bottom;
  const box = el.getBoundingClientRect();
  // from the page top to the last cell's bottom, plus the status bar below the notebook
  return last + (window.innerHeight - box.bottom) + 40;
}"""


def screenshot_notebook(page, path: Path, max_height: int = 16000) -> None:
    """Full-page screenshot of the whole notebook: hide the file browser and grow the viewport.

    Lab scrolls inside the notebook panel, so the page itself is one viewport tall; we scroll
    the panel to the top and make the viewport as tall as the notebook (twice, since off-screen
    cells only get their real height once rendered).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    current = page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab.lm-mod-current")
    if current.count():
        current.first.click()  # clicking the open sidebar tab collapses it
    width = page.viewport_size["width"] if page.viewport_size else 1400
    for _ in range(2):
        height = page.evaluate(_NOTEBOOK_HEIGHT_JS)
        page.set_viewport_size({"width": width, "height": int(min(max(height, 900), max_height))})
        page.wait_for_timeout(1500)  # cells render, plotly relayouts on resize
    page.evaluate(_NOTEBOOK_HEIGHT_JS)  # back to the top after the resize
    page.screenshot(path=str(path), full_page=True)
