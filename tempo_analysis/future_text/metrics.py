"""Future-text metrics: perplexity, content perplexity (per document, token-weighted), content METEOR.

Perplexity. Each document is scored on its own as ``[BOS] tokens [EOS]`` (never one concatenated
stream), whole: ``block_size=None`` (the default) is the LM's context length, so the context never
restarts mid-abstract. Only a document longer than ``block_size`` is cut into windows
overlapping by one token (every token after BOS is predicted exactly once). The facade scores
from cached states instead (``adapt.py``), with the same numbers.
``ppl = exp(sum of NLL over all predicted tokens of all documents / number of those tokens)``:
token-weighted over documents.

Content perplexity: the same, counting only positions whose *target* token is a content token
(``tokenizer.py``: decoded piece longer than 4 characters, has a letter, not a stopword).

Content METEOR: each generated text and each gold text are reduced to their content words (same
rule, on words); a generated text's score is its best METEOR against any gold text of the target
year; the result is the mean over generated texts. METEOR = NLTK's ``meteor_score`` (alpha 0.9,
beta 3, gamma 0.5, same greedy alignment and chunk count) with the two stages that need no data
download: EXACT match, then Porter STEM match. The WordNet synonym stage is omitted (it needs
the WordNet download), so scores are comparable to NLTK's only on texts without synonym matches.
"""

from __future__ import annotations

import functools
import inspect
import math
import random
from typing import Sequence

import numpy as np
import torch
import torch.nn.functional as F
from gensim.parsing.porter import PorterStemmer  # gensim is a dependency; no data download
from tqdm.auto import tqdm

from tempo_analysis.future_text.tokenizer import content_mask, content_words

# ------------------------------------------------------------------------------------------------
# perplexity
# ------------------------------------------------------------------------------------------------


def document_windows(ids: list[int], bos: int, eos: int, block_size: int) -> list[list[int]]:
    """``[BOS] ids [EOS]`` cut into windows of <= block_size overlapping by one token."""
    seq = [bos] + list(ids) + [eos]
    step = block_size - 1
    return [seq[s:s + block_size] for s in range(0, max(1, len(seq) - 1), step)]


@torch.no_grad()
def score_documents(model, tokenizer, texts: Sequence[str], year: int | None = None, *, block_size: int | None = None,
                    batch_size: int = 16, mask: np.ndarray | None = None, progress: bool = False) -> dict:
    """Per-document sums: ``nll``, ``n``, ``content_nll``, ``content_n`` (numpy arrays of len(texts))."""
    if block_size is None:
        cfg = getattr(model, "lm", model).config
        block_size = int(getattr(cfg, "max_position_embeddings", None) or getattr(cfg, "n_positions", None) or 1024)
    if block_size < 2:
        raise ValueError(f"block_size={block_size}: need >= 2 tokens per window")
    mask = torch.as_tensor(content_mask(tokenizer) if mask is None else mask)
    bos = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    eos, pad = tokenizer.eos_token_id, tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    texts = list(texts)       # no texts: empty sums (a tokenizer fails on an empty batch)
    enc = tokenizer(texts, add_special_tokens=False)["input_ids"] if texts else []
    items = [(d, w) for d, ids in enumerate(enc) for w in document_windows(ids, bos, eos, block_size)]
    items.sort(key=lambda x: len(x[1]))                                  # little padding per batch
    out = {k: np.zeros(len(texts)) for k in ("nll", "n", "content_nll", "content_n")}
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    takes_years = "years" in inspect.signature(model.forward).parameters
    for s in tqdm(range(0, len(items), batch_size), disable=not progress, desc="scoring"):
        chunk = items[s:s + batch_size]
        L = max(len(w) for _, w in chunk)
        ids = torch.full((len(chunk), L), pad, dtype=torch.long)
        att = torch.zeros((len(chunk), L), dtype=torch.long)
        for r, (_, w) in enumerate(chunk):
            ids[r, :len(w)], att[r, :len(w)] = torch.tensor(w), 1
        ids, att = ids.to(device), att.to(device)
        kw = {"years": torch.full((len(chunk),), int(year), device=device)} if (takes_years and year is not None) else {}
        logits = model(input_ids=ids, attention_mask=att, **kw).logits[:, :-1].float()
        target, valid = ids[:, 1:], att[:, 1:].bool()
        nll = F.cross_entropy(logits.transpose(1, 2), target, reduction="none") * valid
        is_content = mask.to(device)[target] & valid
        doc = torch.tensor([d for d, _ in chunk])
        for key, val in (("nll", nll.sum(1)), ("n", valid.sum(1)), ("content_nll", (nll * is_content).sum(1)),
                         ("content_n", is_content.sum(1))):
            np.add.at(out[key], doc.numpy(), val.double().cpu().numpy())
    model.train(was_training)
    return out


