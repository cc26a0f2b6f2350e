"""Shared tiny fixtures for the future-text tests (tiny GPT-2 configs, one thread: fast on 2 cores)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch


@pytest.fixture(autouse=True)
def _one_thread():
    """Tiny models are dominated by thread overhead; one thread is faster and kinder to a shared box."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def tiny_gpt2(vocab_size: int = 50, n_embd: int = 16, seed: int = 0, n_positions: int = 64):
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    cfg = GPT2Config(vocab_size=vocab_size, n_layer=2, n_embd=n_embd, n_head=2, n_positions=n_positions,
                     bos_token_id=0, eos_token_id=0, pad_token_id=0, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    return GPT2LMHeadModel(cfg)


def toy_frame(years=range(2010, 2016), docs_per_year: int = 12, seed: int = 0) -> pd.DataFrame:
    """Small (year, text) corpus: 'transformer' rises and 'kernel' falls over the years."""
    rng = np.random.default_rng(seed)
    filler = ["we study parsing of sentences", "results improve accuracy on benchmarks",
              "the model learns representations", "experiments show strong performance"]
    rows, years = [], list(years)
    for i, y in enumerate(years):
        share = (i + 1) / len(years)
        for k in range(docs_per_year):
            words = [filler[rng.integers(len(filler))] for _ in range(3)]
            words.insert(1, "a transformer encoder helps" if rng.random() < share else "a kernel method helps")
            rows.append({"doc_id": f"{y}-{k}", "year": y, "text": ". ".join(words) + "."})
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def world():
    """The what-if tests' tiny world: a tokenizer trained on the toy corpus, its frequency table, one frozen
    tiny LM and its cached states (``whatif_world.build_world``)."""
    from .whatif_world import build_world

    return build_world()


TINY = dict(lm="tiny", vocab_size=300, n_layer=1, n_embd=16, n_head=2, block_size=64, pretrain_epochs=1,
            finetune_steps=30, eval_every=10, batch_size=64, window=2, last_n=(1,), lstm_hidden=8)


def _generation():
    from tempo_analysis.future_text.generation import GenerationSettings

    return GenerationSettings(max_new_tokens=12, min_new_tokens=4, num_beams=2)


GEN = _generation()


@pytest.fixture(scope="module")
def exp():
    """A FutureTextModel of every variant on tiny settings, fitted on ``toy_frame()`` and scored."""
    from tempo_analysis.future_text.estimator import FutureTextModel

    torch.set_num_threads(1)
    e = FutureTextModel(variants=["baseline", "last-n", "freq-nolstm", "freq"], **TINY)
    assert e.fit(toy_frame()) is e
    e.score(meteor_texts=2, generation=GEN)
    return e
