"""The future-text experiment end to end: split, tokenizer, history tables, LM, variants, metrics.

    exp = FutureTextExperiment(frame)               # (year, text) rows; dev/test = last two years
    exp.run(["baseline", "freq"])                   # -> DataFrame of dev/test ppl, content ppl
    generate_texts(exp.models_["freq"], exp.tokenizer_, exp.test_year)

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
from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd
import torch

from tempo_analysis.evaluation.future_text import document_windows, perplexity
from tempo_analysis.future_text.data import default_split, split_years, yearly_frame
from tempo_analysis.future_text.frequency import FrequencyTable
from tempo_analysis.future_text.tokenizer import ensure_special_tokens, train_bpe_tokenizer
from tempo_analysis.models.future_lm import FEATURE_KIND, VARIANTS, FutureLM


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


# ------------------------------------------------------------------------------------------------
# data -> examples
# ------------------------------------------------------------------------------------------------
class Examples(torch.utils.data.Dataset):
    """A list of ``{"input_ids": [...], "year": int}`` as a map-style Dataset (the Trainer shuffles it)."""

    def __init__(self, items: list[dict]):
        self.items = items

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]

    def only_years(self, years) -> "Examples":
        keep = set(years)
        return Examples([e for e in self.items if e["year"] in keep])


def lm_examples(texts, years, tokenizer, block_size: int) -> Examples:
    """One example per window of ``[BOS] doc [EOS]`` (windows overlap by one token), with its year."""
    bos = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    enc = tokenizer(list(texts), add_special_tokens=False)["input_ids"]
    return Examples([{"input_ids": w, "year": int(y)} for ids, y in zip(enc, years)
                     for w in document_windows(ids, bos, tokenizer.eos_token_id, block_size) if len(w) > 1])


class YearBatchSampler(torch.utils.data.Sampler):
    """Batches drawn from one year each (seeded; reshuffled every epoch): the temporal bias then
    runs its LSTM for ONE distinct year per step instead of up to batch-size years."""

    def __init__(self, years, batch_size: int, seed: int = 0):
        self.years, self.batch_size, self.seed, self.epoch = np.asarray(years), int(batch_size), int(seed), 0

    def _batches(self, epoch: int) -> list[list[int]]:
        rng = np.random.default_rng([self.seed, epoch])
        out = []
        for y in np.unique(self.years):
            idx = rng.permutation(np.flatnonzero(self.years == y))
            out += [idx[i:i + self.batch_size].tolist() for i in range(0, len(idx), self.batch_size)]
        return [out[i] for i in rng.permutation(len(out))]

    def __iter__(self):
        batches = self._batches(self.epoch)
        self.epoch += 1
        return iter(batches)

    def __len__(self):
        return len(self._batches(0))


def make_collate(pad_id: int):
    """Right-padded batch: input_ids, attention_mask, labels (-100 on padding), years."""
    def collate(batch):
        L = max(len(b["input_ids"]) for b in batch)
        ids = torch.full((len(batch), L), pad_id, dtype=torch.long)
        att = torch.zeros((len(batch), L), dtype=torch.long)
        for r, b in enumerate(batch):
            ids[r, :len(b["input_ids"])] = torch.tensor(b["input_ids"])
            att[r, :len(b["input_ids"])] = 1
        labels = ids.masked_fill(att == 0, -100)
        return {"input_ids": ids, "attention_mask": att, "labels": labels,
                "years": torch.tensor([b["year"] for b in batch])}
    return collate


def _plain_loss(model, batch):
    """Loss of a plain HF causal LM (ignores the years column)."""
    return model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], labels=batch["labels"]).loss


def small_gpt2(vocab_size: int, s: FutureTextSettings, tokenizer):
    """The default LM: a small GPT-2 config (tied head), randomly initialised, seeded."""
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(s.seed)
    cfg = GPT2Config(vocab_size=vocab_size, n_positions=max(s.block_size, 64), n_embd=s.n_embd, n_layer=s.n_layer,
                     n_head=s.n_head, resid_pdrop=s.dropout, embd_pdrop=s.dropout, attn_pdrop=s.dropout,
                     bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                     pad_token_id=tokenizer.pad_token_id, tie_word_embeddings=True)
    return GPT2LMHeadModel(cfg)


# ------------------------------------------------------------------------------------------------
# the experiment
# ------------------------------------------------------------------------------------------------
class FutureTextExperiment:
    """Split + tokenizer + tables + base LM; ``train(variant)`` / ``evaluate`` / ``run`` (module docstring)."""

    def __init__(self, frame: pd.DataFrame, *, dev_year: int | None = None, test_year: int | None = None,
                 train_years: tuple | None = None, settings: FutureTextSettings | None = None,
                 tokenizer=None, lm=None):
        self.settings = s = settings or FutureTextSettings()
        self.frame = yearly_frame(frame)
        if dev_year is None or test_year is None:
            dev_year, test_year = default_split(self.frame)
        self.dev_year, self.test_year = int(dev_year), int(test_year)
        self.train_df, self.dev_df, self.test_df = split_years(self.frame, self.dev_year, self.test_year, train_years)
        self.train_years = sorted(set(self.train_df["year"]))
        self.first_year = self.train_years[0]
        if s.window > len(self.train_years) - 1:
            raise ValueError(f"window={s.window} is longer than the {len(self.train_years) - 1} training years that "
                             f"have a previous year ({self.train_years[0]}-{self.train_years[-1]}). Fix: use "
                             f"window <= {len(self.train_years) - 1} or give more years")
        self.tokenizer_ = ensure_special_tokens(tokenizer or train_bpe_tokenizer(self.train_df["text"], s.vocab_size))
        past = pd.concat([self.train_df, self.dev_df])                     # everything before the test year
        self.freq_table_ = FrequencyTable.from_texts(past["text"].tolist(), past["year"].tolist(), self.tokenizer_,
                                                     year_range=(self.first_year, self.test_year - 1))
        self.context_table_ = None
        self.base_ = lm
        self.models_: dict[str, FutureLM] = {}
        self.trainers_: dict = {}
        self._collate = make_collate(self.tokenizer_.pad_token_id)
        fine = self.train_df[self.train_df["year"] > self.first_year]
        self._train_examples = lm_examples(fine["text"], fine["year"], self.tokenizer_, s.block_size)
        self._dev_examples = lm_examples(self.dev_df["text"], self.dev_df["year"], self.tokenizer_, s.block_size)

    # ---------------------------------------------------------------------------------------------
    def _train_config(self, **kw):
        from tempo_analysis.training import TrainConfig

        s = self.settings
        base = dict(batch_size=s.batch_size, seed=s.seed, progress=s.progress, device="cpu", weight_decay=0.01)
        return TrainConfig(**{**base, **kw})

    def pretrain(self):
        """Train (once) the small GPT-2 on all training years; returns the base LM."""
        from tempo_analysis.training import Trainer

        if self.base_ is None:
            s = self.settings
            lm = small_gpt2(len(self.tokenizer_), s, self.tokenizer_)
            ex = lm_examples(self.train_df["text"], self.train_df["year"], self.tokenizer_, s.block_size)
            cfg = self._train_config(max_epochs=s.pretrain_epochs, lr=s.lr, warmup_ratio=0.05, schedule="cosine")
            Trainer(lm, cfg, loss_fn=_plain_loss, collate_fn=self._collate).fit(ex, None)
            self.base_ = lm.eval()
        return self.base_

    def context_table(self):
        """Per-year averaged contextual embeddings (computed once, same years as the frequency table)."""
        from tempo_analysis.future_text.context import contextual_table

        if self.context_table_ is None:
            past = pd.concat([self.train_df, self.dev_df])
            self.context_table_ = contextual_table(
                past["text"].tolist(), past["year"].tolist(), self.tokenizer_, self.settings.context_encoder,
                year_range=(self.first_year, self.test_year - 1), max_length=self.settings.context_max_length,
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
                                 feature_dim=fdim, alpha=s.alpha, train_years=self.train_years)
        if feats is not None:
            n_train = len(self.train_years)
            model.set_history(feats[:n_train], self.first_year, refit_norm=True)     # norm from training years
            model.set_history(feats, self.first_year, refit_norm=False)              # + dev year for the test
        return model

    def train(self, variant: str, n: int | None = None, name: str | None = None) -> FutureLM:
        """Fine-tune ``variant`` (``last-n`` needs ``n``); stored in ``models_[name]``."""
        from tempo_analysis.training import Trainer

        s = self.settings
        if variant == "last-n":
            if not n or n < 1 or n > len(self.train_years) - 1:
                raise ValueError(f"last-n needs 1 <= n <= {len(self.train_years) - 1}, got n={n}")
            examples = self._train_examples.only_years(self.train_years[-n:])
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

    # ---------------------------------------------------------------------------------------------
    def texts_of(self, year: int) -> list[str]:
        return self.frame.loc[self.frame["year"] == year, "text"].tolist()

    def evaluate(self, model, year: int) -> dict:
        """Perplexity and content perplexity (per document, token-weighted) on ``year``'s documents."""
        s = self.settings
        return perplexity(model, self.tokenizer_, self.texts_of(year), year, block_size=s.block_size,
                          batch_size=s.batch_size)

    def jobs(self, variants=None) -> list[tuple[str, int | None, str]]:
        """(variant, n, model name) for each model to train; ``last-n`` expands to ``settings.last_n``."""
        out = []
        for v in list(variants or VARIANTS):
            if v not in VARIANTS:
                raise ValueError(f"variant={v!r}: use one of {', '.join(VARIANTS)}")
            out += [(v, n, f"last-{n}") for n in self.settings.last_n] if v == "last-n" else [(v, None, v)]
        return out

    def run(self, variants=None, meteor_texts: int = 0, generation=None) -> pd.DataFrame:
        """Train (unless already in ``models_``) and score each model; one row per model.

        ``meteor_texts > 0`` also generates that many texts per model for the test year (seeded,
        ``generation`` settings, default the paper's) and adds ``test_content_meteor``.
        """
        from tempo_analysis.evaluation.future_text import content_meteor
        from tempo_analysis.future_text.generation import generate_texts

        rows = []
        for variant, n, name in self.jobs(variants):
            model = self.models_.get(name) or self.train(variant, n, name)
            row = {"model": name, "variant": variant}
            for split, year in (("dev", self.dev_year), ("test", self.test_year)):
                m = self.evaluate(model, year)
                row.update({f"{split}_ppl": m["ppl"], f"{split}_content_ppl": m["content_ppl"]})
            if meteor_texts:
                gen = generate_texts(model, self.tokenizer_, self.test_year, meteor_texts, settings=generation)
                row["test_content_meteor"] = content_meteor(gen, self.texts_of(self.test_year))
            rows.append(row)
        return pd.DataFrame(rows)

    def summary(self, results: pd.DataFrame) -> dict:
        """``future_text.<model>.ppl`` / ``.content_ppl`` on the test year (for record_summary)."""
        out = {}
        for r in results.itertuples():
            out[f"future_text.{r.model}.ppl"] = round(float(r.test_ppl), 4)
            out[f"future_text.{r.model}.content_ppl"] = round(float(r.test_content_ppl), 4)
        return out
