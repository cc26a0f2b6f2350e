"""Classifier pipeline, baselines and the `stream evaluate` CLI on tiny models and timelines."""

import dataclasses
import json

import numpy as np
import pytest
import torch

from tempo_analysis.cli import main
from tempo_analysis.encoders import tiny_encoder
from tempo_analysis.outputs import OutputExistsError
from tempo_analysis.stream import estimator
from tempo_analysis.stream.batching import WindowDataset, build_stream_data, collate_items
from tempo_analysis.stream.estimator import TempoFormerClassifier
from tempo_analysis.stream.experiment import make_classifier
from tempo_analysis.stream.model import TempoFormerModel

from .conftest import make_timelines, timelines_csv


@pytest.fixture(scope="module")
def tiny():
    model, tok = tiny_encoder(hidden=32, layers=3, heads=2, seed=0)
    return model, tok


@pytest.fixture(scope="module")
def data():
    tl = make_timelines(n_timelines=6, n_posts=(5, 4, 6), labels=("calm", "shift", "spike"), seed=2)
    return tl.subset(tl.timeline_ids[:4]), tl.subset(tl.timeline_ids[4:])


def test_tempoformer_classifier_fits_and_predicts_every_post(tiny, data):
    train, test = data
    test.df.loc[[0, 2], "label"] = None  # unlabelled posts are still predicted
    clf = TempoFormerClassifier(encoder=tiny, window=3, epochs=1, batch_size=8, progress=False, device="cpu").fit(train, test)
    assert clf.label_names_ == ["calm", "shift", "spike"]
    proba = clf.predict_proba(test)
    assert proba.shape == (len(test.df), 3) and np.allclose(proba.sum(1), 1, atol=1e-5)
    assert clf.predict(test).shape == (len(test.df),)
    assert len(clf.history_) >= 1 and "macro_f1" in clf.history_[-1]
    att = clf.temporal_attention(test, test.df["post_id"].iloc[3])
    n = len(att["post_ids"])
    assert att["post_ids"][-1] == test.df["post_id"].iloc[3] and att["gaps"][-1] == 0.0
    assert att["attention"].shape == (2, 2, n, n) and np.allclose(att["attention"].sum(-1), 1, atol=1e-5)


def test_frozen_local_stack_cache_gives_the_same_predictions(tiny, data):
    train, test = data
    clf = TempoFormerClassifier(encoder=tiny, window=3, epochs=1, freeze_local=True, progress=False, device="cpu")
    clf.fit(train)
    assert not any(p.requires_grad for p in clf.model_.local_layers.parameters())
    cached = clf.predict_proba(test)
    clf.config_ = dataclasses.replace(clf.config_, freeze_local=False)  # same weights, local stack recomputed inside the forward pass
    np.testing.assert_allclose(clf.predict_proba(test), cached, atol=1e-5)


def test_local_outputs_are_shared_across_classifiers_with_the_same_local_weights(tmp_path, tiny, data, monkeypatch):
    model, tok = tiny
    model.save_pretrained(tmp_path / "enc")
    tok.save_pretrained(tmp_path / "enc")
    train, test = data
    estimator._LOCAL_MEMO.clear()
    kw = dict(window=3, epochs=1, freeze_local=True, progress=False, device="cpu")
    first = TempoFormerClassifier(encoder=str(tmp_path / "enc"), **kw).fit(train)
    expected = first.predict_proba(test)
    calls = []
    original = TempoFormerModel.local_encode
    monkeypatch.setattr(TempoFormerModel, "local_encode",
                        lambda self, *a, **k: calls.append(len(a[0])) or original(self, *a, **k))
    second = TempoFormerClassifier(encoder=str(tmp_path / "enc"), seed=1, **kw).fit(train)
    second.predict_proba(test)
    assert calls == []  # every post's frozen local output came from the memo
    first.config_ = dataclasses.replace(first.config_, freeze_local=False)  # the memo holds what the local stack computes
    np.testing.assert_allclose(first.predict_proba(test), expected, atol=1e-5)
    # other local weights (e.g. a fine-tuned local stack) never get the memo's outputs
    with torch.no_grad():
        first.model_.local_layers[0].output.dense.bias.add_(0.5)
    first.config_ = dataclasses.replace(first.config_, freeze_local=True)
    n = len(calls)
    first.predict_proba(test)
    assert len(calls) > n


