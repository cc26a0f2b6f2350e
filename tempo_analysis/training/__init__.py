"""The shared training loop: Trainer + TrainConfig, seeding, device picking, safetensors checkpoints.

    from tempo_analysis.training import Trainer, TrainConfig
    trainer = Trainer(model, TrainConfig(max_epochs=3, lr=2e-5)).fit(train_ds, dev_ds)

Runs unchanged under `torchrun --nproc_per_node N` (DistributedDataParallel).
"""

from .checkpoint import ForeignCheckpointError, load_checkpoint, save_checkpoint
from .config import TrainConfig, lr_factor
from .seeding import pick_device, seed_everything
from .trainer import Trainer, default_loss_fn, move_to_device

__all__ = [
    "Trainer", "TrainConfig", "seed_everything", "pick_device", "save_checkpoint", "load_checkpoint",
    "move_to_device", "default_loss_fn", "lr_factor", "ForeignCheckpointError",
]
