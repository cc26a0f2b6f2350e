"""Future language model: a causal LM whose logits get a temporal word bias for the target year.

    logits[b, k, :] = LM(x[b, :k]) + offset  +  alpha * bias(year[b])              (Frequency, Context, NoLSTM)
    logits[b, k, :] = LM(x[b, :k]) + offset  +  gate(H[b, k], year[b]) * bias(...)  (Context^2, bias.py)

``offset`` is the head adaptation every variant shares (baselines included): a learned output
offset per token of ``token_ids`` (the tokens seen in the history, ``S``) and one shared value for
every other token. The temporal bias covers ``S`` only (other tokens get none); ``states.py``
explains why this keeps training and scoring on a frozen LM exact and cheap. ``alpha`` is a
parameter: fixed (the grid-searched value) or learned from its initial value (``learn_alpha``).

Any Hugging Face ``AutoModelForCausalLM`` with a TIED output head can sit inside (``lm``): the
default is a small GPT-2 trained from scratch on the corpus (``pipeline.small_gpt2``), users online
pass ``gpt2``. The per-year history table (frequency features ``[Y, V, 1]`` or averaged contextual
embeddings ``[Y, V, E]``) is a buffer, so a checkpoint (safetensors) carries everything needed to
score and write text for the year after the last history year.

Efficiency: the bias is computed once per DISTINCT year in a batch (``torch.unique``), then
indexed per row; in eval mode under ``no_grad`` it is cached per year for generation. The
reference design (bias per example x vocabulary) is kept behind ``bias_per_example=True`` only so
benchmarks/future_lm_step.py can time it.
"""

from __future__ import annotations

import weakref
from os import PathLike, fspath
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from transformers import AutoConfig, AutoModelForCausalLM, LogitsProcessor, PreTrainedConfig, PreTrainedModel
from transformers.modeling_outputs import CausalLMOutputWithPast

from tempo_analysis.causal_lm import cache_keyword, output_cache
from tempo_analysis.causal_lm import load_causal_lm
from tempo_analysis.data.errors import DataError
from tempo_analysis.future_text.bias import GatedBias, PreviousYearBias, TrendLSTMBias, WindowLSTMBias, window_index
from tempo_analysis.future_text.same_lm import check_same_lm, weights_fingerprint
from tempo_analysis.future_text.config import BIAS_KIND, FEATURE_KIND, VARIANTS

__all__ = ["VARIANTS", "BIAS_KIND", "FEATURE_KIND", "FutureLMConfig", "FutureLM", "TemporalBiasProcessor",
           "load_lm_model_on_cpu"]


# the output field of the key/value cache: "cache" in transformers 5's outputs, "past_key_values" before
_OUTPUT_CACHE = "cache" if "cache" in CausalLMOutputWithPast.__dataclass_fields__ else "past_key_values"


