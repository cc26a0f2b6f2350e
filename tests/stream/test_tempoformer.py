"""TempoFormer model: pretrained upper layers, time handling, shared encoding, ablations, save/load."""

import math

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

from tempo_analysis.encoders import resolve_encoder
from tempo_analysis.stream.batching import build_stream_data, collate_windows, model_inputs, per_window_batch
from tempo_analysis.stream.model import (
    ABLATIONS, GateNorm, TempoFormerConfig, TempoFormerModel, TemporalRotaryAttention, cls_only_layer,
    focal_alpha_from_labels, focal_loss, rotary_angles, time_positions,
)

from .conftest import make_timelines, tiny_bert_dict


def tiny_model(ablation="none", layers=3, loud=True, **kw) -> TempoFormerModel:
    """Random tiny TempoFormer; `loud` gives the stream modules large weights so that the other
    posts of a window visibly move the output (at BERT's init scale their effect is ~1e-5)."""
    torch.manual_seed(0)
    cfg = TempoFormerConfig(encoder=tiny_bert_dict(layers=layers), num_labels=2, ablation=ablation, **kw)
    model = TempoFormerModel(cfg).eval()
    if loud:
        with torch.no_grad():
            for p in [*model.temporal.parameters(), *model.head.parameters()]:
                p.normal_(0, 0.3)
    return model


def batch_for(tl, tokenizer, window=4, idx=None):
    data = build_stream_data(tl, window, tokenizer, max_length=16)
    idx = np.arange(len(data)) if idx is None else idx
    return collate_windows(data, idx)


def run(model, batch, **kw):
    return model(**model_inputs(batch), **kw)


# ---------------------------------------------------------------- pretrained weights (real MiniLM)
def test_upper_layers_hold_the_checkpoint_weights():
    model = TempoFormerModel.from_encoder("default", num_labels=2)
    ckpt = load_file(f"{resolve_encoder('default')}/model.safetensors")
    assert model.num_local == 4 and model.num_upper == 2  # MiniLM: 6 layers = 4 local + 2 upper
    checked = 0
    for name, p in model.encoder.named_parameters():
        assert name in ckpt, name
        assert torch.equal(p.detach(), ckpt[name]), f"{name} differs from the checkpoint"
        checked += name.startswith(("encoder.layer.4.", "encoder.layer.5."))
    assert checked == 32  # every tensor of both upper layers was compared
    # and the upper layers are the ones the forward pass runs
    assert model.upper_layers[0] is model.encoder.encoder.layer[4]


def test_num_local_layers_is_configurable():
    m = tiny_model(layers=4, num_local_layers=1)
    assert (m.num_local, m.num_upper, len(m.temporal), len(m.stream_pos)) == (1, 3, 3, 3)
    with pytest.raises(ValueError, match="num_local_layers"):
        tiny_model(layers=3, num_local_layers=3)


# ---------------------------------------------------------------- time handling
def test_time_transform_default_is_log_seconds_and_rotates_every_pair():
    cfg = TempoFormerConfig(encoder=tiny_bert_dict())
    gaps = torch.tensor([0.0, 1.0, 60.0, 86400.0], dtype=torch.float64)
    assert torch.allclose(time_positions(gaps, cfg), torch.log1p(gaps).float())
    # every rotary pair turns by > 1 rad between a 1-second and a 1-day gap at the default base ...
    span = rotary_angles(time_positions(torch.tensor([86400.0]), cfg), 32, cfg.rope_theta) - rotary_angles(
        time_positions(torch.tensor([1.0]), cfg), 32, cfg.rope_theta)
    assert (span > 1.0).all()
    # ... while with the paper's base 1e4 most pairs barely move (the reference code's problem)
    span_paper = rotary_angles(time_positions(torch.tensor([86400.0]), cfg), 32, 1e4)
    assert (span_paper < 0.5).float().mean() > 0.5
    # the scale is a documented knob: it multiplies every angle
    cfg2 = TempoFormerConfig(encoder=tiny_bert_dict(), time_scale=2.0, time_unit=60.0)
    assert torch.allclose(time_positions(gaps, cfg2), 2 * torch.log1p(gaps / 60).float())


