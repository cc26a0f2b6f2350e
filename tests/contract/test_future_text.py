"""FutureTextModel passes the estimator contract (``tempo_analysis.testing.check_estimator``) on a
tiny configuration: a one-layer GPT-2 with a BPE tokenizer trained here on a toy corpus, a few
adaptation steps, two models (the time-blind baseline and the frequency bias)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from tempo_analysis.future_text.estimator import FutureTextModel
from tempo_analysis.future_text.generation import GenerationSettings
from tempo_analysis.testing import check_estimator



def toy_frame(years=range(2010, 2016), docs_per_year: int = 12, seed: int = 0) -> pd.DataFrame:
    """A small (year, text) corpus: 'transformer' rises and 'kernel' falls over the years."""
    rng = np.random.default_rng(seed)
    filler = ["we study parsing of sentences", "results improve accuracy on benchmarks",
              "the model learns representations", "experiments show strong performance"]
    rows, years = [], list(years)
    for i, y in enumerate(years):
        for k in range(docs_per_year):
            words = [filler[rng.integers(len(filler))] for _ in range(3)]
            words.insert(1, "a transformer encoder helps" if rng.random() < (i + 1) / len(years) else "a kernel method helps")
            rows.append({"doc_id": f"{y}-{k}", "year": y, "text": ". ".join(words) + "."})
    return pd.DataFrame(rows)

TINY = dict(lm="tiny", vocab_size=300, n_layer=1, n_embd=16, n_head=2, block_size=64, pretrain_epochs=1,
            finetune_steps=10, eval_every=5, batch_size=64, window=2, lstm_hidden=8, adapter_rank=4,
            variants=("baseline", "freq"), device="cpu")
GEN = GenerationSettings(max_new_tokens=6, min_new_tokens=2, num_beams=1)


def outputs(est: FutureTextModel) -> dict:
    """What the fitted model predicts: each model's dev/test perplexities and alpha, and seeded texts."""
    return {"scores": est.score(), "texts": est.generate("freq", 2, settings=GEN)}


def test_future_text_model_passes_the_estimator_contract():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        frame = toy_frame()
        est = check_estimator(lambda **kw: FutureTextModel(TINY, **kw), frame, outputs=outputs,
                              figures=lambda e: [e.visualize_trends(["transformer", "kernel"], models=("baseline", "freq")),
                                                 e.visualize_generations("baseline", "freq", n=1, settings=GEN)],
                              bad_override={"alpha_search": "sometimes"})
    finally:
        torch.set_num_threads(n)
    assert est.model_ is est.models_["baseline"] and est.history_ is est.histories_["baseline"]
    assert set(est.models_) == set(est.histories_) == {"baseline", "freq"}


def test_unknown_variant_is_refused_by_fit_naming_the_setting():
    with pytest.raises(ValueError, match="variants: 'nope'"):
        FutureTextModel(TINY, variants=("baseline", "nope")).fit(toy_frame())
