"""Checkpoints: safetensors on disk (no pickle), atomic writes, exact resume."""

import json
import os
import pickle
import struct

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

from tempo_analysis.training import Trainer, TrainConfig, load_checkpoint, save_checkpoint, seed_everything
from tempo_analysis.training import checkpoint as ckpt


def read_safetensors_header(path):
    """Parse the file by the safetensors spec: u64 little-endian header size, JSON header, raw bytes."""
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    body = len(raw) - 8 - n
    for name, info in header.items():
        if name != "__metadata__":
            assert set(info) == {"dtype", "shape", "data_offsets"}, name
            assert 0 <= info["data_offsets"][0] <= info["data_offsets"][1] <= body
    return header


@pytest.fixture
def no_pickle(monkeypatch):
    """Make any use of torch.load / pickle loading fail the test."""
    def boom(*a, **k):
        raise AssertionError("pickle/torch.load must not be used for checkpoints")
    monkeypatch.setattr(torch, "load", boom)
    monkeypatch.setattr(pickle, "load", boom)
    monkeypatch.setattr(pickle, "loads", boom)


# ------------------------------------------------------------------------------------------------
# save_checkpoint / load_checkpoint
# ------------------------------------------------------------------------------------------------
def test_roundtrip_is_safetensors_with_json_metadata(tmp_path, no_pickle):
    tensors = {"w": torch.randn(3, 4), "step": torch.tensor(7.0), "ids": torch.arange(5), "empty": torch.zeros(0)}
    meta = {"history": [{"step": 1, "loss": 0.5}], "name": "x", "nested": {"a": [1, 2.5, None, True]}}
    path = save_checkpoint(tmp_path / "sub" / "c.safetensors", tensors, meta)
    header = read_safetensors_header(path)
    assert header["__metadata__"]["format"] == "pt"
    assert json.loads(header["__metadata__"]["tempo_analysis"]) == meta
    assert header["w"]["dtype"] == "F32" and header["w"]["shape"] == [3, 4]
    loaded, meta2 = load_checkpoint(path)
    assert meta2 == meta and loaded.keys() == tensors.keys()
    for k in tensors:
        assert torch.equal(loaded[k], tensors[k])
    assert sorted(os.listdir(path.parent)) == ["c.safetensors"]


def test_bad_inputs_are_clear(tmp_path):
    with pytest.raises(ValueError, match="not JSON-serialisable"):
        save_checkpoint(tmp_path / "a.safetensors", {}, {"f": object()})
    with pytest.raises(ValueError, match="not a torch.Tensor"):
        save_checkpoint(tmp_path / "a.safetensors", {"x": [1, 2]}, {})
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_checkpoint(tmp_path / "missing.safetensors")


@pytest.mark.parametrize("fail_at", ["fsync", "replace"])
def test_write_is_atomic(tmp_path, monkeypatch, fail_at):
    """A crash mid-write leaves the previous checkpoint intact and no partial/temp file."""
    path = tmp_path / "last.safetensors"
    save_checkpoint(path, {"w": torch.ones(100)}, {"version": 1})
    before = path.read_bytes()

    def crash(*a, **k):
        raise OSError("disk full (simulated)")
    monkeypatch.setattr(os, fail_at, crash)
    with pytest.raises(OSError, match="simulated"):
        save_checkpoint(path, {"w": torch.zeros(100_000)}, {"version": 2})
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["last.safetensors"]
    assert load_checkpoint(path)[1] == {"version": 1}


