"""Batch plumbing for the Trainer: move nested batches to a device, default loss, worker seeding."""

from __future__ import annotations

import random
from collections.abc import Mapping

import numpy as np
import torch
from torch.utils.data import Dataset, IterableDataset


# --------------------------------------------------------------------------------------------------
def move_to_device(obj, device: torch.device):
    """Move tensors inside (nested) dicts/lists/tuples/namedtuples to `device`; others pass through."""
    if isinstance(obj, torch.Tensor):
        return obj.to(device, non_blocking=device.type == "cuda")
    if isinstance(obj, Mapping):
        items = {k: move_to_device(v, device) for k, v in obj.items()}
        try:
            return type(obj)(items)                           # dict, OrderedDict, HF BatchEncoding
        except TypeError:
            return items                                      # e.g. defaultdict: plain dict
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):    # namedtuple
        return type(obj)(*(move_to_device(v, device) for v in obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(move_to_device(v, device) for v in obj)
    return obj


def to_cpu(obj):
    """Detach tensors (nested) and move them to CPU, for predict()'s gathered outputs."""
    if isinstance(obj, torch.Tensor):
        return obj.detach().cpu()
    if isinstance(obj, Mapping):
        return {k: to_cpu(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)) and not hasattr(obj, "_fields"):
        return type(obj)(to_cpu(v) for v in obj)
    return obj


class OnDevice:
    """Iterable over `batches` that yields each batch already moved to `device` (re-iterable)."""

    def __init__(self, batches, device):
        self.batches, self.device = batches, device

    def __iter__(self):
        return (move_to_device(b, self.device) for b in self.batches)

    def __len__(self):
        return len(self.batches)


def is_map_dataset(data) -> bool:
    return isinstance(data, Dataset) and not isinstance(data, IterableDataset)


def default_loss_fn(model, batch):
    """out = model(**batch); return out.loss or out["loss"] (HF models with labels in the batch)."""
    if not isinstance(batch, Mapping):
        raise ValueError(f"the default loss_fn calls model(**batch) but got a {type(batch).__name__} batch; "
                         "pass Trainer(loss_fn=lambda model, batch: ...) for tuple/list batches")
    out = model(**batch)
    loss = getattr(out, "loss", None)
    if loss is None and isinstance(out, Mapping):
        loss = out.get("loss")
    if loss is None:
        raise ValueError("the model output has no `loss`: put labels in the batch or pass Trainer(loss_fn=...)")
    return loss


def seed_worker(worker_id: int) -> None:
    """DataLoader worker init: derive python/numpy seeds from the worker's torch seed."""
    seed = torch.initial_seed() % 2**32
    np.random.seed(seed)
    random.seed(seed)
