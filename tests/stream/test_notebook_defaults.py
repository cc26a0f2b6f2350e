"""Notebook 01's defaults: the parameters cell agrees with the library, and TempoFormer reaches
macro-F1 >= 0.8 on the planted world with them (the number the notebook reports)."""

from pathlib import Path

import pytest

from tempo_analysis.stream.pipeline import notebook_defaults, notebook_tempoformer

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "01_stream_classification.py"


def parameters_cell() -> dict:
    text = NOTEBOOK.read_text()
    start = text.index('# %% tags=["parameters"]')
    end = text.index("# %%", start + 10)
    values: dict = {}
    exec(text[start:end], {}, values)  # noqa: S102 - our own notebook's literal assignments
    return values


def test_parameters_cell_matches_notebook_defaults():
    p, d = parameters_cell(), notebook_defaults()
    assert p["DATA"] == d["data"] and p["SEED"] == d["seed"] == d["tempoformer"]["seed"]
    assert p["WINDOW"] == d["window"] == d["tempoformer"]["window"]
    assert p["EPOCHS"] == d["tempoformer"]["epochs"]
    assert p["BASELINES"] == d["baselines"] and p["ABLATIONS"] == d["ablations"]
    assert p["ABLATION_EPOCHS"] == d["ablation_epochs"] and p["MAX_TIMELINES"] is None
    assert p["ABLATION_TRAIN_TIMELINES"] == d["ablation_train_timelines"]


@pytest.mark.slow
def test_tempoformer_reaches_08_macro_f1_on_the_planted_world():
    out = notebook_tempoformer()
    s = out["summary"]
    assert out["runs"][0]["n_test"] > 200
    assert s["macro_f1"]["mean"] >= 0.8, f"macro-F1 {s['macro_f1']['mean']:.3f} per class {s['f1']}"