def test_first_post_gets_its_true_gap_and_padding_is_mask_only(timelines, tokenizer):
    model = tiny_model()
    data = build_stream_data(timelines, 6, tokenizer, max_length=16)
    # timeline tl0 starts at epoch 0: window of its 3rd post = [pad, pad, pad, p0(t=0), p1, p2]
    pos = int(np.flatnonzero(data.windows.target_index == 2)[0])
    batch = collate_windows(data, [pos])
    assert batch["window_mask"][0].tolist() == [False, False, False, True, True, True]
    seen = {}

    def hook(module, args, output):
        seen["pos"] = args[1].clone()

    model.temporal[0].register_forward_hook(hook)
    out = run(model, batch)
    secs = timelines.df["seconds"].to_numpy()
    assert secs[0] == 0.0
    expected = np.log1p(secs[2] - secs[0])
    assert seen["pos"][0, 3].item() == pytest.approx(expected, rel=1e-6)  # not treated as a pad
    # the post at time 0 is attended: changing its text changes the prediction ...
    b2 = dict(batch)
    b2["input_ids"] = batch["input_ids"].clone()
    b2["input_ids"][0, 1] = 2000 if int(b2["input_ids"][0, 1]) != 2000 else 2001
    fused = {}
    model.gate_norm.register_forward_hook(lambda m, a, o: fused.__setitem__(len(fused), o.detach()))
    run(model, batch), run(model, b2)
    assert (fused[0] - fused[1]).abs().max() > 1e-4  # float noise is ~1e-7
    # ... while pads are invisible: a 6-slot window equals a 3-slot window of the same posts
    small = build_stream_data(timelines, 3, tokenizer, max_length=16)
    out3 = run(model, collate_windows(small, [pos]))
    torch.testing.assert_close(out3.logits, out.logits, atol=1e-5, rtol=0)


def test_shifting_all_timestamps_does_not_change_output(timelines, tokenizer):
    model = tiny_model()
    batch = batch_for(timelines, tokenizer)
    base = run(model, batch).logits
    for shift in (-1234.5, 1.7e9):  # float64 gaps keep this exact even at epoch scale
        b = dict(batch, post_times=batch["post_times"] + shift)
        torch.testing.assert_close(run(model, b).logits, base, atol=1e-6, rtol=0)
    # sanity: the model does look at time (a gap change moves the output)
    b = dict(batch, post_times=batch["post_times"] * 1.5)
    assert not torch.allclose(run(model, b).logits, base, atol=1e-5)


def test_equal_timestamps_and_short_windows_work(tokenizer):
    tl = make_timelines(n_timelines=2, n_posts=(3, 1), seed=3, equal_times=True)
    assert tl.df.groupby("timeline_id")["seconds"].nunique().eq(1).all()  # equal timestamps
    model = tiny_model()
    batch = batch_for(tl, tokenizer, window=5)  # all timelines shorter than the window
    assert (~batch["window_mask"]).any()
    out = run(model, batch)
    assert torch.isfinite(out.logits).all() and out.logits.shape == (len(tl.df), 2)


def test_unlabeled_posts_are_predicted_not_crashed_on(tokenizer):
    tl = make_timelines(seed=1)
    tl.df.loc[[0, 3, 5], "label"] = None
    batch = batch_for(tl, tokenizer)
    assert (batch["labels"] == -100).sum() == 3
    model = tiny_model()
    out = run(model, batch)
    assert torch.isfinite(out.logits).all() and out.logits.shape[0] == len(tl.df)
    keep = batch["labels"] != -100
    torch.testing.assert_close(out.loss, focal_loss(out.logits[keep], batch["labels"][keep]))
    none = dict(batch, labels=torch.full_like(batch["labels"], -100))
    assert run(model, none).loss.item() == 0.0


# ---------------------------------------------------------------- shared post encoding
@pytest.mark.parametrize("ablation,summary", [("none", "cls"), ("rotempoformer", "cls"), ("none", "mean"),
                                              ("none", "mean_then_cls")])
