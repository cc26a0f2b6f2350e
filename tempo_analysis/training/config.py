"""TrainConfig: every knob of the shared training loop, validated, plus the LR schedule formula."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

SCHEDULES = ("linear", "cosine", "constant")


def _fail(field_name: str, value, fix: str):
    """Raise a ValueError that names the field, the bad value and the fix."""
    raise ValueError(f"TrainConfig.{field_name}={value!r} is invalid: {fix}")


@dataclass
class TrainConfig:
    """Hyper-parameters of `Trainer`. All step counts are OPTIMISER steps (after grad accumulation)."""

    # --- how long -------------------------------------------------------------------------------
    max_epochs: int | None = 3            # passes over train_data; None = until max_steps
    max_steps: int | None = None          # cap on optimiser steps; None = epochs only
    # --- batches --------------------------------------------------------------------------------
    batch_size: int = 8                   # PER-PROCESS batch; under DDP global batch = world * this
    eval_batch_size: int | None = None    # None = batch_size
    shuffle: bool = True                  # seeded reshuffle each epoch (Dataset inputs only)
    num_workers: int = 0                  # DataLoader workers (Dataset inputs only)
    # --- optimiser (AdamW unless Trainer(optimizer=...)) ---------------------------------------
    lr: float = 2e-5
    weight_decay: float = 0.01            # applied to >=2-D weights only; biases/norms get 0
    betas: tuple[float, float] = (0.9, 0.999)
    # --- LR schedule: warmup, then decay; stepped once per optimiser step ----------------------
    schedule: str = "linear"              # "linear" | "cosine" | "constant"
    warmup_ratio: float = 0.0             # fraction of total steps spent warming up
    warmup_steps: int | None = None       # overrides warmup_ratio when set
    # --- gradients -------------------------------------------------------------------------------
    grad_accum_steps: int = 1             # micro-batches per optimiser step
    max_grad_norm: float | None = 1.0     # clip total grad norm; None or 0 = no clipping
    # --- evaluation & early stopping -----------------------------------------------------------
    eval_every: int | None = None         # None = once per epoch; int = every N optimiser steps
    metric: str = "loss"                  # key of eval_fn's dict used for best/early stopping
    greater_is_better: bool = False
    patience: int | None = None           # stop after this many evals without improvement
    restore_best: bool = True             # load the best weights (in memory) when fit ends
    # --- checkpoints -----------------------------------------------------------------------------
    checkpoint_dir: str | None = None     # last.safetensors (full state) + best.safetensors (weights)
    resume: bool = True                   # continue from checkpoint_dir/last.safetensors if present
    # --- runtime -------------------------------------------------------------------------------
    seed: int = 0
    device: str = "auto"                  # "auto" = cuda, then mps, then cpu; or "cpu", "cuda:1", ...
    progress: bool = True                 # tqdm.auto bar (rank 0 only); False prints nothing
    find_unused_parameters: bool = False  # forwarded to DistributedDataParallel under torchrun

    def __post_init__(self):
        """Check every field now, so a bad value fails before any training starts."""
        def pos_int(name, value, allow_none=False):
            if value is None and allow_none:
                return
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                _fail(name, value, "use a positive integer" + (" or None" if allow_none else ""))

        pos_int("max_epochs", self.max_epochs, allow_none=True)
        pos_int("max_steps", self.max_steps, allow_none=True)
        if self.max_epochs is None and self.max_steps is None:
            _fail("max_epochs", None, "set max_epochs or max_steps (both None would train forever)")
        pos_int("batch_size", self.batch_size)
        pos_int("eval_batch_size", self.eval_batch_size, allow_none=True)
        pos_int("grad_accum_steps", self.grad_accum_steps)
        pos_int("eval_every", self.eval_every, allow_none=True)
        pos_int("patience", self.patience, allow_none=True)
        if isinstance(self.num_workers, bool) or not isinstance(self.num_workers, int) or self.num_workers < 0:
            _fail("num_workers", self.num_workers, "use 0 (main process) or a positive integer")
        if not (isinstance(self.lr, (int, float)) and self.lr > 0 and math.isfinite(self.lr)):
            _fail("lr", self.lr, "use a positive finite float such as 2e-5")
        if not (isinstance(self.weight_decay, (int, float)) and self.weight_decay >= 0):
            _fail("weight_decay", self.weight_decay, "use a float >= 0")
        betas = tuple(self.betas) if isinstance(self.betas, (list, tuple)) else None
        if betas is None or len(betas) != 2 or not all(0 <= b < 1 for b in betas):
            _fail("betas", self.betas, "use two floats in [0, 1), e.g. (0.9, 0.999)")
        self.betas = (float(betas[0]), float(betas[1]))
        if self.schedule not in SCHEDULES:
            _fail("schedule", self.schedule, f"use one of {', '.join(SCHEDULES)}")
        if not (isinstance(self.warmup_ratio, (int, float)) and 0 <= self.warmup_ratio < 1):
            _fail("warmup_ratio", self.warmup_ratio, "use a float in [0, 1)")
        if self.warmup_steps is not None and (
            isinstance(self.warmup_steps, bool) or not isinstance(self.warmup_steps, int) or self.warmup_steps < 0
        ):
            _fail("warmup_steps", self.warmup_steps, "use an integer >= 0 or None")
        if self.max_grad_norm is not None and not (
            isinstance(self.max_grad_norm, (int, float)) and self.max_grad_norm >= 0
        ):
            _fail("max_grad_norm", self.max_grad_norm, "use a float > 0, or None/0 to disable clipping")
        if not isinstance(self.metric, str) or not self.metric:
            _fail("metric", self.metric, "use the name of a key returned by eval_fn, e.g. 'loss'")
        if not isinstance(self.seed, int) or isinstance(self.seed, bool):
            _fail("seed", self.seed, "use an integer")

    # ---------------------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """A JSON-serialisable copy (stored in checkpoint metadata)."""
        d = dataclasses.asdict(self)
        d["betas"] = list(d["betas"])
        return d

    def resolve_warmup(self, total_steps: int | None) -> int:
        """Number of warmup optimiser steps: warmup_steps if set, else ceil(warmup_ratio * total)."""
        if self.warmup_steps is not None:
            return self.warmup_steps
        if self.warmup_ratio == 0:
            return 0
        if total_steps is None:
            _fail("warmup_ratio", self.warmup_ratio,
                  "the number of steps is unknown (unsized train_data): set warmup_steps or max_steps")
        return math.ceil(self.warmup_ratio * total_steps)


def lr_factor(step: int, total_steps: int | None, warmup: int, schedule: str) -> float:
    """Multiplier on the base LR for optimiser step `step` (0-based: step 0 is the first update).

    warmup:  step < warmup          -> (step + 1) / warmup   (first update is not wasted at lr 0;
                                                              the last warmup step reaches 1.0)
    linear:  step >= warmup         -> (total - step) / (total - warmup)   (last update > 0)
    cosine:  step >= warmup         -> 0.5 * (1 + cos(pi * (step - warmup) / (total - warmup)))
    constant: step >= warmup        -> 1.0
    Steps past `total` clamp to 0 for the decaying schedules.
    """
    if step < warmup:
        return (step + 1) / warmup
    if schedule == "constant":
        return 1.0
    if total_steps is None:
        raise ValueError(
            f"TrainConfig.schedule={schedule!r} needs the total number of optimiser steps, which is unknown "
            "for an unsized train_data: set max_steps, pass a sized Dataset/DataLoader, or use schedule='constant'"
        )
    span = max(1, total_steps - warmup)
    progress = min(1.0, (step - warmup) / span)
    if schedule == "linear":
        return max(0.0, (total_steps - step) / span)
    return 0.5 * (1.0 + math.cos(math.pi * progress))  # cosine
