"""The one settings module of future-text generation (no torch): variants, experiment knobs, presets, decoding.

- ``VARIANTS`` and the bias / feature kind of each (Li et al., "Future Language Modeling").
- ``FutureTextSettings``: the variants to train, the year split, and the model, tokenizer,
  training and history knobs of :class:`~tempo_analysis.future_text.estimator.FutureTextModel`.
- ``PRESETS`` and :func:`preset`: the named settings. ``"cli"`` is ``FutureTextSettings()``, the
  documented defaults (``FutureTextModel()`` and ``tempo-analysis future-text train``);
  ``"notebook"`` is notebook 04's (the same knobs, the five variants it compares); ``"paper"`` the
  paper's ACL experiment wherever the library implements it (``PAPER_DIFFERENCES`` names the rest, with
  the reason). ``PRESET_DATA``: the data each preset reads.
- ``GenerationSettings``: decoding knobs (paper defaults: beam 5 with sampling, top-k 50,
  top-p 0.92, no-repeat-n-gram 2).
"""

from __future__ import annotations

import re
from os import PathLike, fspath
from dataclasses import asdict, dataclass, replace

from tempo_analysis.data.errors import DataError

VARIANTS = ("baseline", "last-n", "freq-nolstm", "freq", "context", "context2")
BIAS_KIND = {"baseline": None, "last-n": None, "freq-nolstm": "nolstm", "freq": "trend", "context": "lstm",
             "context2": "gated"}
FEATURE_KIND = {"freq-nolstm": "freq", "freq": "freq", "context": "context", "context2": "context"}
WINDOW_VARIANTS = ("freq", "context", "context2")  # the variants whose LSTM reads a window of years
# the models the ``freq`` variant can be (``freq_bias``):
#   "monotone"  the library's trend model: each token's log-frequency centred on its own training-years mean,
#               a non-negative skip on the last year plus a monotone LSTM (a rising history never lowers the bias)
#   "lstm"      the same trend model with an unconstrained LSTM
#   "paper"     eq. 6 of the paper: B = A^T LSTM(log f_{i-m}, ..., log f_{i-1}), the raw log-frequencies, no skip
FREQ_MODELS = ("monotone", "lstm", "paper")


ALPHA_GRID = (1.0, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5)     # the paper's search grid for alpha


@dataclass
class FutureTextSettings:
    """Every knob of the experiment; the defaults are the documented ones (planted world, SmolLM2, 2-core CPU).

    Every variant shares one adaptation of a frozen LM (``adapt.py``): the LM's final hidden
    states are cached once; only a per-token output offset and a low-rank context adapter (all
    variants) and the temporal bias
    (bias variants) are trained, for the same number of steps, with early stopping on the dev year.
    """

    # --- what fit trains, and the year split ---
    variants: tuple = VARIANTS      # variant names ("last-n" = one model per last_n, "last-N" = one of them)
    dev_year: int | None = None     # None: 2020 for ACL (test 2021), else the second-last year
    test_year: int | None = None    # None: 2021 for ACL, else the last year
    train_years: tuple | None = None  # (first, last) training years; None = every year before dev_year
    # --- the frozen causal LM ---
    lm: str = "default"             # "default" (embedded SmolLM2-135M), "tiny" (small GPT-2 trained here), HF name/path
    device: str | None = None       # None: cuda, then mps, then cpu
    state_cache: bool = True        # keep the LM's states on disk (keyed by LM + texts); "tiny" never caches
    # --- the "tiny" LM (test-sized; trained from scratch on the training years) ---
    vocab_size: int = 1000          # its byte-level BPE vocabulary
    n_layer: int = 2
    n_embd: int = 64
    n_head: int = 2
    block_size: int = 128           # its pretraining windows
    dropout: float = 0.1
    pretrain_epochs: int = 4
    lr: float = 3e-3                # its pretraining learning rate
    # --- the shared adaptation ---
    finetune_steps: int = 200       # optimiser steps per variant (same for every variant)
    finetune_lr: float = 5e-2       # learning rate of the per-token output offset
    adapter_rank: int = 64          # context adapter (decoder state -> logits over S, rank r; 0 = offset only)
    adapter_check: bool = True      # keep the adapter only if it lowers the time-blind baseline's dev loss
    bias_lr: float = 1e-2           # learning rate of the temporal-bias modules (and alpha)
    batch_size: int = 512           # positions per step
    eval_every: int = 25            # dev-loss evaluations (early stopping, best weights kept)
    year_batches: bool = True       # each batch from one year (bias LSTM once per step)
    window: int = 3                 # W previous years into the LSTM
    lstm_hidden: int = 32
    freq_bias: str = "monotone"     # freq's model: FREQ_MODELS (the library's trend model, monotone or not; or the paper's eq. 6)
    alpha: float = 1.0              # bias strength: the initial value ("learn"), or the fixed one ("fixed")
    alpha_search: str = "learn"     # "learn" (from alpha), "grid" (ALPHA_GRID, best dev perplexity), "fixed"
    last_n: tuple = (2, 3)          # baselines on the last n training years
    context_encoder: str = "lm"     # "lm": the LM's own states (eq. 7); else an encoder name (MiniLM: "default")
    context_max_length: int = 256
    seed: int = 0
    progress: bool = False

    def __post_init__(self):
        self.variants = (self.variants,) if isinstance(self.variants, str) else tuple(self.variants)
        self.last_n = tuple(self.last_n)
        self.train_years = None if self.train_years is None else tuple(self.train_years)
        if not self.variants:
            raise ValueError("variants=(): name at least one model to train, e.g. variants=('baseline', 'freq')")
        for v in self.variants:
            if v not in VARIANTS and not re.fullmatch(r"last-\d+", str(v)):
                raise ValueError(f"variants: {v!r} is not a variant. Fix: use {', '.join(VARIANTS)} "
                                 "(or last-N, e.g. last-2)")
        if isinstance(self.lm, PathLike):
            self.lm = fspath(self.lm)
        if not isinstance(self.lm, str):
            raise TypeError(f"lm={type(self.lm).__name__}: give the LM by name ('default', 'tiny', a hub name) or "
                            "as a local folder written by save_pretrained")
        if self.alpha_search not in ("learn", "grid", "fixed"):
            raise ValueError(f"alpha_search={self.alpha_search!r}: use 'learn', 'grid' or 'fixed'")
        if self.freq_bias not in FREQ_MODELS:
            raise ValueError(f"freq_bias={self.freq_bias!r}: use one of {', '.join(map(repr, FREQ_MODELS))}")

    def to_dict(self) -> dict:
        d = asdict(self)
        for k in ("variants", "last_n", "train_years"):
            d[k] = None if d[k] is None else list(d[k])
        return d


