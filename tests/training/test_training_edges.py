"""Trainer at its edges: a one-example dataset, user parameter groups holding frozen parameters, the default
restore_best without dev data, and the final evaluation after a single step."""
import pytest
import torch
from torch.utils.data import TensorDataset

from tempo_analysis.training import Trainer, TrainConfig, seed_everything


def make_data(n, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    return TensorDataset(x, x.sum(1))


def make_linear():
    seed_everything(1)
    return torch.nn.Linear(4, 1)


def mse(model, batch):
    x, y = batch
    return torch.nn.functional.mse_loss(model(x).squeeze(-1), y)


def cfg(**kw):
    return TrainConfig(**{**dict(max_epochs=1, lr=0.05, weight_decay=0.0, schedule="constant", max_grad_norm=None,
                                 shuffle=False, device="cpu", progress=False, restore_best=False), **kw})


def params(model):
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def test_a_dataset_of_one_example_trains_one_step_per_epoch():
    trainer = Trainer(make_linear(), cfg(batch_size=4, max_epochs=2), loss_fn=mse).fit(make_data(1))
    assert trainer.global_step_ == 2


def test_user_parameter_groups_may_hold_frozen_parameters():
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Linear(3, 1))
    for p in model[0].parameters():
        p.requires_grad = False
    before = params(model)
    Trainer(model, cfg(batch_size=8), loss_fn=mse, param_groups=[{"params": list(model.parameters())}]).fit(make_data(16))
    after = params(model)
    assert torch.equal(before["0.weight"], after["0.weight"]) and not torch.equal(before["1.weight"], after["1.weight"])


def test_restore_best_without_dev_data_keeps_the_last_weights():
    a, b = make_linear(), make_linear()
    Trainer(a, cfg(batch_size=4, max_epochs=2, restore_best=True), loss_fn=mse).fit(make_data(16))
    Trainer(b, cfg(batch_size=4, max_epochs=2, restore_best=False), loss_fn=mse).fit(make_data(16))
    assert all(torch.equal(x, y) for x, y in zip(params(a).values(), params(b).values()))


def test_a_single_step_run_still_evaluates_its_final_weights():
    trainer = Trainer(make_linear(), cfg(batch_size=4, max_steps=1, max_epochs=None), loss_fn=mse).fit(
        make_data(32), make_data(8))
    assert [r["step"] for r in trainer.history_ if "loss" in r] == [1] and trainer.best_step_ == 1


def test_without_dev_data_a_checkpoint_folder_holds_the_last_state_and_no_best(tmp_path):
    Trainer(make_linear(), cfg(batch_size=4, max_epochs=2, checkpoint_dir=str(tmp_path / "ck")), loss_fn=mse).fit(
        make_data(8))
    assert sorted(p.name for p in (tmp_path / "ck").iterdir()) == ["last.safetensors"]


def test_a_loss_that_is_not_a_tensor_is_refused_by_name():
    with pytest.raises(ValueError, match="loss_fn must return a scalar tensor, got float"):
        Trainer(make_linear(), cfg(batch_size=4), loss_fn=lambda m, b: 1.0).fit(make_data(8))


@pytest.mark.parametrize("greater", [True, False])
def test_a_tie_with_the_best_is_not_an_improvement(greater):
    values = iter([2.0, 2.0, 2.0])
    trainer = Trainer(make_linear(), cfg(batch_size=4, max_epochs=3, metric="score", greater_is_better=greater),
                      loss_fn=mse, eval_fn=lambda m, d: {"score": next(values)}).fit(make_data(8), make_data(4))
    assert (trainer.best_step_, trainer.best_metric_) == (2, 2.0)          # the first of the equal evaluations
