"""Notebook 00's helpers: its key numbers (tempo_analysis.overview) and its what-if controls
(tempo_analysis.widgets.overview), without running the notebook."""
import math

import pandas as pd
import pytest

from tempo_analysis.overview import key_numbers
from tempo_analysis.widgets.overview import diffusion_controls, gap_controls, what_if
from tempo_analysis.world import SocialWorldConfig, StreamWorldConfig


def test_key_numbers_name_every_fact_and_the_median_gap_of_each_label():
    gaps = pd.Series({"IE": 0.03, "IS": 26.1, "O": 0.07})
    numbers = key_numbers({"timelines": 120, "mode": "walk"}, gaps)
    assert numbers == {"world.timelines": 120, "world.mode": "walk", "world.median_gap_h.O": 0.07,
                       "world.median_gap_h.IS": 26.1, "world.median_gap_h.IE": 0.03}
    assert list(numbers)[2:] == ["world.median_gap_h.O", "world.median_gap_h.IS", "world.median_gap_h.IE"]
    assert all(type(v) is float for k, v in numbers.items() if "median_gap" in k)
    missing = key_numbers({}, pd.Series({"O": 1.0}))
    assert missing["world.median_gap_h.O"] == 1.0 and math.isnan(missing["world.median_gap_h.IS"])


def test_gap_controls_start_at_the_worlds_knobs():
    stream = StreamWorldConfig(time_signal=0.6, time_switch_rate=0.1)
    controls = gap_controls(stream)
    assert list(controls) == ["time_signal", "time_switch_rate"]
    assert [c.description for c in controls.values()] == ["time_signal", "time_switch_rate"]
    assert (controls["time_signal"].value, controls["time_switch_rate"].value) == (0.6, 0.1)
    assert (controls["time_signal"].min, controls["time_signal"].max) == (0.0, 1.0)
    assert controls["time_switch_rate"].max == pytest.approx(0.3)
    assert not any(c.continuous_update for c in controls.values())      # one redraw per release, not per pixel


def test_diffusion_controls_take_the_worlds_speed_and_the_given_mode():
    social = SocialWorldConfig(mode="walk", speed=3)
    controls = diffusion_controls(social)
    assert (controls["mode"].value, controls["speed"].value) == ("walk", 3)
    assert list(controls["mode"].options) == ["walk", "flight"]
    assert diffusion_controls(social, mode="flight")["mode"].value == "flight"
    assert (controls["speed"].min, controls["speed"].max) == (1, 6) and not controls["speed"].continuous_update


def test_what_if_redraws_the_output_whenever_a_control_moves():
    controls = gap_controls(StreamWorldConfig(time_signal=0.8, time_switch_rate=0.1))
    seen = []
    box = what_if(lambda time_signal, time_switch_rate: seen.append((time_signal, time_switch_rate)), controls)
    row, out = box.children
    assert list(row.children) == list(controls.values())
    assert seen == [(0.8, 0.1)]                                          # drawn once at the start
    controls["time_signal"].value = 0.2
    assert seen[-1] == (0.2, 0.1) and len(seen) == 2
