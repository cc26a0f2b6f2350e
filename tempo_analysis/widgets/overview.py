"""What-if controls for the overview notebook (00_overview): the world generator's knobs as widgets.

Thin ipywidgets: the notebook's own function regenerates a part of the world from the knobs' values
and draws it (``tempo_analysis.figures.overview``); :func:`what_if` redraws it at every change.

- ``gap_controls``: ``time_signal`` and ``time_switch_rate``, the two knobs that put time into the
  stream labels;
- ``diffusion_controls``: the spread's ``mode`` (walk or flight) and ``speed``;
- ``what_if``: the controls in a row above the output they drive.
"""
from __future__ import annotations

import ipywidgets as W


def gap_controls(stream) -> dict:
    """Sliders ``{"time_signal", "time_switch_rate"}`` at the values of ``stream`` (a
    :class:`~tempo_analysis.world.config.StreamWorldConfig`), moved by whole steps of 0.1 and 0.02."""
    return {
        "time_signal": W.FloatSlider(value=stream.time_signal, min=0.0, max=1.0, step=0.1, description="time_signal",
                                     continuous_update=False),
        "time_switch_rate": W.FloatSlider(value=stream.time_switch_rate, min=0.0, max=0.3, step=0.02,
                                          description="time_switch_rate", continuous_update=False,
                                          style={"description_width": "initial"}),
    }


def diffusion_controls(social, mode: str | None = None) -> dict:
    """``{"mode": walk/flight toggle, "speed": new adopters per slice, 1-6}`` at the values of ``social``
    (a :class:`~tempo_analysis.world.config.SocialWorldConfig`); ``mode`` overrides its mode."""
    return {
        "mode": W.ToggleButtons(options=["walk", "flight"], value=mode or social.mode, description="mode"),
        "speed": W.IntSlider(value=social.speed, min=1, max=6, description="speed", continuous_update=False),
    }


def what_if(show, controls: dict) -> W.VBox:
    """``controls`` (name -> widget) in a row above the output of ``show(**values)``, which runs at once
    and again whenever a control changes (``ipywidgets.interactive_output``)."""
    out = W.interactive_output(show, controls)
    return W.VBox([W.HBox(list(controls.values())), out])
