"""Scores of a trained DCWE against a planted truth: are the offsets where the change is?

- ``offset_norms``: ‖o‖ / ‖e‖ of each word's dynamic offset in every (unit, slice) (type level);
- ``offset_ratio``: mean ‖o‖/‖e‖ of the planted changing words over that of the unchanged words;
- ``sigma_precision_at_k``: share of the k words with the largest σ_sim that are planted changing
  words (k = their number);
- ``without_offsets``: a copy of a trained DCWE whose offsets are all 0 (its own trained body and
  head, no unit or time input): the control that shows what the offsets themselves carry;
- ``recovery_rows``: the walk/flight analysis of one or more models side by side (DCWE, and the
  time-blind CWE as control), each scored against the planted first arrivals.
"""
from __future__ import annotations

import copy

import numpy as np
import pandas as pd
import torch


@torch.no_grad()
def without_offsets(model):
    """A copy of a DCWE model with every offset FFN's output layer set to 0, so o = 0 everywhere.

    The copy computes exactly its own trained encoder on the static embeddings: the same body and
    MLM head as the trained DCWE, but blind to the unit and the time. Whatever the trained model
    reads beyond this copy comes from its offsets."""
    if not hasattr(model, "dynamic"):
        raise ValueError(f"without_offsets needs a DCWE model (with a `dynamic` component), got {type(model).__name__}.")
    blind = copy.deepcopy(model)
    for ffn in blind.dynamic.ffns:
        ffn.fc2.weight.zero_()
        ffn.fc2.bias.zero_()
    return blind.eval()


@torch.no_grad()
def offset_norms(model, tokenizer, words) -> pd.DataFrame:
    """Rows word, unit, time, ratio = ‖o_{u,t}(w)‖ / ‖e(w)‖ for every unit and slice of the model.

    Each word must be one token of the model's dynamic vocabulary (a clear error otherwise)."""
    dyn = set(model.dynamic_token_ids)
    ids = []
    for w in words:
        toks = tokenizer(w, add_special_tokens=False)["input_ids"]
        if len(toks) != 1 or toks[0] not in dyn:
            raise ValueError(f"offset_norms: {w!r} is not one token of the model's dynamic vocabulary; "
                             "pick words that occur in the training texts (content_vocabulary).")
        ids.append(toks[0])
    U, T = len(model.config.units), len(model.config.slices)
    was = model.training
    model.eval()
    try:
        tok_ids = np.repeat(ids, U * T)
        units = np.tile(np.repeat(np.arange(U), T), len(ids))
        slices = np.tile(np.arange(T), len(ids) * U)
        e, d = model.static_and_dynamic(tok_ids.tolist(), units.tolist(), slices.tolist())
    finally:
        model.train(was)
    ratio = ((d - e).norm(dim=-1) / e.norm(dim=-1)).cpu().numpy()
    return pd.DataFrame({"word": np.repeat(list(words), U * T), "unit": np.array(model.config.units)[units],
                         "time": np.array(model.config.slices, dtype=object)[slices], "ratio": ratio})


def offset_ratio(model, tokenizer, changing, unchanged) -> float:
    """mean ‖o‖/‖e‖ over the changing words' (unit, slice) contexts / the same for the unchanged words.

    inf when only the changing words have offsets; NaN when no word has any (an untrained model: no
    ratio, rather than an infinite one that would read as a perfect result)."""
    norms = offset_norms(model, tokenizer, list(changing) + list(unchanged))
    num = norms[norms["word"].isin(list(changing))]["ratio"].mean()
    den = norms[norms["word"].isin(list(unchanged))]["ratio"].mean()
    if den > 0:
        return float(num / den)
    return float("inf") if num > 0 else float("nan")


def sigma_precision_at_k(all_sims: pd.DataFrame, changing, min_contexts: int = 3) -> tuple[float, list]:
    """(precision, top-k words): σ_sim per word over its (unit, time) contexts (``sim_table``'s second
    frame), the k = len(changing) most variable words, and the share of them that are changing words."""
    changing = [w.lower() for w in changing]
    counts = all_sims.groupby("word")["sim"].count()
    sigma = all_sims.groupby("word")["sim"].std(ddof=0)[counts >= min_contexts].sort_values(ascending=False)
    top = [str(w) for w in sigma.index[: len(changing)]]
    return sum(w.lower() in changing for w in top) / len(changing), top


def recovery_rows(indexes: dict, graph, word: str, anchor: str, truth_first: dict, word_docs=None,
                  n_neighbors="auto") -> pd.DataFrame:
    """One row per model (``indexes``: {name: ContextIndex}): recovered mode, observed and expected
    walk shares, and how many units' first arrivals match the planted ones."""
    from tempo_analysis.diffusion.report import analyze

    rows = []
    for name, index in indexes.items():
        r = analyze(index, graph, word, anchor, n_neighbors=n_neighbors, word_docs=word_docs)
        reached = sum(t is not None for t in r.first.values())
        rows.append({"model": name, "recovered_mode": r.mode.get("mode"), "walk_share": r.mode.get("walk_share"),
                     "expected_walk_share": r.mode.get("expected_walk_share"), "units_reached": reached,
                     "first_arrival_exact": sum(r.first.get(u) == t for u, t in truth_first.items()),
                     "units": len(truth_first)})
    return pd.DataFrame(rows)
