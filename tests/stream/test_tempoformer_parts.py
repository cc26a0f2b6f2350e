"""TempoFormer's parts at their edges: the config's bounds, the rotary frequencies, the temporal
attention's shape checks and its bias-free Q/K/V (REFERENCE-NOTES §1), the wrapped encoder's
attention implementation."""
import math

import pytest
import torch

from tempo_analysis.stream.model import (TempoFormerConfig, TempoFormerModel, TemporalRotaryAttention,
                                         focal_alpha_from_labels, rotary_angles, rotary_inv_freq)

from .conftest import tiny_bert_dict


def _cfg(**kw):
    return TempoFormerConfig(encoder=tiny_bert_dict(), **kw)


@pytest.mark.parametrize("field, bad, good", [
    ("time_unit", 0.0, 1e-6),
    ("time_unit", -1.0, 3600.0),
    ("rope_theta", 1.0, 1.5),
    ("sequential_rope_theta", 1.0, 1.5),
    ("time_scale", 0.0, 1e-3),
])
def test_time_settings_are_refused_at_their_bounds_and_accepted_inside(field, bad, good):
    with pytest.raises(ValueError, match=f"{field}={bad!r} must be > "):     # names the field and the value
        _cfg(**{field: bad})
    assert getattr(_cfg(**{field: good}), field) == good


@pytest.mark.parametrize("field", ["temporal_attn_dropout", "temporal_resid_dropout"])
def test_temporal_dropouts_lie_in_zero_to_one(field):
    for good in (0.0, 0.5, 0.99, None):
        assert getattr(_cfg(**{field: good}), field) == good
    for bad in (1.0, -0.1):
        with pytest.raises(ValueError, match=field):
            _cfg(**{field: bad})


def test_rotary_frequencies_are_theta_to_the_minus_2i_over_d():
    inv = rotary_inv_freq(8, 10.0)
    assert torch.allclose(inv, torch.tensor([10.0 ** (-2 * i / 8) for i in range(4)]))
    assert inv[0] == 1.0                                # the first pair turns by the position itself
    ang = rotary_angles(torch.tensor([[0.0, 2.0]]), 8, 10.0)
    assert ang.shape == (1, 2, 4)
    assert torch.allclose(ang[0, 1], 2.0 * inv) and (ang[0, 0] == 0).all()


def test_temporal_attention_needs_heads_of_even_size():
    with pytest.raises(ValueError, match="even size"):
        TemporalRotaryAttention(6, 4, 10.0)             # 6 does not split into 4 heads
    with pytest.raises(ValueError, match="even size"):
        TemporalRotaryAttention(6, 2, 10.0)             # heads of 3: rotary pairs need an even size
    assert TemporalRotaryAttention(8, 2, 10.0).head_dim == 4


def test_temporal_attention_has_bias_free_qkv_and_a_biased_output():
    att = TemporalRotaryAttention(8, 2, 10.0)
    assert att.q.bias is None and att.k.bias is None and att.v.bias is None
    assert att.o.bias is not None
    # so a zero input gives zero queries, keys and values: the output is the output bias alone
    with torch.no_grad():
        att.o.bias.fill_(0.25)
    out, attn = att(torch.zeros(1, 3, 8), torch.tensor([[2.0, 1.0, 0.0]]), torch.ones(1, 3, dtype=torch.bool))
    assert torch.allclose(out, torch.full((1, 3, 8), 0.25))
    assert torch.allclose(attn, torch.full((1, 2, 3, 3), 1 / 3))


def test_the_wrapped_encoder_runs_with_sdpa_unless_told_otherwise():
    assert _cfg().encoder_config()._attn_implementation == "sdpa"
    eager = TempoFormerConfig(encoder=dict(tiny_bert_dict(), _attn_implementation="eager"))
    assert eager.encoder_config()._attn_implementation == "eager"