def test_shared_encoding_equals_per_window_encoding(timelines, tokenizer, ablation, summary):
    model = tiny_model(ablation, summary=summary)
    shared = batch_for(timelines, tokenizer, window=4)
    n_copies = int(shared["window_mask"].sum())
    assert shared["input_ids"].shape[0] == len(timelines.df) < n_copies  # each post encoded once

    def logits_and_grads(batch):
        model.zero_grad()
        out = run(model, batch)
        out.loss.backward()
        return out.logits.detach(), {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}

    l_shared, g_shared = logits_and_grads(shared)
    for pad_to in (None, 64):  # dynamic per-window padding, and fixed padding (reference design)
        per = per_window_batch(shared, pad_to=pad_to)
        assert per["input_ids"].shape[0] == n_copies
        l_per, g_per = logits_and_grads(per)
        torch.testing.assert_close(l_per, l_shared, atol=1e-5, rtol=0)
        assert g_per.keys() == g_shared.keys() and len(g_shared) > 20
        for name in g_shared:
            torch.testing.assert_close(g_per[name], g_shared[name], atol=1e-5, rtol=1e-4, msg=name)


def test_batches_pad_dynamically(timelines, tokenizer):
    batch = batch_for(timelines, tokenizer)
    longest = max(len(t) for t in tokenizer(timelines.df["text"].tolist())["input_ids"])
    assert batch["input_ids"].shape[1] == longest < 512


# ---------------------------------------------------------------- ablations
@pytest.mark.parametrize("ablation", list(ABLATIONS))
def test_every_ablation_trains(ablation, timelines, tokenizer):
    model = tiny_model(ablation).train()
    batch = batch_for(timelines, tokenizer)
    out = run(model, batch)
    out.loss.backward()
    assert torch.isfinite(out.loss) and out.logits.shape == (len(timelines.df), 2)
    assert any(p.grad is not None and p.grad.abs().sum() > 0 for p in model.temporal.parameters())


def test_sequential_rope_changes_only_the_position_fed_not_the_rotary_base(tokenizer):
    """Against the full model, "sequential_rope" swaps phi(gap) for the slot distance and nothing else:
    same rotary base (rope_theta, whatever it is), so on posts one time unit apart with a linear
    transform, whose gaps *are* the slot distances, the two models give the same logits."""
    for theta in (None, 10.0, 1e4):
        kw = {} if theta is None else {"rope_theta": theta}
        full, order = tiny_model(**kw), tiny_model("sequential_rope", **kw)
        assert order.temporal[0].theta == full.temporal[0].theta == full.config.rope_theta
    tl = make_timelines(n_timelines=2, n_posts=(6, 3), seed=3)
    df = tl.df.copy()
    df["timestamp"] = df.groupby("timeline_id").cumcount().astype(float)  # gap = slot distance
    from tempo_analysis.data import Timelines
    batch = batch_for(Timelines.from_frame(df, time_unit="s", min_posts=1), tokenizer)
    full = tiny_model(time_transform="linear", time_unit=1.0)
    order = tiny_model("sequential_rope", time_transform="linear", time_unit=1.0)
    order.load_state_dict(full.state_dict())
    torch.testing.assert_close(run(order, batch).logits, run(full, batch).logits, atol=1e-5, rtol=0)
    # a base of its own only when asked for (models saved before the shared base carry 1e4)
    assert tiny_model("sequential_rope", sequential_rope_theta=1e4).temporal[0].theta == 1e4


def test_ablations_change_what_they_claim(timelines, tokenizer):
    batch = batch_for(timelines, tokenizer)
    stretched = dict(batch, post_times=batch["post_times"] * 3.0)
    for name in ("sequential_rope", "vanilla_mha"):  # no time inside: gaps do not matter
        m = tiny_model(name)
        torch.testing.assert_close(run(m, stretched).logits, run(m, batch).logits, atol=1e-6, rtol=0)
    assert tiny_model("vanilla_mha").temporal[0].theta is None
    m = tiny_model("no_s11")
    assert m._use_s == [True, False]
    assert tiny_model("no_s10_s11")._use_s == [False, False]
    assert tiny_model("no_gate_norm").gate_norm is None
    assert tiny_model("rotempoformer").rnn is not None


