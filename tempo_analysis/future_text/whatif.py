"""Forecasts and what-if edits behind notebook 04: expected token frequencies, bias, injected trends.

- ``expected_token_probs``: the model's forecast of next year's token frequencies, i.e. the mean
  next-token distribution over real contexts (the latest known year's documents) with the target
  year's bias. Same units as a relative frequency ``c / N``, so it plots next to the actuals.
- ``forecast_bias``: the position-free bias a model adds for a year (Context^2: the gate fully
  open, ``alpha * m``).
- ``injected_trend``: temporarily replace a frequency model's history with one where some words
  rise over the last years (``FrequencyTable.with_trend``); the learned LSTM is unchanged, so the
  forecast bias and the generations show what the model makes of the new trend.
- ``trend_response``: generate with and without an injected trend at the same seeds; the ratio
  of the injected words' occurrence rates per generated token (add-one; a word written in neither
  set is no evidence and is left out; the notebook's ``future_text.trend_response``), the ratio
  of the model's forecast probability of each word over the dev year's real contexts
  (``prob_ratio``) and over the contexts it generated itself (``expected_ratio``,
  ``generated_word_probs``): how much more often the model expects the word, without sampling noise.
- ``copy_rate``: the share of generated word 8-grams found verbatim in the training texts.
"""

from __future__ import annotations

import re
from contextlib import contextmanager

import numpy as np
import pandas as pd
import torch

from tempo_analysis.data.errors import DataError
from tempo_analysis.future_text.frequency import FrequencyTable
from tempo_analysis.future_text.metrics import document_windows
from tempo_analysis.future_text.model import FEATURE_KIND, FutureLM


def model_of(fitted, name) -> FutureLM:
    """The model called ``name`` in the fitted facade ``fitted`` (``fitted.models_[name]``, with an error
    naming the fitted ones); a model object passes through."""
    if not isinstance(name, str):
        return name
    fitted._check_fitted()
    if name not in fitted.models_:
        raise KeyError(f"no model {name!r}; fitted: {', '.join(fitted.models_) or 'none'}")
    return fitted.models_[name]


def word_token(tokenizer, word: str, *, whole: bool = False) -> int:
    """The token id that starts ``word`` in running text (the piece of ``" word"``).

    With ``whole=True`` a word the tokenizer splits is refused: a measure that reads one token would
    report its first piece (" pre" of "pretraining"), which other words share."""
    ids = tokenizer(" " + word.strip(), add_special_tokens=False)["input_ids"] if word.strip() else []
    if not ids:      # a blank word is refused before a byte-level BPE turns the bare space into a token
        raise DataError(f"word={word!r}: the tokenizer produced no tokens; give a non-empty word")
    if whole and len(ids) > 1:
        pieces = tokenizer.convert_ids_to_tokens(ids)
        raise DataError(f"word={word!r}: the tokenizer splits it into {pieces}, and this measure reads one "
                        f"token, so it would report the first piece {pieces[0]!r}, which other words share. "
                        "Fix: choose a word the tokenizer keeps whole")
    return int(ids[0])


def word_pieces(tokenizer, word: str) -> list[int]:
    """All token ids of ``" word"`` (what a trend injection raises); a blank word is refused, as in
    :func:`word_token` (a byte-level BPE would give the bare-space token)."""
    if not word.strip():
        raise DataError(f"word={word!r}: the tokenizer produced no tokens; give a non-empty word")
    return [int(i) for i in tokenizer(" " + word.strip(), add_special_tokens=False)["input_ids"]]


def shown_tokens(tokenizer, words) -> tuple[list[int], list[str], list[str]]:
    """What a one-token view shows for ``words``: ``(ids, labels, notes)``, one id and label per word.

    A word the tokenizer keeps whole is labelled by itself. A split word is shown by its first piece,
    labelled so (``"pretraining → 'Ġpre' (1 of 3 pieces)"``), and gets a note saying that the bar
    follows a piece that other words share; nothing is dropped silently."""
    ids, labels, notes = [], [], []
    for w in dict.fromkeys(str(x).strip() for x in words):
        pieces = word_pieces(tokenizer, w)
        t = word_token(tokenizer, w)
        ids.append(t)
        if len(pieces) == 1:
            labels.append(w)
            continue
        first = tokenizer.convert_ids_to_tokens([t])[0]
        labels.append(f"{w} → {first!r} (1 of {len(pieces)} pieces)")
        notes.append(f"'{w}' is {len(pieces)} tokens {tokenizer.convert_ids_to_tokens(pieces)}; its bar shows the "
                     f"first piece {first!r}, which other words share. A trend injection raises every piece.")
    return ids, labels, notes


