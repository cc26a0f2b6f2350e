"""tempo_analysis.widgets.drive: set a control as a person would and see whether its output moves."""
from __future__ import annotations

import ipywidgets as W
import pytest

from tempo_analysis.widgets.drive import find_widget, respond


def _panel(live: bool = True):
    slider = W.FloatLogSlider(base=10, min=0, max=5, value=10.0, description="gap (s)")
    out = W.HTML(value="p = 0.10")
    if live:
        slider.observe(lambda change: setattr(out, "value", f"p = {change['new'] / 1e5:.2f}"), names="value")
    return W.VBox([W.HBox([W.Dropdown(options=["a"], description="post"), slider]), out]), slider, out


def test_a_live_control_responds_every_time():
    panel, slider, out = _panel()
    assert find_widget(panel, description="gap (s)") is slider
    assert find_widget(panel, kind=W.HTML) is out
    got = respond(slider, [3600.0, 86400.0, 10.0], read=lambda: out.value)
    assert got["responds"] and got["changed"] == [True, True, True]
    assert len(got["latency_ms"]) == 3 and all(ms >= 0 for ms in got["latency_ms"])
    assert got["median_ms"] == sorted(got["latency_ms"])[1]
    assert slider.value == 10.0 and out.value == "p = 0.00"


def test_find_widget_searches_depth_first():
    inner, outer = W.HTML(value="inner"), W.HTML(value="outer")
    root = W.VBox([W.HBox([W.Dropdown(options=["a"], description="post"), inner]), outer])
    assert find_widget(root, kind=W.HTML) is inner          # the first in reading order, not the shallowest


def test_a_control_that_stops_responding_is_reported():
    slider = W.FloatLogSlider(base=10, min=0, max=5, value=10.0, description="gap (s)")
    out = W.HTML(value="p = 0")
    slider.observe(lambda change: setattr(out, "value", f"p = {min(change['new'], 3600.0):.0f}"), names="value")
    got = respond(slider, [3600.0, 86400.0], read=lambda: out.value)   # the second move changes nothing
    assert got["changed"] == [True, False] and not got["responds"]


def test_an_inert_control_is_reported():
    panel, slider, out = _panel(live=False)
    got = respond(slider, [3600.0, 86400.0], read=lambda: out.value)
    assert not got["responds"] and got["changed"] == [False, False]


def test_bad_requests_name_the_fix():
    panel, slider, out = _panel()
    with pytest.raises(ValueError, match="current value"):
        respond(slider, [10.0], read=lambda: out.value)
    with pytest.raises(ValueError, match="at least one"):
        respond(slider, [], read=lambda: out.value)
    with pytest.raises(ValueError, match="description='window'"):
        find_widget(panel, description="window")


def test_busy_bar_shows_only_while_working_and_counts_steps():
    from tempo_analysis.widgets.progress import Busy

    busy = Busy("generating")
    assert not busy.shown and (busy.bar.value, busy.bar.min, busy.bar.max) == (0, 0, 1)
    assert busy.bar.description == "generating"
    with busy.steps(1) as step:                               # one step is enough
        step()
        step()                                                # a step too many stays at the end
        assert (busy.bar.value, busy.bar.max) == (1, 1)
    seen = []
    with pytest.raises(RuntimeError):
        with busy.steps(2) as step:
            seen.append((busy.shown, busy.bar.value, busy.bar.max))
            step()
            seen.append((busy.shown, busy.bar.value))
            raise RuntimeError("a step failed")
    assert seen == [(True, 0, 2), (True, 1)]
    assert not busy.shown  # hidden again, also after an error
    with pytest.raises(ValueError, match="at least one step"):
        with busy.steps(0):
            pass
