"""Drive every what-if widget of a notebook open in JupyterLab, as a person would, and time it.

Used by test_browser.py after a notebook has run (Run All) in the browser, with its kernel still
alive. For each `Move` of the notebook (the `MOVES` table below):

- the widget is found by what a person reads: the code cell that shows it (a snippet of the cell's
  source, which must match exactly one code cell) and the widget's description label (which must
  match exactly one control in that cell's output), never by DOM position;
- the new value is set through the rendered control: a mouse drag along a slider's track (released
  at a fraction of its width), an option picked in a dropdown, a toggle button or a checkbox clicked,
  text typed (and Enter or Tab pressed), a button clicked; then, for controls that act only through
  a button ("Regenerate", "Place it"), that button is clicked;
- the output the widget drives is read before and after: every plotly figure's data (tables' cells
  included) and title in
  the cell's output area, and the text of its outputs and HTML labels (the controls' own readouts
  are left out, so moving a slider's readout alone is not a change);
- the latency is the time from the last action to the last change of that output, once the kernel
  is idle again and the output has held still for `SETTLE_S` seconds. No change within the move's
  time limit: the widget is inert, and the move says so.

Widgets that train or generate (`heavy=True`) must show a progress indicator (an ipywidgets
progress bar, e.g. tqdm's) while they work; the move records whether one was seen.
"""
from __future__ import annotations

import re
import statistics
import time
from dataclasses import dataclass, field

import nbformat

# targets for the median latency of a notebook's moves (ms): re-score / re-plot, train / generate
TARGET_MS = {"light": 1000.0, "heavy": 3000.0}
# notebooks known to miss their latency target, and why: the test records the latency and whether
# the target was met, and names the reason in its warning (a timing never fails a test)
KNOWN_SLOW: dict = {}   # none at present: notebook 04's generating widgets answered in a median of 2.3 s in CI
# controls known to leave their output unchanged at the notebook's defaults, and why (the test then
# reports an expected failure, xfail, as long as no other control is inert)
KNOWN_INERT: dict = {}   # none at present: notebook 03's "read from" switch redraws a graded map (the anchor's
#                         probability), which differs between DCWE and its time-blind control
SETTLE_S = 0.5   # the output must hold still this long (and the kernel be idle) to count as updated
POLL_S = 0.05


@dataclass(frozen=True)
class Move:
    """One what-if control of a notebook and how a person changes it.

    cell: a snippet of the source of the code cell whose output shows the widget.
    label: the control's description (the label next to it; a button's or checkbox's text).
    kind: "slider" (drag), "dropdown" (pick), "toggle" (click a toggle button), "checkbox",
        "text" (type, Enter), "textarea" (type, Tab) or "button" (click).
    value: slider: where to release, as a fraction of the track (0 left .. 1 right); dropdown or
        toggle: the option's text, or None for the next option; text: what to type; else unused.
    then: a button to click after setting the value (controls that act only through a button).
    heavy: the widget trains or generates (target 3 s, progress indicator required).
    """

    cell: str
    label: str
    kind: str
    value: object = None
    then: str | None = None
    heavy: bool = False
    timeout_s: float = 30.0

    @property
    def name(self) -> str:
        return f"{self.label!r} ({self.kind}{' + ' + repr(self.then) if self.then else ''})"


