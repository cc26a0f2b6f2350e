"""FutureTextModel: future-text generation with a temporal word bias, end to end.

Li et al., "Future Language Modeling": a causal LM writes next year's text with a per-token bias
forecast from each token's history over the previous years (``model.py``).

    model = FutureTextModel(default_settings(), variants=["baseline", "freq"]).fit(frame)  # or .fit("world")
    results = model.score(meteor_texts=3)     # one row per model: dev/test ppl, content ppl (+ METEOR)
    model.generate("freq", n=3)               # texts for the test year
    model.visualize_results(); model.visualize_trends(["transformer", "kernel"])
    model.save("run/"); FutureTextModel.load("run/")

Settings are annotated dataclass fields (``FutureTextSettings`` for the model and training knobs,
the facade's own fields for the variants and the split); what ``fit`` learns ends in ``_``
(``frame_``, ``dev_year_``, ``test_year_``, ``train_years_``, ``tokenizer_``, ``freq_table_``,
``context_table_``, ``base_``, ``models_``, ``trainers_``; ``score`` adds ``results_``).

Protocol (mirrors the paper with a from-scratch LM in place of GPT-2, docs/methods/future_text.md):
1. a byte-level BPE tokenizer (``vocab_size``) is trained on the training years' text;
2. a small GPT-2 ("the pretrained LM") is trained on every training year (or pass ``lm=``,
   e.g. ``gpt2`` online, with its own tokenizer);
3. each variant starts from that LM and is fine-tuned for the SAME number of optimiser steps
   (early stopping on dev loss, best weights kept; by default each batch holds one year's
   documents, ``year_batches``, so the bias LSTM runs once per step): ``baseline`` on all training years,
   ``last-n`` on the last n training years, the bias variants on all training years with the
   temporal bias (bias modules get their own learning rate ``bias_lr``);
4. history tables cover the first training year .. the year before the test year (the dev
   year's text is past at test time); the LSTM input normalisation uses training years only.
   Dev-year scores use only training-year history, so they are a clean comparison.
Fine-tuning skips the first training year's documents (its bias has no previous year).
"""

from __future__ import annotations

import copy
import gzip
import json
import re
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, GPT2Config, GPT2LMHeadModel

from tempo_analysis.data.specs import load_yearly
from tempo_analysis.data.yearly import yearly_frame
from tempo_analysis.figures import future_text as figures
from tempo_analysis.future_text.batching import YearBatchSampler, lm_examples, make_collate
from tempo_analysis.future_text.context import ContextTable, contextual_table
from tempo_analysis.future_text.frequency import FrequencyTable
from tempo_analysis.future_text.generation import generate_texts
from tempo_analysis.future_text.metrics import content_meteor, perplexity
from tempo_analysis.future_text.model import FutureLM
from tempo_analysis.future_text.settings import (FEATURE_KIND, VARIANTS, FutureTextSettings, GenerationSettings,
                                                 default_settings)
from tempo_analysis.future_text.splits import default_split, split_years
from tempo_analysis.future_text.tokenizer import ensure_special_tokens, train_bpe_tokenizer
from tempo_analysis.future_text.whatif import trend_frame
from tempo_analysis.training import TrainConfig, Trainer

__all__ = ["FutureTextModel", "FutureTextSettings", "GenerationSettings", "default_settings", "small_gpt2"]

META = "future_text.json"          # the facade's settings, split and model names in a saved folder
FORMAT_VERSION = 1


def _plain_loss(model, batch):
    """Loss of a plain HF causal LM (ignores the years column)."""
    return model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], labels=batch["labels"]).loss


def small_gpt2(vocab_size: int, s: FutureTextSettings, tokenizer):
    """The default LM: a small GPT-2 config (tied head), randomly initialised, seeded."""
    torch.manual_seed(s.seed)
    cfg = GPT2Config(vocab_size=vocab_size, n_positions=max(s.block_size, 64), n_embd=s.n_embd, n_layer=s.n_layer,
                     n_head=s.n_head, resid_pdrop=s.dropout, embd_pdrop=s.dropout, attn_pdrop=s.dropout,
                     bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                     pad_token_id=tokenizer.pad_token_id, tie_word_embeddings=True)
    return GPT2LMHeadModel(cfg)