def test_unknown_ablation_lists_valid_names():
    with pytest.raises(ValueError, match="valid names: none, sequential_rope, vanilla_mha"):
        TempoFormerConfig(encoder=tiny_bert_dict(), ablation="no_rope")


# ---------------------------------------------------------------- pieces
def test_gate_norm_weights_the_stream_side_with_g():
    gn = GateNorm(8, 1e-12)
    torch.nn.init.zeros_(gn.gate.weight)
    h_loc, h_glob = torch.randn(3, 8), torch.randn(3, 8)
    torch.nn.init.constant_(gn.gate.bias, 30.0)  # g -> 1: the stream-level [CLS] wins (paper eq.)
    torch.testing.assert_close(gn(h_loc, h_glob), gn.norm(h_glob))
    torch.nn.init.constant_(gn.gate.bias, -30.0)  # g -> 0: the word-level [CLS] wins
    torch.testing.assert_close(gn(h_loc, h_glob), gn.norm(h_loc))


def test_focal_loss_and_alpha():
    logits, y = torch.randn(6, 3), torch.tensor([0, 1, 2, 0, 0, 1])
    torch.testing.assert_close(focal_loss(logits, y, None, gamma=0.0), torch.nn.functional.cross_entropy(logits, y))
    p = logits.softmax(-1)[torch.arange(6), y]
    alpha = focal_alpha_from_labels(y, 3)
    assert alpha == pytest.approx([math.sqrt(6 / 3), math.sqrt(6 / 2), math.sqrt(6 / 1)])
    want = (-(torch.tensor(alpha)[y]) * (1 - p) ** 2 * p.log()).mean()
    torch.testing.assert_close(focal_loss(logits, y, alpha, gamma=2.0), want)


def test_save_and_load_round_trip(tmp_path, timelines, tokenizer):
    model = tiny_model("no_s11", focal_alpha=[1.0, 2.0], id2label={0: "no", 1: "yes"})
    batch = batch_for(timelines, tokenizer)
    model.save_pretrained(tmp_path)
    assert (tmp_path / "model.safetensors").is_file() and not list(tmp_path.glob("*.bin"))
    loaded = TempoFormerModel.from_pretrained(tmp_path).eval()
    assert loaded.config.ablation == "no_s11" and loaded.config.focal_alpha == [1.0, 2.0]
    assert loaded.config.id2label == {0: "no", 1: "yes"}
    torch.testing.assert_close(run(loaded, batch).logits, run(model, batch).logits, atol=0, rtol=0)


def test_from_a_loaded_encoder_every_weight_is_kept_and_a_missing_pooler_is_allowed():
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    bare = BertModel(BertConfig(**tiny_bert_dict()), add_pooling_layer=False)   # no pooler weights
    model = TempoFormerModel.from_encoder(bare, num_labels=2)
    assert model.config.encoder_name == "bert"                  # no name or path: its model type
    ours = model.encoder.state_dict()
    for k, v in bare.state_dict().items():
        assert torch.equal(ours[k], v), k

    class WithExtra(BertModel):
        def __init__(self, config):
            super().__init__(config)
            self.extra = torch.nn.Parameter(torch.zeros(3))

    with pytest.raises(ValueError, match=r"do not fit its own architecture: missing=\[\], unexpected=\['extra'\]"):
        TempoFormerModel.from_encoder(WithExtra(BertConfig(**tiny_bert_dict())), num_labels=2)


