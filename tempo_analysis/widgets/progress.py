"""A progress bar that a what-if widget shows only while it trains or generates.

    busy = Busy("generating")
    box = W.VBox([controls, busy.bar, out])
    with busy.steps(2) as step:    # the bar appears, empty
        left = generate(...); step()
        right = generate(...); step()
    # the bar is hidden again, also when a step raised

Hidden with ``visibility: hidden`` (not ``display: none``), so the layout does not jump.
"""
from __future__ import annotations

import contextlib

import ipywidgets as W

__all__ = ["Busy"]


class Busy:
    """An IntProgress bar, hidden until :meth:`steps` is entered."""

    def __init__(self, description: str = "working"):
        self.bar = W.IntProgress(value=0, min=0, max=1, description=description, bar_style="info",
                                 layout=W.Layout(visibility="hidden"))

    @contextlib.contextmanager
    def steps(self, n: int):
        """Show the bar for ``n`` steps; yields a callable that advances it by one."""
        if n < 1:
            raise ValueError(f"Busy.steps: n={n}; give at least one step")
        self.bar.max, self.bar.value = n, 0
        self.bar.layout.visibility = "visible"

        def step():
            self.bar.value = min(self.bar.value + 1, n)

        try:
            yield step
        finally:
            self.bar.layout.visibility = "hidden"

    @property
    def shown(self) -> bool:
        return self.bar.layout.visibility == "visible"
