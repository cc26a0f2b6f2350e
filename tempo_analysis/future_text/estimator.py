"""FutureTextModel: future-text generation with a temporal word bias, end to end.

Li et al., "Future Language Modeling": a causal LM writes next year's text with a per-token bias
forecast from each token's history over the previous years (``model.py``).

    model = FutureTextModel(variants=["baseline", "freq"]).fit(frame)  # or .fit("world")
    results = model.score(meteor_texts=3)     # one row per model: dev/test ppl, content ppl (+ METEOR)
    model.generate("freq", n=3)               # texts for the test year
    model.visualize_results(); model.visualize_trends(["transformer", "kernel"])
    model.save("run/"); FutureTextModel.load("run/")

``FutureTextModel(config=None, **overrides)`` (:class:`tempo_analysis.base.Estimator`): ``config`` is
a :class:`~tempo_analysis.future_text.config.FutureTextSettings`, a preset name of
:mod:`tempo_analysis.future_text.config` (``"cli"``, the default, or ``"notebook"``) or a dict;
``overrides`` replace fields by name (``variants``, ``dev_year``, ``lm``, ``finetune_steps``, ...).
``fit`` resolves them into ``config_``. What ``fit`` learns ends in ``_``: ``models_`` (name ->
FutureLM, one per model of ``variants``) and ``histories_`` (their training logs), ``model_`` and
``history_`` (those of the first name in ``variants``), ``frame_``, ``dev_year_``, ``test_year_``,
``train_years_``, ``tokenizer_``, ``freq_table_``, ``context_table_``, ``base_``; ``score`` adds
``results_`` and ``generated_``.

Protocol (the paper's, with a frozen pretrained LM in place of fine-tuned GPT-2; the method page
docs/methods/future_text.md):
1. the causal LM is ``config.lm``: the embedded SmolLM2-135M (``"default"``), any HF name or
   folder, or ``"tiny"`` (a small GPT-2 trained from scratch on the training years, with a BPE
   tokenizer trained on them: the test-sized config);
2. the LM is frozen: its head-input states for every document are computed once (``states.py``,
   cached on disk keyed by LM + texts);
3. each variant trains the SAME adaptation on those states for the same number of steps
   (``adapt.py``): a per-token output offset over the tokens seen in the history (S); ``baseline``
   on all training years, ``last-n`` on the last n training years, the bias variants on all
   training years plus the temporal bias and alpha (learned from 1, or grid-searched on dev
   perplexity over the paper's grid, ``alpha_search``);
4. history tables cover the first training year .. the year before the test year (the dev
   year's text is past at test time); the LSTM input normalisation uses training years only.
   Dev-year scores use only training-year history, so they are a clean comparison.
Training skips the first training year's documents (its bias has no previous year).
"""

from __future__ import annotations

import copy
import dataclasses
import re
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from transformers import GPT2Config, GPT2LMHeadModel

from tempo_analysis.base import Estimator
from tempo_analysis.causal_lm import load_causal_lm, pick_device
from tempo_analysis.data.yearly import yearly_frame
from tempo_analysis.future_text.adapt import PositionTerms, train_on_states
from tempo_analysis.future_text.batching import lm_examples, make_collate
from tempo_analysis.future_text.context import ContextTable, contextual_table
from tempo_analysis.future_text.frequency import FrequencyTable
from tempo_analysis.future_text.generation import generate_texts
from tempo_analysis.future_text.metrics import content_meteor, perplexity_report
from tempo_analysis.future_text.model import FutureLM
from tempo_analysis.future_text.config import (ALPHA_GRID, FEATURE_KIND, PRESETS, VARIANTS, WINDOW_VARIANTS,
                                               FutureTextSettings, GenerationSettings)
from tempo_analysis.future_text.saved_run import META, local_lm_path, read_run, write_run
from tempo_analysis.future_text.splits import complete_split, split_years
from tempo_analysis.future_text.states import StateCache, rest_terms, state_context_table
from tempo_analysis.future_text.tokenizer import content_mask, ensure_special_tokens, train_bpe_tokenizer
from tempo_analysis.future_text.whatif import copy_rate, model_of, trend_frame
from tempo_analysis.resolve import load_yearly
from tempo_analysis.training import TrainConfig, Trainer

