"""Metrics: METEOR (exact + stem; NLTK's alignment), content METEOR, per-document token-weighted perplexity."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from tempo_analysis.future_text.metrics import (content_meteor, document_windows, meteor, perplexity,
                                                score_documents)
from tempo_analysis.future_text.tokenizer import content_mask, train_bpe_tokenizer

from .conftest import tiny_gpt2, toy_frame


def test_meteor_hand_computed():
    # all six words match but in six separate chunks: fmean 1, penalty 0.5 * (6/6)^3
    assert meteor("the cat sat on the mat".split(), "on the mat sat the cat".split()) == pytest.approx(0.5)
    # 4 matches in 2 chunks, P = 1, R = 0.8 -> Fmean = PR / (0.9P + 0.1R); penalty 0.5 * (2/4)^3
    f = 0.8 / (0.9 + 0.08)
    assert meteor("a b c d".split(), "a b x c d".split()) == pytest.approx(f * (1 - 0.0625))
    # stem stage: generating/generated and texts/text match after Porter stemming
    assert meteor(["generating", "texts"], ["generated", "text"]) == pytest.approx(1 - 0.5 * (1 / 2) ** 3)
    assert meteor(["alpha"], ["beta"]) == 0.0 and meteor([], ["beta"]) == 0.0


def test_content_meteor_best_reference_and_content_filter():
    refs = ["We propose a transformer for parsing.", "Kernel methods for sentiment."]
    gen = ["The transformer improves parsing.", "A kernel approach to sentiment analysis."]
    score = content_meteor(gen, refs)
    # first text: content words [transformer, improves, parsing] vs [propose, transformer, parsing]
    first = meteor(["transformer", "improves", "parsing"], ["propose", "transformer", "parsing"])
    second = meteor(["kernel", "approach", "sentiment", "analysis"], ["kernel", "methods", "sentiment"])
    assert score == pytest.approx((first + second) / 2)
    with pytest.raises(ValueError, match="no reference"):
        content_meteor(gen, [])


def test_document_windows_cover_every_token_once():
    w = document_windows(list(range(1, 11)), 0, 99, block_size=4)
    predicted = [t for win in w for t in win[1:]]
    assert predicted == list(range(1, 11)) + [99]            # every token after BOS predicted exactly once
    assert all(len(x) <= 4 for x in w)


@pytest.fixture(scope="module")
def setup():
    frame = toy_frame(years=range(2010, 2012), docs_per_year=4)
    tok = train_bpe_tokenizer(frame["text"], vocab_size=300)
    return frame["text"].tolist(), tok, tiny_gpt2(len(tok), n_positions=256).eval()


def test_perplexity_is_per_document_and_token_weighted(setup):
    texts, tok, lm = setup
    together = score_documents(lm, tok, texts, block_size=64, batch_size=3)
    alone = [score_documents(lm, tok, [t], block_size=64) for t in texts]
    np.testing.assert_allclose(together["nll"], [a["nll"][0] for a in alone], rtol=1e-5)   # no cross-document context
    # manual: each document scored on its own as [BOS] ids [EOS]
    # content perplexity: the same, over the positions whose *target* is a content token
    content = torch.as_tensor(content_mask(tok))
    nll, n, c_nll, c_n = 0.0, 0, 0.0, 0
    for t in texts:
        ids = torch.tensor([[0] + tok(t)["input_ids"] + [0]])
        with torch.no_grad():
            logp = torch.log_softmax(lm(ids).logits[0, :-1], -1)
        token_nll = -logp.gather(1, ids[0, 1:, None])[:, 0]
        nll += token_nll.sum().item()
        n += ids.shape[1] - 1
        is_content = content[ids[0, 1:]]
        c_nll += token_nll[is_content].sum().item()
        c_n += int(is_content.sum())
    rep = perplexity(lm, tok, texts, block_size=256)
    assert rep["tokens"] == n and rep["ppl"] == pytest.approx(math.exp(nll / n), rel=1e-4)
    assert 0 < rep["content_tokens"] == c_n < rep["tokens"]
    assert rep["content_ppl"] == pytest.approx(math.exp(c_nll / c_n), rel=1e-4)


def test_long_documents_are_windowed_not_truncated(setup):
    texts, tok, lm = setup
    long = " ".join(texts)
    s = score_documents(lm, tok, [long], block_size=16)
    assert s["n"][0] == len(tok(long)["input_ids"]) + 1


def test_no_texts_give_empty_sums_and_a_nan_perplexity(setup):
    _, tok, lm = setup
    s = score_documents(lm, tok, [], block_size=64)
    assert all(len(s[k]) == 0 for k in ("nll", "n", "content_nll", "content_n"))
    rep = perplexity(lm, tok, [], block_size=64)
    assert math.isnan(rep["ppl"]) and math.isnan(rep["content_ppl"]) and rep["tokens"] == rep["docs"] == 0