@torch.no_grad()
def expected_token_probs(model, tokenizer, texts, year: int | None, *, alpha: float | None = None,
                         block_size: int = 128, batch_size: int = 16) -> np.ndarray:
    """Mean next-token probability ``[V]`` over every position of ``texts`` (see module docstring)."""
    bos = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    texts = list(texts)
    if not texts:    # checked before tokenising: a tokenizer fails on an empty batch with an IndexError
        raise DataError("texts: nothing to condition on; give at least one text")
    enc = tokenizer(texts, add_special_tokens=False)["input_ids"]
    wins = [w for ids in enc for w in document_windows(ids, bos, tokenizer.eos_token_id, block_size)]
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
def states_token_probs(fitted, model, year_docs, year: int, chunk: int = 1024) -> np.ndarray:
    """``expected_token_probs`` from the fitted facade's cached LM states (no LM forward)."""
    terms = fitted.terms_
    idx = terms.positions_of_docs(year_docs)
    head = model.lm.get_output_embeddings()
    total = torch.zeros(model.vocab_size)
    for s in range(0, len(idx), chunk):
        i = torch.as_tensor(idx[s:s + chunk])
        h = terms.states.hidden[i].to(model.offset.device)
        years = torch.full((len(i),), int(year)) if model.bias is not None else None
        off = model.full_offset(years, h[:, None, :])
        logits = head(h) + (off if off.dim() == 1 else off[:, 0])
        total += torch.softmax(logits.float(), -1).sum(0).cpu()
    return (total / max(len(idx), 1)).numpy()


@torch.no_grad()
def forecast_bias(model: FutureLM, year: int, alpha: float | None = None) -> np.ndarray:
    """The position-free temporal bias ``[V]`` for ``year`` (zeros for models without a bias, and
    for tokens outside the model's S)."""
    if not isinstance(model, FutureLM) or model.bias is None:
        V = model.get_input_embeddings().weight.shape[0] if not isinstance(model, FutureLM) else model.vocab_size
        return np.zeros(V, dtype=np.float32)
    alpha = float(model.alpha.detach()) if alpha is None else alpha
    model.eval()
    terms = model.year_terms([year])[0]
    b = alpha * (terms[..., 1] if model.config.bias_kind == "gated" else terms)
    full = torch.zeros(model.vocab_size)
    full[model.token_ids.cpu()] = b.float().cpu()
    return full.numpy()


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
    ids = model.token_ids.cpu().numpy()
    if not np.isin(np.asarray(list(token_ids)), ids).any():
        raise DataError(f"token_ids={list(token_ids)[:5]}: none of these tokens occurs in the history, so the model "
                        "has no bias for them. Fix: pick a word of the corpus")
    model.set_history(table.with_trend(token_ids, last=last, factor=factor).features()[:, ids], first,
                      refit_norm=False)
    try:
        yield model
    finally:
        model.set_history(old, first, refit_norm=False)


def trend_frame(fitted, words, models: dict, *, contexts_year: int | None = None) -> pd.DataFrame:
    """Long frame (word, year, series, value): actual relative frequency per year of each word's token
    (history + the test year) and each model's forecast for the test year from ``contexts_year`` texts
    (default: the dev year). ``fitted``: a fitted :class:`~tempo_analysis.future_text.FutureTextModel`.

    A word the tokenizer splits is followed by its first piece, and its ``word`` label says so
    (``shown_tokens``: "pretraining → 'Ġpre' (1 of 2 pieces)"); ``frame.attrs["notes"]`` explains each."""
    tok = fitted.tokenizer_
    rel = fitted.freq_table_.relative()
    test = fitted.frame_[fitted.frame_["year"] == fitted.test_year_]
    test_rel = FrequencyTable.from_texts(test["text"].tolist(), test["year"].tolist(), tok).relative()[0]
    docs = fitted._frame_rows[contexts_year or fitted.dev_year_]
    probs = {name: states_token_probs(fitted, m, docs, fitted.test_year_) for name, m in models.items()}
    rows = []
    ids, labels, notes = shown_tokens(tok, words)   # a split word follows its first piece, and its label says so
    for t, w in zip(ids, labels):
        rows += [dict(word=w, year=y, series="actual", value=float(rel[i, t]))
                 for i, y in enumerate(fitted.freq_table_.years)]
        rows.append(dict(word=w, year=fitted.test_year_, series="actual", value=float(test_rel[t])))
        rows += [dict(word=w, year=fitted.test_year_, series=f"forecast: {name}", value=float(p[t]))
                 for name, p in probs.items()]
    frame = pd.DataFrame(rows)
    frame.attrs["notes"] = notes
    return frame


