"""Notebook 01's defaults: the parameters cell agrees with the library, and the recorded ablation
rows were made at them. That TempoFormer reaches macro-F1 >= 0.8 with them is checked on the
notebook's own run (tests/notebooks/test_summary.py), which trains that very model."""

import json
from pathlib import Path

import pytest

from tempo_analysis.data.specs import load_timelines
from tempo_analysis.stream.experiment import notebook_defaults, recorded_ablation
from tempo_analysis.stream.time_effect import time_blind

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
    assert p["RUN_ABLATIONS"] == d["run_ablations"] and p["MAX_TIMELINES"] is None


def test_recorded_ablations_match_the_notebook_settings():
    """The ablation rows notebook 01 shows by default were recorded at its current settings."""
    d = notebook_defaults()
    world = load_timelines(d["data"])
    control = time_blind(d["tempoformer"])["ablation"]  # trained in the notebook itself
    assert control in d["ablations"]
    for ab in [a for a in d["ablations"] if a != control]:
        settings = dict(d["tempoformer"], ablation=ab)
        rec = recorded_ablation(ab, settings=settings, data=d["data"], fold=d["fold"], folds=d["folds"])
        assert rec is not None, (f"docs/results/stream/world_ablation_{ab}.json is missing or stale; rerun "
                                 "the command in notebook 01's ablation section")
        # made on the committed world (a regenerated world makes every recorded number stale)
        raw = json.loads((Path(rec["source"])).read_text())
        assert (raw["timelines"], raw["posts"]) == (len(world.timeline_ids), len(world)), (
            f"{rec['source']} was recorded on another world; rerun the command in notebook 01's "
            "ablation section")
        runs = raw["by_window"][str(settings["window"])]["runs"]
        assert rec["summary"]["macro_f1"]["mean"] == pytest.approx(runs[0]["macro_f1"])
    # every recorded world run was made on the committed world, or says that it is superseded
    for path in sorted((NOTEBOOK.parents[1] / "docs" / "results" / "stream").glob("world_*.json")):
        raw = json.loads(path.read_text())
        assert "superseded" in raw or (raw.get("timelines"), raw.get("posts")) == (
            len(world.timeline_ids), len(world)), f"{path.name} was recorded on another world"


def test_recorded_ablation_rejects_other_settings(tmp_path):
    d = notebook_defaults()
    settings = dict(d["tempoformer"], ablation="vanilla_mha")
    run = {"fold": 0, "seed": 0, "macro_f1": 0.5}
    rec = {"data": "world", "ablation": "vanilla_mha", "folds": 5, "settings": dict(settings),
           "by_window": {str(settings["window"]): {"runs": [run], "summary": {"macro_f1": {"mean": 0.5}}}}}
    (tmp_path / "world_ablation_vanilla_mha.json").write_text(json.dumps(rec))
    assert recorded_ablation("vanilla_mha", settings=settings, folder=tmp_path)["summary"]["macro_f1"]["mean"] == 0.5
    assert recorded_ablation("vanilla_mha", settings=dict(settings, epochs=9), folder=tmp_path) is None
    assert recorded_ablation("vanilla_mha", settings=dict(settings, window=7), folder=tmp_path) is None
    assert recorded_ablation("vanilla_mha", settings=settings, max_timelines=10, folder=tmp_path) is None
    assert recorded_ablation("no_s11", settings=settings, folder=tmp_path) is None
    # a record made on a world of another size, or marked superseded, is never shown
    rec["posts"] = 2078
    (tmp_path / "world_ablation_vanilla_mha.json").write_text(json.dumps(rec))
    assert recorded_ablation("vanilla_mha", settings=settings, folder=tmp_path, n_posts=2078) is not None
    assert recorded_ablation("vanilla_mha", settings=settings, folder=tmp_path, n_posts=2128) is None
    rec["superseded"] = "made on an older world"
    (tmp_path / "world_ablation_vanilla_mha.json").write_text(json.dumps(rec))
    assert recorded_ablation("vanilla_mha", settings=settings, folder=tmp_path) is None