class FutureLMConfig(PreTrainedConfig):
    """The wrapped LM's config (a dict with ``model_type``) plus the temporal-bias settings."""

    model_type = "future_lm"

    lm_config: dict | None = None      # the wrapped LM's config (``lm.config.to_dict()``); None = {}
    variant: str = "freq"              # one of VARIANTS
    window: int = 3                    # W previous years fed to the LSTM
    lstm_hidden: int = 32              # 32 in the paper's code
    feature_dim: int = 1               # 1 (frequency) or the encoder width (context)
    alpha: float = 1.0                 # bias strength (generation may override); learned value after fit
    learn_alpha: bool = False          # train alpha (from its initial value) with the bias
    center_tokens: bool = False        # LSTM input: each token's feature minus its own training-years mean
    bias_vocab: int = 0                # |S|: tokens with an offset and a temporal bias (0 = the whole vocabulary)
    nolstm_init: float = 0.0           # Frequency-NoLSTM's learned scale at start
    adapter_rank: int = 0              # context adapter: a rank-r map from the decoder state to logits over S (0 = none)
    monotone_trend: bool = True        # Frequency (trend model): a monotone LSTM (a rising year never lowers the bias; bias.py)
    freq_model: str = "trend"          # variant "freq": "trend" (the library's TrendLSTMBias) or "eq6" (the paper's eq. 6)
    history_first_year: int = 0        # the history table covers history_first_year ...
    history_num_years: int = 0         # ... for this many years (set by FutureLM.set_history)
    train_years: list | None = None    # years the model was trained on (metadata); None = []
    lm_weights_fingerprint: str = ""   # same_lm.weights_fingerprint of the LM the head was saved around ("" = unknown)

    def __post_init__(self, **kwargs):
        if self.variant not in VARIANTS:
            raise ValueError(f"FutureLMConfig.variant={self.variant!r}: use one of {', '.join(VARIANTS)}")
        if self.freq_model not in ("trend", "eq6"):
            raise ValueError(f"FutureLMConfig.freq_model={self.freq_model!r}: use 'trend' (the library's) or 'eq6' (the paper's)")
        if not isinstance(self.window, int) or self.window < 1:
            raise ValueError(f"FutureLMConfig.window={self.window!r}: use a positive number of previous years")
        self.lm_config = dict(self.lm_config or {})
        self.train_years = list(self.train_years or [])
        super().__post_init__(**kwargs)

    @property
    def bias_kind(self):
        if self.variant == "freq" and self.freq_model == "eq6":
            return "eq6"
        return BIAS_KIND[self.variant]


def load_lm_model_on_cpu(name_or_path: str, *, what: str = "Causal LM"):
    """The causal LM (model only, on the CPU) named by ``"default"`` (the embedded SmolLM2-135M-Instruct),
    a local folder or a hub name: :func:`tempo_analysis.causal_lm.load_causal_lm`, the project's one
    loader (offline, a hub name fails at once with a clear message; a cached one loads without retries)."""
    model, _ = load_causal_lm(name_or_path, device="cpu", what=what)
    return model


def _check_tied(lm, identity: bool = False) -> None:
    """The temporal bias (and Context^2's E_v) assume the output head IS the input embedding."""
    head = lm.get_output_embeddings()
    tied = head is not None and bool(getattr(lm.config, "tie_word_embeddings", False))
    if identity and tied:   # a built model: the tensors must really be shared
        tied = head.weight is lm.get_input_embeddings().weight
    if not tied:
        raise ValueError("the causal LM's output head is not tied to its input embeddings; the temporal bias "
                         "(and Context^2's E_v) assume a tied head. Fix: load the LM with "
                         "tie_word_embeddings=True (GPT-2 does by default)")


def _hidden_capture(model_ref):
    """A forward pre-hook for the LM head that keeps the decoder state on the model, if still alive."""
    def capture(module, args):
        model = model_ref()
        if model is not None:
            model._hidden = args[0]
    return capture


