"""The what-if widget wires controls to the library: recompute on change, errors shown, regenerate."""
import networkx as nx
import numpy as np
import pytest

pytest.importorskip("ipywidgets")

from tempo_analysis.diffusion.analysis import ContextIndex  # noqa: E402
from tempo_analysis.widgets.diffusion import DiffusionExplorer  # noqa: E402


def _index(adopters, extra=None):
    """3 units on a path, 3 slices; 'cloud' points at 'server' in adopting (unit, slice) pairs.
    extra: {word: how many usages} added at unit a, slice 0."""
    extra = extra or {}
    words = ["cloud", "server", "rain", "f1", "f2", "f3", "f4", "f5", *extra]
    basis = np.eye(len(words) + 1, dtype=np.float32)
    rows = [(w, "a", 0, basis[words.index(w)]) for w, k in extra.items() for _ in range(k)]
    for t in range(3):
        for w_i, w in enumerate(words[1:8], start=1):
            rows += [(w, "a", t, basis[w_i])] * 6
        for u in ("a", "b", "c"):
            near = (adopters.get(u) is not None and adopters[u] <= t)
            rows.append(("cloud", u, t, basis[1] if near else basis[2]))
    return ContextIndex(words=words, word_id=np.array([words.index(r[0]) for r in rows]),
                        unit=np.array([r[1] for r in rows], dtype=object),
                        time=np.array([r[2] for r in rows], dtype=object),
                        doc_id=np.array([f"d{i}" for i in range(len(rows))], dtype=object),
                        vectors=np.stack([r[3] for r in rows]),
                        texts={f"d{i}": f"The {r[0]} text." for i, r in enumerate(rows)},
                        slices=[0, 1, 2], units=["a", "b", "c"])


def test_explorer_updates_and_regenerates():
    g = nx.path_graph(["a", "b", "c"])
    walk = {"a": 0, "b": 1, "c": 2}
    calls = []

    def regenerate(mode, speed):
        calls.append((mode, speed))
        return _index({"a": 0, "c": 1, "b": None}), g, {"mode": mode, "walk_share": 0.0}

    ex = DiffusionExplorer(_index(walk), g, "cloud", "server", n_neighbors=1, truth={"mode": "walk", "walk_share": 1.0},
                           regenerate=regenerate)
    assert ex.result.mode["mode"] == "walk" and ex.result.first == walk
    assert "recovered mode: walk" in ex.status.value and "planted mode: <b>walk" in ex.status.value
    ex.word.value = "zebra"  # unknown word: message, last result kept
    assert "never occurs" in ex.status.value and ex.result.first == walk
    ex.word.value = "<b>x</b>"  # the message shows what was typed, not markup
    assert "&lt;b&gt;x&lt;/b&gt;" in ex.status.value and "<b>x</b>" not in ex.status.value
    ex.word.value = "cloud"
    ex.mode.value, ex.speed.value = "flight", 3
    ex.regen_button.click()
    assert calls == [("flight", 3)]
    assert ex.result.mode["mode"] == "flight" and ex.result.first == {"a": 0, "b": None, "c": 1}
    assert "planted mode: <b>flight" in ex.status.value


def test_explorer_controls_open_at_the_shown_worlds_mode_and_speed():
    """Regenerating without touching the controls rebuilds the same kind of world (its planted mode,
    the generator's default speed), not walk at speed 2."""
    from tempo_analysis.world.config import SocialWorldConfig

    g = nx.path_graph(["a", "b", "c"])
    calls = []

    def regenerate(mode, speed):
        calls.append((mode, speed))
        return _index({"a": 0, "c": 1, "b": None}), g, {"mode": mode, "walk_share": 0.0}

    ex = DiffusionExplorer(_index({"a": 0, "b": 1, "c": 2}), g, "cloud", "server", n_neighbors=1,
                           truth={"mode": "flight", "walk_share": 0.0}, regenerate=regenerate)
    ex.regen_button.click()
    assert calls == [("flight", SocialWorldConfig().speed)]


def test_explorer_offers_words_used_five_times_and_still_takes_any_typed_word():
    g = nx.path_graph(["a", "b", "c"])
    ex = DiffusionExplorer(_index({"a": 0, "b": 1, "c": 2}, extra={"five": 5, "four": 4}), g, "cloud", "server")
    assert "five" in ex.word.options and "four" not in ex.word.options and ex.anchor.options == ex.word.options
    assert ex.word.ensure_option is False and ex.anchor.ensure_option is False   # a word off the list can be typed
    assert ex.n.value == 0 and ex.n.min == 0 and ex.result.n_neighbors >= 1        # 0 = auto, the analysis chooses
    ex.n.value = 2
    assert ex.result.n_neighbors == 2
    fixed = DiffusionExplorer(_index({"a": 0, "b": 1, "c": 2}), g, "cloud", "server", n_neighbors=3)
    assert fixed.n.value == 3 and fixed.result.n_neighbors == 3