def _ngrams(words: list[str], n: int) -> set:
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


def _words(text: str) -> list[str]:
    return re.findall(r"\w+(?:[-']\w+)*", text.lower())


def copy_rate(generated, training_texts, n: int = 8) -> float:
    """Share of the generated texts' word ``n``-grams (lower-cased) found verbatim in ``training_texts``."""
    train = set()
    for t in training_texts:
        train |= _ngrams(_words(t), n)
    grams = [g for t in generated for g in _ngrams(_words(t), n)]
    return float(np.mean([g in train for g in grams])) if grams else 0.0


def occurrence_rate(texts, word: str) -> float:
    """Occurrences of ``word`` (as a word or a word's start: "kernel" counts "kernels") per text."""
    pat = re.compile(r"\b" + re.escape(word.strip().lower()))
    return float(np.mean([len(pat.findall(t.lower())) for t in texts])) if texts else 0.0


def occurrences(texts, word: str) -> int:
    """Total occurrences of ``word`` in ``texts`` (as :func:`occurrence_rate` counts them)."""
    pat = re.compile(r"\b" + re.escape(word.strip().lower()))
    return int(sum(len(pat.findall(t.lower())) for t in texts))


@torch.no_grad()
def generated_states(model: FutureLM, tokenizer, texts, *, batch_size: int = 32) -> torch.Tensor:
    """The LM head's input ``[P, d]`` at every position of ``texts`` that predicts a next token
    (the first from BOS): the frozen LM reads the texts once; :func:`generated_word_probs` then
    recomputes only what the adaptation and the bias add."""
    bos = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    enc = [e for e in ([bos] + tokenizer(t, add_special_tokens=False)["input_ids"] for t in texts) if len(e) > 1]
    model.eval()
    dev = next(model.lm.parameters()).device
    hidden = [torch.zeros(0, model.lm.get_input_embeddings().weight.shape[1], device=dev)]
    for s in range(0, len(enc), batch_size):
        chunk = enc[s:s + batch_size]
        L = max(len(e) for e in chunk)
        ids = torch.full((len(chunk), L), tokenizer.pad_token_id, dtype=torch.long, device=dev)
        att = torch.zeros_like(ids)
        for r, e in enumerate(chunk):
            ids[r, :len(e)], att[r, :len(e)] = torch.tensor(e), 1
        out = model.lm(input_ids=ids, attention_mask=att, output_hidden_states=not model.reads_hidden)
        h = model._hidden if model.reads_hidden else out.hidden_states[-1]     # the LM head's input
        hidden.append(h[:, :-1][att[:, 1:].bool()])
    return torch.cat(hidden)


@torch.no_grad()
def generated_word_probs(model: FutureLM, hidden: torch.Tensor, year: int, token_ids, chunk: int = 512) -> dict:
    """``{token: expected occurrences}``: the model's next-token probability of each of
    ``token_ids`` summed over the positions ``hidden`` (:func:`generated_states`), i.e. how often
    the decoder writes the token there on average (no top-k / top-p), free of sampling noise.
    Inside :func:`injected_trend` it gives the injected model's value in the same contexts."""
    head = model.lm.get_output_embeddings()
    cols = torch.as_tensor([int(t) for t in token_ids], device=hidden.device)
    total = torch.zeros(len(cols), dtype=torch.float64)
    for s in range(0, len(hidden), chunk):
        h = hidden[s:s + chunk]
        years = torch.full((len(h),), int(year)) if model.bias is not None else None
        off = model.full_offset(years, h[:, None, :])
        logits = head(h) + (off if off.dim() == 1 else off[:, 0])
        total += torch.softmax(logits.float(), -1)[:, cols].sum(0).double().cpu()
    return {int(t): float(v) for t, v in zip(cols.tolist(), total)}


