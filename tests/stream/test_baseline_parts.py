"""The sentence-vector baselines' plumbing: each window slot holds its own post's vector, the BiLSTM
reads the real posts in order in both directions, and predictions cover every post, also past one
inference chunk; the post-level encoder falls back to [CLS] without a pooler."""

import numpy as np

from tempo_analysis.stream.experiment import make_classifier

from .conftest import make_timelines


def test_window_vectors_are_each_slots_own_post_and_zero_at_pads():
    from tempo_analysis.stream.baselines import _window_vectors
    from tempo_analysis.stream.embeddings import sentence_embeddings

    tl = make_timelines(n_timelines=3, n_posts=(4, 2, 6), seed=1)
    x, mask = _window_vectors(tl, 3, "default", 32)
    emb = sentence_embeddings(tl.df["text"].tolist(), "default", max_length=32)
    w = tl.windows(3)
    assert x.shape == (len(tl.df), 3, emb.shape[1]) and (mask.numpy() == w.mask).all()
    for i, slot in zip(*np.nonzero(w.mask)):
        np.testing.assert_allclose(x[i, slot].numpy(), emb[w.post_index[i, slot]], atol=1e-6)
    assert w.post_index[0, -1] == 0 and (x[~mask] == 0).all()                 # the first post is a real row


def test_predictions_cover_every_post_past_one_chunk_of_256():
    tl = make_timelines(n_timelines=6, n_posts=(5, 4, 6), labels=("calm", "shift"), seed=2)
    clf = make_classifier("ffn_history", encoder="default", window=3, epochs=1, seed=0, progress=False,
                          device="cpu").fit(tl)
    many = make_timelines(n_timelines=12, n_posts=(25,), labels=("calm", "shift"), seed=7)
    proba = clf.predict_proba(many)
    assert len(many.df) == 300 and proba.shape == (300, 2)
    last = many.subset(many.timeline_ids[-1:])                                  # rows 275..299, past the chunk
    np.testing.assert_allclose(proba[-25:], clf.predict_proba(last), atol=1e-5)


def test_the_bilstm_reads_only_the_real_posts_oldest_first_in_both_directions():
    """Each window (left-padded: the current post last) gives what the LSTM gives on its real posts
    alone, with the last hidden state of both directions."""
    import torch

    from tempo_analysis.stream.baselines import BiLSTMNet

    torch.manual_seed(0)
    net = BiLSTMNet(dim=4, hidden=3, num_labels=2).eval()
    x = torch.randn(3, 4, 4)
    mask = torch.tensor([[True] * 4, [False, False, True, True], [False, False, False, True]])
    x = x * mask[..., None]
    got = net(x, mask)
    for b in range(3):
        real = x[b, mask[b]][None]                                           # [1, n, 4], oldest first
        _, (h, _) = net.lstm(real)
        want = net.out(torch.cat([h[0], h[1]], dim=-1))[0]
        torch.testing.assert_close(got[b], want, atol=1e-6, rtol=1e-5)
    assert not torch.allclose(got[0], net(x.flip(1), mask.flip(1))[0], atol=1e-4)   # order matters


def test_the_post_encoder_reads_the_cls_vector_of_an_encoder_without_a_pooler():
    import torch
    from transformers import BertConfig, BertModel

    from tempo_analysis.stream.baselines import PostEncoderNet

    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=50, hidden_size=8, num_hidden_layers=1, num_attention_heads=2, intermediate_size=16)
    net = PostEncoderNet(BertModel(cfg, add_pooling_layer=False), num_labels=2).eval()
    ids = torch.tensor([[1, 5, 7, 2], [1, 9, 2, 0]])
    am = (ids > 0).long()
    hidden = net.encoder(input_ids=ids, attention_mask=am).last_hidden_state
    torch.testing.assert_close(net(ids, am), net.out(hidden[:, 0]))


def test_the_post_encoder_trains_and_predicts_posts_of_one_length_and_batches_of_one_post():
    """Token rows of equal length once became a 2-D grid of Python objects that no batch could hold."""
    from tempo_analysis.encoders import tiny_encoder

    tl = make_timelines(n_timelines=2, n_posts=(2,), labels=("calm", "shift"), seed=3)
    tl.df["text"] = "the same words"
    clf = make_classifier("post_encoder", encoder=tiny_encoder(hidden=16, layers=1, heads=2, seed=0), epochs=1,
                          batch_size=1, seed=0, progress=False, device="cpu").fit(tl)
    assert clf.predict_proba(tl).shape == (4, 2)
    single = make_timelines(n_timelines=1, n_posts=(1,), labels=("calm", "shift"), seed=4)
    assert clf.predict_proba(single).shape == (1, 2)
