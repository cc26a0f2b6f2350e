"""Extraction: subword pooling over the target's own pieces, windowing, batching invariance, bad offsets."""
import numpy as np
import pytest
import torch

from tempo_analysis.data import DataError, TargetUsage
from tempo_analysis.encoders import tiny_encoder
from tempo_analysis.semantic_change.extraction import (extract_one_by_one, extract_target_vectors, target_piece_span,
                                                       window)
from tempo_analysis.semantic_change.model import TemporalAttentionForMaskedLM


@pytest.fixture(scope="module")
def tiny():
    return tiny_encoder(hidden=32, layers=2, heads=2, seed=0)


def usage(text, word, period="old"):
    i = text.lower().index(word.lower())
    return TargetUsage(word, period, text, i, i + len(word))


SENTS = [usage("The unbelievableness of it all astonished everyone.", "unbelievableness"),
         usage("A mouse ran across the kitchen floor.", "mouse"),
         usage("Click the left mouse button twice to open the file you saved yesterday.", "mouse", "new"),
         usage("Spam.", "Spam", "new")]


def test_pooling_is_the_mean_of_the_targets_own_pieces(tiny):
    model, tok = tiny
    u = SENTS[0]
    enc = tok(u.text, return_offsets_mapping=True)
    pieces = [i for i, (s, e) in enumerate(enc["offset_mapping"]) if e > s and s >= u.start and e <= u.end]
    assert len(pieces) > 1                                  # really split into subwords
    with torch.no_grad():
        hs = model(input_ids=torch.tensor([enc["input_ids"]]), output_hidden_states=True).hidden_states
    expected = np.stack([hs[l][0, pieces].mean(0).numpy() for l in range(len(hs))])
    tv = extract_target_vectors(model, tok, [u], progress=False)
    assert tv.vectors.shape == (1, 3, 32) and tv.n_pieces[0] == len(pieces)
    np.testing.assert_allclose(tv.vectors[0], expected, atol=1e-5)


def test_batched_bucketed_equals_one_by_one_in_any_order(tiny):
    model, tok = tiny
    slow = extract_one_by_one(model, tok, SENTS)
    for bs in (1, 2, 4):
        fast = extract_target_vectors(model, tok, SENTS, batch_size=bs, progress=False)
        np.testing.assert_allclose(fast.vectors, slow.vectors, atol=1e-5)
    rev = extract_target_vectors(model, tok, SENTS[::-1], batch_size=3, progress=False)
    np.testing.assert_allclose(rev.vectors[::-1], slow.vectors, atol=1e-5)


def test_temporal_model_gets_each_usages_period(tiny):
    hf, tok = tiny_encoder(hidden=32, layers=2, heads=2, seed=0, head="mlm")
    model = TemporalAttentionForMaskedLM.from_hf(hf, time_attention="modulated", mask_token_id=tok.mask_token_id)
    with torch.no_grad():
        for n, p in model.named_parameters():
            if ".time" in n or "time_emb" in n:
                p.normal_(0, 0.5)
    a = extract_target_vectors(model, tok, SENTS, time=[0, 0, 1, 1], progress=False, layers=[-1])
    b = extract_target_vectors(model, tok, SENTS, time=[1, 1, 1, 1], progress=False, layers=[-1])
    assert a.layers == [2]
    assert np.abs(a.vectors[0] - b.vectors[0]).max() > 1e-4       # period matters
    np.testing.assert_allclose(a.vectors[2:], b.vectors[2:], atol=1e-5)
    slow = extract_one_by_one(model, tok, SENTS, time=[0, 0, 1, 1], layers=[-1])
    np.testing.assert_allclose(a.vectors, slow.vectors, atol=1e-5)


