"""Frozen sentence vectors: a text's vector does not depend on what is embedded with it."""

import numpy as np
import torch

from tempo_analysis.stream.embeddings import cached_encoder, clear_cache, sentence_embeddings

TEXTS = ["good news today", "not happy again", "wow", "really sad news today, not good at all",
         "bad", "happy happy", "the news again and again, every single day", "sad today"]


def test_a_vector_is_the_same_whatever_is_embedded_beside_it():
    clear_cache()
    alone = sentence_embeddings([TEXTS[0]])[0]
    clear_cache()
    # other lengths, and two, then six, texts of the same length as TEXTS[0] (CPU kernels round
    # differently for 1, 3 or 7 rows)
    crowd = sentence_embeddings(TEXTS[::-1] + [f"{t} {t}" for t in TEXTS] + ["bad news today", "sad news today"])
    clear_cache()
    crowd7 = sentence_embeddings([f"{w} news today" for w in ("so", "no", "big", "old", "new", "odd")] + [TEXTS[0]])
    clear_cache()
    pair = sentence_embeddings(TEXTS[:3])
    assert np.array_equal(alone, crowd[len(TEXTS) - 1])  # bit for bit, not only close
    assert np.array_equal(pair[0], alone)
    assert np.array_equal(crowd7[-1], alone)


def test_the_vectors_are_the_mean_pooled_normalised_last_layer():
    clear_cache()
    got = sentence_embeddings(TEXTS[:4])
    model, tok = cached_encoder("default")
    for text, vec in zip(TEXTS[:4], got):
        enc = tok([text], return_tensors="pt")
        with torch.inference_mode():
            h = model(**enc).last_hidden_state[0].mean(0)
        assert np.allclose(vec, torch.nn.functional.normalize(h, dim=0).numpy(), atol=1e-5)
    assert np.allclose(np.linalg.norm(got, axis=1), 1, atol=1e-5)
    assert sentence_embeddings([]).shape == (0, 0)