MOVES: dict[str, list[Move]] = {
    "00_overview": [
        Move("show_gaps", "time_signal", "slider", 0.1),
        Move("show_diffusion", "mode", "toggle"),
        Move("show_diffusion", "speed", "slider", 0.9),
    ],
    "01_stream_classification": [
        Move("display(gap_sweep_panel(", "post", "dropdown"),
        Move("display(gap_sweep_panel(", "gap (s)", "slider", 0.8),
        Move("display(timeline_viewer(", "timeline", "dropdown"),
        Move("display(what_if_panel(", "timeline", "dropdown"),
        Move("display(what_if_panel(", "post", "dropdown"),
        Move("display(what_if_panel(", "gap (s)", "slider", 0.05),
        Move("display(what_if_panel(", "window", "slider", 0.05),
        Move("display(what_if_panel(", "text", "textarea", "Out of nowhere, everything changed."),
        Move("display(what_if_panel(", "reset post", "button"),
    ],
    "02_semantic_change": [
        # on the planted world (the notebook's default data): "mouse" is a target word
        Move("word_explorer(main", "word", "dropdown", "mouse"),
        Move("scoring_whatif(main", "word", "dropdown"),
        Move("scoring_whatif(main", "scorer", "dropdown"),
        Move("scoring_whatif(main", "z-score", "checkbox"),
        Move("scoring_whatif(main", "h (layers)", "slider", 0.0),
        Move("scoring_whatif(main", "n (usages)", "slider", 0.3),
        Move("sentence_probe(main", "sentence", "text", "The mouse ran past my cell phone.", then="Place it"),
        Move("sentence_probe(main", "run as", "dropdown", then="Place it"),
        Move("sentence_probe(main", "word", "dropdown", "mouse", then="Place it"),
    ],
    "03_social_diffusion": [
        Move("model_choice = widgets.ToggleButtons", "read from", "toggle", timeout_s=10),
    ],
    "04_future_text": [
        Move("generation_explorer(", "Regenerate", "button", heavy=True, timeout_s=120),
        Move("generation_explorer(", "target year", "dropdown", then="Regenerate", heavy=True, timeout_s=120),
        Move("generation_explorer(", "bias α", "slider", 0.6, then="Regenerate", heavy=True, timeout_s=120),
        Move("generation_explorer(", "seed", "text", "7", then="Regenerate", heavy=True, timeout_s=120),
        Move("trend_injector(", "Inject trend", "button", heavy=True, timeout_s=120),
        Move("trend_injector(", "word X", "text", "lexicon", then="Inject trend", heavy=True, timeout_s=120),
        Move("trend_injector(", "rise ×", "slider", 1.0, then="Inject trend", heavy=True, timeout_s=120),
        Move("trend_injector(", "last years", "slider", 0.0, then="Inject trend", heavy=True, timeout_s=120),
    ],
    "05_real_text": [
        Move("usage_viewer(", "word", "dropdown"),
        Move("usage_viewer(", "sample seed", "text", "7"),
        Move("scoring_whatif(rankers", "word", "dropdown"),
        Move("scoring_whatif(rankers", "h (layers)", "slider", 0.0),
        Move("scoring_whatif(rankers", "scorer", "dropdown"),
    ],
}


@dataclass
class MoveResult:
    move: Move
    changed: bool
    latency_ms: float | None
    progress_seen: bool = False
    note: str = ""

    def line(self) -> str:
        ms = "-" if self.latency_ms is None else f"{self.latency_ms:.0f} ms"
        prog = " (progress shown)" if self.progress_seen else ""
        return f"{self.move.name}: {'changed' if self.changed else 'NO CHANGE'} {ms}{prog} {self.note}".strip()


@dataclass
class NotebookDrive:
    notebook: str
    results: list[MoveResult] = field(default_factory=list)

    @property
    def responds(self) -> bool:
        return bool(self.results) and all(r.changed for r in self.results)

    def latencies(self, heavy: bool | None = None) -> list[float]:
        return [r.latency_ms for r in self.results
                if r.latency_ms is not None and (heavy is None or r.move.heavy == heavy)]

    def median_ms(self, heavy: bool | None = None) -> float | None:
        lat = self.latencies(heavy)
        return float(statistics.median(lat)) if lat else None

    def report(self) -> str:
        return "\n".join(f"  {r.line()}" for r in self.results)


# -----------------------------------------------------------------------------
# in the page

_CELL = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell"