def test_tied_weights_and_views_are_saved_once_and_restored(tmp_path):
    class Tied(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = torch.nn.Embedding(10, 4)
            self.head = torch.nn.Linear(4, 10, bias=False)
            self.head.weight = self.emb.weight          # tied like a LM head

    a = Tied()
    tensors, meta = ckpt.model_tensors(a)
    assert meta == {"aliases": {"head.weight": "emb.weight"}} and list(tensors) == ["model.emb.weight"]
    save_checkpoint(tmp_path / "t.safetensors", {**tensors, "view": a.emb.weight[2:4]}, meta)
    b = Tied()
    loaded, meta2 = load_checkpoint(tmp_path / "t.safetensors")
    ckpt.load_model_tensors(b, loaded, meta2)
    assert torch.equal(b.emb.weight, a.emb.weight) and b.head.weight is b.emb.weight
    assert torch.equal(loaded["view"], a.emb.weight[2:4])
    with pytest.raises(ValueError, match="do not fit this model"):
        ckpt.load_model_tensors(torch.nn.Linear(2, 2), loaded, meta2)


def test_optimizer_state_is_flattened_and_restored_exactly(tmp_path, no_pickle):
    def make():
        seed_everything(0)
        m = torch.nn.Linear(3, 2)
        return m, torch.optim.AdamW(m.parameters(), lr=0.1, betas=(0.8, 0.99))

    def step(m, o):
        m(torch.ones(4, 3)).pow(2).sum().backward()
        o.step()
        o.zero_grad()

    m1, o1 = make()
    for _ in range(3):
        step(m1, o1)
    tensors, meta = ckpt.optimizer_tensors(o1)
    assert all(k.startswith("optim.") for k in tensors) and "step" not in json.dumps(meta["param_groups"])
    save_checkpoint(tmp_path / "o.safetensors", tensors, meta)
    m2, o2 = make()
    m2.load_state_dict(m1.state_dict())
    ckpt.load_optimizer_tensors(o2, *load_checkpoint(tmp_path / "o.safetensors"))
    assert o2.param_groups[0]["betas"] == (0.8, 0.99)
    step(m1, o1)
    step(m2, o2)
    assert torch.equal(m1.weight, m2.weight) and torch.equal(m1.bias, m2.bias)


# ------------------------------------------------------------------------------------------------
# Trainer checkpoints and resume
# ------------------------------------------------------------------------------------------------
class Net(torch.nn.Module):
    """Tiny MLP with dropout, so an exact resume also needs the RNG state."""

    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.ReLU(), torch.nn.Dropout(0.2),
                                       torch.nn.Linear(16, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)


def mse(model, batch):
    x, y = batch
    return torch.nn.functional.mse_loss(model(x), y)


def make_data(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    return TensorDataset(x, x.sum(-1) + 0.1 * torch.randn(n, generator=g))


def new_model(seed):
    seed_everything(seed)
    return Net()


def config(folder, **kw):
    base = dict(max_epochs=3, batch_size=4, grad_accum_steps=2, lr=0.01, schedule="linear", warmup_steps=2,
                shuffle=True, seed=3, device="cpu", progress=False, checkpoint_dir=str(folder))
    base.update(kw)
    return TrainConfig(**base)


class Crash(Exception):
    pass


def crashing_loss(after_calls):
    calls = {"n": 0}

    def loss_fn(model, batch):
        calls["n"] += 1
        if calls["n"] > after_calls:
            raise Crash("simulated crash")
        return mse(model, batch)
    return loss_fn


@pytest.mark.parametrize("case", [
    # loss_fn calls = 2 per optimiser step + 3 per dev evaluation (12 dev examples / batch 4)
    dict(eval_every=3, crash_after=17),                 # last checkpoint: step 3, mid-epoch 1
    dict(eval_every=None, crash_after=25),              # last checkpoint: end of epoch 1 (step 5)
    dict(eval_every=2, crash_after=13, loader=True),    # user DataLoader reshuffling with the global RNG
])
def test_resume_gives_the_same_final_weights_as_an_uninterrupted_run(tmp_path, no_pickle, case):
    train, dev = make_data(40, 0), make_data(12, 1)        # 10 micro-batches -> 5 steps/epoch, 15 total
    if case.get("loader"):
        train = DataLoader(train, batch_size=4, shuffle=True)   # no generator: uses the global RNG
    kw = dict(eval_every=case["eval_every"])

    ref_model = new_model(0)
    ref = Trainer(ref_model, config(tmp_path / "ref", **kw), loss_fn=mse).fit(train, dev)
    assert ref.global_step_ == 15

    crashed = new_model(0)
    with pytest.raises(Crash):
        Trainer(crashed, config(tmp_path / "run", **kw), loss_fn=crashing_loss(case["crash_after"])).fit(train, dev)
    saved = load_checkpoint(tmp_path / "run" / "last.safetensors")[1]["trainer"]
    assert 0 < saved["global_step"] < 15                  # it really stopped part-way

    resumed_model = new_model(99)                         # different init: weights must come from disk
    resumed = Trainer(resumed_model, config(tmp_path / "run", **kw), loss_fn=mse).fit(train, dev)
    assert resumed.global_step_ == 15
    for name, value in ref_model.state_dict().items():
        assert torch.equal(resumed_model.state_dict()[name], value), name
    assert resumed.history_ == ref.history_
    assert (resumed.best_step_, resumed.best_metric_) == (ref.best_step_, ref.best_metric_)
    assert sorted(os.listdir(tmp_path / "run")) == ["best.safetensors", "last.safetensors"]


def test_checkpoint_files_and_resuming_a_finished_run(tmp_path, no_pickle):
    train, dev = make_data(40, 0), make_data(12, 1)
    model = new_model(0)
    first = Trainer(model, config(tmp_path), loss_fn=mse).fit(train, dev)
    last = read_safetensors_header(tmp_path / "last.safetensors")
    names = [k for k in last if k != "__metadata__"]
    assert any(k.startswith("model.") for k in names) and any(k.startswith("optim.") for k in names)
    assert "rng.torch" in names
    meta = json.loads(last["__metadata__"]["tempo_analysis"])
    assert meta["trainer"]["global_step"] == 15 and meta["scheduler"]["last_epoch"] == 15
    best_t, best_meta = load_checkpoint(tmp_path / "best.safetensors")
    assert best_meta["step"] == first.best_step_ and best_meta["value"] == first.best_metric_
    for name, value in model.state_dict().items():           # restore_best: model holds the best weights
        assert torch.equal(best_t["model." + name], value)

    again_model = new_model(5)
    again = Trainer(again_model, config(tmp_path), loss_fn=mse).fit(train, dev)   # nothing left to do
    assert again.global_step_ == 15 and again.history_ == first.history_
    for name, value in model.state_dict().items():
        assert torch.equal(again_model.state_dict()[name], value)

    fresh = Trainer(new_model(5), config(tmp_path, resume=False, max_epochs=1), loss_fn=mse).fit(train, dev)
    assert fresh.global_step_ == 5                            # resume=False starts over

    with pytest.raises(ValueError, match="batch_size=4 but TrainConfig.batch_size=8"):
        Trainer(new_model(0), config(tmp_path, batch_size=8), loss_fn=mse).fit(train, dev)


def scripted(values):
    it = iter(values)
    return lambda model, batches: {"score": next(it)}


@pytest.mark.parametrize("restore", [True, False])
def test_a_resumed_run_restores_the_best_weights_saved_before_the_crash(tmp_path, no_pickle, restore):
    """The best evaluation (step 3) came before the crash (step 8): the resumed run ends on the step-3 weights
    that best.safetensors holds, as the uninterrupted run does; without restore_best both end on the last."""
    train, dev = make_data(40, 0), make_data(12, 1)
    kw = dict(eval_every=3, metric="score", restore_best=restore)
    ref_model = new_model(0)
    Trainer(ref_model, config(tmp_path / "ref", **kw), loss_fn=mse, eval_fn=scripted([1.0] + [5.0] * 4)).fit(train, dev)
    with pytest.raises(Crash):                            # 2 loss calls per step: the 15th is in step 8
        Trainer(new_model(0), config(tmp_path / "run", **kw), loss_fn=crashing_loss(14),
                eval_fn=scripted([1.0, 5.0])).fit(train, dev)
    assert load_checkpoint(tmp_path / "run" / "best.safetensors")[1]["step"] == 3
    resumed_model = new_model(99)
    resumed = Trainer(resumed_model, config(tmp_path / "run", **kw), loss_fn=mse,
                      eval_fn=scripted([5.0] * 3)).fit(train, dev)
    assert (resumed.global_step_, resumed.best_step_) == (15, 3)
    for name, value in ref_model.state_dict().items():
        assert torch.equal(resumed_model.state_dict()[name], value), name
    last = load_checkpoint(tmp_path / "run" / "last.safetensors")[0]
    at_end = torch.equal(resumed_model.state_dict()["net.0.weight"], last["model.net.0.weight"])
    assert at_end is not restore