class FutureLM(PreTrainedModel):
    """A causal LM plus a temporal word bias; ``forward(input_ids, years=...)`` like any HF LM."""

    config_class = FutureLMConfig
    base_model_prefix = "future_lm"
    _supports_cache_class = True

    def __init__(self, config: FutureLMConfig, lm=None):
        super().__init__(config)
        if lm is None:
            if not config.lm_config:
                raise ValueError("FutureLMConfig.lm_config is empty: give the wrapped LM's config dict "
                                 "(lm.config.to_dict()) or build with FutureLM.from_lm(...)")
            lm = AutoModelForCausalLM.from_config(AutoConfig.for_model(**config.lm_config))
        self.lm = lm
        emb, head = lm.get_input_embeddings(), lm.get_output_embeddings()
        _check_tied(lm)
        V, d = emb.weight.shape
        n = config.bias_vocab or V
        if n > V:
            raise ValueError(f"FutureLMConfig.bias_vocab={n} exceeds the LM's vocabulary ({V})")
        Fd, kind = config.feature_dim, config.bias_kind
        # --- the temporal bias module --------------------------------------------------------------
        if kind == "nolstm":
            self.bias = PreviousYearBias(config.nolstm_init)
        elif kind in ("lstm", "eq6"):
            self.bias = WindowLSTMBias(Fd, config.lstm_hidden)
        elif kind == "trend":
            self.bias = TrendLSTMBias(Fd, config.lstm_hidden, monotone=config.monotone_trend)
        elif kind == "gated":
            self.bias = GatedBias(Fd, config.lstm_hidden, d)
        else:
            self.bias = None
        # --- the history table (part of the checkpoint) and its input normalisation -----------------
        self.register_buffer("token_ids", torch.arange(n))                  # S: ids with an offset and a bias
        self.offset = nn.Parameter(torch.zeros(n + 1))                      # head adaptation; [-1] = the rest
        self.alpha = nn.Parameter(torch.tensor(float(config.alpha)), requires_grad=bool(config.learn_alpha))
        self.register_buffer("history", torch.zeros(config.history_num_years, n, Fd))
        self.register_buffer("feature_mean", torch.zeros(n, Fd) if config.center_tokens else torch.zeros(Fd))
        self.register_buffer("feature_std", torch.ones(Fd))
        # --- the context adapter (head adaptation that reads the decoder state; every variant alike) ---
        self.adapter = None
        if config.adapter_rank:
            self.adapter = ContextAdapter(d, int(config.adapter_rank), n)
        self.bias_per_example = False        # reference design, for benchmarks only
        self._bias_cache: dict[int, torch.Tensor] = {}
        self._cache_key = None
        self._hidden = None                  # decoder state captured at the LM head (Context^2)
        if kind == "gated" or self.adapter is not None:
            # the LM (and its head) may be shared by several models: the hook holds this model weakly
            # and is removed when the model is collected, so a discarded model does not stay alive
            handle = head.register_forward_pre_hook(_hidden_capture(weakref.ref(self)))
            weakref.finalize(self, handle.remove)
        self.post_init()

    def _init_weights(self, module):
        """Bias modules initialise themselves; the wrapped LM keeps its own (or pretrained) weights."""

    # ------------------------------------------------------------------------------------------
    @classmethod
    def from_lm(cls, lm, variant: str = "freq", token_ids=None, **config_kw) -> "FutureLM":
        """Wrap an LM instance, local path or hub name (``"gpt2"`` online) with a temporal bias;
        ``token_ids`` = S (default: the whole vocabulary). A name is loaded by
        :func:`tempo_analysis.causal_lm.load_causal_lm` (``"default"``: the embedded SmolLM2-135M-Instruct)."""
        if isinstance(lm, (str, PathLike)):
            lm = load_lm_model_on_cpu(fspath(lm))
        elif not callable(getattr(lm, "get_output_embeddings", None)):
            raise TypeError(f"FutureLM.from_lm(lm={lm!r}): give a causal LM with a tied head: a model instance "
                            "(AutoModelForCausalLM), 'default' (the embedded SmolLM2-135M-Instruct), a local folder "
                            "written by save_pretrained, or a hub name (online)")
        _check_tied(lm, identity=True)
        if config_kw.get("feature_dim") is None:
            config_kw.pop("feature_dim", None)
        if token_ids is not None:
            token_ids = torch.as_tensor(np.asarray(token_ids), dtype=torch.long)
            config_kw["bias_vocab"] = len(token_ids)
        cfg = FutureLMConfig(lm_config=lm.config.to_dict(), variant=variant, **config_kw)
        model = cls(cfg, lm=lm)
        if token_ids is not None:
            model.token_ids.copy_(token_ids.to(model.token_ids.device))
        return model

    @property
    def vocab_size(self) -> int:
        return self.lm.get_input_embeddings().weight.shape[0]

    @property
    def history_years(self) -> list[int]:
        return list(range(self.config.history_first_year, self.config.history_first_year + self.history.shape[0]))

    def set_history(self, features, first_year: int, refit_norm: bool = True) -> "FutureLM":
        """Install the per-year table ``[Y, V]`` (frequency) or ``[Y, V, E]`` (context) for years first_year...

        ``refit_norm=True`` (before training) recomputes the LSTM input normalisation; what-if edits
        of a trained model pass False so the learned LSTM sees inputs on the scale it was trained on.
        """
        f = torch.as_tensor(np.asarray(features), dtype=torch.float32)
        f = f[..., None] if f.dim() == 2 else f
        if f.dim() != 3:
            raise DataError(f"history: expected [years, vocab] or [years, vocab, features], got shape {tuple(f.shape)}")
        if f.shape[1] != len(self.token_ids):
            raise DataError(f"history: vocabulary axis has {f.shape[1]} tokens but the model biases "
                            f"{len(self.token_ids)} (token_ids). Fix: build the table with the tokenizer saved with "
                            "this model, restricted to model.token_ids")
        if f.shape[2] != self.config.feature_dim:
            raise DataError(f"history: feature axis has {f.shape[2]} values, the model expects "
                            f"feature_dim={self.config.feature_dim}. Fix: use the {FEATURE_KIND.get(self.config.variant)} table")
        if f.shape[0] < self.config.window:
            raise DataError(f"window={self.config.window} is longer than the {f.shape[0]} available history years "
                            f"({first_year}-{first_year + f.shape[0] - 1}). Fix: use window <= {f.shape[0]} or give more years")
        self.history = f.to(self.history.device)
        if refit_norm:
            flat = f.reshape(-1, f.shape[-1])
            if self.config.center_tokens:            # per-token level removed: the LSTM reads changes
                mean = f.mean(0)                                             # [n, F]
                std = (f - mean).reshape(-1, f.shape[-1]).std(0)
            else:
                mean, std = flat.mean(0), flat.std(0)
            self.feature_mean = mean.to(self.history.device)
            self.feature_std = std.clamp_min(1e-6).to(self.history.device)
        self.config.history_first_year, self.config.history_num_years = int(first_year), int(f.shape[0])
        self.clear_bias_cache()
        return self

    def clear_bias_cache(self):
        self._bias_cache = {}
        self._cache_key = None

    def _versions(self) -> tuple:
        """In-place version counters of everything the bias reads: any update (an optimiser step,
        ``load_state_dict``, a manual ``fill_``) changes them, so a cached bias is never stale."""
        ts = [self.history, self.feature_mean, self.feature_std, self.alpha]
        ts += list(self.bias.parameters()) if self.bias is not None else []
        ts += [self.lm.get_input_embeddings().weight] if self.config.bias_kind == "gated" else []
        return tuple((id(t), t._version) for t in ts)

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        self.clear_bias_cache()
        return super().load_state_dict(state_dict, strict=strict, assign=assign)

    def train(self, mode: bool = True):
        self.clear_bias_cache()
        return super().train(mode)

    # ------------------------------------------------------------------------------------------
    def check_years(self, years) -> None:
        """Each target year needs the previous year inside the history table."""
        first, n = self.config.history_first_year, self.history.shape[0]
        bad = sorted({int(y) for y in torch.as_tensor(years).reshape(-1).tolist() if not first + 1 <= y <= first + n})
        if bad:
            raise DataError(f"column 'year': target year(s) {bad[:5]} have no previous-year history; the table "
                            f"covers {first}-{first + n - 1}, so biases exist for {first + 1}-{first + n}. Fix: "
                            "extend the history (set_history) or choose a year in that range")

    def _compute_year_terms(self, years: torch.Tensor, share_rows: bool = True) -> torch.Tensor:
        """Bias terms for the given years: ``[U, V]`` (or ``[U, V, 2]`` for Context^2).

        The history rows the windows need are gathered (and normalised, and projected by the
        LSTM's input weights) once per distinct history year; ``share_rows=False`` is the
        reference design that gathers a separate window per entry of ``years``.
        """
        full = window_index(years, self.config.history_first_year, self.history.shape[0], self.config.window)
        if share_rows:
            needed, idx = torch.unique(full, return_inverse=True)             # distinct history years
        else:
            needed, idx = full.reshape(-1), torch.arange(full.numel(), device=full.device).reshape(full.shape)
        rows = self.history[needed]                                         # [R, V, F]
        if self.config.bias_kind == "eq6":                                  # eq. 6: the raw log-frequencies
            return self.bias(rows, idx)
        centred = rows - self.feature_mean
        if self.config.bias_kind == "nolstm":                               # raw (or per-token centred) log-frequency
            return self.bias(centred if self.config.center_tokens else rows, idx)
        rows = centred / self.feature_std
        if self.config.bias_kind == "trend":
            return self.bias(rows, idx, centred)
        if self.config.bias_kind == "gated":
            return self.bias(rows, idx, self.lm.get_input_embeddings().weight[self.token_ids])
        return self.bias(rows, idx)

    def year_terms(self, years) -> torch.Tensor:
        """Per-row bias terms ``[B, V(, 2)]``, computed once per distinct year (cached in eval/no-grad)."""
        terms, inv = self.distinct_year_terms(years)
        return terms if inv is None else terms[inv]

    def distinct_year_terms(self, years):
        """``(terms [U, V(, 2)], inv [B])`` for the distinct years (``inv=None``: terms are per row)."""
        years = torch.as_tensor(years, device=self.history.device).reshape(-1).long()
        self.check_years(years)
        if self.bias_per_example:                                         # reference design (benchmark)
            return self._compute_year_terms(years, share_rows=False), None
        uniq, inv = torch.unique(years, return_inverse=True)
        if self.training or torch.is_grad_enabled():
            return self._compute_year_terms(uniq), inv
        key = self._versions()
        if key != self._cache_key:
            self._bias_cache, self._cache_key = {}, key
        missing = [int(y) for y in uniq.tolist() if int(y) not in self._bias_cache]
        if missing:
            terms = self._compute_year_terms(torch.tensor(missing, device=uniq.device))
            self._bias_cache.update({y: t for y, t in zip(missing, terms)})
        return torch.stack([self._bias_cache[int(y)] for y in uniq.tolist()]), inv

    def temporal_logit_bias(self, terms: torch.Tensor, hidden: torch.Tensor | None, alpha) -> torch.Tensor:
        """The bias over S: ``[B, 1, |S|]`` (position-free) or ``[B, S, |S|]`` (Context^2)."""
        if self.config.bias_kind == "gated":
            return self.bias.apply_gate(hidden, terms, alpha)
        return alpha * terms[:, None, :]

    def _alpha(self, alpha):
        return self.alpha if alpha is None else alpha

    @property
    def reads_hidden(self) -> bool:
        """Whether the added logits depend on the decoder state (Context^2's gate, the context adapter)."""
        return self.config.bias_kind == "gated" or self.adapter is not None

    def full_offset(self, years=None, hidden=None, alpha=None, terms=None) -> torch.Tensor:
        """Everything added to the LM logits over the whole vocabulary: ``[V]``, ``[B, 1, V]`` or ``[B, S, V]``
        (``hidden [B, S, d]``, the decoder states, is needed by Context^2 and the context adapter).
        ``terms``: per-row year terms already computed (``year_terms``), used instead of ``years``."""
        V = self.vocab_size
        off = self.offset[-1].expand(V).clone()
        off[self.token_ids] = self.offset[:-1]
        b = None
        if self.bias is not None:
            if years is None and terms is None:
                raise ValueError(f"FutureLM({self.config.variant}) needs years=[B] target years")
            terms = self.year_terms(years) if terms is None else terms
            b = self.temporal_logit_bias(terms, hidden, self._alpha(alpha))                  # [B, s, |S|]
        if self.adapter is not None:
            if hidden is None:
                raise ValueError("FutureLM with a context adapter needs the decoder states (hidden=[B, S, d])")
            a = self.adapter(hidden)                                                         # [B, S, |S|]
            b = a if b is None else b + a
        if b is None:
            return off
        full = off.expand(b.shape[0], b.shape[1], V).clone()
        full[..., self.token_ids] = full[..., self.token_ids] + b
        return full

    # ------------------------------------------------------------------------------------------
    def state_logits(self, hidden: torch.Tensor, years, lse_rest: torch.Tensor, alpha=None) -> torch.Tensor:
        """Logits over ``S`` plus one "rest" class from cached head-input states ``hidden [P, d]``:
        ``[P, |S| + 1]``; the rest class is ``lse_rest + offset[-1]`` (states.py). Exact."""
        head = self.lm.get_output_embeddings()
        w = head.weight[self.token_ids]
        z = hidden @ w.t()
        if getattr(head, "bias", None) is not None:
            z = z + head.bias[self.token_ids]
        shift = self.offset[:-1]                                   # [|S|], added to every position once
        if self.adapter is not None:
            z = z + self.adapter(hidden)
        if self.bias is not None and self.config.bias_kind == "gated":
            terms = self.year_terms(years)                                                   # [P, |S|, 2]
            z = z + self.temporal_logit_bias(terms, hidden[:, None, :], self._alpha(alpha))[:, 0]
        elif self.bias is not None:
            terms, inv = self.distinct_year_terms(years)                                     # [U, |S|]
            b = self._alpha(alpha) * terms
            if b.shape[0] == 1 and inv is not None:
                # one-year batches (the pipeline's): fold the bias into the offset vector, so the
                # [P, |S|] logits get one add (and one reduction in backward), as in the plain step
                shift = shift + b[0]
            else:
                z = z + (b if inv is None else b[inv])
        z = z + shift
        return torch.cat([z, (lse_rest + self.offset[-1])[:, None]], dim=1)

    def state_nll(self, hidden, years, targets, lse_rest, z_target, alpha=None) -> torch.Tensor:
        """Per-position negative log-likelihood ``[P]`` of ``targets`` (vocabulary ids) from cached states."""
        col = self.target_columns(targets)
        logits = self.state_logits(hidden, years, lse_rest, alpha).float()
        log_z = torch.logsumexp(logits, dim=-1)
        lp = logits.gather(1, col[:, None])[:, 0] - log_z
        # a target outside S has its own logit plus the shared rest offset; written this way, not as
        # (rest column) + z_target - lse_rest, a near-empty rest (lse_rest at its floor, -1e9) cannot
        # cancel in float32 and score a surprising token as certain
        lp_rest = z_target.float() + self.offset[-1].float() - log_z
        return -torch.where(col == len(self.token_ids), lp_rest, lp)

    def target_columns(self, targets: torch.Tensor) -> torch.Tensor:
        """Column of each vocabulary id in ``state_logits`` (``|S|`` for ids outside S)."""
        lut = torch.full((self.vocab_size,), len(self.token_ids), dtype=torch.long, device=self.token_ids.device)
        lut[self.token_ids] = torch.arange(len(self.token_ids), device=lut.device)
        return lut[targets]

    # ------------------------------------------------------------------------------------------
    def save_head(self, directory) -> None:
        """Everything but the wrapped LM (config.json + head.safetensors): variants share one frozen LM."""
        from safetensors.torch import save_file

        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        self.config.alpha = float(self.alpha.detach())
        self.config.lm_weights_fingerprint = weights_fingerprint(self.lm)
        self.config.save_pretrained(d)
        state = {k: v.detach().cpu().contiguous() for k, v in self.state_dict().items() if not k.startswith("lm.")}
        save_file(state, str(d / "head.safetensors"))

    @classmethod
    def load_head(cls, directory, lm) -> "FutureLM":
        """A model written by :meth:`save_head`, around the (shared, frozen) ``lm``."""
        from safetensors.torch import load_file

        d = Path(directory)
        cfg = FutureLMConfig.from_pretrained(d)
        check_same_lm(cfg.lm_config, lm.config.to_dict(), d, saved_fingerprint=cfg.lm_weights_fingerprint, lm=lm)
        model = cls(cfg, lm=lm)
        state = load_file(str(d / "head.safetensors"))
        model.history = torch.zeros_like(state["history"])
        missing, unexpected = model.load_state_dict(state, strict=False)
        if unexpected or [k for k in missing if not k.startswith("lm.")]:
            raise ValueError(f"{d}: head.safetensors does not match its config (missing "
                             f"{[k for k in missing if not k.startswith('lm.')]}, unexpected {unexpected})")
        return model.eval()

    # ------------------------------------------------------------------------------------------
    def forward(self, input_ids=None, attention_mask=None, years=None, labels=None, cache=None,
                use_cache=None, position_ids=None, alpha: float | None = None, past_key_values=None, **kwargs):
        """Causal-LM forward; ``years[B]`` (ints) picks each row's bias. ``labels`` = HF convention.

        The key/value cache comes as ``cache`` (or under its older name ``past_key_values``) and goes
        to the wrapped LM under whichever name it takes (``causal_lm.cache_keyword``)."""
        cache = cache if cache is not None else past_key_values
        if cache is not None:
            kwargs[cache_keyword(self.lm)] = cache
        out = self.lm(input_ids=input_ids, attention_mask=attention_mask, use_cache=use_cache,
                      position_ids=position_ids, **kwargs)
        logits = out.logits
        if self.bias is not None and years is None:
            raise ValueError(f"FutureLM({self.config.variant}).forward needs years=[B] target years")
        logits = logits + self.full_offset(years, self._hidden, alpha).to(logits.dtype)
        loss = None
        if labels is not None:
            loss = F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]).float(),
                                   labels[:, 1:].reshape(-1), ignore_index=-100)
        return CausalLMOutputWithPast(loss=loss, logits=logits, **{_OUTPUT_CACHE: output_cache(out)})


