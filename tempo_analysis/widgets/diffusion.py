"""What-if widgets for notebook 03: pick word / anchor / N, or regenerate the planted world with
another diffusion mode or speed, and watch the network map and walk/flight bars change.

All computation is library code (``tempo_analysis.diffusion.report.analyze``, the figure
functions); this module only wires ipywidgets to it.
"""
from __future__ import annotations

import html

import ipywidgets as w
from IPython.display import display

from tempo_analysis.diffusion.report import analyze
from tempo_analysis.figures.diffusion import graph_layout, network_map, walk_flight_bars
from tempo_analysis.world.config import SocialWorldConfig


def _summary(result, truth=None) -> str:
    m = result.mode
    share = m.get("walk_share")
    txt = (f"<b>recovered mode: {m['mode']}</b> — walk share {share:.2f} vs {m['expected_walk_share']:.2f} "
           f"expected if arrivals were random ({m['new_units']} newly reached units; N = {result.n_neighbors})"
           if m["mode"] else f"<b>mode cannot be told</b>: {m.get('note', '')}")
    if truth is not None:
        txt += f"<br>planted mode: <b>{truth['mode']}</b> (planted walk share {truth.get('walk_share', float('nan')):.2f})"
    return txt


class DiffusionExplorer:
    """Controls + map + bars over one contextual index; `regenerate(mode, speed)` rebuilds the world.

    regenerate: optional callable (mode, speed) -> (index, graph, truth), e.g.
    ``tempo_analysis.diffusion.report.world_regenerator(mapper.model_, mapper.tokenizer_)`` (the
    planted world regenerated with another mode or speed, read by a mapper's trained DCWE).
    """

    def __init__(self, index, graph, word: str, anchor: str, n_neighbors="auto", truth=None, regenerate=None,
                 mode: str | None = None, speed: int | None = None):
        # the world controls open at the shown world's settings (its planted mode, the generator's
        # speed), so "regenerate world" without touching them rebuilds the same kind of world
        mode = mode or (truth or {}).get("mode") or "walk"
        speed = SocialWorldConfig().speed if speed is None else speed
        self.index, self.graph, self.truth, self.regenerate = index, graph, truth, regenerate
        self.layout = graph_layout(graph)
        words = sorted(index.counts().loc[lambda s: s >= 5].index)
        self.word = w.Combobox(value=word, options=words, description="word", ensure_option=False)
        self.anchor = w.Combobox(value=anchor, options=words, description="anchor", ensure_option=False)
        self.n = w.IntSlider(value=0 if n_neighbors == "auto" else int(n_neighbors), min=0, max=100,
                             description="N (0=auto)", continuous_update=False)
        self.mode = w.ToggleButtons(options=["walk", "flight"], value=mode, description="world mode")
        self.speed = w.IntSlider(value=speed, min=1, max=5, description="speed", continuous_update=False)
        self.regen_button = w.Button(description="regenerate world", button_style="warning",
                                     disabled=regenerate is None)
        self.status = w.HTML()
        self.map_out, self.bars_out = w.Output(), w.Output()
        self.result = None
        for ctl in (self.word, self.anchor, self.n):
            ctl.observe(lambda _change: self.update(), names="value")
        self.regen_button.on_click(lambda _b: self.regenerate_world())
        controls = [w.HBox([self.word, self.anchor, self.n])]
        if regenerate is not None:
            controls.append(w.HBox([self.mode, self.speed, self.regen_button]))
        self.box = w.VBox(controls + [self.status, self.map_out, self.bars_out])
        self.update()

    def update(self) -> None:
        """Recompute r-hat, the map and walk/flight for the current controls."""
        n = "auto" if self.n.value == 0 else self.n.value
        try:
            self.result = analyze(self.index, self.graph, self.word.value, self.anchor.value, n_neighbors=n)
        except ValueError as err:   # unknown word etc.: say so, keep the last figures
            self.status.value = f"<span style='color:#b00'>{html.escape(str(err))}</span>"
            return
        self.status.value = _summary(self.result, self.truth)
        fig_map = network_map(self.graph, self.result.rhat, self.index.slices, n_neighbors=self.result.n_neighbors,
                              layout=self.layout, word=self.result.word, anchor=self.result.anchor,
                              first=self.result.first)
        fig_bars = walk_flight_bars(self.result.walk_flight)
        for out, fig in ((self.map_out, fig_map), (self.bars_out, fig_bars)):
            out.clear_output(wait=True)
            with out:
                fig.show()

    def regenerate_world(self) -> None:
        """Rebuild the planted world with the chosen mode/speed, re-encode it, refresh everything."""
        self.status.value = "regenerating the world and re-encoding it with the trained model ..."
        self.index, self.graph, self.truth = self.regenerate(self.mode.value, self.speed.value)
        self.update()

    def _ipython_display_(self):
        display(self.box)