# the output a widget drives, as one string: plotly figures' data + title, and the text of the cell's
# outputs without its controls (a slider's readout, a dropdown's options, a button's text)
_SIGNATURE_JS = r"""
(cell) => {
  const area = cell.querySelector('.jp-Cell-outputArea') || cell;
  const figs = [...area.querySelectorAll('.js-plotly-plot')].map(gd => {
    let data = '';
    try { data = JSON.stringify((gd.data || []).map(t => {
      const c = {}; for (const k of ['x', 'y', 'z', 'text', 'marker', 'name', 'values', 'labels', 'customdata', 'header', 'cells'])
        if (t[k] !== undefined) c[k] = ArrayBuffer.isView(t[k]) ? Array.from(t[k]) : t[k];
      return c; })); } catch (e) { data = String(e); }
    const title = gd.layout && gd.layout.title ? (gd.layout.title.text || gd.layout.title) : '';
    return data + '|' + JSON.stringify(title);
  });
  const clone = area.cloneNode(true);
  clone.querySelectorAll('.js-plotly-plot, .widget-slider, .widget-dropdown, .widget-toggle-buttons, '
      + '.widget-text, .widget-textarea, .widget-checkbox, .widget-combobox, button, .widget-hprogress, '
      + 'select, input, textarea, .jp-InputPrompt, .jp-OutputPrompt').forEach(e => e.remove());
  return figs.join('\n') + '\n--\n' + clone.textContent.replace(/\s+/g, ' ').trim();
}
"""

# mark the control labelled `label` inside the cell's output with data-ui-move; return how many matched
_MARK_JS = r"""
(cell, [label, token]) => {
  const area = cell.querySelector('.jp-Cell-outputArea') || cell;
  const norm = s => (s || '').replace(/\s+/g, ' ').trim();
  const found = new Set();
  for (const l of area.querySelectorAll('.widget-label, .widget-label-basic')) {
    if (norm(l.textContent) === label || norm(l.getAttribute('title')) === label) {
      const box = l.closest('.widget-checkbox') || l.parentElement;
      found.add(box);
    }
  }
  for (const b of area.querySelectorAll('button.jupyter-button')) {
    if (norm(b.textContent) === label && !b.closest('.widget-toggle-buttons')) found.add(b);
  }
  [...found].forEach(e => e.setAttribute('data-ui-move', token));
  return found.size;
}
"""

# what a control shows: its readout, text, selected option, checked state, active toggle
_SHOWN_JS = r"""
(el) => el.textContent.replace(/\s+/g, ' ').trim() + '|' + [...el.querySelectorAll('input, select, textarea')]
  .map(e => e.type === 'checkbox' ? String(e.checked) : e.value).join('|') + '|'
  + [...el.querySelectorAll('.mod-active')].map(e => e.textContent).join('|')
"""

_BUSY_JS = r"""
(cell) => [...cell.querySelectorAll('.widget-hprogress, .widget-vprogress, progress')]
  .some(e => e.offsetParent !== null && getComputedStyle(e).visibility !== 'hidden')
"""


def code_cell_index(nb_path, snippet: str) -> int:
    """Index (among all cells, as JupyterLab lays them out) of the one code cell containing `snippet`."""
    nb = nbformat.read(nb_path, as_version=4)
    hits = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and snippet in c.source]
    if len(hits) != 1:
        raise AssertionError(f"{nb_path.name}: {len(hits)} code cells contain {snippet!r}; the widget's "
                             "cell must be found by a snippet of its source that only it holds")
    return hits[0]


def _kernel_idle(page) -> bool:
    text = page.locator("#jp-main-statusbar").inner_text()
    return bool(re.search(r"\|\s*Idle\b", text))


def _mark(cell, label: str, token: str):
    """The control labelled `label` in the cell's output (exactly one), as a locator."""
    count = cell.evaluate(_MARK_JS, [label, token])
    if count != 1:
        raise AssertionError(f"{count} controls labelled {label!r} in the cell's output (want exactly one)")
    return cell.locator(f"[data-ui-move='{token}']")


def _drag_slider(page, control, fraction: float) -> float:
    """Press the slider's handle and release it at `fraction` of the track's width; returns when."""
    track = control.locator(".noUi-target, .slider").first
    handle = control.locator(".noUi-handle, .ui-slider-handle").first
    handle.scroll_into_view_if_needed()
    t, h = track.bounding_box(), handle.bounding_box()
    if t is None or h is None:
        raise AssertionError("slider track or handle not rendered")
    y = h["y"] + h["height"] / 2
    page.mouse.move(h["x"] + h["width"] / 2, y)
    page.mouse.down()
    target = t["x"] + max(0.0, min(1.0, fraction)) * t["width"]
    page.mouse.move(target, y, steps=8)
    committed = time.perf_counter()
    page.mouse.up()
    return committed