def test_classifier_save_and_load(tmp_path, tiny, data, capfd):
    train, test = data
    clf = TempoFormerClassifier(encoder=tiny, window=3, epochs=1, summary="mean_then_cls", progress=False,
                                device="cpu").fit(train)
    clf.save(tmp_path / "clf")
    assert (tmp_path / "clf" / "model" / "model.safetensors").is_file()
    (tmp_path / "user").mkdir()
    (tmp_path / "user" / "config.json").write_text("{}")
    with pytest.raises(OutputExistsError, match="not created by tempo_analysis"):
        clf.save(tmp_path / "user")  # a user's folder is never written into
    assert [p.name for p in (tmp_path / "user").iterdir()] == ["config.json"]
    capfd.readouterr()
    back = TempoFormerClassifier.load(tmp_path / "clf")
    err = capfd.readouterr().err   # a notebook's cache loads without transformers' bar or config warning
    assert "Loading weights" not in err and "to instantiate a model of type" not in err, err
    assert back.label_names_ == clf.label_names_ and back.window == 3 and back.config_ == clf.config_.__class__(
        **dict(clf.config_.to_dict(), encoder="custom"))   # a loaded (model, tokenizer) pair is saved as "custom"
    assert json.loads((tmp_path / "clf" / "config.json").read_text())["summary"] == "mean_then_cls"
    assert back.model_.config.summary == "mean_then_cls"
    np.testing.assert_allclose(back.predict_proba(test), clf.predict_proba(test), atol=1e-6)
    # AutoConfig reads the saved folder (so AutoTokenizer does not fall back to the base config and warn
    # "a model of type `tempoformer` to instantiate a model of type ``" in every notebook load)
    from transformers import AutoConfig
    assert type(AutoConfig.from_pretrained(tmp_path / "clf" / "model")).__name__ == "TempoFormerConfig"


def test_classifier_load_checks_the_folder_before_reading_it(tmp_path, tiny, data, monkeypatch):
    """load() read its settings raw (an empty folder: FileNotFoundError from pathlib) and sent a missing
    model/ to transformers, which took the path for a hub id. Now the folder is checked first: one error
    naming the folder, the missing file and the fix; the inner model is read from disk only."""
    import shutil
    import socket

    from tempo_analysis.data.errors import DataError

    clf = TempoFormerClassifier(encoder=tiny, window=3, epochs=1, progress=False, device="cpu").fit(data[0])
    clf.save(tmp_path / "clf")

    def no_network(address, *a, **k):
        raise AssertionError(f"a network call to {address} while loading a saved classifier")

    monkeypatch.setattr(socket, "create_connection", no_network)
    (tmp_path / "empty").mkdir()
    (tmp_path / "settings_only").mkdir()
    for name in ("config.json", "classifier.json"):
        shutil.copy(tmp_path / "clf" / name, tmp_path / "settings_only")
    shutil.copytree(tmp_path / "clf", tmp_path / "no_weights")
    (tmp_path / "no_weights" / "model" / "model.safetensors").unlink()
    fix = r"\. Fix: pass a folder written by TempoFormerClassifier\.save"
    for folder, missing in (("empty", "has no config.json"), ("settings_only", "has no model/config.json"),
                            ("no_weights", "has no model/model.safetensors"), ("nowhere", "does not exist")):
        with pytest.raises(DataError, match=rf"^TempoFormerClassifier folder '.*{folder}' {missing}.*{fix}") as e:
            TempoFormerClassifier.load(tmp_path / folder)
        assert isinstance(e.value, FileNotFoundError)
    (tmp_path / "no_weights" / "classifier.json").write_text("{not json")
    shutil.copy(tmp_path / "clf" / "model" / "model.safetensors", tmp_path / "no_weights" / "model")
    with pytest.raises(DataError, match=r"classifier.json does not hold the classifier's labels .*Fix: pass a folder"):
        TempoFormerClassifier.load(tmp_path / "no_weights")
    shutil.copy(tmp_path / "clf" / "classifier.json", tmp_path / "no_weights")
    (tmp_path / "no_weights" / "config.json").write_text('{"window": 3, "windw": 4}')
    with pytest.raises(DataError, match=r"config.json: unknown setting 'windw'"):
        TempoFormerClassifier.load(tmp_path / "no_weights")
    assert TempoFormerClassifier.load(tmp_path / "clf").label_names_ == clf.label_names_     # offline, from disk


