"""seed_everything, pick_device and RNG capture/restore."""

import random

import numpy as np
import pytest
import torch

from tempo_analysis.training import pick_device, seed_everything
from tempo_analysis.training.seeding import get_rng_state, set_rng_state


def draws():
    return random.random(), float(np.random.rand()), float(torch.rand(1))


def test_seed_everything_seeds_python_numpy_and_torch():
    seed_everything(42)
    a = draws()
    seed_everything(42)
    assert draws() == a
    seed_everything(43)
    b = draws()
    assert all(x != y for x, y in zip(a, b))
    seed_everything(2**40)                     # seeds beyond numpy's 32 bits are folded, not rejected
    with pytest.raises(ValueError, match="seed"):
        seed_everything("1")


def test_rng_state_roundtrip_restores_every_generator():
    seed_everything(0)
    random.gauss(0, 1)                         # leave a cached gaussian in python's state
    tensors, meta = get_rng_state()
    a = draws()
    draws()
    set_rng_state(tensors, meta)
    assert draws() == a


def test_pick_device_explicit_and_auto_on_this_machine():
    assert pick_device("cpu") == torch.device("cpu")
    assert pick_device(torch.device("cpu")) == torch.device("cpu")
    assert pick_device(" CPU ") == torch.device("cpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA is not available"):
            pick_device("cuda")
    with pytest.raises(ValueError, match="not a device name"):
        pick_device("gpu-please")
    with pytest.raises(ValueError, match="device="):
        pick_device(3)


def test_auto_prefers_cuda_then_mps_then_cpu(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    assert pick_device("auto") == torch.device("cuda", 0)
    monkeypatch.setenv("WORLD_SIZE", "2")      # under torchrun each rank takes cuda:LOCAL_RANK
    monkeypatch.setenv("LOCAL_RANK", "1")
    assert pick_device("auto") == torch.device("cuda", 1)
    assert pick_device("cuda") == torch.device("cuda", 1)
    assert pick_device("cuda:0") == torch.device("cuda", 0)
    with pytest.raises(ValueError, match="only 2 CUDA"):
        pick_device("cuda:5")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert pick_device("auto") == torch.device("mps")
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    assert pick_device("auto") == torch.device("cpu")
    with pytest.raises(ValueError, match="MPS is not available"):
        pick_device("mps")
