"""TempoFormer's temporal attention over frozen sentence vectors (tempoformer_vectors)."""

import json

import numpy as np
import pytest
import torch

from tempo_analysis.cli import main
from tempo_analysis.stream.experiment import make_classifier
from tempo_analysis.stream.vector_tempoformer import VectorTempoFormerClassifier, VectorTempoFormerNet

from .conftest import make_timelines, timelines_csv


def _net(ablation="none", layers=1, **time):
    torch.manual_seed(0)
    return VectorTempoFormerNet(8, hidden=8, num_labels=2, heads=2, layers=layers, dropout=0.0,
                                ablation=ablation, **time).eval()


def _window(seed=0, B=3, W=4):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(B, W, 8, generator=g)
    gaps = torch.tensor([[86400.0, 3600.0, 60.0, 0.0]]).repeat(B, 1).double()
    return x, torch.ones(B, W, dtype=torch.bool), gaps


@pytest.mark.parametrize("layers", [1, 2])
def test_the_gaps_move_the_output_and_the_time_blind_control_ignores_them(layers):
    x, mask, gaps = _window()
    other = gaps.clone()
    other[:, 0] = 5.0  # the oldest post now came 5 seconds before the current one, not a day
    timed = _net(layers=layers)
    assert (timed(x, mask, gaps) - timed(x, mask, other)).abs().max() > 1e-3
    blind = _net("vanilla_mha", layers=layers)
    assert torch.allclose(blind(x, mask, gaps), blind(x, mask, other), atol=1e-6)
    order = _net("sequential_rope", layers=layers)  # post order, not time
    assert torch.allclose(order(x, mask, gaps), order(x, mask, other), atol=1e-6)
    assert (order(x, mask, gaps) - blind(x, mask, gaps)).abs().max() > 1e-4  # order itself is read


@pytest.mark.parametrize("theta", [10.0, 1e4])
def test_sequential_rope_changes_only_the_position_fed_not_the_rotary_base(theta):
    """Post order in place of time, at the model's own rotary base: with a linear transform and gaps
    equal to the slot distances, "sequential_rope" and the full model are the same function."""
    x, mask, _ = _window()
    slots = torch.tensor([[3.0, 2.0, 1.0, 0.0]]).repeat(x.shape[0], 1).double()
    full = _net(time_transform="linear", rope_theta=theta)
    order = _net("sequential_rope", time_transform="linear", rope_theta=theta)
    assert order.temporal[0].theta == full.temporal[0].theta == theta
    assert torch.allclose(order(x, mask, slots * 0), full(x, mask, slots), atol=1e-6)


def test_the_time_scale_reaches_the_rotation():
    x, mask, gaps = _window()
    assert (_net(time_scale=1.0)(x, mask, gaps) - _net(time_scale=3.0)(x, mask, gaps)).abs().max() > 1e-3
    assert torch.allclose(_net(time_unit=60.0, time_scale=1.0)(x, mask, gaps * 60), _net()(x, mask, gaps), atol=1e-5)


@pytest.mark.parametrize("layers", [1, 2])
def test_left_pads_change_nothing(layers):
    net = _net(layers=layers)
    x, mask, gaps = _window()
    short = net(x[:, 2:], mask[:, 2:], gaps[:, 2:])
    padded_x = x.clone()
    padded_x[:, :2] = 7.0  # whatever sits in a pad slot must not be read
    pad_mask = mask.clone()
    pad_mask[:, :2] = False
    assert torch.allclose(net(padded_x, pad_mask, gaps), short, atol=1e-5)


def test_bad_settings_name_the_field():
    with pytest.raises(ValueError, match="hierarchical encoder"):
        VectorTempoFormerClassifier(ablation="no_s11")
    with pytest.raises(ValueError, match="summary"):
        VectorTempoFormerClassifier(model_kwargs={"summary": "cls"})
    with pytest.raises(ValueError, match="heads of even size"):
        VectorTempoFormerClassifier(hidden=10, heads=4)
    with pytest.raises(ValueError, match="time_transform"):
        VectorTempoFormerNet(8, 8, 2, heads=2, time_transform="sqrt")


