"""The plain settings of future-text generation (no torch): variants, experiment knobs, decoding.

- ``VARIANTS`` and the bias / feature kind of each (Li et al., "Future Language Modeling").
- ``FutureTextSettings``: model, tokenizer, training and history knobs of
  :class:`~tempo_analysis.future_text.pipeline.FutureTextModel`; ``default_settings()`` gives
  notebook 04's defaults.
- ``GenerationSettings``: decoding knobs (paper defaults: beam 5 with sampling, top-k 50,
  top-p 0.92, no-repeat-n-gram 2).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

VARIANTS = ("baseline", "last-n", "freq-nolstm", "freq", "context", "context2")
BIAS_KIND = {"baseline": None, "last-n": None, "freq-nolstm": "nolstm", "freq": "lstm", "context": "lstm",
             "context2": "gated"}
FEATURE_KIND = {"freq-nolstm": "freq", "freq": "freq", "context": "context", "context2": "context"}


@dataclass
class FutureTextSettings:
    """Every knob of the experiment; defaults are the notebook's (planted world, ~1 min on 2 cores)."""

    vocab_size: int = 1000          # BPE vocabulary (output layer dominates CPU cost)
    n_layer: int = 2                # small GPT-2 trained from scratch
    n_embd: int = 64
    n_head: int = 2
    block_size: int = 128           # tokens per training/scoring window
    dropout: float = 0.1
    pretrain_epochs: int = 4        # the "pretrained LM" on all training years
    lr: float = 3e-3
    finetune_steps: int = 60        # optimiser steps per variant (same for every variant)
    finetune_lr: float = 5e-4
    bias_lr: float = 1e-2           # learning rate of the temporal-bias modules
    batch_size: int = 16
    eval_every: int = 20            # dev-loss evaluations during fine-tuning (early stopping)
    year_batches: bool = True       # each fine-tuning batch from one year (bias LSTM once per step)
    window: int = 3                 # W previous years into the LSTM
    lstm_hidden: int = 32
    alpha: float = 1.0              # bias strength
    last_n: tuple = (1, 2, 3)       # baselines on the last n training years
    context_encoder: str = "default"
    context_max_length: int = 256
    seed: int = 0
    progress: bool = False

    def to_dict(self) -> dict:
        d = asdict(self)
        d["last_n"] = list(d["last_n"])
        return d


def default_settings(**overrides) -> FutureTextSettings:
    """The notebook's defaults (shared by notebook 04 and its test)."""
    return FutureTextSettings(**overrides)


@dataclass
class GenerationSettings:
    """Decoding knobs; ``num_beams=1, do_sample=True`` is plain top-k/top-p sampling."""

    num_beams: int = 5
    do_sample: bool = True
    top_k: int = 50
    top_p: float = 0.92
    no_repeat_ngram_size: int = 2
    max_new_tokens: int = 80
    min_new_tokens: int = 10
    seed: int = 0

    def to_dict(self) -> dict:
        return asdict(self)