def perplexity_report(scores: dict) -> dict:
    """Token-weighted perplexities from ``score_documents`` sums (content_ppl NaN without content tokens)."""
    n, cn = scores["n"].sum(), scores["content_n"].sum()
    return {"ppl": float(math.exp(scores["nll"].sum() / n)) if n else float("nan"),
            "content_ppl": float(math.exp(scores["content_nll"].sum() / cn)) if cn else float("nan"),
            "tokens": int(n), "content_tokens": int(cn), "docs": int(len(scores["n"]))}


def perplexity(model, tokenizer, texts, year=None, **kw) -> dict:
    """``{"ppl", "content_ppl", "tokens", "content_tokens", "docs"}`` for ``texts`` of ``year``."""
    return perplexity_report(score_documents(model, tokenizer, texts, year, **kw))


# ------------------------------------------------------------------------------------------------
# METEOR (exact + Porter stem stages)
# ------------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def _stemmer():
    return PorterStemmer()


@functools.lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    return _stemmer().stem(word)


def _match(hyp: list[tuple[int, str]], ref: list[tuple[int, str]]):
    """NLTK's greedy stage: hyp words from last to first take the last unmatched equal ref word."""
    slots: dict[str, list[int]] = {}
    for k, (_, w) in enumerate(ref):
        slots.setdefault(w, []).append(k)
    matches, used_h, used_r = [], set(), set()
    for k in range(len(hyp) - 1, -1, -1):
        stack = slots.get(hyp[k][1])
        if stack:
            j = stack.pop()
            matches.append((hyp[k][0], ref[j][0]))
            used_h.add(k)
            used_r.add(j)
    rest_h = [x for k, x in enumerate(hyp) if k not in used_h]
    rest_r = [x for k, x in enumerate(ref) if k not in used_r]
    return matches, rest_h, rest_r


def _chunks(matches: list[tuple[int, int]]) -> int:
    """Runs of matches adjacent in both hypothesis and reference (NLTK's _count_chunks)."""
    chunks = 1
    for (h0, r0), (h1, r1) in zip(matches, matches[1:]):
        if not (h1 == h0 + 1 and r1 == r0 + 1):
            chunks += 1
    return chunks


def meteor(hypothesis: Sequence[str], reference: Sequence[str], alpha: float = 0.9, beta: float = 3.0,
           gamma: float = 0.5) -> float:
    """METEOR of two token lists with exact then stem matching (module docstring)."""
    if not hypothesis or not reference:
        return 0.0
    hyp, ref = list(enumerate(hypothesis)), list(enumerate(reference))
    exact, hyp_rest, ref_rest = _match(hyp, ref)
    stem, _, _ = _match([(i, _stem(w)) for i, w in hyp_rest], [(j, _stem(w)) for j, w in ref_rest])
    matches = sorted(exact + stem)
    m = len(matches)
    if m == 0:
        return 0.0
    p, r = m / len(hypothesis), m / len(reference)
    fmean = p * r / (alpha * p + (1 - alpha) * r)
    penalty = gamma * (_chunks(matches) / m) ** beta
    return fmean * (1 - penalty)


def content_meteor(generated: Sequence[str], references: Sequence[str], *, max_references: int | None = None,
                   seed: int = 0) -> float:
    """Mean over generated texts of the best content-word METEOR against any reference.

    ``max_references`` scores against a seeded sample of the references (state it when used).
    """
    if not generated:
        raise ValueError("content_meteor: no generated texts; generate at least one")
    refs = list(references)
    if not refs:
        raise ValueError("content_meteor: no reference texts for the target year")
    if max_references is not None and len(refs) > max_references:
        refs = random.Random(seed).sample(refs, max_references)
    ref_words = [content_words(r) for r in refs]
    scores = []
    for g in generated:
        h = content_words(g)
        scores.append(max(meteor(h, r) for r in ref_words) if h else 0.0)
    return float(np.mean(scores))