def test_last_layer_computes_only_the_cls_row_exactly():
    model = tiny_model()
    layer = model.upper_layers[-1]
    x = torch.randn(4, 9, 32)
    mask = torch.ones(4, 9, dtype=torch.long)
    mask[1, 5:] = 0
    mask[3, 2:] = 0
    full = layer(x, model._mask4d(x, mask))[:, 0]
    torch.testing.assert_close(cls_only_layer(layer, x, mask), full, atol=1e-5, rtol=1e-5)
    # layouts the shortcut does not cover are left to the full layer
    layer.chunk_size_feed_forward = 2
    assert cls_only_layer(layer, x, mask) is None
    layer.chunk_size_feed_forward, layer.is_decoder = 0, True
    assert cls_only_layer(layer, x, mask) is None
    assert cls_only_layer(torch.nn.Linear(32, 32), x, mask) is None


# ---------------------------------------------------------------- faithfulness to the reference
def test_temporal_mha_has_no_residual_by_default_and_a_switch_adds_it():
    torch.manual_seed(0)
    x, pos, mask = torch.randn(2, 4, 32), torch.rand(2, 4) * 10, torch.ones(2, 4, dtype=torch.bool)
    plain = TemporalRotaryAttention(32, 2, 10.0).eval()  # the reference's form: dropout(O(attn))
    res = TemporalRotaryAttention(32, 2, 10.0, residual=True).eval()
    res.load_state_dict(plain.state_dict())
    out, _ = plain(x, pos, mask)
    torch.testing.assert_close(res(x, pos, mask)[0], x + out)
    assert not torch.allclose(out, x + out)
    assert TempoFormerConfig(encoder=tiny_bert_dict()).temporal_residual is False
    assert tiny_model().temporal[0].residual is False
    assert tiny_model(temporal_residual=True).temporal[0].residual is True


def test_temporal_mha_dropout_follows_the_encoder_and_acts_in_training_only():
    cfg = dict(tiny_bert_dict(), attention_probs_dropout_prob=0.3, hidden_dropout_prob=0.2)
    model = TempoFormerModel(TempoFormerConfig(encoder=cfg, num_labels=2))
    t = model.temporal[0]
    assert (t.attn_dropout.p, t.resid_dropout.p) == (0.3, 0.2)
    own = TempoFormerModel(TempoFormerConfig(encoder=cfg, num_labels=2, temporal_attn_dropout=0.0,
                                             temporal_resid_dropout=0.5)).temporal[0]
    assert (own.attn_dropout.p, own.resid_dropout.p) == (0.0, 0.5)
    x, pos, mask = torch.randn(2, 4, 32), torch.rand(2, 4), torch.ones(2, 4, dtype=torch.bool)
    for attn_p, resid_p in ((0.5, 0.0), (0.0, 0.5)):  # each dropout on its own changes the output
        t = TemporalRotaryAttention(32, 2, 10.0, attn_dropout=attn_p, resid_dropout=resid_p).train()
        assert not torch.allclose(t(x, pos, mask)[0], t(x, pos, mask)[0])
        t.eval()
        torch.testing.assert_close(t(x, pos, mask)[0], t(x, pos, mask)[0])
    with pytest.raises(ValueError, match="temporal_attn_dropout"):
        TempoFormerConfig(encoder=tiny_bert_dict(), temporal_attn_dropout=1.5)


def test_an_encoder_without_a_pooler_gets_its_own_dense_tanh_pooler(timelines, tokenizer):
    from transformers import ElectraConfig

    electra = ElectraConfig(vocab_size=30522, embedding_size=32, hidden_size=32, num_hidden_layers=3,
                            num_attention_heads=2, intermediate_size=64, max_position_embeddings=64,
                            hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0).to_dict()
    torch.manual_seed(0)
    model = TempoFormerModel(TempoFormerConfig(encoder=electra, num_labels=2)).eval()
    assert getattr(model.encoder, "pooler", None) is None and isinstance(model.local_pooler[1], torch.nn.Tanh)
    assert run(model, batch_for(timelines, tokenizer)).logits.shape[-1] == 2
    assert not hasattr(tiny_model(), "local_pooler")          # BERT keeps its own pretrained pooler