# ------------------------------------------------------------------------------------------------
# the facade
# ------------------------------------------------------------------------------------------------
@dataclass(eq=False)
class FutureTextModel:
    """Split + tokenizer + history tables + base LM + one FutureLM per variant (module docstring)."""

    settings: FutureTextSettings = field(default_factory=FutureTextSettings)
    _: KW_ONLY
    variants: tuple = VARIANTS        # models fit() trains: variant names ("last-n" = one per settings.last_n)
    # or "last-N" for one of them
    dev_year: int | None = None       # None: 2020 for ACL (test 2021), else the second-last year
    test_year: int | None = None      # None: 2021 for ACL, else the last year
    train_years: tuple | None = None  # (first, last) training years; None = every year before dev_year
    tokenizer: object = field(default=None, repr=False)  # an HF tokenizer; None = byte-level BPE trained on
    # the training years
    lm: object = field(default=None, repr=False)  # a causal LM with a tied head to start from; None = a small
    # GPT-2 trained from scratch on the training years

    def __post_init__(self):
        self.settings = self.settings if self.settings is not None else FutureTextSettings()
        self.variants = tuple([self.variants] if isinstance(self.variants, str) else self.variants)
        self.jobs()                                                          # unknown names fail now

    # ----- fitting ----------------------------------------------------------------------------
    def fit(self, data) -> "FutureTextModel":
        """Fit every model in ``variants`` on ``data``: a yearly frame (``year``, ``text``) or a
        ``--data`` spec (``world``, ``acl``, ``csv:FILE``; :func:`tempo_analysis.data.specs.load_yearly`)."""
        if isinstance(data, pd.DataFrame):
            frame, self.trend_truth_ = data, None
        else:
            frame, self.trend_truth_ = load_yearly(data, progress=self.settings.progress)
        self._setup(frame)
        for variant, n, name in self.jobs():
            if name not in self.models_:
                self.fit_variant(variant, n, name)
        return self

    def _setup(self, frame: pd.DataFrame, tokenizer=None, freq_table: FrequencyTable | None = None) -> None:
        """Split, tokenizer, frequency table and fine-tuning examples (no training of the LM)."""
        s = self.settings
        self.frame_ = yearly_frame(frame)
        dev_year, test_year = self.dev_year, self.test_year
        if dev_year is None or test_year is None:
            dev_year, test_year = default_split(self.frame_)
        self.dev_year_, self.test_year_ = int(dev_year), int(test_year)
        self.train_df_, self.dev_df_, self.test_df_ = split_years(self.frame_, self.dev_year_, self.test_year_,
                                                                  self.train_years)
        self.train_years_ = sorted(set(self.train_df_["year"]))
        first = self.train_years_[0]
        if s.window > len(self.train_years_) - 1:
            raise ValueError(f"window={s.window} is longer than the {len(self.train_years_) - 1} training years that "
                             f"have a previous year ({self.train_years_[0]}-{self.train_years_[-1]}). Fix: use "
                             f"window <= {len(self.train_years_) - 1} or give more years")
        tokenizer = tokenizer or self.tokenizer
        self.tokenizer_ = ensure_special_tokens(tokenizer or train_bpe_tokenizer(self.train_df_["text"], s.vocab_size))
        if freq_table is None:
            past = pd.concat([self.train_df_, self.dev_df_])                 # everything before the test year
            freq_table = FrequencyTable.from_texts(past["text"].tolist(), past["year"].tolist(), self.tokenizer_,
                                                   year_range=(first, self.test_year_ - 1))
        self.freq_table_ = freq_table
        self.context_table_ = None
        self.base_ = self.lm
        self.models_: dict[str, FutureLM] = {}
        self.trainers_: dict = {}
        self.results_ = None
        self._collate = make_collate(self.tokenizer_.pad_token_id)
        fine = self.train_df_[self.train_df_["year"] > first]
        self._train_examples = lm_examples(fine["text"], fine["year"], self.tokenizer_, s.block_size)
        self._dev_examples = lm_examples(self.dev_df_["text"], self.dev_df_["year"], self.tokenizer_, s.block_size)

    def _train_config(self, **kw) -> TrainConfig:
        s = self.settings
        base = dict(batch_size=s.batch_size, seed=s.seed, progress=s.progress, device="cpu", weight_decay=0.01)
        return TrainConfig(**{**base, **kw})

    def pretrain(self):
        """Train (once) the small GPT-2 on all training years; returns the base LM (``base_``)."""
        if self.base_ is None:
            s = self.settings
            lm = small_gpt2(len(self.tokenizer_), s, self.tokenizer_)
            ex = lm_examples(self.train_df_["text"], self.train_df_["year"], self.tokenizer_, s.block_size)
            cfg = self._train_config(max_epochs=s.pretrain_epochs, lr=s.lr, warmup_ratio=0.05, schedule="cosine")
            Trainer(lm, cfg, loss_fn=_plain_loss, collate_fn=self._collate).fit(ex, None)
            self.base_ = lm.eval()
        return self.base_

    def context_table(self) -> ContextTable:
        """Per-year averaged contextual embeddings (computed once, same years as the frequency table)."""
        if self.context_table_ is None:
            past = pd.concat([self.train_df_, self.dev_df_])
            self.context_table_ = contextual_table(
                past["text"].tolist(), past["year"].tolist(), self.tokenizer_, self.settings.context_encoder,
                year_range=(self.train_years_[0], self.test_year_ - 1), max_length=self.settings.context_max_length,
                progress=self.settings.progress)
        return self.context_table_

    def history(self, variant: str) -> np.ndarray:
        """The history features a variant reads: ``[Y, V]`` frequency or ``[Y, V, E]`` context."""
        return self.freq_table_.features() if FEATURE_KIND[variant] == "freq" else self.context_table().features()

    def build(self, variant: str) -> FutureLM:
        """A fresh FutureLM for ``variant`` around a copy of the base LM, history installed."""
        if variant not in VARIANTS:
            raise ValueError(f"variant={variant!r}: use one of {', '.join(VARIANTS)}")
        s = self.settings
        lm = copy.deepcopy(self.pretrain())
        kind = FEATURE_KIND.get(variant)
        feats = self.history(variant) if kind else None
        fdim = 1 if feats is None or feats.ndim == 2 else feats.shape[-1]
        torch.manual_seed(s.seed)
        model = FutureLM.from_lm(lm, variant=variant, window=s.window, lstm_hidden=s.lstm_hidden,
                                 feature_dim=fdim, alpha=s.alpha, train_years=self.train_years_)
        if feats is not None:
            n_train = len(self.train_years_)
            first = self.train_years_[0]
            model.set_history(feats[:n_train], first, refit_norm=True)               # norm from training years
            model.set_history(feats, first, refit_norm=False)                        # + dev year for the test
        return model

    def fit_variant(self, variant: str, n: int | None = None, name: str | None = None) -> FutureLM:
        """Fine-tune one ``variant`` (``last-n`` needs ``n``); stored in ``models_[name]``."""
        s = self.settings
        if variant == "last-n":
            if not n or n < 1 or n > len(self.train_years_) - 1:
                raise ValueError(f"last-n needs 1 <= n <= {len(self.train_years_) - 1}, got n={n}")
            examples = self._train_examples.only_years(self.train_years_[-n:])
            name = name or f"last-{n}"
        else:
            examples = self._train_examples
            name = name or variant
        model = self.build(variant)
        bias_params = [p for n_, p in model.named_parameters() if not n_.startswith("lm.")]
        groups = [{"params": list(model.lm.parameters()), "lr": s.finetune_lr, "weight_decay": 0.01}]
        if bias_params:
            groups.append({"params": bias_params, "lr": s.bias_lr, "weight_decay": 0.0})
        cfg = self._train_config(max_epochs=None, max_steps=s.finetune_steps, lr=s.finetune_lr, schedule="linear",
                                 eval_every=s.eval_every, restore_best=True)
        trainer = Trainer(model, cfg, collate_fn=self._collate, param_groups=groups)
        data = examples
        if s.year_batches:
            sampler = YearBatchSampler([e["year"] for e in examples.items], s.batch_size, s.seed)
            data = torch.utils.data.DataLoader(examples, batch_sampler=sampler, collate_fn=self._collate)
        trainer.fit(data, self._dev_examples)
        model.config.train_years = sorted({e["year"] for e in examples.items})
        self.models_[name], self.trainers_[name] = model.eval(), trainer
        return model

    def jobs(self, variants=None) -> list[tuple[str, int | None, str]]:
        """(variant, n, model name) for each model to train; ``last-n`` expands to ``settings.last_n``."""
        out = []
        for v in list(variants or self.variants):
            last = re.fullmatch(r"last-(\d+)", str(v))
            if last:
                out.append(("last-n", int(last.group(1)), v))
                continue
            if v not in VARIANTS:
                raise ValueError(f"variant={v!r}: use one of {', '.join(VARIANTS)} (or last-N, e.g. last-2)")
            out += [(v, n, f"last-{n}") for n in self.settings.last_n] if v == "last-n" else [(v, None, v)]
        return out

    # ----- scoring and writing ----------------------------------------------------------------
    def texts_of(self, year: int) -> list[str]:
        return self.frame_.loc[self.frame_["year"] == year, "text"].tolist()

    def get_model(self, name) -> FutureLM:
        """The fitted model called ``name`` (a model object passes through)."""
        if not isinstance(name, str):
            return name
        if name not in self.models_:
            raise KeyError(f"no model {name!r}; fitted: {', '.join(self.models_) or 'none (call fit first)'}")
        return self.models_[name]

    def evaluate(self, name, year: int) -> dict:
        """Perplexity and content perplexity (per document, token-weighted) on ``year``'s documents."""
        s = self.settings
        return perplexity(self.get_model(name), self.tokenizer_, self.texts_of(year), year, block_size=s.block_size,
                          batch_size=s.batch_size)

    def score(self, variants=None, meteor_texts: int = 0, generation: GenerationSettings | None = None) -> pd.DataFrame:
        """Score each model (training any that ``fit`` did not); one row per model, kept as ``results_``.

        ``meteor_texts > 0`` also generates that many texts per model for the test year (seeded,
        ``generation`` settings, default the paper's) and adds ``test_content_meteor``.
        """
        rows = []
        for variant, n, name in self.jobs(variants):
            model = self.models_.get(name) or self.fit_variant(variant, n, name)
            row = {"model": name, "variant": variant}
            for split, year in (("dev", self.dev_year_), ("test", self.test_year_)):
                m = self.evaluate(model, year)
                row.update({f"{split}_ppl": m["ppl"], f"{split}_content_ppl": m["content_ppl"]})
            if meteor_texts:
                gen = generate_texts(model, self.tokenizer_, self.test_year_, meteor_texts, settings=generation)
                row["test_content_meteor"] = content_meteor(gen, self.texts_of(self.test_year_))
            rows.append(row)
        self.results_ = pd.DataFrame(rows)
        return self.results_

    def summary(self, results: pd.DataFrame | None = None) -> dict:
        """``future_text.<model>.ppl`` / ``.content_ppl`` on the test year (for record_summary)."""
        results = self.results_ if results is None else results
        out = {}
        for r in results.itertuples():
            out[f"future_text.{r.model}.ppl"] = round(float(r.test_ppl), 4)
            out[f"future_text.{r.model}.content_ppl"] = round(float(r.test_content_ppl), 4)
        return out

    def generate(self, name, n: int = 5, *, year: int | None = None, alpha: float | None = None,
                 prompt: str | None = None, settings: GenerationSettings | None = None) -> list[str]:
        """``n`` seeded texts from model ``name`` for ``year`` (default: the test year)."""
        return generate_texts(self.get_model(name), self.tokenizer_, self.test_year_ if year is None else year, n,
                              alpha=alpha, prompt=prompt, settings=settings)

    def trends(self, words, models=("baseline", "freq", "context2"), *, contexts_year: int | None = None) -> pd.DataFrame:
        """Each word's actual relative frequency per year and each fitted model's forecast for the
        test year (``whatif.trend_frame``); ``models`` names that were not fitted are skipped."""
        return trend_frame(self, words, {k: self.models_[k] for k in models if k in self.models_},
                           contexts_year=contexts_year)

    # ----- figures (tempo_analysis.figures.future_text) -----------------------------------------
    def _results(self) -> pd.DataFrame:
        if getattr(self, "results_", None) is None:
            raise ValueError("no results yet: call fit() and score() first")
        return self.results_

    def visualize_results(self, title: str | None = None) -> go.Figure:
        """The results table (``figures.future_text.variants_table``)."""
        if title is None:
            return figures.variants_table(self._results())
        return figures.variants_table(self._results(), title=title)

    def visualize_metric(self, metric: str = "test_content_ppl", reference: str = "baseline") -> go.Figure:
        """Bars of one results column per model (``figures.future_text.metric_bars``)."""
        return figures.metric_bars(self._results(), metric, reference)

    def visualize_trends(self, words, models=("baseline", "freq", "context2"), *,
                         contexts_year: int | None = None) -> go.Figure:
        """Actual frequencies and forecasts of ``words`` (``figures.future_text.frequency_trends``)."""
        return figures.frequency_trends(self.trends(words, models, contexts_year=contexts_year))

    def visualize_generations(self, left: str = "baseline", right: str = "freq", words=(), n: int = 3, *,
                              year: int | None = None, settings: GenerationSettings | None = None) -> go.Figure:
        """Texts of two models side by side, ``words`` highlighted (``figures.future_text.side_by_side``)."""
        texts = [self.generate(m, n, year=year, settings=settings) for m in (left, right)]
        return figures.side_by_side(texts[0], texts[1], words, titles=(left, right))

    # ----- save / load ------------------------------------------------------------------------
    def save(self, directory, info: dict | None = None) -> Path:
        """Write the fitted facade to ``directory`` (``info``: extra JSON kept under ``"info"``).

        Layout: ``future_text.json`` (settings, split, model names), ``frame.json.gz`` (the yearly
        frame), the tokenizer files, ``frequency_table.safetensors`` (+ ``context_table.safetensors``),
        ``models/<name>/`` (each FutureLM: config.json + model.safetensors), ``base_lm/`` (the base LM
        and tokenizer, when it was trained here; reusable as ``lm=``), ``results.csv`` after ``score``.
        """
        d = Path(directory)
        (d / "models").mkdir(parents=True, exist_ok=True)
        meta = {"format_version": FORMAT_VERSION, "settings": self.settings.to_dict(), "variants": list(self.variants),
                "dev_year": self.dev_year, "test_year": self.test_year,
                "train_years": list(self.train_years) if self.train_years is not None else None,
                "dev_year_": self.dev_year_, "test_year_": self.test_year_, "train_years_": self.train_years_,
                "models": list(self.models_), "info": info or {}}
        with gzip.open(d / "frame.json.gz", "wt", encoding="utf-8") as fh:
            json.dump({c: self.frame_[c].tolist() for c in ("doc_id", "year", "text")}, fh)
        self.tokenizer_.save_pretrained(d)
        self.freq_table_.save(d / "frequency_table.safetensors")
        if self.context_table_ is not None:
            self.context_table_.save(d / "context_table.safetensors")
        for name, model in self.models_.items():
            model.save_pretrained(d / "models" / name)
        if self.base_ is not None and self.lm is None:
            self.base_.save_pretrained(d / "base_lm")
            self.tokenizer_.save_pretrained(d / "base_lm")
        if self.trend_truth_ is not None:
            self.trend_truth_.to_csv(d / "trend_truth.csv", index=False)
        if self.results_ is not None:
            self.results_.to_csv(d / "results.csv", index=False)
        (d / META).write_text(json.dumps(meta, indent=2))
        return d

    @classmethod
    def load(cls, directory) -> "FutureTextModel":
        """A facade written by :meth:`save`, ready to score, generate and plot (no trainers)."""
        d = Path(directory)
        if not (d / META).is_file():
            raise FileNotFoundError(f"{d} has no {META}; pass a folder written by FutureTextModel.save "
                                    "(or `tempo-analysis future-text train --out DIR`)")
        meta = json.loads((d / META).read_text())
        settings = FutureTextSettings(**{**meta["settings"], "last_n": tuple(meta["settings"]["last_n"])})
        train_years = tuple(meta["train_years"]) if meta["train_years"] is not None else None
        self = cls(settings, variants=tuple(meta["variants"]), dev_year=meta["dev_year"], test_year=meta["test_year"],
                   train_years=train_years)
        with gzip.open(d / "frame.json.gz", "rt", encoding="utf-8") as fh:
            frame = pd.DataFrame(json.load(fh))
        self._setup(frame, tokenizer=AutoTokenizer.from_pretrained(d),
                    freq_table=FrequencyTable.load(d / "frequency_table.safetensors"))
        if (d / "context_table.safetensors").is_file():
            self.context_table_ = ContextTable.load(d / "context_table.safetensors")
        if (d / "base_lm" / "config.json").is_file():
            self.base_ = AutoModelForCausalLM.from_pretrained(d / "base_lm").eval()
        self.models_ = {name: FutureLM.from_pretrained(d / "models" / name).eval() for name in meta["models"]}
        truth = d / "trend_truth.csv"
        self.trend_truth_ = pd.read_csv(truth) if truth.is_file() else None
        results = d / "results.csv"
        self.results_ = pd.read_csv(results) if results.is_file() else None
        return self