__all__ = ["FutureTextModel", "FutureTextSettings", "GenerationSettings", "small_gpt2"]

ABSTRACT_INSTRUCTION = "Write the abstract of a natural language processing research paper."
DOC_TOKEN = "<|endoftext|>"        # document boundary (BOS = EOS) when the tokenizer has it (GPT-2, SmolLM2)


def _plain_loss(model, batch):
    """Loss of a plain HF causal LM (ignores the years column)."""
    return model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], labels=batch["labels"]).loss


def small_gpt2(vocab_size: int, s: FutureTextSettings, tokenizer, n_positions: int = 512):
    """The "tiny" LM: a small GPT-2 config (tied head), randomly initialised, seeded."""
    torch.manual_seed(s.seed)
    cfg = GPT2Config(vocab_size=vocab_size, n_positions=max(n_positions, s.block_size, 64), n_embd=s.n_embd,
                     n_layer=s.n_layer, n_head=s.n_head, resid_pdrop=s.dropout, embd_pdrop=s.dropout,
                     attn_pdrop=s.dropout, bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                     pad_token_id=tokenizer.pad_token_id, tie_word_embeddings=True)
    return GPT2LMHeadModel(cfg)


def document_tokenizer(tokenizer):
    """The tokenizer with ``<|endoftext|>`` as BOS, EOS and pad when it has that token (SmolLM2's
    chat tokens ``<|im_start|>``/``<|im_end|>`` are not document boundaries); else pad/BOS = EOS."""
    if DOC_TOKEN in tokenizer.get_vocab():
        tokenizer = copy.copy(tokenizer)
        tokenizer.bos_token = tokenizer.eos_token = tokenizer.pad_token = DOC_TOKEN
    return ensure_special_tokens(tokenizer)


