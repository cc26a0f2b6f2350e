"""Worker for test_training_ddp.py, launched as:

    python -m torch.distributed.run --nproc_per_node 2 --standalone tests/training/ddp_worker.py OUT_DIR

Each rank trains the same tiny MLP with the shared Trainer (which sees WORLD_SIZE=2, joins a gloo
process group, wraps the model in DDP and shards the data with DistributedSampler), then writes its
final parameters and history to OUT_DIR/rank<r>.safetensors. The test imports `run` from this file
to produce the single-process reference on the same global batch (2 ranks x PER_RANK_BATCH).
"""

import os
import sys

import torch
from torch.utils.data import TensorDataset

from tempo_analysis.training import TrainConfig, Trainer, save_checkpoint, seed_everything

N_TRAIN, N_DEV, PER_RANK_BATCH, ACCUM, WORLD = 32, 16, 2, 2, 2


def make_data():
    """A fixed regression problem (same on every rank and in the reference run)."""
    g = torch.Generator().manual_seed(123)
    x = torch.randn(N_TRAIN + N_DEV, 5, generator=g)
    w = torch.randn(5, 1, generator=g)
    y = (x @ w).squeeze(-1) + 0.1 * torch.randn(N_TRAIN + N_DEV, generator=g)
    return TensorDataset(x[:N_TRAIN], y[:N_TRAIN]), TensorDataset(x[N_TRAIN:], y[N_TRAIN:])


def make_model():
    """A deterministic tiny MLP (no dropout), identical on every rank."""
    seed_everything(7)
    return torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))


def loss_fn(model, batch):
    x, y = batch
    return torch.nn.functional.mse_loss(model(x).squeeze(-1), y)


def run(batch_size, checkpoint_dir=None):
    """Train with seeded shuffling, grad accumulation, clipping, warmup + linear decay, AdamW."""
    train, dev = make_data()
    model = make_model()
    cfg = TrainConfig(max_epochs=2, batch_size=batch_size, grad_accum_steps=ACCUM, lr=0.05, weight_decay=0.01,
                      schedule="linear", warmup_steps=1, max_grad_norm=1.0, shuffle=True, seed=0,
                      device="cpu", progress=False, restore_best=False, checkpoint_dir=checkpoint_dir)
    trainer = Trainer(model, cfg, loss_fn=loss_fn).fit(train, dev)
    return model, trainer


if __name__ == "__main__":
    out = sys.argv[1]
    model, trainer = run(PER_RANK_BATCH, checkpoint_dir=os.path.join(out, "ckpt"))
    rank = torch.distributed.get_rank()
    save_checkpoint(os.path.join(out, f"rank{rank}.safetensors"), dict(model.state_dict()), {
        "history": trainer.history_, "world_size": trainer.dist_.world_size, "rank": trainer.dist_.rank,
        "wrapper": type(trainer._wrapped).__name__, "backend": torch.distributed.get_backend()})