def test_long_context_is_windowed_around_the_target(tiny):
    model, tok = tiny
    text = " ".join(["filler"] * 150) + " the mouse ran " + " ".join(["filler"] * 40) + "."
    u = usage(text, "mouse")
    tv = extract_target_vectors(model, tok, [u], max_length=32, progress=False)
    assert tv.windowed[0] and np.isfinite(tv.vectors).all()
    # equals running the centred 30-piece window by hand
    ids = tok(text, add_special_tokens=False, return_offsets_mapping=True)
    t0, t1 = target_piece_span(ids["offset_mapping"], u.start, u.end)
    a, b = window(len(ids["input_ids"]), t0, t1, 30)
    assert a < t0 < b and abs((t0 - a) - (b - t1)) <= 1
    row = [tok.cls_token_id] + ids["input_ids"][a:b] + [tok.sep_token_id]
    with torch.no_grad():
        hs = model(input_ids=torch.tensor([row]), output_hidden_states=True).hidden_states
    np.testing.assert_allclose(tv.vectors[0, -1], hs[-1][0, 1 + t0 - a].numpy(), atol=1e-5)


def test_offsets_that_do_not_match_the_sentence_raise(tiny):
    model, tok = tiny
    bad = TargetUsage("mouse", "old", "A mouse ran.  Away.", 12, 14)   # two spaces: no token there
    with pytest.raises(DataError, match="offsets 12:14"):
        extract_target_vectors(model, tok, [bad], progress=False)
    with pytest.raises(DataError, match="start/end"):
        TargetUsage("mouse", "old", "A mouse.", 3, 40)
    with pytest.raises(DataError, match="not at 'mouse'"):
        TargetUsage.checked("mouse", "old", "A mouse.", 0, 5, surface="mouse")
    with pytest.raises(DataError, match="no usages"):
        extract_target_vectors(model, tok, [], progress=False)


def test_one_forward_per_distinct_sentence_serves_every_target_in_it(tiny):
    model, tok = tiny
    text = "The mouse sat on the cell phone next to another mouse."
    us = [TargetUsage("mouse", "old", text, 4, 9), TargetUsage("cell", "old", text, 21, 25),
          TargetUsage("mouse", "old", text, 48, 53), TargetUsage("mouse", "old", text, 4, 9)]
    calls = []
    real = model.forward
    model.forward = lambda *a, **k: calls.append(k["input_ids"].shape) or real(*a, **k)
    try:
        fast = extract_target_vectors(model, tok, us, progress=False)
    finally:
        del model.forward
    assert calls == [(1, 14)]                                  # one sentence, one row, one forward
    slow = extract_one_by_one(model, tok, us)
    np.testing.assert_allclose(fast.vectors, slow.vectors, atol=1e-5)
    assert not np.allclose(fast.vectors[0], fast.vectors[2])   # the two "mouse" usages differ
    np.testing.assert_array_equal(fast.vectors[0], fast.vectors[3])


def test_bf16_precision_stays_close_to_fp32_and_bad_precision_is_refused(tiny):
    model, tok = tiny
    exact = extract_target_vectors(model, tok, SENTS, batch_size=2, progress=False)
    half = extract_target_vectors(model, tok, SENTS, batch_size=2, progress=False, precision="bf16")
    assert half.vectors.dtype == np.float32
    a, b = exact.vectors.reshape(-1, 32), half.vectors.reshape(-1, 32)
    cos = (a * b).sum(-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))
    assert cos.min() > 0.99 and not np.array_equal(a, b)     # really ran in bfloat16, and stayed close
    with pytest.raises(ValueError, match="precision"):
        extract_target_vectors(model, tok, SENTS, progress=False, precision="fp8")


@pytest.mark.parametrize("native", [True, False])
def test_auto_precision_is_bf16_only_where_the_cpu_has_it_natively(tiny, monkeypatch, native):
    import torch.cpu as tcpu

    from tempo_analysis.semantic_change.extraction import native_bf16, resolve_precision

    monkeypatch.setattr(tcpu, "_is_avx512_bf16_supported", lambda: native)
    monkeypatch.setattr(tcpu, "_is_amx_tile_supported", lambda: False)
    assert native_bf16("cpu") is native
    assert resolve_precision("auto") == ("bf16" if native else "fp32")
    assert resolve_precision("fp32") == "fp32" and resolve_precision("bf16") == "bf16"
    model, tok = tiny
    auto = extract_target_vectors(model, tok, SENTS, batch_size=2, progress=False, precision="auto")
    same = extract_target_vectors(model, tok, SENTS, batch_size=2, progress=False,
                                  precision="bf16" if native else "fp32")
    np.testing.assert_array_equal(auto.vectors, same.vectors)