def test_fit_and_predict_through_the_model_registry():
    tl = make_timelines(n_timelines=6, n_posts=(5, 4, 6), labels=("calm", "shift"), seed=2)
    train, test = tl.subset(tl.timeline_ids[:4]), tl.subset(tl.timeline_ids[4:])
    clf = make_classifier("tempoformer_vectors", window=3, epochs=2, seed=0, progress=False, device="cpu",
                          hidden=16, heads=2)
    proba = clf.fit(train, test).predict_proba(test)
    assert clf.label_names_ == ["calm", "shift"]
    assert proba.shape == (len(test.df), 2) and np.allclose(proba.sum(1), 1, atol=1e-5)
    again = make_classifier("tempoformer_vectors", window=3, epochs=2, seed=0, progress=False, device="cpu",
                            hidden=16, heads=2).fit(train, test).predict_proba(test)
    np.testing.assert_allclose(proba, again, atol=1e-6)  # seeded


def test_cli_runs_the_time_blind_control_and_refuses_what_does_not_apply(tmp_path, capsys):
    csv = timelines_csv(tmp_path)
    out = tmp_path / "res.json"
    args = ["stream", "evaluate", "--data", f"csv:{csv}", "--time-unit", "s", "--folds", "3", "--max-folds", "1",
            "--window", "3", "--epochs", "1", "--no-progress", "--out", str(out)]
    assert main(args + ["--baseline", "tempoformer_vectors", "--ablation", "vanilla_mha", "--time-scale", "2",
                        "--hidden", "16"]) == 0
    rec = json.loads(out.read_text())
    assert rec["model"] == "tempoformer_vectors" and rec["ablation"] == "vanilla_mha"
    assert rec["settings"]["ablation"] == "vanilla_mha" and rec["settings"]["model_kwargs"]["time_scale"] == 2.0
    out.unlink()
    assert main(args + ["--baseline", "bilstm", "--ablation", "vanilla_mha"]) == 2
    assert "--ablation" in capsys.readouterr().err and not out.exists()
    assert main(args + ["--baseline", "tempoformer_vectors", "--ablation", "no_s11"]) == 2
    assert "hierarchical encoder" in capsys.readouterr().err


def test_time_settings_can_be_tuned_on_dev(tmp_path, capsys):
    from tempo_analysis.stream.tuning import grid_point_settings

    point = grid_point_settings({"lr": 1e-3, "time_scale": 2.0}, {"time_unit": 60.0})
    assert point == {"lr": 1e-3, "model_kwargs": {"time_unit": 60.0, "time_scale": 2.0}}
    clf = make_classifier("tempoformer_vectors", strict=point, model_kwargs={"time_unit": 60.0})
    assert clf.model_kwargs == {"time_unit": 60.0, "time_scale": 2.0} and clf.lr == 1e-3
    csv = timelines_csv(tmp_path)
    out = tmp_path / "res.json"
    args = ["stream", "evaluate", "--data", f"csv:{csv}", "--time-unit", "s", "--folds", "3", "--max-folds", "1",
            "--window", "3", "--epochs", "1", "--no-progress", "--out", str(out)]
    assert main(args + ["--baseline", "tempoformer_vectors", "--hidden", "16", "--tune", "time_scale=0.5,2"]) == 0
    run = json.loads(out.read_text())["by_window"]["3"]["runs"][0]
    assert [p["time_scale"] for p in run["tuned"]["grid"]] == [0.5, 2.0]
    assert run["tuned"]["chosen"]["time_scale"] in (0.5, 2.0)
    out.unlink()
    assert main(args + ["--baseline", "bilstm", "--tune", "time_scale=0.5,2"]) == 2
    assert "time settings apply to" in capsys.readouterr().err
    assert main(args + ["--baseline", "tempoformer_vectors", "--time-scale", "2", "--tune", "time_scale=0.5,2"]) == 2
    assert "both fixed and tuned" in capsys.readouterr().err
