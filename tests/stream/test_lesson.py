"""Lesson 01's steps (tempo_analysis.stream.lesson) on a small seeded subset of the planted world:
the split and settings, the memoised trainings keyed by the data's contents, and the numbers recorded."""
from __future__ import annotations

import pytest

from tempo_analysis import notebook
from tempo_analysis.stream import lesson
from tempo_analysis.stream.time_effect import CONTROL


@pytest.fixture(scope="module")
def small():
    return lesson.load_lesson("world", window=2, epochs=1, max_timelines=15)


def test_load_lesson_splits_by_timeline_and_keys_on_the_contents(small):
    train, dev, test = small["train"], small["dev"], small["test"]
    assert not set(train.timeline_ids) & set(test.timeline_ids) and not set(dev.timeline_ids) & set(test.timeline_ids)
    assert len(train) + len(dev) + len(test) == len(small["timelines"])
    assert small["settings"]["window"] == 2 and small["settings"]["epochs"] == 1
    assert small["params"]["data_fingerprint"] == small["timelines"].fingerprint()
    assert set(small["kinds"].unique()) <= {"none", "text", "time"}
    assert small["settings"]["model_kwargs"]["time_unit"] == 1.0
    assert lesson.load_lesson("world", time_unit="h", max_timelines=15)["settings"]["model_kwargs"]["time_unit"] == 3600.0


def test_fit_lesson_caches_tempoformer_and_its_time_blind_control_apart(small, monkeypatch):
    keys = {}

    def fake_cached(name, params, fit, **kw):
        keys[name] = params
        return name

    monkeypatch.setattr(notebook, "cached", fake_cached)
    fitted = lesson.fit_lesson(small)
    assert (fitted["tempoformer"], fitted["control"]) == ("01_stream-tempoformer", "01_stream-control")
    assert keys["01_stream-tempoformer"]["settings"]["ablation"] != CONTROL
    assert keys["01_stream-control"]["settings"]["ablation"] == CONTROL
    for params in keys.values():
        assert params["data_fingerprint"] == small["timelines"].fingerprint()
    assert "tempoformer" not in small  # the lesson given is not changed


def _te(small, seed=0):
    """A time_effect-shaped result from random test probabilities (no training)."""
    import numpy as np

    from tempo_analysis.evaluation.classification import classification_scores

    rng, names, test = np.random.default_rng(seed), small["names"], small["test"]
    out = {}
    for k in ("tempoformer", "control"):
        proba = rng.dirichlet(np.ones(len(names)), size=len(test))
        f1 = classification_scores(test.label_codes(names), proba.argmax(-1), names)["macro_f1"]
        out[k] = {"proba": proba, "macro_f1": float(f1), "gap_sensitivity": 0.1,
                  "recall_by_kind": {"time": {"recall": 0.5, "n": 3}}}
    out["time_effect"] = out["tempoformer"]["macro_f1"] - out["control"]["macro_f1"]
    out["gap_sensitivity"] = 0.1
    out["time_only_recall"] = {"tempoformer": 0.5, "control": 0.2, "chance": 0.25, "n": 3}
    return out


def test_the_lesson_records_and_tables_its_models_rows(small):
    te = _te(small)
    keys = lesson.lesson_numbers(te, {"bilstm": {"summary": {"macro_f1": {"mean": 0.4}},
                                                 "recall_by_kind": {"time": {"recall": 0.1, "n": 3}}}},
                                 test_posts=len(small["test"]))
    assert keys["stream.time_effect"] == pytest.approx(te["tempoformer"]["macro_f1"] - te["control"]["macro_f1"])
    assert keys["stream.tempoformer_macro_f1"] == te["tempoformer"]["macro_f1"]
    assert keys["stream.test_posts"] == len(small["test"]) and keys["stream.time_only_recall.chance"] == 0.25
    assert keys["stream.bilstm.macro_f1"] == 0.4 and keys["stream.bilstm.time_only_recall"] == 0.1
    row = lesson.score_row(small, te["tempoformer"]["proba"])
    assert row["summary"]["macro_f1"]["mean"] == pytest.approx(te["tempoformer"]["macro_f1"])
    ablations = lesson.ablation_rows(small, te, [CONTROL, "no_gate_norm"])
    assert ablations["missing"] == ["no_gate_norm"]  # no record at these settings: named, not invented
    assert ablations["rows"][f"− {CONTROL}"]["summary"]["macro_f1"]["mean"] == pytest.approx(te["control"]["macro_f1"])
    posts = lesson.time_switch_posts(small)
    assert posts and all(small["kinds"].get(p) == "time" for p in posts)
    table = lesson.recall_table(te, {"random": {"summary": {}}})
    assert list(table.index) == ["tempoformer", "time-blind control"]
    assert table.loc["tempoformer", "recall on time switches"] == 0.5