def _set(page, control, move: Move) -> float:
    """Set the control as a person would; returns the time (perf_counter) of the committing action."""
    kind = move.kind
    if kind == "slider":
        return _drag_slider(page, control, float(move.value))
    if kind == "dropdown":
        select = control.locator("select")
        # the options' text from the DOM: an unopened <select> renders no option, whose innerText is ""
        options = select.evaluate("s => Array.from(s.options).map(o => o.text)")
        current = select.evaluate("s => s.options[s.selectedIndex] ? s.options[s.selectedIndex].text : ''")
        if move.value is None:
            others = [o for o in options if o != current]
            if not others:
                raise AssertionError(f"dropdown {move.label!r} has no other option")
            label = options[(options.index(current) + 1) % len(options)] if current in options else others[0]
        else:
            label = str(move.value)
        committed = time.perf_counter()
        select.select_option(label=label)
        return committed
    if kind == "toggle":
        buttons = control.locator("button")
        texts = [t.strip() for t in buttons.all_inner_texts()]
        classes = [buttons.nth(i).get_attribute("class") or "" for i in range(buttons.count())]
        if move.value is None:
            picks = [i for i, c in enumerate(classes) if "mod-active" not in c]
        else:
            picks = [texts.index(str(move.value))]
        if not picks:
            raise AssertionError(f"toggle {move.label!r}: no button to switch to ({texts})")
        committed = time.perf_counter()
        buttons.nth(picks[0]).click()
        return committed
    if kind == "checkbox":
        committed = time.perf_counter()
        control.locator("input[type=checkbox]").click()
        return committed
    if kind in ("text", "textarea"):
        box = control.locator("textarea, input").first
        box.click()
        box.fill(str(move.value))
        committed = time.perf_counter()
        if kind == "text":
            page.keyboard.press("Enter")
        page.keyboard.press("Tab")  # and leave the box: a number box sends its value on blur
        return committed
    if kind == "button":
        committed = time.perf_counter()
        control.click()
        return committed
    raise ValueError(f"unknown move kind {kind!r}")


def drive_move(page, cell, move: Move, token: str) -> MoveResult:
    """Set one control as a person would; wait for the output it drives to change and settle."""
    control = _mark(cell, move.label, token)
    control.scroll_into_view_if_needed()
    button = _mark(cell, move.then, token + "-then") if move.then else None
    before = cell.evaluate(_SIGNATURE_JS)
    shown = control.evaluate(_SHOWN_JS)
    start = _set(page, control, move)
    if move.kind != "button":  # the control itself shows the new value (its view updates at once)
        for _ in range(40):
            if control.evaluate(_SHOWN_JS) != shown:
                break
            page.wait_for_timeout(50)
        else:
            return MoveResult(move, False, None, note=f"(the control still shows {shown!r}: no new value set)")
    if button is not None:
        start = time.perf_counter()
        button.click()
    last, last_change, progress = before, None, False
    while True:
        now = time.perf_counter()
        sig = cell.evaluate(_SIGNATURE_JS)
        if move.heavy and not progress:
            progress = cell.evaluate(_BUSY_JS)
        if sig != last:
            last, last_change = sig, now
        elif last_change is not None and now - last_change >= SETTLE_S and _kernel_idle(page):
            return MoveResult(move, True, 1000.0 * (last_change - start), progress)
        if now - start > move.timeout_s:
            if last_change is not None:  # still changing at the limit: count it, at the limit
                return MoveResult(move, True, 1000.0 * (last_change - start), progress, "(still changing)")
            return MoveResult(move, False, None, progress, f"(no change within {move.timeout_s:.0f} s)")
        page.wait_for_timeout(int(POLL_S * 1000))


def drive_notebook(page, nb_path, moves: list[Move]) -> NotebookDrive:
    """Drive each move in order on the open notebook; a move that cannot be made is an inert result."""
    drive = NotebookDrive(nb_path.stem)
    cells = page.locator(_CELL)
    for i, move in enumerate(moves):
        cell = cells.nth(code_cell_index(nb_path, move.cell))
        try:
            drive.results.append(drive_move(page, cell, move, f"m{i}"))
        except AssertionError as err:
            drive.results.append(MoveResult(move, False, None, note=f"({err})"))
    return drive