@pytest.mark.parametrize("missing", ["window_index", "window_mask", "post_times"])
def test_each_stream_input_is_required_and_attentions_come_only_when_asked(timelines, tokenizer, missing):
    model = tiny_model()
    inputs = model_inputs(batch_for(timelines, tokenizer))
    assert model(**inputs).temporal_attentions is None
    assert len(model(**inputs, output_attentions=True).temporal_attentions) == model.num_upper
    with pytest.raises(ValueError, match="TempoFormer needs window_index, window_mask and post_times"):
        model(**{**inputs, missing: None})


def test_window_and_time_checks_at_their_edges(timelines, tokenizer):
    model = tiny_model(max_window=4)
    inputs = model_inputs(batch_for(timelines, tokenizer, window=4))
    model(**inputs)                                           # a window of exactly max_window posts
    with pytest.raises(ValueError, match="window size 4 exceeds config.max_window=3"):
        tiny_model(max_window=3)(**inputs)
    mask = inputs["window_mask"].clone()
    mask[0, -1] = False                                       # one window without its current post
    with pytest.raises(ValueError, match=r"window_mask\[:, -1\] must be True"):
        model(**{**inputs, "window_mask": mask})
    times = inputs["post_times"].clone()
    i = int(inputs["window_index"][3, 0])                     # one earlier post moved after its current post
    times[i] = times[int(inputs["window_index"][3, -1])] + 10
    with pytest.raises(ValueError, match="a window lists a post later than its current post"):
        model(**{**inputs, "post_times": times})


def test_no_attention_mask_means_every_token_is_real(timelines, tokenizer):
    model = tiny_model()
    inputs = model_inputs(batch_for(timelines, tokenizer))
    full = {**inputs, "attention_mask": torch.ones_like(inputs["attention_mask"])}
    torch.testing.assert_close(model(**{**inputs, "attention_mask": None}).logits, model(**full).logits)


def test_rotempoformer_runs_its_lstm_over_each_windows_real_posts_oldest_first(timelines, tokenizer):
    model = tiny_model("rotempoformer")
    inputs = model_inputs(batch_for(timelines, tokenizer))
    seen = {}
    model.ro_pooler.register_forward_hook(lambda m, inp, out: seen.setdefault("pooled", out))
    model.head.register_forward_hook(lambda m, inp, out: seen.setdefault("state", inp[0]))
    sizes = inputs["window_mask"].sum(1)
    assert sizes.min() == 1 and sizes.max() == 4                # left-padded windows and full ones
    with torch.no_grad():
        model(**inputs)
        for b, real in enumerate(inputs["window_mask"]):
            _, (h, _) = model.rnn(seen["pooled"][b, real][None])   # the real posts alone, oldest first
            torch.testing.assert_close(seen["state"][b], h[-1, 0], atol=1e-5, rtol=1e-5)


def test_rotempoformer_head_reads_only_the_lstm_state(timelines, tokenizer):
    model = tiny_model("rotempoformer").eval()
    assert model.head[0].in_features == model.config.rnn_hidden
    assert tiny_model().head[0].in_features == 2 * 32
    batch = batch_for(timelines, tokenizer)
    seen = {}
    model.head.register_forward_hook(lambda m, inp, out: seen.setdefault("in", inp[0]))
    run(model, batch)
    assert seen["in"].shape[-1] == model.config.rnn_hidden


def test_focal_alpha_comes_from_the_training_counts_and_is_not_learnt(timelines):
    from tempo_analysis.stream.estimator import TempoFormerClassifier

    from tempo_analysis.encoders import tiny_encoder

    clf = TempoFormerClassifier(encoder=tiny_encoder(hidden=32, layers=3, heads=2, seed=0), window=3, epochs=1, progress=False, device="cpu").fit(timelines)
    codes = timelines.label_codes(clf.label_names_)
    counts = np.bincount(codes[codes >= 0], minlength=2)
    want = [math.sqrt(counts.sum() / c) for c in counts]
    assert clf.model_.config.focal_alpha == pytest.approx(want)
    assert all(isinstance(a, float) for a in clf.model_.config.focal_alpha)  # plain numbers: no gradient
    assert not any("alpha" in name for name, _ in clf.model_.named_parameters())
