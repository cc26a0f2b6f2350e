"""The Trainer with a real (tiny, random) Hugging Face model: dict batches, out.loss, tied weights, resume."""

import pytest
import torch
from torch.utils.data import Dataset

from tempo_analysis.training import Trainer, TrainConfig, load_checkpoint, seed_everything

transformers = pytest.importorskip("transformers")


class Tokens(Dataset):
    """Counting sequences (start, start+1, ...) mod 50, so there is something to learn; labels = inputs."""

    def __init__(self, n, seed):
        g = torch.Generator().manual_seed(seed)
        self.ids = (torch.randint(0, 50, (n, 1), generator=g) + torch.arange(12)) % 50

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "labels": self.ids[i]}


def tiny_gpt2():
    seed_everything(0)
    cfg = transformers.GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=50, n_positions=16,
                                  bos_token_id=0, eos_token_id=0)       # dropout 0.1 stays on
    return transformers.GPT2LMHeadModel(cfg)


def config(folder, **kw):
    return TrainConfig(max_epochs=2, batch_size=4, grad_accum_steps=2, lr=1e-2, warmup_ratio=0.2,
                       eval_every=2, device="cpu", progress=False, checkpoint_dir=str(folder), **kw)


def test_tiny_gpt2_trains_checkpoints_tied_weights_and_resumes_exactly(tmp_path):
    train, dev = Tokens(24, 0), Tokens(8, 1)                  # 6 micro-batches -> 3 steps/epoch
    ref_model = tiny_gpt2()
    ref = Trainer(ref_model, config(tmp_path / "ref")).fit(train, dev)
    evals = [r["loss"] for r in ref.history_ if "loss" in r]
    assert ref.global_step_ == 6 and len(evals) == 3 and evals[-1] < evals[0] - 0.1   # it learns
    tensors, meta = load_checkpoint(tmp_path / "ref" / "last.safetensors")
    assert meta["model"]["aliases"] == {"lm_head.weight": "transformer.wte.weight"}
    assert "model.lm_head.weight" not in tensors and "model.transformer.wte.weight" in tensors

    calls = {"n": 0}

    def crash_at_step_4_eval(model, batch):       # calls: steps 1-2 (4), eval (2), steps 3-4 (4), crash in
                                                 # the step-4 eval -> resume from the step-2 checkpoint
        calls["n"] += 1
        if calls["n"] > 10:
            raise KeyboardInterrupt
        return model(**batch).loss

    with pytest.raises(KeyboardInterrupt):
        Trainer(tiny_gpt2(), config(tmp_path / "run"), loss_fn=crash_at_step_4_eval).fit(train, dev)
    seed_everything(1)
    other = transformers.GPT2LMHeadModel(tiny_gpt2().config)  # different weights before resuming
    resumed = Trainer(other, config(tmp_path / "run")).fit(train, dev)
    assert resumed.history_ == ref.history_
    assert other.lm_head.weight is other.transformer.wte.weight   # tie survives loading
    for name, value in ref_model.state_dict().items():
        assert torch.equal(other.state_dict()[name], value), name