def test_baselines_share_the_interface(tiny, data):
    train, test = data
    for name in ("random", "ffn_history", "bilstm", "post_encoder"):
        enc = tiny if name == "post_encoder" else "default"
        clf = make_classifier(name, encoder=enc, window=3, epochs=2, seed=0, progress=False, device="cpu")
        clf.fit(train, test)
        proba = clf.predict_proba(test)
        assert clf.label_names_ == ["calm", "shift", "spike"], name
        assert proba.shape == (len(test.df), 3) and np.allclose(proba.sum(1), 1, atol=1e-5), name
        assert clf.predict(test).shape == (len(test.df),), name
    # the random baseline is seeded and draws its labels from the training priors
    r = make_classifier("random", seed=3).fit(train)
    counts = np.bincount(train.label_codes(), minlength=3)
    np.testing.assert_allclose(r.priors_, counts / counts.sum())
    many = make_timelines(n_timelines=40, n_posts=(25,), labels=("calm", "shift", "spike"), seed=5)
    drawn = r.predict(many)
    assert (drawn == r.predict(many)).all()                        # same seed, same draws
    assert (drawn != make_classifier("random", seed=4).fit(train).predict(many)).mean() > 0.3
    np.testing.assert_allclose(np.bincount(drawn, minlength=3) / len(drawn), r.priors_, atol=0.05)
    with pytest.raises(ValueError, match="valid names: tempoformer, tempoformer_vectors, random"):
        make_classifier("svm")


def test_cli_evaluate_writes_per_class_and_macro_f1(tmp_path, tiny, capsys):
    model, tok = tiny
    model.save_pretrained(tmp_path / "enc")
    tok.save_pretrained(tmp_path / "enc")
    csv = timelines_csv(tmp_path)
    out = tmp_path / "res.json"
    rc = main(["stream", "evaluate", "--data", f"csv:{csv}", "--time-unit", "s", "--model", str(tmp_path / "enc"),
               "--window", "3", "--folds", "3", "--max-folds", "1", "--seeds", "0", "--epochs", "1",
               "--rope-theta", "50", "--time-transform", "linear", "--time-scale", "0.5", "--temporal-residual",
               "--dev-fraction", "0.4", "--no-progress", "--device", "cpu", "--out", str(out)])
    assert rc == 0
    res = json.loads(out.read_text())
    assert res["settings"]["model_kwargs"] == {"time_unit": 1.0, "rope_theta": 50.0, "time_transform": "linear",
                                               "time_scale": 0.5, "temporal_residual": True}
    assert res["dev_fraction"] == 0.4
    assert res["model"] == "tempoformer" and res["label_names"] == ["no", "yes"]
    assert set(res["f1"]) == {"no", "yes"} and set(res["macro_f1"]) == {"mean", "std"}
    assert len(res["by_window"]["3"]["runs"]) == 1 and res["by_window"]["3"]["folds_run"] == 1
    assert "macro-F1" in capsys.readouterr().out
    rc = main(["stream", "evaluate", "--data", f"csv:{csv}", "--time-unit", "s", "--baseline", "random",
               "--folds", "3", "--seeds", "0", "1", "--no-progress", "--out", str(out)])
    res = json.loads(out.read_text())
    assert rc == 0 and res["model"] == "random" and res["by_window"]["5"]["summary"]["n_runs"] == 6
    assert main(["stream", "evaluate", "--data", "nope", "--out", str(out)]) == 2


def test_training_chunks_keep_consecutive_windows_of_one_timeline(tokenizer):
    tl = make_timelines(n_timelines=3, n_posts=(7, 2, 5))
    data = build_stream_data(tl, 4, tokenizer, max_length=16)
    ds = WindowDataset(data, np.delete(np.arange(len(data)), [3]), chunk=3)  # window 3 unlabelled
    runs = [list(c) for c in ds.chunks]
    assert runs == [[0, 1, 2], [4, 5, 6], [7, 8], [9, 10, 11], [12, 13]]
    batch = collate_items([ds[0], ds[3]])
    # 6 windows of 4 slots reference 24 slots, but only 3 + 3 unique posts (two runs of one timeline each)
    assert batch["window_index"].shape == (6, 4) and batch["input_ids"].shape[0] == 6