# the named settings: FutureTextModel(name), preset(name); "cli" = FutureTextSettings(), the documented defaults
PRESETS: dict[str, FutureTextSettings] = {
    "cli": FutureTextSettings(),
    # notebook 04: the defaults, and the five models it compares (freq-nolstm left out)
    "notebook": FutureTextSettings(variants=("baseline", "last-n", "freq", "context", "context2")),
    # the paper (Li et al., "Future Language Modeling", sections 4.1-4.3) on ACL abstracts: train 2003-2019,
    # dev 2020, test 2021; GPT-2; every model it compares (Baseline, Baseline-n with n = 2 and 3,
    # Frequency-NoLSTM, Frequency, Context, Context^2); alpha searched over 1 ... 1e-5 on dev perplexity; eq. 6's
    # Frequency model (an LSTM of hidden 32 over the raw log-frequencies); RoBERTa's embeddings for the context histories
    "paper": FutureTextSettings(variants=VARIANTS, dev_year=2020, test_year=2021, train_years=(2003, 2019), lm="gpt2",
                                alpha_search="grid", last_n=(2, 3), lstm_hidden=32, freq_bias="paper",
                                context_encoder="roberta-base"),
}

# the data each preset reads (`future-text train --data` when not given)
PRESET_DATA: dict[str, str] = {"cli": "world", "notebook": "world", "paper": "acl"}

# each paper setting the "paper" preset does not reach (or reaches only in part), with the reason
PAPER_DIFFERENCES: dict[str, str] = {
    "fine-tuning": "the paper fine-tunes GPT-2 (10 epochs, early stopping; batch 2 with gradient accumulation 2; "
                   "dropout 0.1; Adam); the library keeps the LM frozen and trains a per-token output offset, a "
                   "low-rank context adapter and the bias for finetune_steps steps on cached states (adapt.py)",
    "context_encoder": "the paper embeds each year with a RoBERTa fine-tuned on that year; the preset reads "
                       "roberta-base's embeddings, not fine-tuned",
    "window": "the excerpt does not give the window m of years the LSTM reads; 3 here",
    "runs": "the paper trains and evaluates each model three times; `future-text train` fits one variant once "
            "(--variant; loop over --seed for more runs)",
    "last-n": "the paper evaluates n = 1 ... 10 and reports n = 2 and 3; the preset fits those two",
}


def preset(name: str, **overrides) -> FutureTextSettings:
    """A copy of the preset ``name`` ("cli", "notebook", "paper"), with fields replaced by ``overrides``."""
    key = str(name).strip().lower()
    if key not in PRESETS:
        raise DataError(f"unknown future-text preset {name!r}. Fix: use one of {', '.join(map(repr, PRESETS))}.")
    return replace(PRESETS[key], **overrides)


@dataclass
class GenerationSettings:
    """Decoding knobs; ``num_beams=1, do_sample=True`` is plain top-k/top-p sampling."""

    num_beams: int = 5
    do_sample: bool = True
    top_k: int = 50
    top_p: float = 0.92
    no_repeat_ngram_size: int = 2
    max_new_tokens: int = 80        # FutureTextModel.generation_settings() sizes it to the median abstract
    min_new_tokens: int = 10
    seed: int = 0
    instruction: str | None = None  # chat LMs (SmolLM2-Instruct): start from this user turn instead of BOS

    def to_dict(self) -> dict:
        return asdict(self)
