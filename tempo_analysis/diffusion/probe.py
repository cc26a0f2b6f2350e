"""r-hat read from the model's masked predictions: which word does the model expect next to `word`,
in each unit and slice?

The paper's r-hat (``analysis.rhat_scores``) ranks the anchor among the nearest neighbours of the
word's contextual vectors. Its masked-prediction counterpart here asks the trained model itself:
in a probe text such as "cloud [MASK]." written by unit u in slice t, at which rank does the model
predict the anchor ("server") among the candidate words? r-hat = N - rank + 1 when the rank is
<= N, else 0, per (unit, slice), with the same columns as ``rhat_scores``, so ``diffusion_map``,
``walk_flight`` and ``recover_mode`` read it unchanged. Next to it, ``anchor_prob``: the model's
probability of the anchor among the candidates (softmax of the probe-averaged log-probabilities),
a graded view of the same prediction that moves even where the rank does not.

A time- and unit-blind model (CWE) gives every unit and slice the same prediction, so it cannot
tell who adopted when; DCWE's offsets of the word for (unit, slice) can. Candidates: ``candidates``
(words or token ids; default: a DCWE's dynamic vocabulary, else the whole vocabulary), the word
itself excluded. Compare models on the same candidates.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import torch

PROBES = ("{word} {mask}.", "{word} and {mask}.", "{word} with {mask}.")


def _single_token(tokenizer, word: str, role: str) -> int:
    ids = tokenizer(word, add_special_tokens=False)["input_ids"]
    if len(ids) != 1:
        raise ValueError(f"{role} {word!r} is {len(ids)} tokens for this tokenizer; the probe needs one-token words.")
    return ids[0]


@torch.no_grad()
def prediction_rhat(model, tokenizer, word: str, anchor: str, units: list, slices: list, *, n_neighbors: int = 1,
                    probes=PROBES, candidates=None) -> pd.DataFrame:
    """r-hat per (unit, slice) from masked predictions next to `word` (see the module docstring).

    model: a DCWEForMaskedLM or a PlainMLM (the control: no unit or time input); units/slices: labels
    in model order. Rank 1 = the model's most likely candidate; the probes' log-probabilities are
    averaged before ranking.
    """
    if not (isinstance(n_neighbors, (int, np.integer)) and n_neighbors >= 1):
        raise ValueError(f"n_neighbors={n_neighbors!r}: use a positive integer.")
    w_id, a_id = _single_token(tokenizer, word, "word"), _single_token(tokenizer, anchor, "anchor")
    if candidates is None:
        cand = sorted(set(getattr(model, "dynamic_token_ids", [])) or set(range(len(tokenizer))))
    else:
        cand = sorted({int(c) if isinstance(c, (int, np.integer)) else _single_token(tokenizer, c, "candidate")
                       for c in candidates})
    cand = [c for c in cand if c != w_id]
    if a_id not in cand:
        cand.append(a_id)
    cand_t = torch.tensor(cand)
    texts = [p.format(word=word, mask=tokenizer.mask_token) for p in probes]
    enc = tokenizer(texts, padding=True, return_tensors="pt")
    mask_pos = (enc["input_ids"] == tokenizer.mask_token_id).nonzero(as_tuple=True)
    was = model.training
    model.eval()
    rows = []
    cells = [(ui, u, ti, t) for ui, u in enumerate(units) for ti, t in enumerate(slices)]
    n = len(texts)
    chunk = 64                                           # cells per forward pass (each with every probe)
    try:
        for start in range(0, len(cells), chunk):
            part = cells[start:start + chunk]
            k = len(part)
            out = model(input_ids=enc["input_ids"].repeat(k, 1), attention_mask=enc["attention_mask"].repeat(k, 1),
                        unit_ids=torch.tensor([ui for ui, _, _, _ in part]).repeat_interleave(n),
                        slice_ids=torch.tensor([ti for _, _, ti, _ in part]).repeat_interleave(n))
            logits = out.logits.view(k, n, *out.logits.shape[1:])[:, mask_pos[0], mask_pos[1]]   # [cells, probes, V]
            lps = torch.log_softmax(logits.float(), -1)[..., cand_t].mean(1)                    # [cells, candidates]
            for (ui, u, ti, t), lp in zip(part, lps):
                a = lp[cand.index(a_id)]
                rank = int((lp > a).sum()) + 1
                rows.append({"unit": u, "time": t, "rhat": float(n_neighbors - rank + 1 if rank <= n_neighbors else 0),
                             "n": n, "rank": float(rank), "n_neighbors": int(n_neighbors),
                             "anchor_prob": float(torch.softmax(lp, 0)[cand.index(a_id)]),
                             "example": texts[0].replace(tokenizer.mask_token, anchor) if rank <= n_neighbors
                             else texts[0]})
    finally:
        model.train(was)
    return pd.DataFrame(rows, columns=["unit", "time", "rhat", "n", "rank", "n_neighbors", "anchor_prob", "example"])
