"""TempoFormerClassifier's settings at their edges: the chunk and window checks, the model's window capacity,
the pooling read from a sentence-transformers folder, and the bound on the shared local-stack memo."""
from __future__ import annotations

import json
from collections import OrderedDict

import numpy as np
import pytest

import tempo_analysis.stream.estimator as estimator
from tempo_analysis.stream.config import StreamConfig
from tempo_analysis.stream.estimator import TempoFormerClassifier, _encoder_summary


@pytest.mark.parametrize("chunk, batch_size, expected", [(0, 16, 1), (-3, 16, 1), (3, 16, 3), (10, 4, 4), (1, 1, 1)])
def test_chunk_is_at_least_one_window_and_at_most_a_batch(chunk, batch_size, expected):
    assert StreamConfig(chunk=chunk, batch_size=batch_size).chunk == expected
    assert TempoFormerClassifier(chunk=chunk, batch_size=batch_size).get_config().chunk == expected


def test_a_window_of_one_post_is_allowed_and_zero_is_refused_by_fit_before_any_data():
    assert StreamConfig(window=1).window == 1
    assert TempoFormerClassifier(window=0).overrides == {"window": 0}   # stored, checked by fit
    with pytest.raises(ValueError, match="window=0 must be a positive integer"):
        TempoFormerClassifier(window=0).fit(None)
    for bad in ({"epochs": 0}, {"batch_size": -1}, {"max_length": 2.5}, {"window": True}):
        with pytest.raises(ValueError, match=rf"{next(iter(bad))}=.* must be a positive integer"):
            StreamConfig(**bad)
    with pytest.raises(ValueError, match="summary='max'"):
        StreamConfig(summary="max")
    with pytest.raises(ValueError, match="ablation='no_time'"):
        StreamConfig(ablation="no_time")


@pytest.mark.parametrize("window, capacity", [(5, 64), (64, 64), (70, 70)])
def test_the_model_holds_windows_of_64_posts_or_the_chosen_window_if_longer(window, capacity):
    clf = TempoFormerClassifier(window=window, progress=False)
    model = clf._build_model(clf.get_config(), ["no", "yes"], np.array([0, 1, 1]))
    assert model.config.max_window == capacity


def test_mean_pooling_is_read_from_the_folders_pooling_config(tmp_path):
    for name, mean in (("mean", True), ("cls", False), ("bare", None)):
        (tmp_path / name / "1_Pooling").mkdir(parents=True)
        (tmp_path / name / "config.json").write_text("{}")
        if mean is not None:
            (tmp_path / name / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode_mean_tokens": mean}))
    assert [_encoder_summary(str(tmp_path / n)) for n in ("mean", "cls", "bare")] == ["mean", "cls", "cls"]
    assert _encoder_summary("default") == "mean" and _encoder_summary(object()) == "cls"


def test_the_local_memo_keeps_the_newest_posts_up_to_its_bound(monkeypatch):
    monkeypatch.setattr(estimator, "_LOCAL_MEMO", OrderedDict())
    monkeypatch.setattr(estimator, "_LOCAL_MEMO_MAX_POSTS", 2)
    for key in ("a", "b", "c"):
        estimator._remember(key, key)
    assert list(estimator._LOCAL_MEMO) == ["b", "c"]
    estimator._remember("d", "d")
    assert list(estimator._LOCAL_MEMO) == ["c", "d"]


@pytest.fixture(scope="module")
def fitted():
    from tempo_analysis.encoders import tiny_encoder

    from .conftest import make_timelines

    tl = make_timelines(n_timelines=6, n_posts=(5, 4, 6), labels=("calm", "shift", "spike"), seed=2)
    train, dev = tl.subset(tl.timeline_ids[:4]), tl.subset(tl.timeline_ids[4:])
    clf = TempoFormerClassifier(encoder=tiny_encoder(hidden=32, layers=3, heads=2, seed=0), window=3, epochs=2, batch_size=4,
                                progress=False, device="cpu").fit(train, dev)
    return clf, dev


def test_the_kept_weights_are_those_of_the_highest_dev_macro_f1(fitted):
    clf, _ = fitted
    config = clf.trainer_.config
    assert (config.metric, config.greater_is_better, config.restore_best) == ("macro_f1", True, True)
    assert clf.trainer_.best_metric_ == max(r["macro_f1"] for r in clf.history_ if "macro_f1" in r)


def test_predict_takes_any_window_from_one_post_to_the_models_capacity(fitted):
    clf, dev = fitted
    assert clf.predict_proba(dev, window=1).shape == (len(dev.df), 3)
    assert clf.predict_proba(dev, window=64).shape == (len(dev.df), 3)
    for bad in (0, 65):
        with pytest.raises(ValueError, match=rf"window={bad} must be in \[1, 64\]"):
            clf.predict_proba(dev, window=bad)


def test_a_windows_attention_comes_with_that_posts_probabilities_and_the_last_layer_by_default(fitted):
    clf, dev = fitted
    post = dev.df["post_id"].iloc[5]
    att = clf.temporal_attention(dev, post)
    np.testing.assert_allclose(att["proba"], clf.predict_proba(dev)[5], atol=1e-5)
    assert att["proba"].shape == (3,) and att["proba"].sum() == pytest.approx(1, abs=1e-5)
    z = np.asarray(clf.visualize_attention(dev, post).data[0].z)
    np.testing.assert_allclose(z, att["attention"][-1].mean(0), atol=1e-6)        # last layer, heads averaged
    assert att["attention"].shape[0] > 1 and not np.allclose(z, att["attention"][0].mean(0), atol=1e-6)


def test_a_loaded_classifier_whose_encoder_was_an_object_says_how_to_train_again(fitted):
    """A (model, tokenizer) pair is saved as encoder "custom" (no object in config.json); fitting that
    again is refused with the fix, before any model is built."""
    clf, dev = fitted
    assert clf.config_.to_dict()["encoder"] == "custom" and not isinstance(clf.config_.encoder, str)
    again = TempoFormerClassifier(dict(clf.config_.to_dict()))
    with pytest.raises(ValueError, match="encoder='custom'.*Fix: pass encoder= again"):
        again.fit(dev)


def test_grad_accum_steps_sums_batches_into_one_optimiser_step():
    """``grad_accum_steps`` (CLI --grad-accum-steps; the paper accumulates gradients) reaches the Trainer:
    with 2, one epoch takes half the optimiser steps (rounded up) of the same run with 1."""
    from tempo_analysis.encoders import tiny_encoder

    from .conftest import make_timelines

    tiny = tiny_encoder(hidden=32, layers=3, heads=2, seed=0)
    tl = make_timelines(n_timelines=4, n_posts=(6, 5, 6, 5))
    assert StreamConfig().grad_accum_steps == 1
    with pytest.raises(ValueError, match="grad_accum_steps=0 must be a positive integer"):
        StreamConfig(grad_accum_steps=0)
    steps = {}
    for accum in (1, 2):
        clf = TempoFormerClassifier(encoder=tiny, window=3, epochs=1, batch_size=2, chunk=1, grad_accum_steps=accum,
                                    progress=False, device="cpu").fit(tl)
        assert clf.trainer_.config.grad_accum_steps == accum
        steps[accum] = clf.trainer_.global_step_
    assert steps[1] >= 4 and steps[2] == -(-steps[1] // 2)
