"""DDP: 2 CPU processes (gloo) under torch.distributed.run stay in sync and match one process."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tempo_analysis.training import load_checkpoint

WORKER = Path(__file__).with_name("ddp_worker.py")


def _load_worker():
    spec = importlib.util.spec_from_file_location("tempo_training_ddp_worker", WORKER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_two_gloo_ranks_stay_in_sync_and_match_single_process(tmp_path):
    if not torch.distributed.is_available():
        pytest.skip("this torch build has no torch.distributed")
    worker = _load_worker()
    env = {k: v for k, v in os.environ.items()
           if k not in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")}
    env.update(OMP_NUM_THREADS="1", CUDA_VISIBLE_DEVICES="")
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--standalone",
           str(WORKER), str(tmp_path)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, f"torchrun failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"

    w0, meta0 = load_checkpoint(tmp_path / "rank0.safetensors")
    w1, meta1 = load_checkpoint(tmp_path / "rank1.safetensors")
    # The worker really ran distributed: 2 ranks, gloo, model wrapped in DDP.
    assert (meta0["world_size"], meta0["rank"], meta1["rank"]) == (2, 0, 1)
    assert meta0["backend"] == "gloo" and meta0["wrapper"] == "DistributedDataParallel"

    # (a) parameters are identical on both ranks after training
    assert w0.keys() == w1.keys() and len(w0) == 4
    for name in w0:
        assert torch.equal(w0[name], w1[name]), name

    # (b) ... and match one process trained on the same global batch (2 ranks x per-rank batch)
    model, trainer = worker.run(worker.PER_RANK_BATCH * worker.WORLD)
    start = worker.make_model().state_dict()
    for name, ref in model.state_dict().items():
        assert not torch.allclose(ref, start[name]), f"{name} did not train"
        torch.testing.assert_close(w0[name], ref, rtol=0, atol=1e-6)

    # Same number of optimiser steps, same LR per step, same (rank-averaged) train and dev losses.
    h_ddp, h_one = meta0["history"], trainer.history_
    assert [r["step"] for r in h_ddp] == [r["step"] for r in h_one] == list(range(1, 9))
    for a, b in zip(h_ddp, h_one):
        assert a["lr"] == pytest.approx(b["lr"], abs=1e-12)
        assert a["train_loss"] == pytest.approx(b["train_loss"], rel=1e-5)
        assert ("loss" in a) == ("loss" in b)
        if "loss" in a:                                   # dev metric averaged across ranks
            assert a["loss"] == pytest.approx(b["loss"], rel=1e-5)
    assert meta0["history"] == meta1["history"]

    # Only rank 0 wrote checkpoints, atomically (no temp files left behind).
    assert sorted(p.name for p in (tmp_path / "ckpt").iterdir()) == ["best.safetensors", "last.safetensors"]