def test_temporal_attention_reads_each_window_on_its_own_and_never_a_padded_slot():
    torch.manual_seed(0)
    att = TemporalRotaryAttention(8, 2, 10.0).eval()
    x = torch.randn(2, 3, 8)
    pos = torch.tensor([[2.0, 1.0, 0.0], [5.0, 0.5, 0.0]])
    mask = torch.tensor([[True, True, True], [False, True, True]])
    out, attn = att(x, pos, mask)
    assert torch.allclose(attn.sum(-1), torch.ones(2, 2, 3))       # a distribution over the keys
    assert (attn[1, :, :, 0] == 0).all()                             # the padded slot is never read
    for b in range(2):                                               # the batch's other windows change nothing
        ob, ab = att(x[b:b + 1], pos[b:b + 1], mask[b:b + 1])
        assert torch.allclose(out[b], ob[0], atol=1e-6) and torch.allclose(attn[b], ab[0], atol=1e-6)


def test_focal_alpha_is_sqrt_n_over_count_and_an_absent_class_gets_the_largest():
    alpha = focal_alpha_from_labels([0] * 8 + [2] * 2 + [-1] * 5, 4)    # -1: unlabelled, not counted
    assert alpha[0] == pytest.approx(math.sqrt(10 / 8)) and alpha[2] == pytest.approx(math.sqrt(10 / 2))
    assert alpha[1] == alpha[3] == pytest.approx(math.sqrt(10 / 2))      # absent: the rarest seen class's
    assert focal_alpha_from_labels([1, 1], 2) == [pytest.approx(1.0), pytest.approx(1.0)]
    assert focal_alpha_from_labels([-1, -1], 3) == [1.0, 1.0, 1.0]       # nothing labelled: no weighting


def test_local_stack_size_may_be_zero_but_must_leave_an_upper_layer():
    enc = tiny_bert_dict(layers=3)
    assert TempoFormerModel(TempoFormerConfig(encoder=enc, num_labels=2, num_local_layers=0)).num_upper == 3
    assert TempoFormerModel(TempoFormerConfig(encoder=enc, num_labels=2, num_local_layers=2)).num_upper == 1
    with pytest.raises(ValueError, match="num_local_layers=3 must be in"):
        TempoFormerModel(TempoFormerConfig(encoder=enc, num_labels=2, num_local_layers=3))


def test_an_encoder_without_bert_layers_is_refused_by_name():
    gpt2 = dict(model_type="gpt2", n_embd=32, n_layer=2, n_head=2, vocab_size=100, n_positions=32)
    distil = dict(model_type="distilbert", dim=32, n_layers=2, n_heads=2, hidden_dim=64, vocab_size=100,
                  max_position_embeddings=32)     # has .embeddings, but its layers are not .encoder.layer
    for enc, name in ((gpt2, "gpt2"), (distil, "distilbert")):
        with pytest.raises(ValueError, match=f"model_type='{name}' is not BERT-like"):
            TempoFormerModel(TempoFormerConfig(encoder=enc, num_labels=2))


def test_the_head_keeps_pytorchs_fan_in_init_and_the_rest_berts():
    """BERT's std-0.02 init would shrink the 3-layer ReLU head's signal ~100x (it then barely
    trains in a few epochs), so the head keeps nn.Linear's own init; the rest starts as BERT does."""
    torch.manual_seed(0)
    model = TempoFormerModel(TempoFormerConfig(encoder=tiny_bert_dict(hidden=32), num_labels=2))
    first = next(m for m in model.head if isinstance(m, torch.nn.Linear))
    bound = 1 / math.sqrt(first.in_features)                       # nn.Linear: U(-1/sqrt(fan_in), +)
    assert first.weight.abs().max() <= bound and first.weight.std().item() > 0.4 * bound > 0.02
    for w in (model.encoder.encoder.layer[0].attention.self.query.weight, model.temporal[0].q.weight,
              model.gate_norm.gate.weight):                     # the stream modules start as BERT's do
        assert w.std().item() == pytest.approx(0.02, rel=0.2)