class ContextAdapter(nn.Module):
    """Head adaptation that reads the decoder state: ``up(down(h))``, logits over S, rank ``r``.

    ``up`` starts at zero, so an untrained adapter adds nothing. It is part of the adaptation
    every variant shares (baselines included); it lets a frozen LM follow the corpus's phrasing
    (which words follow which), which a per-token offset cannot.
    """

    def __init__(self, d: int, rank: int, n: int):
        super().__init__()
        self.down = nn.Linear(d, rank, bias=False)
        self.up = nn.Linear(rank, n, bias=False)
        nn.init.normal_(self.down.weight, std=d ** -0.5)
        nn.init.zeros_(self.up.weight)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.up(self.down(hidden.to(self.down.weight.dtype)))


class TemporalBiasProcessor(LogitsProcessor):
    """Adds the cached year bias inside ``lm.generate`` (beam, top-k, top-p, no-repeat all apply after).

    Returns log-probabilities (``log_softmax(scores + bias)``): beam search feeds processors
    log-probs and the renormalisation keeps beam scores exact; sampling is unaffected by the shift.
    For Context^2 the gate reads the decoder state captured at the LM head for the last position.
    The year's bias terms are read from the model when the processor is made: a later change of the
    model's history (``whatif.injected_trend``) does not reach a processor made before it.
    """

    def __init__(self, model: FutureLM, year: int | None, alpha: float | None = None):
        self.model, self.year = model, year
        self.alpha = None if alpha is None else float(alpha)
        self.gated = model.reads_hidden
        self.rows = slice(None)  # the rows of the captured decoder state that scores belong to (a shared batch)
        if model.bias is not None and year is None:
            raise ValueError(f"TemporalBiasProcessor: the {model.config.variant} model needs a target year")
        with torch.no_grad():
            self.terms = model.year_terms([year]) if model.bias is not None else None   # [1, |S|(, 2)]
            self.fixed = None if self.gated else model.full_offset(None, None, self.alpha,
                                                                   terms=self.terms).reshape(1, -1)

    @torch.no_grad()
    def __call__(self, input_ids, scores):
        if self.gated:
            hidden = self.model._hidden[self.rows, -1:, :]                 # [N, 1, d]
            terms = None if self.terms is None else self.terms.expand(scores.shape[0], *self.terms.shape[1:])
            b = self.model.full_offset(None, hidden, self.alpha, terms=terms)[:, 0]
        else:
            b = self.fixed
        V = b.shape[-1]
        scores = scores.clone()
        scores[:, :V] = scores[:, :V] + b.to(scores.dtype)
        return torch.log_softmax(scores, dim=-1)


AutoConfig.register("future_lm", FutureLMConfig, exist_ok=True)
AutoModelForCausalLM.register(FutureLMConfig, FutureLM, exist_ok=True)
