"""Forecasts and what-if edits behind notebook 04: expected token frequencies, bias, injected trends.

- ``expected_token_probs``: the model's forecast of next year's token frequencies, i.e. the mean
  next-token distribution over real contexts (the latest known year's documents) with the target
  year's bias. Same units as a relative frequency ``c / N``, so it plots next to the actuals.
- ``forecast_bias``: the position-free bias a model adds for a year (Context^2: the gate fully
  open, ``alpha * m``).
- ``injected_trend``: temporarily replace a frequency model's history with one where some words
  rise over the last years (``FrequencyTable.with_trend``); the learned LSTM is unchanged, so the
  forecast bias and the generations show what the model makes of the new trend.
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np
import pandas as pd
import torch

from tempo_analysis.data.errors import DataError
from tempo_analysis.future_text.frequency import FrequencyTable
from tempo_analysis.future_text.metrics import document_windows
from tempo_analysis.future_text.model import FEATURE_KIND, FutureLM


def word_token(tokenizer, word: str) -> int:
    """The token id that starts ``word`` in running text (the piece of ``" word"``)."""
    ids = tokenizer(" " + word.strip(), add_special_tokens=False)["input_ids"]
    if not ids:
        raise DataError(f"word={word!r}: the tokenizer produced no tokens; give a non-empty word")
    return int(ids[0])


def word_pieces(tokenizer, word: str) -> list[int]:
    """All token ids of ``" word"`` (what a trend injection raises)."""
    return [int(i) for i in tokenizer(" " + word.strip(), add_special_tokens=False)["input_ids"]]


@torch.no_grad()
def expected_token_probs(model, tokenizer, texts, year: int | None, *, alpha: float | None = None,
                         block_size: int = 128, batch_size: int = 16) -> np.ndarray:
    """Mean next-token probability ``[V]`` over every position of ``texts`` (see module docstring)."""
    bos = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    enc = tokenizer(list(texts), add_special_tokens=False)["input_ids"]
    wins = [w for ids in enc for w in document_windows(ids, bos, tokenizer.eos_token_id, block_size)]
    if not wins:
        raise DataError("texts: nothing to condition on; give at least one non-empty text")
    model.eval()
    total, count = None, 0
    for s in range(0, len(wins), batch_size):
        chunk = wins[s:s + batch_size]
        L = max(len(w) for w in chunk)
        ids = torch.full((len(chunk), L), tokenizer.pad_token_id, dtype=torch.long)
        att = torch.zeros_like(ids)
        for r, w in enumerate(chunk):
            ids[r, :len(w)], att[r, :len(w)] = torch.tensor(w), 1
        kw = {}
        if isinstance(model, FutureLM):
            kw = {"years": torch.full((len(chunk),), int(year)), "alpha": alpha} if model.bias is not None else {}
        p = torch.softmax(model(input_ids=ids, attention_mask=att, **kw).logits[:, :-1].float(), -1)
        m = att[:, 1:].bool()
        part = p[m].sum(0)
        total = part if total is None else total + part
        count += int(m.sum())
    return (total / count).numpy()


@torch.no_grad()
def forecast_bias(model: FutureLM, year: int, alpha: float | None = None) -> np.ndarray:
    """The position-free bias ``[V]`` for ``year`` (zeros for models without a bias)."""
    if not isinstance(model, FutureLM) or model.bias is None:
        V = model.get_input_embeddings().weight.shape[0] if not isinstance(model, FutureLM) else model.vocab_size
        return np.zeros(V, dtype=np.float32)
    alpha = model.config.alpha if alpha is None else alpha
    model.eval()
    terms = model.year_terms([year])[0]
    return (alpha * (terms[..., 1] if model.config.bias_kind == "gated" else terms)).numpy()


@contextmanager
def injected_trend(model: FutureLM, table, token_ids, last: int = 3, factor: float = 3.0):
    """Within the block, ``model`` reads a history where ``token_ids`` rise by ``factor`` over ``last`` years."""
    if not isinstance(model, FutureLM) or FEATURE_KIND.get(model.config.variant) != "freq":
        raise DataError("injected_trend: only frequency models (freq, freq-nolstm) read counts; a trend in "
                        "contextual embeddings is not defined. Fix: pass the freq or freq-nolstm model")
    old = model.history.clone()
    first = model.config.history_first_year
    if table.years != model.history_years:
        raise DataError(f"table years {table.years[0]}-{table.years[-1]} differ from the model's history "
                        f"{model.history_years[0]}-{model.history_years[-1]}. Fix: pass the fitted FutureTextModel's freq_table_")
    model.set_history(table.with_trend(token_ids, last=last, factor=factor).features(), first, refit_norm=False)
    try:
        yield model
    finally:
        model.set_history(old, first, refit_norm=False)


def trend_frame(fitted, words, models: dict, *, contexts_year: int | None = None) -> pd.DataFrame:
    """Long frame (word, year, series, value): actual relative frequency per year of each word's token
    (history + the test year) and each model's forecast for the test year from ``contexts_year`` texts
    (default: the dev year). ``fitted``: a fitted :class:`~tempo_analysis.future_text.FutureTextModel`."""
    tok = fitted.tokenizer_
    rel = fitted.freq_table_.relative()
    test = fitted.frame_[fitted.frame_["year"] == fitted.test_year_]
    test_rel = FrequencyTable.from_texts(test["text"].tolist(), test["year"].tolist(), tok).relative()[0]
    ctx = fitted.texts_of(contexts_year or fitted.dev_year_)
    probs = {name: expected_token_probs(m, tok, ctx, fitted.test_year_, block_size=fitted.settings.block_size)
             for name, m in models.items()}
    rows = []
    for w in words:
        t = word_token(tok, w)
        rows += [dict(word=w, year=y, series="actual", value=float(rel[i, t]))
                 for i, y in enumerate(fitted.freq_table_.years)]
        rows.append(dict(word=w, year=fitted.test_year_, series="actual", value=float(test_rel[t])))
        rows += [dict(word=w, year=fitted.test_year_, series=f"forecast: {name}", value=float(p[t]))
                 for name, p in probs.items()]
    return pd.DataFrame(rows)
