"""DDP plumbing: detect torchrun, init the process group, wrap the model, reduce metrics.

Under `torchrun --nproc_per_node N script.py` every process gets RANK, LOCAL_RANK and
WORLD_SIZE in its environment. When WORLD_SIZE > 1 the Trainer calls `setup(device)`, which
initialises the default process group (gloo on CPU, nccl on CUDA) unless the script already did.
Everything here is a no-op in a plain single process, so the same training code runs both ways.
"""

from __future__ import annotations

import atexit
import contextlib
import os
from dataclasses import dataclass

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


@dataclass(frozen=True)
class DistInfo:
    """Where this process sits: rank among world_size processes (rank 0 logs and writes files)."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0

    @property
    def enabled(self) -> bool:
        return self.world_size > 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0


def env_world_size() -> int:
    """WORLD_SIZE from the environment (1 when not launched by torchrun)."""
    try:
        return int(os.environ.get("WORLD_SIZE", "1"))
    except ValueError:
        raise ValueError(f"environment WORLD_SIZE={os.environ['WORLD_SIZE']!r} is not an integer; "
                         "unset it or launch with torchrun") from None


def setup(device: torch.device) -> DistInfo:
    """Join (or create) the default process group when launched with WORLD_SIZE > 1."""
    if dist.is_available() and dist.is_initialized():      # the script (or a previous fit) did it
        return DistInfo(dist.get_rank(), dist.get_world_size(), int(os.environ.get("LOCAL_RANK", "0")))
    if env_world_size() <= 1:
        return DistInfo()
    if not dist.is_available():
        raise RuntimeError("WORLD_SIZE > 1 but this torch build has no torch.distributed; run a single process")
    for var in ("RANK", "MASTER_ADDR", "MASTER_PORT"):
        if var not in os.environ:
            raise ValueError(f"WORLD_SIZE > 1 but environment variable {var} is missing; "
                             "launch with `torchrun` / `python -m torch.distributed.run`, or unset WORLD_SIZE")
    backend = "nccl" if device.type == "cuda" else "gloo"
    if device.type == "cuda":
        torch.cuda.set_device(device)
    dist.init_process_group(backend=backend)                # reads the env:// variables above
    atexit.register(teardown)                               # we created it, so we clean it up
    return DistInfo(dist.get_rank(), dist.get_world_size(), int(os.environ.get("LOCAL_RANK", "0")))


def teardown() -> None:
    """Destroy the default process group if one is up (safe to call twice)."""
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


def wrap_model(model: torch.nn.Module, device: torch.device, info: DistInfo,
               find_unused_parameters: bool = False) -> torch.nn.Module:
    """Wrap in DistributedDataParallel under DDP (rank 0's weights are broadcast to all ranks)."""
    if not info.enabled or isinstance(model, DistributedDataParallel):
        return model
    ids = [device.index] if device.type == "cuda" else None
    return DistributedDataParallel(model, device_ids=ids, output_device=ids[0] if ids else None,
                                   find_unused_parameters=find_unused_parameters)


def unwrap(model: torch.nn.Module) -> torch.nn.Module:
    """The plain module inside a DDP wrapper (or the model itself)."""
    return model.module if isinstance(model, DistributedDataParallel) else model


def no_sync(model: torch.nn.Module, skip_sync: bool):
    """Context that skips DDP's gradient all-reduce on non-final micro-steps of an accumulation group.

    Gradients then accumulate locally, and the final micro-step's backward all-reduces the sum once.
    """
    if skip_sync and isinstance(model, DistributedDataParallel):
        return model.no_sync()
    return contextlib.nullcontext()


def mean_across_ranks(values: dict[str, float], info: DistInfo, device: torch.device) -> dict[str, float]:
    """Average a dict of floats over all ranks (every rank must pass the same keys)."""
    if not info.enabled or not values:
        return dict(values)
    keys = sorted(values)
    t = torch.tensor([float(values[k]) for k in keys], dtype=torch.float64,
                     device=device if device.type == "cuda" else "cpu")
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    t /= info.world_size
    return dict(zip(keys, t.tolist()))


def barrier(info: DistInfo) -> None:
    """Wait for every rank (e.g. until rank 0 finished writing a checkpoint)."""
    if info.enabled:
        dist.barrier()


def all_reduce_grads(params, info: DistInfo) -> None:
    """Average .grad over ranks by hand (only for an accumulation group DDP could not finish)."""
    if not info.enabled:
        return
    for p in params:
        if p.grad is not None:
            dist.all_reduce(p.grad, op=dist.ReduceOp.SUM)
            p.grad /= info.world_size
