"""tempo_analysis.notebook's headless executor and step cache, on small throwaway notebooks."""
import json
import os
import re

import nbformat
import numpy as np
import pandas as pd
import pytest

import notebook_exec as nbx

from tempo_analysis import notebook as nbk

pytestmark = pytest.mark.slow  # starts real kernels (a few seconds each)


def make_notebook(folder, name, *cells, params="N = 3\n"):
    """A notebook with a tagged parameters cell followed by the given code cells."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(params, metadata={"tags": ["parameters"]})]
    nb.cells += [nbformat.v4.new_code_cell(src) for src in cells]
    path = folder / f"{name}.ipynb"
    nbformat.write(nb, path)
    return path


def test_executes_with_widgets_params_summary_and_cwd(tmp_path):
    (tmp_path / "nbs").mkdir()
    path = make_notebook(
        tmp_path / "nbs",
        "ok",
        "import os\nprint('cwd=' + os.getcwd())\nprint('N=%d' % N)",
        # an Output widget used to crash nbclient when widget state is not stored
        "import ipywidgets as w\nout = w.Output()\nwith out:\n    print('inside')\nw.VBox([w.IntSlider(), out])",
        "from tempo_analysis.notebook import record_summary\nrecord_summary({'demo.n': N * 2})",
    )
    summary = tmp_path / "summary.json"
    run = nbx.execute_notebook(path, timeout=120, env={nbk.ENV_SUMMARY: str(summary)}, parameters={"N": 5})
    assert run.ok and run.status == "ok", run.errors
    text = "".join(o.get("text", "") for c in run.nb.cells for o in c.get("outputs", []))
    assert f"cwd={(tmp_path / 'nbs').resolve()}" in text
    assert "N=5" in text  # the injected cell overrode the default N = 3
    assert run.nb.cells[1].metadata["tags"] == ["injected-parameters"]
    widget_out = run.nb.cells[3].outputs
    assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in widget_out)
    assert "widgets" not in run.nb.metadata  # widget state not stored
    # the notebook's name came from the executor; the value from the injected parameter
    assert json.loads(summary.read_text())["notebooks"]["ok"]["values"] == {"demo.n": 10}


def test_error_output_is_reported_and_execution_stops(tmp_path):
    path = make_notebook(tmp_path, "bad", "x = 1", "1 / 0", "print('never')")
    run = nbx.execute_notebook(path, timeout=120)
    assert run.status == "error"
    assert run.errors == ["cell 2: ZeroDivisionError: division by zero"]
    assert run.nb.cells[3].get("outputs", []) == []


def test_traceback_on_stderr_counts_as_error(tmp_path):
    path = make_notebook(
        tmp_path,
        "swallowed",
        "import sys, traceback\ntry:\n    {}['k']\nexcept KeyError:\n    traceback.print_exc()",
        "import sys\nprint('a harmless warning', file=sys.stderr)",
    )
    run = nbx.execute_notebook(path, timeout=120)
    assert len(run.errors) == 1 and "Traceback on stderr: KeyError: 'k'" in run.errors[0]
    # the lesson tests also refuse any stderr output (not an error, but pink chatter in a lesson)
    chatter = nbx.stderr_outputs(run.nb)
    assert len(chatter) == 2 and chatter[1].endswith("a harmless warning"), chatter


def test_notebook_budget_times_out(tmp_path):
    done = tmp_path / "slept-to-the-end"
    path = make_notebook(tmp_path, "slow", f"import time\ntime.sleep(60)\nopen({str(done)!r}, 'w').close()")
    run = nbx.execute_notebook(path, timeout=8)
    assert run.timed_out and run.status == "timeout"
    assert not done.exists()   # the cell was stopped, not waited for


def test_clear_outputs_and_parameters_cell(tmp_path):
    path = make_notebook(tmp_path, "c", "print(1)")
    run = nbx.execute_notebook(path, timeout=120)
    assert run.nb.cells[1].outputs
    clean = nbx.clear_outputs(run.nb)
    assert all(c.outputs == [] and c.execution_count is None for c in clean.cells)
    assert nbx.parameters_cell_index(clean) == 0
    with pytest.raises(ValueError, match="tagged 'parameters'"):
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
        nbx.inject_parameters(nb, {"x": 2})


# -----------------------------------------------------------------------------
# cached()


def test_cached_is_plain_compute_without_env(monkeypatch):
    monkeypatch.delenv(nbk.ENV_CACHE, raising=False)
    calls = []
    for _ in range(2):
        assert nbk.cached("step", {"a": 1}, lambda: calls.append(1) or 7) == 7
    assert len(calls) == 2


def test_cached_round_trips_values_and_keys_on_params(tmp_path, monkeypatch):
    monkeypatch.setenv(nbk.ENV_CACHE, str(tmp_path))
    frame = pd.DataFrame({"word": ["cell", "mouse"], "score": [0.5, 0.25],
                          "t": pd.to_datetime(["2020-01-01", "2021-06-01"], utc=True)})  # fmt: skip
    value = (frame, np.arange(6, dtype=np.float32).reshape(2, 3), {"f1": 0.7, "curve": [1, 2]}, [np.ones(2)])
    calls = []

    def compute():
        calls.append(1)
        return value

    first = nbk.cached("train model", {"epochs": 2}, compute)
    again = nbk.cached("train model", {"epochs": 2}, compute)
    assert len(calls) == 1 and first is value
    assert isinstance(again, tuple) and len(again) == 4
    pd.testing.assert_frame_equal(again[0], frame)
    assert again[1].dtype == np.float32 and np.array_equal(again[1], value[1])
    assert again[2] == {"f1": 0.7, "curve": [1, 2]}
    assert isinstance(again[3], list) and np.array_equal(again[3][0], np.ones(2))
    nbk.cached("train model", {"epochs": 3}, compute)  # other parameters: computed again
    assert len(calls) == 2
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".")]  # no temp folders left


def test_cached_computes_afresh_after_a_change_to_the_library(tmp_path, monkeypatch):
    monkeypatch.setenv(nbk.ENV_CACHE, str(tmp_path))
    calls = []
    nbk.cached("step", {"a": 1}, lambda: calls.append(1) or 7)
    nbk.cached("step", {"a": 1}, lambda: calls.append(1) or 7)
    assert len(calls) == 1
    monkeypatch.setattr(nbk, "code_fingerprint", lambda: "other library code")
    assert nbk.cached("step", {"a": 1}, lambda: calls.append(1) or 8) == 8
    assert len(calls) == 2


def test_cached_keys_on_params_in_any_order_and_names_its_folder(tmp_path, monkeypatch):
    """The same parameters given in another order are the same step; the folder is the step's name made
    safe for a path, then 16 hex digits of the key; a cache folder that does not exist yet is made."""
    root = tmp_path / "a" / "b"
    monkeypatch.setenv(nbk.ENV_CACHE, str(root))
    calls = []
    nbk.cached("01_stream-tempoformer", {"a": 1, "b": 2}, lambda: calls.append(1) or 7)
    assert nbk.cached("01_stream-tempoformer", {"b": 2, "a": 1}, lambda: calls.append(1) or 8) == 7
    assert len(calls) == 1
    nbk.cached("train / my model!", {}, lambda: 1)
    nbk.cached("!!!", {}, lambda: 2)
    names = sorted(os.listdir(root))
    assert [re.sub(r"-[0-9a-f]{16}$", "-KEY", n) for n in names] == ["01_stream-tempoformer-KEY", "step-KEY",
                                                                      "train-my-model-KEY"]


def test_code_fingerprint_follows_the_sources():
    fp = nbk.code_fingerprint()
    assert len(fp) == 16 and fp == nbk.code_fingerprint()


def test_cached_pretrained_model(tmp_path, monkeypatch):
    import torch
    from transformers import BertConfig, BertModel

    monkeypatch.setenv(nbk.ENV_CACHE, str(tmp_path))
    config = BertConfig(vocab_size=50, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=16)  # fmt: skip

    def build():
        torch.manual_seed(0)
        return BertModel(config).eval()

    model = nbk.cached("bert", {"seed": 0}, build)
    loaded = nbk.cached("bert", {"seed": 0}, lambda: pytest.fail("should load from the cache"))
    assert type(loaded) is BertModel
    ids = torch.tensor([[1, 2, 3]])
    with torch.no_grad():
        assert torch.allclose(model(ids).last_hidden_state, loaded.eval()(ids).last_hidden_state)


def test_cached_refuses_unstorable_values(tmp_path, monkeypatch):
    monkeypatch.setenv(nbk.ENV_CACHE, str(tmp_path))
    with pytest.raises(ValueError, match="without pickle"):
        nbk.cached("obj", {}, lambda: object())
    store = lambda v, folder: (folder.mkdir(), (folder / "x.txt").write_text(str(v)))  # noqa: E731
    load = lambda folder: int((folder / "x.txt").read_text())  # noqa: E731
    assert nbk.cached("custom", {}, lambda: 41, save=store, load=load) == 41
    assert nbk.cached("custom", {}, lambda: 0, save=store, load=load) == 41

    class SavesOnly:                      # save_pretrained without a from_pretrained to read it back
        def save_pretrained(self, folder):
            raise AssertionError("must not be called")

    for unstorable in (SavesOnly(), pd.Series([1, 2]), np.array([{}], dtype=object)):
        with pytest.raises(ValueError, match="without pickle|allow_pickle"):
            nbk.cached(f"bad-{type(unstorable).__name__}", {}, lambda: unstorable)
    with pytest.raises(ValueError, match="keys must be strings"):
        nbk.cached("mixed keys", {}, lambda: {"a": np.ones(2), 1: np.ones(2)})


def test_cached_numbers_come_back_as_numbers(tmp_path, monkeypatch):
    monkeypatch.setenv(nbk.ENV_CACHE, str(tmp_path))
    nbk.cached("f", {}, lambda: np.float64(0.5))
    back = nbk.cached("f", {}, lambda: pytest.fail("should load from the cache"))
    assert back == 0.5 and type(back) is float


def test_cached_lists_and_dicts_that_mix_json_and_arrays_round_trip(tmp_path, monkeypatch):
    """A list or dict holding an array beside plain values is stored item by item, not as JSON; a dict
    with a key that is not a string is refused (JSON would turn 1 into "1")."""
    monkeypatch.setenv(nbk.ENV_CACHE, str(tmp_path))
    value = {"f1": 0.7, "curve": [0.5, np.arange(3)]}
    nbk.cached("mixed", {}, lambda: value)
    back = nbk.cached("mixed", {}, lambda: pytest.fail("should load from the cache"))
    assert back["f1"] == 0.7 and back["curve"][0] == 0.5 and np.array_equal(back["curve"][1], np.arange(3))
    with pytest.raises(ValueError, match="keys must be strings"):
        nbk.cached("int keys", {}, lambda: {1: 0.5})


def test_kernel_channel_polls_in_slices_so_a_missed_wakeup_is_not_a_hang():
    """A poll that sleeps through its whole timeout (a missed zmq wake-up) is re-polled soon."""
    import asyncio
    import time
    from queue import Empty

    from notebook_exec import _poll_in_slices

    class SleepyChannel:
        """get_msg(timeout) never wakes early: it sleeps the full timeout, then looks once."""

        def __init__(self):
            self.ready_at = time.monotonic() + 0.2

        async def get_msg(self, timeout=None):
            await asyncio.sleep(60 if timeout is None else timeout)
            if time.monotonic() >= self.ready_at:
                return {"msg_type": "execute_reply"}
            raise Empty

    channel = SleepyChannel()
    _poll_in_slices(channel, step=0.1)
    start = time.monotonic()
    assert asyncio.run(channel.get_msg(timeout=30))["msg_type"] == "execute_reply"
    assert time.monotonic() - start < 5  # not the 30 s the single long poll would sleep
    late = SleepyChannel()
    late.ready_at += 100
    _poll_in_slices(late, step=0.1)
    with pytest.raises(Empty):  # the caller's timeout still holds
        asyncio.run(late.get_msg(timeout=0.35))


def test_blank_figures_are_found():
    """A chart with nothing on its axes is flagged, unless an annotation says why; data or a table is not."""
    import plotly.graph_objects as go
    import plotly.io as pio

    zeros = go.Figure(go.Bar(x=["0", "1"], y=[0, 0]))
    noted = go.Figure(go.Bar(x=["0", "1"], y=[0, 0])).add_annotation(text="nothing spread", showarrow=False)
    drawn = go.Figure(go.Bar(x=["0", "1"], y=[0, 3]))
    typed = go.Figure(go.Scatter(x=np.arange(3.0), y=np.array([0.0, 0.5, 1.0])))   # typed arrays in the JSON
    table = go.Figure(go.Table(cells=dict(values=[["a", "b"]])))
    categories = go.Figure(go.Scatter(x=["2023-06-16 10:00:00"], y=["t000"], mode="markers"))   # points, no numbers
    nothing = go.Figure(go.Scatter(x=[], y=[]))
    cells = [nbformat.v4.new_code_cell("") for _ in range(7)]
    for cell, fig in zip(cells, (zeros, noted, drawn, typed, table, categories, nothing)):
        cell.outputs = [nbformat.v4.new_output("display_data",
                                               data={"application/vnd.plotly.v1+json": json.loads(pio.to_json(fig))})]
    nb = nbformat.v4.new_notebook(cells=cells)
    assert nbx.blank_figures(nb) == ["cell 0: (untitled)", "cell 6: (untitled)"]
