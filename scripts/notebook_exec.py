"""Headless notebook execution for ``scripts/run_notebooks.py`` and ``tests/notebooks``.

nbclient runs a notebook with widget state not stored, one time budget per notebook, and the
kernel's sockets re-polled every 0.5 s (see ``_poll_in_slices``). Not part of the library: the
library's notebook side is ``tempo_analysis.notebook`` (record_summary, cached).
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from collections import defaultdict
from queue import Empty
from typing import Any, Mapping

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

from tempo_analysis.notebook import ENV_NOTEBOOK

__all__ = ["NotebookRun", "clear_outputs", "execute_notebook", "inject_parameters", "notebook_errors",
           "parameters_cell_index", "strip_widget_state"]


def notebook_errors(nb) -> list[str]:
    """Every error output, and every stderr stream that carries a Traceback, as one line each."""
    found = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                found.append(f"cell {index}: {out.get('ename')}: {out.get('evalue')}")
            elif out.get("output_type") == "stream" and out.get("name") == "stderr":
                text = out.get("text", "")
                text = "".join(text) if isinstance(text, list) else text
                if "Traceback" in text:
                    last = [line for line in text.strip().splitlines() if line.strip()][-1]
                    found.append(f"cell {index}: Traceback on stderr: {last.strip()}")
    return found


def stderr_outputs(nb) -> list[str]:
    """Every stderr stream output, as "cell N: its first line": what a lesson shows in pink.

    A lesson prints its own notes on stdout; on stderr there should be nothing (no library warning,
    no weight-loading bar), also when it reads `make demo`'s cache. The browser and headless tests
    assert that this is empty."""
    found = []
    for index, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []) if cell.cell_type == "code" else []:
            if out.get("output_type") == "stream" and out.get("name") == "stderr":
                text = out.get("text", "")
                text = "".join(text) if isinstance(text, list) else text
                lines = [line.strip() for line in text.splitlines() if line.strip()]
                found.append(f"cell {index}: {(lines or [''])[0][:160]}")
    return found


def _numbers(value) -> list[float]:
    """The numbers in a plotly JSON field: lists (nested), scalars, or a typed array ({"bdata", "dtype"})."""
    if isinstance(value, dict) and "bdata" in value:
        import base64

        import numpy as np

        return [float(x) for x in np.frombuffer(base64.b64decode(value["bdata"]), dtype=value.get("dtype", "f8"))]
    if isinstance(value, (list, tuple)):
        return [x for item in value for x in _numbers(item)]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return [float(value)]
    return []


def _points(value) -> bool:
    """Does a plotly JSON field hold at least one point (a number or a category, not null)?"""
    if isinstance(value, dict) and "bdata" in value:
        return bool(value["bdata"])
    if isinstance(value, (list, tuple)):
        return any(_points(item) for item in value)
    return value is not None


def _blank(fig: dict) -> bool:
    """Empty axes: no annotation, no table cells, no scatter point, and every other trace's values all
    zero or missing (bars of height 0, a heatmap of zeros)."""
    if fig.get("layout", {}).get("annotations"):
        return False
    for trace in fig.get("data", []):
        kind = trace.get("type", "scatter")
        if kind == "table" and trace.get("cells", {}).get("values"):
            return False
        if kind.startswith("scatter") and (_points(trace.get("x", [])) or _points(trace.get("y", []))):
            return False
        for key in ("y", "z", "r", "values", "x"):
            if any(v == v and v != 0 for v in _numbers(trace.get(key, []))):   # v == v: not NaN
                return False
    return True


def blank_figures(nb) -> list[str]:
    """Every plotly figure output that draws nothing (empty axes, no note saying why), as "cell N: title"."""
    found = []
    for index, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []) if cell.cell_type == "code" else []:
            fig = out.get("data", {}).get("application/vnd.plotly.v1+json")
            if fig and _blank(fig):
                title = fig.get("layout", {}).get("title") or {}
                found.append(f"cell {index}: {title.get('text', '(untitled)') if isinstance(title, dict) else title}")
    return found


def strip_widget_state(nb):
    """Drop saved ipywidgets state (metadata.widgets) so executed copies stay small and honest."""
    nb.metadata.pop("widgets", None)
    return nb


def clear_outputs(nb):
    """Remove outputs, execution counts and per-cell execution metadata (for committed .ipynb)."""
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        for key in ("execution", "collapsed", "scrolled"):
            cell.metadata.pop(key, None)
    return strip_widget_state(nb)


def parameters_cell_index(nb) -> int | None:
    """Index of the cell tagged "parameters", or None."""
    for index, cell in enumerate(nb.cells):
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            return index
    return None


def inject_parameters(nb, parameters: Mapping[str, Any]):
    """Insert a cell tagged "injected-parameters" right after the "parameters" cell."""

    index = parameters_cell_index(nb)
    if index is None:
        raise ValueError("the notebook has no cell tagged 'parameters' to override; tag one")
    source = "# Parameters injected by execute_notebook\n" + "".join(
        f"{name} = {value!r}\n" for name, value in parameters.items()
    )
    cell = nbformat.v4.new_code_cell(source, metadata={"tags": ["injected-parameters"]})
    nb.cells.insert(index + 1, cell)
    return nb


@dataclass
class NotebookRun:
    """The outcome of one headless execution."""

    name: str
    nb: Any  # nbformat.NotebookNode, executed (possibly partially)
    seconds: float
    errors: list[str] = field(default_factory=list)
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return not self.errors and not self.timed_out

    @property
    def status(self) -> str:
        return "timeout" if self.timed_out else ("error" if self.errors else "ok")


def _poll_in_slices(channel, step: float = 0.5) -> None:
    """Make an async kernel channel's get_msg(timeout) re-poll its socket every `step` seconds.

    pyzmq's asyncio poller now and then misses the wake-up of a zmq socket (edge-triggered): the
    reply is already there, but one long poll sleeps through its whole timeout (for a notebook:
    the rest of its budget) and only then reads it. Seen here with notebooks 00 and 02 under
    load (cells "hung" with an idle kernel). Short polls re-check the socket, so a missed
    wake-up costs at most `step` seconds.
    """

    original = channel.get_msg

    async def get_msg(timeout=None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = None if deadline is None else deadline - time.monotonic()
            try:
                return await original(timeout=step if left is None else max(0.0, min(step, left)))
            except Empty:
                if left is not None and left <= step:
                    raise

    channel.get_msg = get_msg


def _client_class():
    """NotebookClient that tolerates Output widgets when widget state is not stored.

    nbclient (0.10/0.11) mirrors Output-widget outputs into `widget_state[comm_id]`, an entry that
    only exists when store_widget_state=True, so any notebook with an ipywidgets.Output raises
    KeyError. We keep the state out of the notebook but give those writes somewhere to go.
    """


    class _Client(NotebookClient):
        async def async_start_new_kernel_client(self):
            kc = await super().async_start_new_kernel_client()
            for channel in (kc.shell_channel, kc.iopub_channel):
                _poll_in_slices(channel)
            return kc

        def reset_execution_trackers(self) -> None:
            super().reset_execution_trackers()
            self.widget_state = defaultdict(dict)

        def set_widgets_metadata(self) -> None:
            if self.store_widget_state:
                super().set_widgets_metadata()

    return _Client


def execute_notebook(
    path: str | os.PathLike,
    *,
    timeout: float = 600,
    cwd: str | os.PathLike | None = None,
    env: Mapping[str, str] | None = None,
    parameters: Mapping[str, Any] | None = None,
    kernel_name: str = "python3",
    allow_errors: bool = False,
) -> NotebookRun:
    """Execute a notebook with nbclient, widget state not stored, within `timeout` seconds in all.

    cwd defaults to the notebook's folder. env entries are added to this process's environment
    for the kernel. The kernel "python3" is the interpreter running this function. Execution
    stops at the first error (unless allow_errors, as for a student version of a notebook whose
    exercises are not done); the returned run holds the executed notebook and its errors.
    """

    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    if parameters:
        inject_parameters(nb, parameters)
    deadline = time.monotonic() + timeout
    client = _client_class()(
        nb,
        kernel_name=kernel_name,
        resources={"metadata": {"path": str(Path(cwd) if cwd else path.parent)}},
        store_widget_state=False,
        allow_errors=allow_errors,
        # each cell may use whatever is left of the notebook's budget
        timeout_func=lambda cell: max(1, int(deadline - time.monotonic())),
    )
    kernel_env = {**os.environ, ENV_NOTEBOOK: path.stem, **(env or {})}
    start = time.monotonic()
    timed_out, errors = False, []
    try:
        client.execute(env=kernel_env)
    except CellTimeoutError as err:
        timed_out = True
        errors.append(f"timed out after {timeout:.0f} s: {str(err).strip().splitlines()[0]}")
    except DeadKernelError as err:
        errors.append(f"kernel died: {err}")
    except CellExecutionError:
        pass  # the error output is in the notebook; notebook_errors() reports it
    seconds = time.monotonic() - start
    strip_widget_state(nb)
    errors = notebook_errors(nb) + errors
    return NotebookRun(path.stem, nb, seconds, errors, timed_out)