# ------------------------------------------------------------------------------------------------
# the facade
# ------------------------------------------------------------------------------------------------
class FutureTextModel(Estimator):
    """Split + tokenizer + history tables + base LM + one FutureLM per variant (module docstring).

    ``FutureTextModel(config=None, **overrides)``: the settings are a
    :class:`~tempo_analysis.future_text.config.FutureTextSettings` (default: the ``"cli"`` preset,
    ``FutureTextSettings()``), a preset name (``"notebook"``) or a dict, with fields replaced by name.
    """

    config_class = FutureTextSettings
    presets = PRESETS
    kind = "future-text-run"
    fitted_attribute = "model_"

    @property
    def _adapter_rank(self) -> int:
        """The context adapter's rank the models use: chosen by ``fit`` (``adapter_rank_``), else the setting."""
        rank = getattr(self, "adapter_rank_", None)
        return self.config_.adapter_rank if rank is None else rank

    # ----- fitting ----------------------------------------------------------------------------
    def fit(self, data, history: pd.DataFrame | None = None) -> "FutureTextModel":
        """Fit every model in ``variants`` on ``data``: a yearly frame (``year``, ``text``) or a
        ``--data`` spec (``world``, ``acl``, ``csv:FILE``; :func:`tempo_analysis.resolve.load_yearly`).

        ``history``: a larger yearly frame of the same corpus (e.g. all documents, when ``data`` is a
        subsample that fits the LM budget) whose texts from the first training year to the year
        before the test year give the frequency history; counting tokens needs no LM, and a fuller
        count is a less noisy history. Default: ``data`` itself."""
        cfg = self._start_fit()
        self._jobs()                                         # last-N names are checked before any work
        if isinstance(data, pd.DataFrame):
            frame, self.trend_truth_ = data, None
        else:
            resolved = load_yearly(data, progress=cfg.progress)
            frame, self.trend_truth_ = resolved.data, resolved.truth
        self._setup(frame, history=history)
        if self.lm_path_:                                    # a local LM folder: recorded by its absolute path
            self.config_ = dataclasses.replace(cfg, lm=self.lm_path_)
        self._choose_adapter()
        for variant, n, name in self._jobs():
            if name not in self.models_:
                self._fit_variant(variant, n, name)
        self._set_main()
        return self

    def _set_main(self) -> None:
        """``model_`` and ``history_``: the first model named in ``variants``."""
        main = self._jobs()[0][2]
        self.model_, self.history_ = self.models_[main], self.histories_.get(main, {})

    def _choose_adapter(self) -> None:
        """Set ``adapter_rank_``, the context adapter every model shares (``config.adapter_rank``, 0 = none).

        With ``config.adapter_check`` the time-blind baseline is trained with and without the adapter,
        and the adapter is kept only if it gives the lower best dev loss: on a small corpus it can overfit
        from its first steps (ACL at 20 abstracts a year: the dev loss rises from step 25 on, so early
        stopping keeps the frozen LM). The choice is made once, on the dev year, for every model alike,
        and recorded in ``adapter_choice_`` (and ``histories_["baseline"]``).
        """
        s = self.config_
        self.adapter_rank_, self.adapter_choice_ = s.adapter_rank, None
        if not s.adapter_rank or not s.adapter_check:
            return
        fitted = {}
        for rank in (s.adapter_rank, 0):
            self.adapter_rank_ = rank
            self._fit_variant("baseline")
            fitted[rank] = (self.models_.pop("baseline"), self.histories_.pop("baseline"))
        dev_ppl = {rank: float(np.exp(log["best_dev_loss"])) for rank, (_, log) in fitted.items()}
        self.adapter_rank_ = s.adapter_rank if dev_ppl[s.adapter_rank] <= dev_ppl[0] else 0
        self.adapter_choice_ = {"rank": self.adapter_rank_, "dev_ppl_with_adapter": dev_ppl[s.adapter_rank],
                                "dev_ppl_without": dev_ppl[0]}
        if "baseline" in [name for _, _, name in self._jobs()]:
            model, log = fitted[self.adapter_rank_]
            self.models_["baseline"], self.histories_["baseline"] = model, {**log, "adapter_choice": self.adapter_choice_}

    def _setup(self, frame: pd.DataFrame, tokenizer=None, freq_table: FrequencyTable | None = None,
               base=None, history: pd.DataFrame | None = None) -> None:
        """Split, LM + tokenizer, frequency table, the vocabulary S, cached states (no variant trained)."""
        s = self.config_
        self.frame_ = yearly_frame(frame)
        # a year given alone is completed from the data (never replaced by the default split)
        dev_year, test_year = complete_split(self.frame_, s.dev_year, s.test_year)
        self.dev_year_, self.test_year_ = int(dev_year), int(test_year)
        self.train_df_, self.dev_df_, self.test_df_ = split_years(self.frame_, self.dev_year_, self.test_year_,
                                                                  s.train_years)
        self.train_years_ = sorted(set(self.train_df_["year"]))
        first = self.train_years_[0]
        reads_window = any(v in WINDOW_VARIANTS for v, _, _ in self._jobs())
        if reads_window and s.window > len(self.train_years_) - 1:
            raise ValueError(f"window={s.window} is longer than the {len(self.train_years_) - 1} training years that "
                             f"have a previous year ({self.train_years_[0]}-{self.train_years_[-1]}). Fix: use "
                             f"window <= {len(self.train_years_) - 1} or give more years")
        self.device_ = pick_device(s.device)
        self.base_, tok = self._base_lm(tokenizer, base)
        self.tokenizer_ = document_tokenizer(tok)
        if freq_table is None:
            # every document from the first training year up to the test year (not only the training
            # and dev years: with explicit train_years, the years between them are real text too)
            past = self.frame_[(self.frame_["year"] >= first) & (self.frame_["year"] < self.test_year_)]
            if history is not None:
                h = yearly_frame(history)
                past = h[(h["year"] >= first) & (h["year"] < self.test_year_)]
                missing = sorted(set(self.train_years_) - set(past["year"]))
                if missing:
                    raise ValueError(f"history: no documents for the training years {missing[:5]}. Fix: pass a "
                                     "frame of the same corpus that covers every year of data")
            freq_table = FrequencyTable.from_texts(past["text"].tolist(), past["year"].tolist(), self.tokenizer_,
                                                   year_range=(first, self.test_year_ - 1))
        else:
            freq_table.check_tokenizer(self.tokenizer_)   # a table counted with another vocabulary is refused
        self.freq_table_ = freq_table
        seen = np.flatnonzero(freq_table.counts.sum(0) > 0)
        self.token_ids_ = np.union1d(seen, [self.tokenizer_.eos_token_id]).astype(np.int64)     # S
        self.context_table_ = None
        self.models_: dict[str, FutureLM] = {}
        self.histories_: dict[str, dict] = {}
        self.results_, self.generated_ = None, {}
        self._content = content_mask(self.tokenizer_)
        # the frozen LM's states of every document (frame_ rows), and the S-dependent terms
        self._frame_rows = {y: np.flatnonzero(self.frame_["year"].to_numpy() == y) for y in set(self.frame_["year"])}
        self.base_.to(self.device_).eval()
        for p in self.base_.parameters():
            p.requires_grad_(False)
        states = StateCache.build(self.base_, self.tokenizer_, self.frame_["text"].tolist(),
                                  self.frame_["year"].tolist(), bos=self.tokenizer_.bos_token_id,
                                  eos=self.tokenizer_.eos_token_id, cache=s.state_cache and s.lm != "tiny",
                                  progress=s.progress)
        lse, zt = rest_terms(self.base_.get_output_embeddings(), states, torch.as_tensor(self.token_ids_))
        self.terms_ = PositionTerms(states, lse, zt)

    def _base_lm(self, tokenizer=None, base=None):
        """``(lm, tokenizer)``: the one a saved run gives back, the "tiny" GPT-2 trained here, or ``config.lm`` loaded."""
        s = self.config_
        self.lm_path_ = None
        if base is not None:
            return base, tokenizer
        if s.lm == "tiny":
            tok = ensure_special_tokens(tokenizer or train_bpe_tokenizer(self.train_df_["text"], s.vocab_size))
            return self._pretrain_tiny(tok), tok
        self.lm_path_ = local_lm_path(s.lm)
        return load_causal_lm(self.lm_path_ or s.lm, device=self.device_)

    def _train_config(self, **kw) -> TrainConfig:
        s = self.config_
        base = dict(batch_size=16, seed=s.seed, progress=s.progress, device=str(self.device_), weight_decay=0.01)
        return TrainConfig(**{**base, **kw})

    def _pretrain_tiny(self, tokenizer):
        """Train the "tiny" GPT-2 on all training years (whole documents up to its 512 positions)."""
        s = self.config_
        lm = small_gpt2(len(tokenizer), s, tokenizer)
        ex = lm_examples(self.train_df_["text"], self.train_df_["year"], tokenizer, lm.config.n_positions)
        cfg = self._train_config(max_epochs=s.pretrain_epochs, lr=s.lr, warmup_ratio=0.05, schedule="cosine")
        Trainer(lm, cfg, loss_fn=_plain_loss, collate_fn=make_collate(tokenizer.pad_token_id)).fit(ex, None)
        return lm.eval()

    def _context_table(self) -> ContextTable:
        """Per-year averaged contextual embeddings (computed once, same years as the frequency table).

        ``context_encoder="lm"``: the LM's own cached states (eq. 7 with the LM as the encoder),
        over S only; otherwise that encoder (e.g. MiniLM, "default") over the whole vocabulary.
        """
        if self.context_table_ is None:
            s = self.config_
            first, last = self.train_years_[0], self.test_year_ - 1
            if s.context_encoder == "lm":
                S = torch.as_tensor(self.token_ids_)
                past = np.concatenate([self._frame_rows[y] for y in range(first, last + 1) if y in self._frame_rows])
                emb = state_context_table(self.terms_.states.select(sorted(past)), S, first, last,
                                          self.base_.get_input_embeddings().weight.detach().cpu()[S])
                counts = self.freq_table_.counts[:, self.token_ids_].astype(np.float32)
                self.context_table_ = ContextTable(list(range(first, last + 1)), emb, counts, "lm-states:S")
            else:
                past = pd.concat([self.train_df_, self.dev_df_])
                self.context_table_ = contextual_table(
                    past["text"].tolist(), past["year"].tolist(), self.tokenizer_, s.context_encoder,
                    year_range=(first, last), max_length=s.context_max_length, progress=s.progress)
        return self.context_table_

    def _history(self, variant: str) -> np.ndarray:
        """The history features a variant reads over S: ``[Y, |S|]`` frequency or ``[Y, |S|, E]`` context."""
        if FEATURE_KIND[variant] == "freq":
            return self.freq_table_.features()[:, self.token_ids_]
        feats = self._context_table().features()
        return feats if feats.shape[1] == len(self.token_ids_) else feats[:, self.token_ids_]

    def _build(self, variant: str, alpha: float | None = None) -> FutureLM:
        """A fresh FutureLM for ``variant`` around the (shared, frozen) base LM, history installed."""
        if variant not in VARIANTS:
            raise ValueError(f"variant={variant!r}: use one of {', '.join(VARIANTS)}")
        s = self.config_
        kind = FEATURE_KIND.get(variant)
        feats = self._history(variant) if kind else None
        fdim = 1 if feats is None or feats.ndim == 2 else feats.shape[-1]
        torch.manual_seed(s.seed)
        model = FutureLM.from_lm(self.base_, variant=variant, token_ids=self.token_ids_, window=s.window,
                                 lstm_hidden=s.lstm_hidden, feature_dim=fdim, train_years=self.train_years_,
                                 alpha=s.alpha if alpha is None else alpha,
                                 center_tokens=FEATURE_KIND.get(variant) == "freq" and s.freq_bias != "paper",
                                 learn_alpha=s.alpha_search == "learn",
                                 monotone_trend=s.freq_bias == "monotone",
                                 freq_model="eq6" if s.freq_bias == "paper" else "trend",
                                 adapter_rank=self._adapter_rank).to(self.device_)
        if feats is not None:
            n_train = len(self.train_years_)
            first = self.train_years_[0]
            model.set_history(feats[:n_train], first, refit_norm=True)               # norm from training years
            model.set_history(feats, first, refit_norm=False)                        # + dev year for the test
        return model

    def _positions(self, years) -> np.ndarray:
        return self.terms_.positions_of_years(years)

    def _fit_variant(self, variant: str, n: int | None = None, name: str | None = None) -> FutureLM:
        """Train one ``variant`` (``last-n`` needs ``n``) on the cached states; stored in ``models_[name]``.

        Bias variants with ``alpha_search="grid"`` are trained once per alpha of the paper's grid
        and the best dev perplexity wins; ``histories_[name]`` records the search.
        """
        s = self.config_
        years = self.train_years_[1:]                       # the first year's bias has no previous year
        if variant == "last-n":
            if not n or n < 1 or n > len(self.train_years_) - 1:
                raise ValueError(f"last-n needs 1 <= n <= {len(self.train_years_) - 1}, got n={n}")
            years = self.train_years_[-n:]
            name = name or f"last-{n}"
        else:
            name = name or variant
        train_idx, dev_idx = self._positions(years), self._positions([self.dev_year_])
        grid = ALPHA_GRID if (s.alpha_search == "grid" and FEATURE_KIND.get(variant)) else (None,)
        best, search = None, []
        for alpha in grid:
            model = self._build(variant, alpha)
            log = train_on_states(model, self.terms_, train_idx, dev_idx, steps=s.finetune_steps,
                                  batch_positions=s.batch_size, lr=s.finetune_lr, bias_lr=s.bias_lr,
                                  eval_every=s.eval_every, seed=s.seed, year_batches=s.year_batches)
            log["alpha"] = float(model.alpha.detach())
            if best is None or log["best_dev_loss"] < best[1]["best_dev_loss"]:
                best = (model, log)
            search.append({"alpha": log["alpha"], "dev_ppl": float(np.exp(log["best_dev_loss"]))})
        model, log = best
        model.config.train_years = [int(y) for y in years]
        self.models_[name] = model.eval()
        self.histories_[name] = {**log, "alpha_search": s.alpha_search if FEATURE_KIND.get(variant) else None,
                                 "alpha_grid": search if len(search) > 1 else None}
        return model

    def _jobs(self, variants=None) -> list[tuple[str, int | None, str]]:
        """(variant, n, model name) for each model to train; ``last-n`` expands to ``config.last_n``."""
        out = []
        for v in list(variants or self.config_.variants):
            last = re.fullmatch(r"last-(\d+)", str(v))
            if last:
                out.append(("last-n", int(last.group(1)), v))
                continue
            if v not in VARIANTS:
                raise ValueError(f"variant={v!r}: use one of {', '.join(VARIANTS)} (or last-N, e.g. last-2)")
            out += [(v, n, f"last-{n}") for n in self.config_.last_n] if v == "last-n" else [(v, None, v)]
        return out

    # ----- scoring and writing ----------------------------------------------------------------
    def _texts_of(self, year: int) -> list[str]:
        return self.frame_.loc[self.frame_["year"] == year, "text"].tolist()

    def evaluate(self, name, year: int) -> dict:
        """Perplexity and content perplexity of model ``name`` (or a FutureLM) on ``year``'s documents:
        per document, whole documents (no context restart), token-weighted; from the cached states
        (exactly the full model's)."""
        self._check_fitted()
        if year not in self._frame_rows:
            raise ValueError(f"year={year}: no documents; years present: {sorted(self._frame_rows)}")
        sums = self.terms_.document_sums(model_of(self, name), self._frame_rows[year], self._content)
        return perplexity_report(sums)

    def generation_settings(self, **overrides) -> GenerationSettings:
        """The paper's decoding with the length sized to an abstract: ``max_new_tokens`` = the median
        training document's length in tokens (+ EOS), ``min_new_tokens`` half of it. Generation starts
        from the end-of-text token (topic-free, the paper's); without the context adapter
        (``adapter_rank=0``, or none kept by the dev check) a chat LM gets the topic-free instruction ``ABSTRACT_INSTRUCTION`` instead
        (defined in this module): a frozen instruct LM with only an output offset drifts off a bare start."""
        self._check_fitted()
        lengths = np.bincount(self.terms_.states.doc.numpy())
        train_docs = np.concatenate([self._frame_rows[y] for y in self.train_years_])
        med = int(np.median(lengths[train_docs]))
        chat = getattr(self.tokenizer_, "chat_template", None)
        instruction = ABSTRACT_INSTRUCTION if chat and not self._adapter_rank else None
        return GenerationSettings(**{"max_new_tokens": med, "min_new_tokens": med // 2, "seed": self.config_.seed,
                                     "instruction": instruction, **overrides})

    def score(self, variants=None, meteor_texts: int = 0, generation: GenerationSettings | None = None) -> pd.DataFrame:
        """Score each model (training any that ``fit`` did not); one row per model, kept as ``results_``.

        ``meteor_texts > 0`` also generates that many texts per model for the test year (seeded,
        ``generation`` settings, default :meth:`generation_settings`) and adds ``test_content_meteor``
        (exact + Porter-stem matching stages) and ``copy_rate`` (share of generated 8-grams found
        verbatim in the training texts).
        """
        self._check_fitted()
        rows = []
        generation = generation or self.generation_settings()
        self.generated_ = {}
        for variant, n, name in self._jobs(variants):
            model = self.models_.get(name) or self._fit_variant(variant, n, name)
            row = {"model": name, "variant": variant,
                   "alpha": float(model.alpha.detach()) if model.bias is not None else 0.0}   # no bias = alpha 0
            for split, year in (("dev", self.dev_year_), ("test", self.test_year_)):
                m = self.evaluate(model, year)
                row.update({f"{split}_ppl": m["ppl"], f"{split}_content_ppl": m["content_ppl"]})
            if meteor_texts:
                gen = generate_texts(model, self.tokenizer_, self.test_year_, meteor_texts, settings=generation)
                self.generated_[name] = gen
                row["test_content_meteor"] = content_meteor(gen, self._texts_of(self.test_year_))
                row["copy_rate"] = copy_rate(gen, self.train_df_["text"].tolist())
            rows.append(row)
        self.results_ = pd.DataFrame(rows)
        return self.results_

    def summary(self, results: pd.DataFrame | None = None) -> dict:
        """``future_text.<model>.ppl`` / ``.content_ppl`` on the test year (for record_summary)."""
        results = self._results() if results is None else results
        out = {}
        for r in results.itertuples():
            out[f"future_text.{r.model}.ppl"] = round(float(r.test_ppl), 4)
            out[f"future_text.{r.model}.content_ppl"] = round(float(r.test_content_ppl), 4)
            if r.variant in FEATURE_KIND and "alpha" in results:
                out[f"future_text.{r.model}.alpha"] = float(f"{float(r.alpha):.4g}")
        if "copy_rate" in results:
            out["future_text.copy_rate"] = round(float(results["copy_rate"].max()), 4)
        return out

    def generate(self, name, n: int = 5, *, year: int | None = None, alpha: float | None = None,
                 prompt: str | None = None, settings: GenerationSettings | None = None) -> list[str]:
        """``n`` seeded texts from model ``name`` (or a FutureLM) for ``year`` (default: the test year)."""
        self._check_fitted()
        return generate_texts(model_of(self, name), self.tokenizer_, self.test_year_ if year is None else year, n,
                              alpha=alpha, prompt=prompt, settings=settings or self.generation_settings())

    def trends(self, words, models=("baseline", "freq", "context2"), *, contexts_year: int | None = None) -> pd.DataFrame:
        """Each word's actual relative frequency per year and each fitted model's forecast for the
        test year (``whatif.trend_frame``); ``models`` names that were not fitted are skipped."""
        self._check_fitted()
        return trend_frame(self, words, {k: self.models_[k] for k in models if k in self.models_},
                           contexts_year=contexts_year)

    # ----- figures (tempo_analysis.figures.future_text) -----------------------------------------
    def _results(self) -> pd.DataFrame:
        self._check_fitted()
        if getattr(self, "results_", None) is None:
            raise ValueError("no results yet: call fit() and score() first")
        return self.results_

    def visualize_results(self, title: str | None = None):
        """The results table (``figures.future_text.variants_table``)."""
        from tempo_analysis.figures import future_text as figures

        if title is None:
            return figures.variants_table(self._results())
        return figures.variants_table(self._results(), title=title)

    def visualize_metric(self, metric: str = "test_content_ppl", reference: str = "baseline"):
        """Bars of one results column per model (``figures.future_text.metric_bars``)."""
        from tempo_analysis.figures import future_text as figures

        return figures.metric_bars(self._results(), metric, reference)

    def visualize_trends(self, words, models=("baseline", "freq", "context2"), *,
                         contexts_year: int | None = None):
        """Actual frequencies and forecasts of ``words`` (``figures.future_text.frequency_trends``)."""
        from tempo_analysis.figures import future_text as figures

        return figures.frequency_trends(self.trends(words, models, contexts_year=contexts_year))

    def visualize_generations(self, left: str = "baseline", right: str = "freq", words=(), n: int = 3, *,
                              year: int | None = None, settings: GenerationSettings | None = None):
        """Texts of two models side by side, ``words`` highlighted (``figures.future_text.side_by_side``)."""
        from tempo_analysis.figures import future_text as figures

        texts = [self.generate(m, n, year=year, settings=settings) for m in (left, right)]
        return figures.side_by_side(texts[0], texts[1], words, titles=(left, right))

    # ----- save / load (Estimator.save / Estimator.load) ----------------------------------------
    # ``save(folder, *, overwrite=False)`` writes config.json (the resolved settings, a local LM folder
    # by its absolute path) and the files below; ``load(folder, **overrides)`` reads them back ready to
    # score, generate and plot. A run trained on a named LM (not ``"tiny"``) does not hold that LM: it is
    # loaded again by name, a local folder by its absolute path. ``load(folder, lm=DIR)`` (``--lm`` of
    # ``future-text evaluate``/``generate``) loads it around that LM instead, for a run whose LM folder has
    # moved: it must be the same LM (a head saved around another LM is refused), and a run that holds
    # its own LM (``"tiny"``, in ``base_lm/``) refuses it. ``load(folder, device="cpu")`` moves it.
    @classmethod
    def _saved_files(cls) -> tuple:
        return (META, "frame.json.gz", "frequency_table.safetensors")

    def _save_fitted(self, folder: Path) -> None:
        """Layout: ``future_text.json`` (split, model names, training logs), ``frame.json.gz`` (the
        yearly frame), the tokenizer files, ``frequency_table.safetensors`` (+ ``context_table.safetensors``),
        ``models/<name>/`` (each variant without the frozen LM: config.json + head.safetensors),
        ``base_lm/`` (the "tiny" LM trained here), ``trend_truth.csv`` (planted world), ``results.csv``
        after ``score`` and ``generated.json`` (its texts) after ``score(meteor_texts=N)``."""
        write_run(self, folder)

    def _load_fitted(self, folder: Path) -> None:
        read_run(self, folder, lm_given="lm" in self.overrides)
        self._set_main()
