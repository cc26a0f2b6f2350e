"""Drive a what-if widget from Python as a person would, and time the output it redraws.

ipywidgets runs a control's observers in the kernel when its ``value`` is set, so setting the value
from code is what a person's drag does once the browser has sent it. :func:`respond` sets a control
to each of a few values, reads the output it drives (figure data, a table, text) before and after,
and reports the time each change took in the kernel and whether the output changed every time.
Notebook 01 records the median as ``ui.kernel_latency_ms.<notebook>`` (the browser's redraw not
included); the browser test records ``ui.latency_ms.<notebook>``, from a change made in the page to
the redrawn output.
"""

from __future__ import annotations

import statistics
import time
from typing import Any, Callable, Iterable

__all__ = ["find_widget", "respond"]


def find_widget(root, *, description: str | None = None, kind: type | None = None):
    """The first widget under ``root`` (depth first, through ``children``) with this description
    and/or of this type; ValueError naming what was looked for when there is none."""
    stack = [root]
    while stack:
        w = stack.pop(0)
        if (description is None or getattr(w, "description", None) == description) and (
                kind is None or isinstance(w, kind)):
            return w
        stack[0:0] = list(getattr(w, "children", ()) or ())
    want = ", ".join(f"{k}={v!r}" for k, v in (("description", description), ("kind", kind)) if v is not None)
    raise ValueError(f"find_widget: no widget with {want} under {type(root).__name__}. Fix: check the "
                     "control's description (the label shown next to it)")


def respond(control, values: Iterable[Any], read: Callable[[], Any]) -> dict:
    """Set ``control.value`` to each of ``values`` in turn and time the output that ``read()`` returns.

    Returns ``{"latency_ms": [...], "median_ms": float, "changed": [...], "responds": bool}``:
    per change, the milliseconds until the assignment returned (observers ran) and whether
    ``read()`` differed from its value before the change. ``responds`` is True only when every
    change changed the output (an inert widget gives False). The control is left at its last value.
    """
    values = list(values)
    if not values:
        raise ValueError("respond: give at least one value to set")
    latency, changed = [], []
    before = read()
    for value in values:
        if value == control.value:
            raise ValueError(f"respond: {value!r} is the control's current value, so nothing would change. "
                             "Fix: give values that differ from each previous one")
        start = time.perf_counter()
        control.value = value
        after = read()
        latency.append(1000.0 * (time.perf_counter() - start))
        changed.append(after != before)
        before = after
    return {"latency_ms": latency, "median_ms": float(statistics.median(latency)), "changed": changed,
            "responds": all(changed)}
