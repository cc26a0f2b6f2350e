"""Baselines for semantic change ranking; all are ``TemporalAttentionForMaskedLM`` variants, so they share
conversion (pretrained weights kept), post-training, extraction, scorers and evaluation.

- ``plain``: the pretrained encoder with vanilla attention and no time (the Martinc et al. 2020
  averaged-embeddings baseline). With post-training it is MLM-adapted to the corpus, still without
  time -- the clean ablation of "time".
- ``no-time``: the time-blind control of temporal attention: the *same* temporal-attention model,
  post-trained on the same data with the same steps and seed, but every sentence gets the same
  period (index 0) in training and extraction, so the time input carries nothing. What it scores
  below temporal attention is what time adds.
- ``both``: time token and temporal attention together (the paper's "Both" variant).
- ``time-token``: TempoBERT (Rosin et al. 2022): a period token such as ``<old>`` is prepended
  after [CLS] in training (and masked with ``time_mask_prob``) and in extraction.
- ``scaled-linear`` / ``scaled-exp`` / ``scaled-doc``: the paper's scaled attention,
  ``α_ij = softmax(q_i s(t_i) k_jᵀ)``, a fixed factor per period. Period index ``i`` counts from 1
  (oldest) so no period zeroes its scores: linear ``s = i``, exponential ``s = 2**i``,
  document-proportional ``s = docs(t) / Σ docs``.
"""
from __future__ import annotations

from .model import TemporalAttentionForMaskedLM

SCALED_KINDS = ("linear", "exp", "doc")


def period_scales(kind: str, num_periods: int, doc_counts=None) -> list[float]:
    """The fixed per-period attention factors of the scaled-attention baselines."""
    if kind == "linear":
        return [float(i) for i in range(1, num_periods + 1)]
    if kind == "exp":
        return [float(2 ** i) for i in range(1, num_periods + 1)]
    if kind == "doc":
        if doc_counts is None or len(doc_counts) != num_periods or min(doc_counts) <= 0:
            raise ValueError(f"scaled-doc needs doc_counts with one positive count per period "
                             f"({num_periods}), got {doc_counts!r}.")
        total = float(sum(doc_counts))
        return [c / total for c in doc_counts]
    raise ValueError(f"scale kind {kind!r} is not one of {SCALED_KINDS}.")


def time_token(period) -> str:
    """The token prepended for ``period`` by the time-token baseline."""
    return f"<{period}>"


def plain_model(encoder="default", periods=("old", "new"), seed=0):
    """Pretrained encoder, vanilla attention. Returns (model, tokenizer)."""
    return TemporalAttentionForMaskedLM.from_pretrained_encoder(
        encoder, num_periods=len(periods), period_names=[str(p) for p in periods], time_attention="none",
        seed=seed)


def scaled_attention_model(encoder="default", periods=("old", "new"), kind="linear", doc_counts=None, seed=0):
    """Scaled-attention baseline with fixed per-period factors. Returns (model, tokenizer)."""
    scales = period_scales(kind, len(periods), doc_counts)
    return TemporalAttentionForMaskedLM.from_pretrained_encoder(
        encoder, num_periods=len(periods), period_names=[str(p) for p in periods], time_attention="scaled",
        period_scales=scales, seed=seed)


def time_token_model(encoder="default", periods=("old", "new"), seed=0, base=None):
    """TempoBERT-style model: one new whole token per period. Returns (model, tokenizer, token ids).

    ``base``: a ``(model, tokenizer)`` to add the tokens to (default: the plain encoder); the
    "Both" variant passes a temporal-attention model, so time enters by token *and* by attention.
    """
    model, tok = base if base is not None else plain_model(encoder, periods, seed)
    tokens = [time_token(p) for p in periods]
    init = [tok(str(p), add_special_tokens=False)["input_ids"] or [tok.unk_token_id] for p in periods]
    added = tok.add_special_tokens({"additional_special_tokens": tokens})
    if added != len(tokens):
        raise ValueError(f"time tokens {tokens} clash with the tokenizer's vocabulary; rename the periods.")
    ids = tok.convert_tokens_to_ids(tokens)
    model.grow_vocab(init, new_ids=ids)
    model.config.time_tokens = tokens
    return model, tok, ids


def frequency_change(data) -> "pd.DataFrame":
    """The frequency-change baseline: ``|log2(f_late / f_early)|`` of each target's relative frequency
    (usages per corpus sentence, +0.5 smoothing; per sentence of the whole period where the loader kept
    only some, ``ChangeData.period_sizes``) between the compared periods. No model at all; the
    semantic change literature reports it beside every ranking, because frequency shifts often go with
    sense shifts. Returns ``word, score, rank, n_<period>`` like ``score_words``, most changed first."""
    import numpy as np
    import pandas as pd

    first, last = data.compared
    sizes = data.sentences_per_period()      # the whole corpus's sentences, also where only some were kept
    counts = {}
    if data.usages is not None:
        for u in data.usages:
            counts[(u.word, u.period)] = counts.get((u.word, u.period), 0) + 1
    else:
        for w in data.targets:
            for u in data.corpus.find_usages(w, periods=[first, last]):
                counts[(w, u.period)] = counts.get((w, u.period), 0) + 1
    rows = []
    for w in data.targets:
        a, b = counts.get((w, first), 0), counts.get((w, last), 0)
        fa, fb = (a + 0.5) / (sizes.get(first) or 1), (b + 0.5) / (sizes.get(last) or 1)
        rows.append({"word": w, "score": float(abs(np.log2(fb / fa))), f"n_{first}": a, f"n_{last}": b})
    df = pd.DataFrame(rows).sort_values("score", ascending=False).reset_index(drop=True)
    df.insert(2, "rank", df["score"].rank(ascending=False, method="average"))
    return df
