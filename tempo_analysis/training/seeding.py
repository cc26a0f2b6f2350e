"""Seeding, device picking, and capture/restore of every RNG (for exact resume)."""

from __future__ import annotations

import os
import random

import numpy as np
import torch


def seed_everything(seed: int, deterministic: bool = False) -> int:
    """Seed python `random`, numpy, torch (CPU and all CUDA devices); optionally force deterministic kernels."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"seed={seed!r} is invalid: use an integer")
    random.seed(seed)
    np.random.seed(seed % 2**32)               # numpy only takes 32-bit seeds
    torch.manual_seed(seed)                    # also seeds every CUDA device (lazily)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)   # affects child processes (DataLoader workers, torchrun)
    if deterministic:
        torch.use_deterministic_algorithms(True, warn_only=True)
        torch.backends.cudnn.benchmark = False
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    return seed


def _mps_available() -> bool:
    mps = getattr(torch.backends, "mps", None)
    return bool(mps is not None and mps.is_available())


def pick_device(device: str | torch.device = "auto") -> torch.device:
    """Resolve "auto" (cuda, then mps, then cpu), "cpu", "cuda", "cuda:N", "mps" or a torch.device.

    Under torchrun with CUDA, "auto"/"cuda" without an index map to cuda:LOCAL_RANK so every
    process drives its own GPU. Asking for a device that is not there is a clear ValueError.
    """
    if isinstance(device, torch.device):
        spec = str(device)
    elif isinstance(device, str):
        spec = device.strip().lower()
    else:
        raise ValueError(f"device={device!r} is invalid: use 'auto', 'cpu', 'cuda', 'cuda:N', 'mps' or a torch.device")
    local_rank = int(os.environ.get("LOCAL_RANK", "0")) if int(os.environ.get("WORLD_SIZE", "1")) > 1 else 0

    if spec == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda", local_rank % torch.cuda.device_count())
        if _mps_available():
            return torch.device("mps")
        return torch.device("cpu")
    try:
        dev = torch.device(spec)
    except (RuntimeError, ValueError) as exc:
        raise ValueError(f"device={device!r} is not a device name ({exc}); use 'auto', 'cpu', 'cuda:N' or 'mps'") from None
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(f"device={device!r} was requested but CUDA is not available here; use device='auto' or 'cpu'")
        index = dev.index if dev.index is not None else local_rank % torch.cuda.device_count()
        if index >= torch.cuda.device_count():
            raise ValueError(f"device={device!r}: only {torch.cuda.device_count()} CUDA device(s) exist; pick cuda:0..")
        return torch.device("cuda", index)
    if dev.type == "mps" and not _mps_available():
        raise ValueError(f"device={device!r} was requested but MPS is not available here; use device='auto' or 'cpu'")
    return dev


# --------------------------------------------------------------------------------------------------
# RNG state capture/restore. Checkpoints store these so a resumed run draws the same dropout masks
# (and any other random numbers) as the uninterrupted run. Tensors go into the safetensors body;
# python/numpy states are plain integer lists and go into the JSON metadata.
# --------------------------------------------------------------------------------------------------
def get_rng_state(prefix: str = "rng.") -> tuple[dict[str, torch.Tensor], dict]:
    """Snapshot python, numpy, torch CPU and CUDA generator states as (tensors, json-able meta)."""
    tensors = {f"{prefix}torch": torch.get_rng_state()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        for i, state in enumerate(torch.cuda.get_rng_state_all()):
            tensors[f"{prefix}cuda.{i}"] = state
    py_version, py_state, py_gauss = random.getstate()
    np_kind, np_keys, np_pos, np_has_gauss, np_gauss = np.random.get_state()
    meta = {
        "python": [py_version, list(py_state), py_gauss],
        "numpy": [np_kind, np_keys.tolist(), int(np_pos), int(np_has_gauss), float(np_gauss)],
    }
    return tensors, meta


def set_rng_state(tensors: dict[str, torch.Tensor], meta: dict, prefix: str = "rng.") -> None:
    """Inverse of get_rng_state (CUDA states are restored only for devices that exist here)."""
    torch.set_rng_state(tensors[f"{prefix}torch"].to(torch.uint8).cpu())
    cuda_states = [tensors[k] for k in sorted((k for k in tensors if k.startswith(f"{prefix}cuda.")),
                                              key=lambda k: int(k.rsplit(".", 1)[1]))]
    if cuda_states and torch.cuda.is_available():
        for i, state in enumerate(cuda_states[: torch.cuda.device_count()]):
            torch.cuda.set_rng_state(state.to(torch.uint8).cpu(), i)
    py_version, py_state, py_gauss = meta["python"]
    random.setstate((py_version, tuple(py_state), py_gauss))
    np_kind, np_keys, np_pos, np_has_gauss, np_gauss = meta["numpy"]
    np.random.set_state((np_kind, np.asarray(np_keys, dtype=np.uint32), np_pos, np_has_gauss, np_gauss))
