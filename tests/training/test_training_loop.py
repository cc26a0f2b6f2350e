"""Trainer behaviour on tiny linear models: accumulation, LR schedule, early stopping, seeding, output."""

import math
from collections import namedtuple
from types import SimpleNamespace

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

from tempo_analysis.training import Trainer, TrainConfig, move_to_device, seed_everything


def make_data(n=32, dim=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, dim, generator=g)
    y = x @ torch.randn(dim, generator=g) + 0.1 * torch.randn(n, generator=g)
    return TensorDataset(x, y)


def make_linear(dim=4, seed=1):
    seed_everything(seed)
    return torch.nn.Linear(dim, 1)


def mse(model, batch):
    x, y = batch
    return torch.nn.functional.mse_loss(model(x).squeeze(-1), y)


def cfg(**kw):
    base = dict(max_epochs=1, lr=0.05, weight_decay=0.0, schedule="constant", max_grad_norm=None,
                shuffle=False, device="cpu", progress=False, restore_best=False)
    base.update(kw)
    return TrainConfig(**base)


def params(model):
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def assert_same(a, b, atol=1e-6):
    for k in a:
        torch.testing.assert_close(a[k], b[k], rtol=0, atol=atol)


class GradRecordingSGD(torch.optim.SGD):
    """SGD that records the gradient it is about to apply, and counts zero_grad calls."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.seen, self.zero_grads = [], 0

    def step(self, closure=None):
        self.seen.append([p.grad.detach().clone() for g in self.param_groups for p in g["params"]])
        return super().step(closure)

    def zero_grad(self, set_to_none=True):
        self.zero_grads += 1
        return super().zero_grad(set_to_none)


# ------------------------------------------------------------------------------------------------
# Gradient accumulation
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("opt", ["sgd", "adamw"])
def test_accumulating_4_batches_of_2_equals_batch_of_8(opt):
    data = make_data(32)
    results = []
    for batch_size, accum in [(8, 1), (2, 4)]:
        model = make_linear()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1) if opt == "sgd" else None
        trainer = Trainer(model, cfg(batch_size=batch_size, grad_accum_steps=accum, max_epochs=2),
                          loss_fn=mse, optimizer=optimizer).fit(data)
        assert trainer.global_step_ == 8                    # 32 / 8 per step x 2 epochs
        results.append(params(model))
    assert not torch.allclose(results[0]["weight"], make_linear().weight)
    assert_same(results[0], results[1], atol=1e-6)


def test_gradient_at_each_step_is_the_mean_over_the_whole_group():
    """Would fail if zero_grad ran every micro-step: the applied grad must cover all 8 examples."""
    data = make_data(40)
    model = make_linear()
    start = params(model)
    opt = GradRecordingSGD(model.parameters(), lr=0.0)     # lr 0: weights stay put, grads comparable
    trainer = Trainer(model, cfg(batch_size=2, grad_accum_steps=4), loss_fn=mse, optimizer=opt).fit(data)
    # 20 micro-batches, groups of 4 -> 5 optimiser steps; zero_grad once at start + once per step.
    assert trainer.global_step_ == 5 and len(opt.seen) == 5 and opt.zero_grads == 1 + 5
    x, y = data.tensors
    for step, grads in enumerate(opt.seen):
        ref = make_linear()
        ref.load_state_dict(start)
        sl = slice(8 * step, 8 * step + 8)
        mse(ref, (x[sl], y[sl])).backward()
        torch.testing.assert_close(grads[0], ref.weight.grad, rtol=0, atol=1e-6)
        torch.testing.assert_close(grads[1], ref.bias.grad, rtol=0, atol=1e-6)
        # and it is NOT just the last micro-batch's gradient
        last = make_linear()
        last.load_state_dict(start)
        mse(last, (x[sl][-2:], y[sl][-2:])).backward()
        assert not torch.allclose(grads[0], last.weight.grad, atol=1e-4)


def test_last_partial_group_still_steps_with_correct_scaling():
    """40 examples: batch 2 x accum 8 gives groups of 16, 16, 8 examples, like plain batch 16."""
    data = make_data(40)
    a, b = make_linear(), make_linear()
    ta = Trainer(a, cfg(batch_size=16), loss_fn=mse, optimizer=torch.optim.SGD(a.parameters(), lr=0.1)).fit(data)
    tb = Trainer(b, cfg(batch_size=2, grad_accum_steps=8), loss_fn=mse,
                 optimizer=torch.optim.SGD(b.parameters(), lr=0.1)).fit(data)
    assert ta.global_step_ == tb.global_step_ == 3
    assert_same(params(a), params(b))


def test_unsized_iterable_partial_group_is_rescaled():
    """Data without len(): the tail group is rescaled after the fact and still matches batch 16."""
    data = make_data(40)
    x, y = data.tensors

    class Batches:                                          # re-iterable, no __len__
        def __init__(self, bs):
            self.bs = bs

        def __iter__(self):
            return ((x[i:i + self.bs], y[i:i + self.bs]) for i in range(0, len(x), self.bs))

    a, b = make_linear(), make_linear()
    Trainer(a, cfg(batch_size=16), loss_fn=mse, optimizer=torch.optim.SGD(a.parameters(), lr=0.1)).fit(Batches(16))
    tb = Trainer(b, cfg(grad_accum_steps=8), loss_fn=mse,
                 optimizer=torch.optim.SGD(b.parameters(), lr=0.1)).fit(Batches(2))
    assert tb.global_step_ == 3
    assert_same(params(a), params(b))


# ------------------------------------------------------------------------------------------------
# LR schedule: once per optimiser step
# ------------------------------------------------------------------------------------------------
def expected_factor(s, total, warmup, kind):
    if s < warmup:
        return (s + 1) / warmup
    if kind == "constant":
        return 1.0
    if kind == "linear":
        return (total - s) / (total - warmup)
    return 0.5 * (1 + math.cos(math.pi * (s - warmup) / (total - warmup)))


@pytest.mark.parametrize("kind,warmup_kw,warmup", [
    ("linear", {"warmup_steps": 2}, 2),
    ("cosine", {"warmup_ratio": 0.25}, 2),                   # ceil(0.25 * 8)
    ("constant", {"warmup_steps": 3}, 3),
    ("linear", {}, 0),
])
def test_lr_is_stepped_per_optimizer_step(kind, warmup_kw, warmup):
    model = make_linear()
    # 32 examples, batch 4 -> 8 micro-batches/epoch; accum 2 -> 4 optimiser steps/epoch; 2 epochs -> 8
    trainer = Trainer(model, cfg(batch_size=4, grad_accum_steps=2, max_epochs=2, lr=0.01, schedule=kind,
                                 **warmup_kw), loss_fn=mse).fit(make_data(32))
    assert trainer.total_steps_ == 8
    assert [r["step"] for r in trainer.history_] == list(range(1, 9))     # one row per optimiser step
    for row in trainer.history_:
        assert row["lr"] == pytest.approx(0.01 * expected_factor(row["step"] - 1, 8, warmup, kind), abs=1e-12)
    assert trainer.scheduler_.last_epoch == 8                                 # stepped 8 times, not 16
    assert [r["epoch"] for r in trainer.history_] == [1] * 4 + [2] * 4


def test_max_steps_caps_training_and_defines_the_schedule():
    trainer = Trainer(make_linear(), cfg(batch_size=4, max_epochs=10, max_steps=5, schedule="linear"),
                      loss_fn=mse).fit(make_data(32))
    assert trainer.global_step_ == 5 and trainer.total_steps_ == 5
    assert trainer.history_[-1]["lr"] == pytest.approx(0.05 * 1 / 5)


def test_param_groups_get_their_own_lr():
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Linear(3, 1))
    groups = [{"params": model[0].parameters(), "lr": 1e-3}, {"params": model[1].parameters()}]
    trainer = Trainer(model, cfg(batch_size=8, lr=0.1), loss_fn=mse, param_groups=groups)
    trainer.fit(make_data(16))
    assert [g["initial_lr"] for g in trainer.optimizer_.param_groups] == [1e-3, 0.1]


def test_default_adamw_skips_weight_decay_on_biases():
    trainer = Trainer(make_linear(), cfg(batch_size=8, weight_decay=0.1), loss_fn=mse).fit(make_data(16))
    decays = {tuple(p.shape): g["weight_decay"] for g in trainer.optimizer_.param_groups for p in g["params"]}
    assert decays == {(1, 4): 0.1, (1,): 0.0}


# ------------------------------------------------------------------------------------------------
# Early stopping and best weights
# ------------------------------------------------------------------------------------------------
def scripted_eval(values, snapshots):
    """eval_fn returning scripted metric values, recording the weights it saw."""
    it = iter(values)

    def eval_fn(model, dev):
        snapshots.append(params(model))
        return {"score": next(it), "n_batches": float(len(list(dev)))}
    return eval_fn


@pytest.mark.parametrize("restore", [True, False])
def test_early_stopping_after_patience_and_restore_best(restore):
    snaps = []
    eval_fn = scripted_eval([5.0, 3.0, 4.0, 3.5, 1.0, 0.5], snaps)   # best at eval 2, then 2 worse
    model = make_linear()
    trainer = Trainer(model, cfg(batch_size=4, max_epochs=5, eval_every=1, metric="score", patience=2,
                                 restore_best=restore), loss_fn=mse, eval_fn=eval_fn)
    trainer.fit(make_data(32), make_data(8, seed=5))
    assert trainer.stopped_early_ and trainer.global_step_ == 4 and len(snaps) == 4
    assert (trainer.best_step_, trainer.best_metric_) == (2, 3.0)
    assert [r.get("score") for r in trainer.history_] == [5.0, 3.0, 4.0, 3.5]
    assert trainer.history_[0]["n_batches"] == 2.0                 # eval_fn got on-device batches of 4
    expected = snaps[1] if restore else snaps[3]
    assert_same(params(model), expected, atol=0)
    if restore:
        assert not torch.equal(params(model)["weight"], snaps[3]["weight"])


def test_greater_is_better_and_default_eval_is_mean_dev_loss():
    dev = make_data(12, seed=9)
    model = make_linear()
    trainer = Trainer(model, cfg(batch_size=4, max_epochs=3, lr=0.05), loss_fn=mse).fit(make_data(32), dev)
    evals = [r for r in trainer.history_ if "loss" in r]
    assert [r["step"] for r in evals] == [8, 16, 24]                       # once per epoch
    x, y = dev.tensors
    with torch.no_grad():
        manual = sum(mse(model, (x[i:i + 4], y[i:i + 4])).item() for i in (0, 4, 8)) / 3
    assert trainer.evaluate(dev)["loss"] == pytest.approx(manual, rel=1e-6)
    assert trainer.best_metric_ == min(r["loss"] for r in evals)

    neg = Trainer(make_linear(), cfg(batch_size=4, max_epochs=3, metric="neg", greater_is_better=True,
                                     patience=1), loss_fn=mse,
                  eval_fn=lambda m, d: {"neg": -sum(mse(m, b).item() for b in d)}).fit(make_data(32), dev)
    assert neg.best_metric_ == max(r["neg"] for r in neg.history_ if "neg" in r)


def test_final_weights_are_evaluated_even_off_the_eval_grid():
    trainer = Trainer(make_linear(), cfg(batch_size=4, max_steps=7, max_epochs=None, eval_every=3),
                      loss_fn=mse).fit(make_data(32), make_data(8))
    assert [r["step"] for r in trainer.history_ if "loss" in r] == [3, 6, 7]


# ------------------------------------------------------------------------------------------------
# Seeds, devices, batches, output
# ------------------------------------------------------------------------------------------------
class DropoutNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.Dropout(0.3), torch.nn.Linear(16, 1))

    def forward(self, x, y):
        return SimpleNamespace(loss=torch.nn.functional.mse_loss(self.net(x).squeeze(-1), y))


class DictData(torch.utils.data.Dataset):
    def __init__(self, ds):
        self.ds = ds

    def __len__(self):
        return len(self.ds)

    def __getitem__(self, i):
        x, y = self.ds[i]
        return {"x": x, "y": y}


def run_seeded(seed):
    seed_everything(123)
    model = DropoutNet()
    Trainer(model, cfg(batch_size=4, max_epochs=2, shuffle=True, seed=seed)).fit(DictData(make_data(32)))
    return params(model)


def test_same_seed_same_weights_different_seed_different():
    a, b, c = run_seeded(0), run_seeded(0), run_seeded(1)
    assert_same(a, b, atol=0)
    assert not torch.equal(a["net.0.weight"], c["net.0.weight"])


def test_default_loss_fn_reads_out_loss_or_dict_loss():
    class DictOut(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 1)

        def forward(self, x, y):
            return {"loss": torch.nn.functional.mse_loss(self.lin(x).squeeze(-1), y)}

    data = DictData(make_data(16))
    for model in (DictOut(), DropoutNet()):
        trainer = Trainer(model, cfg(batch_size=4)).fit(data, data)
        assert trainer.global_step_ == 4 and math.isfinite(trainer.history_[-1]["loss"])
    with pytest.raises(ValueError, match="loss_fn"):
        Trainer(make_linear(), cfg(batch_size=4)).fit(make_data(8))     # tuple batches need a loss_fn


def test_move_to_device_is_recursive_and_passes_other_things_through():
    Pair = namedtuple("Pair", "a b")
    batch = {"ids": torch.ones(2), "meta": ["text", 3, None], "nested": (torch.zeros(1), {"t": torch.ones(1)}),
             "pair": Pair(torch.ones(1), "x")}
    moved = move_to_device(batch, torch.device("meta"))
    assert moved["ids"].device.type == "meta" and moved["meta"] == ["text", 3, None]
    assert isinstance(moved["nested"], tuple) and moved["nested"][0].is_meta and moved["nested"][1]["t"].is_meta
    assert isinstance(moved["pair"], Pair) and moved["pair"].a.is_meta and moved["pair"].b == "x"


def test_predict_gathers_cpu_outputs_in_order_and_accepts_a_dataloader():
    data = make_data(10)
    model = make_linear()
    trainer = Trainer(model, cfg(batch_size=4), loss_fn=mse)
    outs = trainer.predict(data, lambda m, b: m(b[0]).squeeze(-1))
    assert [o.shape[0] for o in outs] == [4, 4, 2]
    with torch.no_grad():
        torch.testing.assert_close(torch.cat(outs), model(data.tensors[0]).squeeze(-1))
    outs2 = trainer.predict(DataLoader(data, batch_size=5), lambda m, b: {"y": m(b[0])})
    assert len(outs2) == 2 and outs2[0]["y"].shape == (5, 1) and not outs2[0]["y"].requires_grad


def test_progress_false_prints_nothing_and_true_shows_a_bar(capfd):
    data = make_data(16)
    Trainer(make_linear(), cfg(batch_size=4, progress=False), loss_fn=mse).fit(data, data)
    out, err = capfd.readouterr()
    assert out == "" and err == ""
    Trainer(make_linear(), cfg(batch_size=4, progress=True), loss_fn=mse).fit(data, data)
    out, err = capfd.readouterr()
    assert "train" in err and "4/4" in err and "lr=" in err


# ------------------------------------------------------------------------------------------------
# Clear errors
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("field,value", [
    ("batch_size", 0), ("grad_accum_steps", 1.5), ("lr", -1.0), ("schedule", "step"), ("warmup_ratio", 1.5),
    ("betas", (0.9,)), ("eval_every", 0), ("patience", -2), ("max_epochs", None),
])
def test_bad_config_names_the_field(field, value):
    with pytest.raises(ValueError, match=rf"TrainConfig\.{field}="):
        TrainConfig(**{field: value})


def test_runtime_errors_are_clear():
    data = make_data(8)
    with pytest.raises(ValueError, match="patience"):
        Trainer(make_linear(), cfg(patience=2), loss_fn=mse).fit(data)
    with pytest.raises(ValueError, match="metric='acc'"):
        Trainer(make_linear(), cfg(metric="acc"), loss_fn=mse).fit(data, data)
    with pytest.raises(FloatingPointError, match="loss is nan"):
        Trainer(make_linear(), cfg(), loss_fn=lambda m, b: mse(m, b) * float("nan")).fit(data)
    with pytest.raises(ValueError, match="one-shot generator"):
        gen = ((x, y) for x, y in [data.tensors])
        Trainer(make_linear(), cfg(max_epochs=2), loss_fn=mse).fit(gen)
    with pytest.raises(ValueError, match="schedule='linear'"):
        Trainer(make_linear(), cfg(schedule="linear"), loss_fn=mse).fit(iter([data.tensors]))