def trend_response(fitted, model, words, *, factor: float = 8.0, last: int = 3, n: int = 96, settings=None,
                   year: int | None = None, contexts_year: int | None = None) -> dict:
    """Generate ``n`` texts with and without a rising trend injected into each word's history (same
    seeds and decoding) and compare how often the word is written, per generated token.

    Per word: ``count_before`` / ``count_after`` = its occurrences in the ``n`` texts,
    ``tokens_before`` / ``tokens_after`` = the generated tokens they were counted in, and
    ``ratio`` = the ratio of rates per generated token with one occurrence added to each side
    (``(count_after + 1) / tokens_after`` over ``(count_before + 1) / tokens_before``), so a word
    absent without the injection gives a finite ratio, pulled towards 1. A word written in
    neither set gives no evidence either way: its ratio is NaN (not 1) and it is left out of the
    mean. ``trend_response`` = the mean ratio over the words with evidence (NaN when none has
    any); ``evidence`` = how many words had some; ``occurrences`` = all counted occurrences.

    Two noise-free views of the same question: ``prob_ratio`` = the model's mean next-token
    probability of the word's first piece over the real texts of ``contexts_year`` (default: the
    dev year; :func:`states_token_probs`) with the injection over without (``prob_response`` = its
    mean over ``words``); ``expected_ratio`` = the same ratio summed over the contexts the model
    generated itself (the texts without the injection; :func:`generated_word_probs`;
    ``expected_response`` = its mean). When the word is mostly written where it is already certain
    (after "graph" or "string", *kernel*), a bias cannot raise it there and ``expected_ratio``
    stays far below ``prob_ratio``. Also the bias of each word's first piece before and after.
    Sampling without beams (``num_beams=1``) gives counts that follow the model's distribution;
    beam search keeps the likeliest sentences, so a rare word's count hardly moves."""
    from tempo_analysis.future_text.generation import generate_texts

    model = model_of(fitted, model)
    tok, year = fitted.tokenizer_, fitted.test_year_ if year is None else year
    settings = settings or fitted.generation_settings()
    docs = fitted._frame_rows[contexts_year or fitted.dev_year_]
    firsts = [word_token(tok, w, whole=True) for w in words]
    before_bias = forecast_bias(model, year)
    before_probs = states_token_probs(fitted, model, docs, year)
    before = generate_texts(model, tok, year, n, settings=settings)
    n_before = _generated_tokens(tok, before)
    hidden = generated_states(model, tok, before)
    before_expected = generated_word_probs(model, hidden, year, firsts)
    rows = []
    for w, t in zip(words, firsts):
        with injected_trend(model, fitted.freq_table_, word_pieces(tok, w), last=last, factor=factor):
            after_bias = forecast_bias(model, year)
            after_probs = states_token_probs(fitted, model, docs, year)
            after_expected = generated_word_probs(model, hidden, year, [t])[t]
            after = generate_texts(model, tok, year, n, settings=settings)
        c0, c1, n_after = occurrences(before, w), occurrences(after, w), _generated_tokens(tok, after)
        rows.append({"word": w, "bias_before": float(before_bias[t]), "bias_after": float(after_bias[t]),
                     "prob_before": float(before_probs[t]), "prob_after": float(after_probs[t]),
                     "prob_ratio": float(after_probs[t] / max(before_probs[t], 1e-30)),
                     "expected_before": before_expected[t], "expected_after": after_expected,
                     "expected_ratio": after_expected / max(before_expected[t], 1e-30),
                     "count_before": c0, "count_after": c1, "tokens_before": n_before, "tokens_after": n_after,
                     "rate_before": 1000 * c0 / max(n_before, 1), "rate_after": 1000 * c1 / max(n_after, 1),
                     "ratio": ((c1 + 1) / max(n_after, 1)) / ((c0 + 1) / max(n_before, 1)) if c0 + c1 else float("nan"),
                     "text_after": next((a for a in after if re.search(r"\b" + re.escape(w.lower()), a.lower())),
                                        after[0])})
    table = pd.DataFrame(rows)
    seen = table["ratio"].notna()
    return {"trend_response": float(table.loc[seen, "ratio"].mean()) if seen.any() else float("nan"),
            "evidence": int(seen.sum()), "occurrences": int(table["count_before"].sum() + table["count_after"].sum()),
            "prob_response": float(table["prob_ratio"].mean()),
            "expected_response": float(table["expected_ratio"].mean()), "table": table, "before": before}


def _generated_tokens(tokenizer, texts) -> int:
    return int(sum(len(ids) for ids in tokenizer(list(texts), add_special_tokens=False)["input_ids"]))


def bias_by_factor(fitted, model, words, factors=(1.0, 2.0, 4.0, 8.0, 16.0), *, last: int = 3,
                   year: int | None = None) -> pd.DataFrame:
    """Each word's forecast bias (first piece) for the test year with a rising trend of each
    ``factor`` injected (rows: words, columns: factors); a frequency model's bias should rise
    along each row."""
    model = model_of(fitted, model)
    tok, year = fitted.tokenizer_, fitted.test_year_ if year is None else year
    out = {}
    for w in words:
        t = word_token(tok, w, whole=True)
        row = {}
        for f in factors:
            with injected_trend(model, fitted.freq_table_, word_pieces(tok, w), last=last, factor=f):
                row[f"x{f:g}"] = float(forecast_bias(model, year)[t])
        out[w] = row
    return pd.DataFrame(out).T
