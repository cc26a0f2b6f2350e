"""The Trainer and files it did not write: a user's best/last.safetensors is never replaced nor resumed
from, temp files of killed runs are cleaned, and a SIGKILL at any moment leaves `last` loadable."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from safetensors.torch import save_file

from tempo_analysis.data import DataError
from tempo_analysis.training import Trainer, load_checkpoint, save_checkpoint
from tempo_analysis.outputs import TEMP_MARK
from tempo_analysis.training.checkpoint import ForeignCheckpointError, checkpoint_meta

ROOT = Path(__file__).resolve().parents[2]

# Shared by this process and the killed child: the same tiny model, data and config.
SETUP = """
import torch
from torch.utils.data import TensorDataset
from tempo_analysis.training import TrainConfig, seed_everything

def build(folder, **kw):
    seed_everything(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    g = torch.Generator().manual_seed(0)
    x = torch.randn(48, 4, generator=g)
    train = TensorDataset(x, x.sum(-1, keepdim=True))
    dev = TensorDataset(x[:8], x[:8].sum(-1, keepdim=True))
    cfg = TrainConfig(**{**dict(max_epochs=4, batch_size=4, lr=0.01, seed=1, device="cpu", progress=False,
                               eval_every=1, checkpoint_dir=str(folder)), **kw})
    return model, train, dev, cfg

def mse(model, batch):
    x, y = batch
    return torch.nn.functional.mse_loss(model(x), y)
"""
NS: dict = {}
exec(SETUP, NS)
build, mse = NS["build"], NS["mse"]
STEPS = 48                                            # 12 batches x 4 epochs

CHILD = SETUP + """
import os, sys, time
from tempo_analysis.training import Trainer
folder, mode = sys.argv[1], sys.argv[2]
if mode == "block-in-write":                         # stop inside the 3rd write of last.safetensors
    real, n = os.replace, [0]
    def replace(src, dst):
        if os.path.basename(os.path.dirname(str(src))).startswith(".last.safetensors.tempo_analysis-tmp-"):
            n[0] += 1
            if n[0] == 3:
                print("WRITING", flush=True)
                time.sleep(300)
        return real(src, dst)
    os.replace = replace
    loss = mse
else:                                                # slow steps, to be killed at a random moment
    def loss(model, batch):
        time.sleep(0.01)
        return mse(model, batch)
model, train, dev, cfg = build(folder)
print("START", flush=True)
Trainer(model, cfg, loss_fn=loss).fit(train, dev)
print("DONE", flush=True)
"""


def run_child(folder: Path, mode: str):
    return subprocess.Popen([sys.executable, "-c", CHILD, str(folder), mode], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"})


def dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def reference_weights(tmp_path):
    model, train, dev, cfg = build(tmp_path / "reference")
    Trainer(model, cfg, loss_fn=mse).fit(train, dev)
    return model.state_dict()


# ------------------------------------------------------------------------------------ files that are not ours
def user_safetensors(path: Path):
    save_file({"weight": torch.ones(3)}, str(path))       # a real safetensors file, without our metadata


@pytest.mark.parametrize("name", ["best.safetensors", "last.safetensors"])
@pytest.mark.parametrize("content", ["safetensors", "garbage", "empty", "folder"])
def test_a_users_checkpoint_file_is_neither_replaced_nor_resumed_from(tmp_path, name, content):
    path = tmp_path / name
    if content == "safetensors":
        user_safetensors(path)
    elif content == "folder":
        path.mkdir()
    else:
        path.write_bytes(b"" if content == "empty" else b"\x00 not a checkpoint " * 10)
    before = None if content == "folder" else path.read_bytes()
    model, train, dev, cfg = build(tmp_path)
    calls = []
    with pytest.raises(ForeignCheckpointError, match=rf"{name} is .*neither replaces nor resumes.*move that file away") as e:
        Trainer(model, cfg, loss_fn=lambda m, b: calls.append(1) or mse(m, b)).fit(train, dev)
    assert isinstance(e.value, DataError) and calls == []       # refused before any training step
    assert before is None or path.read_bytes() == before


def test_a_best_file_in_place_of_last_is_refused(tmp_path):
    save_checkpoint(tmp_path / "last.safetensors", {"w": torch.ones(1)}, {"kind": "best", "step": 1})
    model, train, dev, cfg = build(tmp_path)
    with pytest.raises(ForeignCheckpointError, match=r"a Trainer 'best' checkpoint, not 'last'"):
        Trainer(model, cfg, loss_fn=mse).fit(train, dev)


def test_checkpoint_dir_that_is_a_file_is_refused(tmp_path):
    (tmp_path / "ck").write_text("x")
    model, train, dev, cfg = build(tmp_path / "ck")
    with pytest.raises(ForeignCheckpointError, match="is a file, not a folder"):
        Trainer(model, cfg, loss_fn=mse).fit(train, dev)


def test_our_own_checkpoints_are_recognised_and_other_files_in_the_folder_are_kept(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    model, train, dev, cfg = build(tmp_path, max_epochs=1)
    Trainer(model, cfg, loss_fn=mse).fit(train, dev)
    assert checkpoint_meta(tmp_path / "last.safetensors")["kind"] == "last"
    assert checkpoint_meta(tmp_path / "best.safetensors")["kind"] == "best"
    model, train, dev, cfg = build(tmp_path, max_epochs=2, resume=False)
    Trainer(model, cfg, loss_fn=mse).fit(train, dev)                     # ours: replaced without a word
    assert sorted(os.listdir(tmp_path)) == ["best.safetensors", "last.safetensors", "notes.txt"]


def test_load_checkpoint_of_a_foreign_file_is_a_clear_error(tmp_path):
    (tmp_path / "x.safetensors").write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{broken}")
    with pytest.raises(ForeignCheckpointError, match=r"x\.safetensors is not a readable safetensors checkpoint"):
        load_checkpoint(tmp_path / "x.safetensors")
    assert checkpoint_meta(tmp_path / "x.safetensors") is None
    user_safetensors(tmp_path / "u.safetensors")
    assert checkpoint_meta(tmp_path / "u.safetensors") is None


# ------------------------------------------------------------------------------------ stale temp files
def stale(folder: Path, name: str, pid: int) -> str:
    """A temporary folder as save_checkpoint leaves it when killed (named and marked by the library)."""
    token = "0123456789abcdef"
    p = folder / f".{name}.tempo_analysis-tmp-{pid}-{token}"
    p.mkdir(parents=True)
    (p / TEMP_MARK).write_text(token)
    (p / "data").write_bytes(b"x" * 1000)
    return p.name


def test_temp_files_of_dead_runs_are_removed_on_the_next_run(tmp_path):
    dead, alive = dead_pid(), os.getppid()
    stale(tmp_path, "last.safetensors", dead)
    stale(tmp_path, "best.safetensors", dead)
    kept = stale(tmp_path, "last.safetensors", alive)                    # a live writer's: kept
    (tmp_path / f".last.safetensors.tmp-{dead}").write_bytes(b"x")      # no marker: not ours, kept
    model, train, dev, cfg = build(tmp_path, max_epochs=1)
    Trainer(model, cfg, loss_fn=mse).fit(train, dev)
    assert sorted(os.listdir(tmp_path)) == sorted([kept, f".last.safetensors.tmp-{dead}", "best.safetensors",
                                                   "last.safetensors"])


def test_temp_files_of_dead_runs_are_removed_before_training_starts(tmp_path):
    stale(tmp_path, "last.safetensors", dead_pid())
    model, train, dev, cfg = build(tmp_path)

    def fails(model, batch):
        raise RuntimeError("no step")
    with pytest.raises(RuntimeError, match="no step"):
        Trainer(model, cfg, loss_fn=fails).fit(train, dev)               # nothing saved, yet cleaned
    assert os.listdir(tmp_path) == []


def test_save_checkpoint_alone_also_cleans_dead_temps(tmp_path):
    stale(tmp_path, "c.safetensors", dead_pid())
    save_checkpoint(tmp_path / "c.safetensors", {"w": torch.ones(2)}, {})
    assert os.listdir(tmp_path) == ["c.safetensors"]


# ------------------------------------------------------------------------------------ SIGKILL
def resume_to_the_end(folder: Path):
    model, train, dev, cfg = build(folder)
    trainer = Trainer(model, cfg, loss_fn=mse).fit(train, dev)
    return model, trainer


@pytest.mark.slow
def test_sigkill_inside_a_checkpoint_write_leaves_last_loadable_and_resume_exact(tmp_path):
    folder = tmp_path / "run"
    child = run_child(folder, "block-in-write")
    try:
        assert child.stdout.readline().strip() == "START"
        assert child.stdout.readline().strip() == "WRITING"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    names = sorted(os.listdir(folder))
    assert names[1:] == ["best.safetensors", "last.safetensors"]                                    # an orphan:
    assert names[0].startswith(f".last.safetensors.tempo_analysis-tmp-{child.pid}-")                # ours, marked
    tensors, meta = load_checkpoint(folder / "last.safetensors")         # the previous one, complete
    assert meta["kind"] == "last" and meta["trainer"]["global_step"] == 2
    model, trainer = resume_to_the_end(folder)
    assert trainer.global_step_ == STEPS
    assert sorted(os.listdir(folder)) == ["best.safetensors", "last.safetensors"]   # no orphan after the next run
    ref = reference_weights(tmp_path)
    for name, value in ref.items():
        assert torch.equal(model.state_dict()[name], value), name


@pytest.mark.slow
def test_sigkill_at_a_random_moment_leaves_last_loadable(tmp_path):
    folder = tmp_path / "run"
    child = run_child(folder, "slow")
    try:
        assert child.stdout.readline().strip() == "START"
        deadline = time.monotonic() + 120
        while not (folder / "last.safetensors").exists() and time.monotonic() < deadline:
            time.sleep(0.005)
        time.sleep(random.Random(os.getpid()).uniform(0.0, 0.15))
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    tensors, meta = load_checkpoint(folder / "last.safetensors")
    assert meta["kind"] == "last" and 1 <= meta["trainer"]["global_step"] <= STEPS
    model, trainer = resume_to_the_end(folder)
    assert trainer.global_step_ == STEPS
    assert sorted(os.listdir(folder)) == ["best.safetensors", "last.safetensors"]
