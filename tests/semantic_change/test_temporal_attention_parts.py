"""Temporal attention's parts at their edges: how the time parameters start (the modulated form is
exactly its encoder before training), the per-token time ids, the config's bounds, the sequence
length limit, and the scaled baseline's per-period factor."""
import pytest
import torch

from tempo_analysis.semantic_change.model import TemporalAttentionConfig, TemporalAttentionForMaskedLM

from .test_temporal_attention import MASK, batch, convert, tiny_bert


def _time_projections(model):
    return [layer.attention.time for layer in model.temporal.layers]


@pytest.mark.parametrize("build", ["from_hf", "config"])
def test_the_modulated_time_projection_starts_at_zero_and_the_faithful_gate_closed(build):
    def make(form):
        if build == "from_hf":
            return convert(tiny_bert(), form)
        return TemporalAttentionForMaskedLM(TemporalAttentionConfig(
            vocab_size=120, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
            max_position_embeddings=64, time_attention=form, mask_token_id=MASK))
    modulated, faithful = make("modulated"), make("faithful")
    for w_t in _time_projections(modulated):
        assert w_t.bias is None and torch.count_nonzero(w_t.weight) == 0      # W_T = 0: u = 0
    for layer, w_t in zip(faithful.temporal.layers, _time_projections(faithful)):
        assert w_t.bias is None                                               # W_T in R^{d x d}, no bias
        assert w_t.weight.std().item() == pytest.approx(faithful.config.initializer_range, rel=0.3)
        assert torch.count_nonzero(layer.attention.time_gate) == 0           # g_h = 0: the pretrained layer


def test_an_untrained_modulated_model_is_exactly_its_encoder():
    hf = tiny_bert()
    ids, am, _ = batch()
    none, modulated = convert(hf, "none"), convert(hf, "modulated")
    with torch.no_grad():
        a = none.temporal(ids, am, time=torch.tensor([0, 1, 0]))["last_hidden_state"]
        for time in ([0, 1, 0], [1, 1, 1]):
            b = modulated.temporal(ids, am, time=torch.tensor(time))["last_hidden_state"]
            assert torch.equal(a, b), time


def test_time_ids_mark_masked_tokens_and_padding():
    model = convert(tiny_bert(), "faithful")
    cfg = model.config
    ids, am, _ = batch()                                  # [MASK] at position 3; row 1 padded from 8
    tids, period = model.temporal.time_ids(ids, am, torch.tensor([0, 1, 0]))
    assert len({0, 1, cfg.pad_time_id, cfg.mask_time_id}) == 4 == cfg.num_time_ids
    assert (tids[:, 3] == cfg.mask_time_id).all()
    assert (tids[1, 8:] == cfg.pad_time_id).all()
    real = (ids != MASK) & am.bool()
    assert torch.equal(tids[real], period[real]) and torch.equal(period, torch.tensor([0, 1, 0])[:, None].expand_as(ids))
    # without a mask token id, a [MASK] keeps its sentence's period
    model.config.mask_token_id = None
    assert (model.temporal.time_ids(ids, am, torch.tensor([0, 1, 0]))[0][:, 3] == torch.tensor([0, 1, 0])).all()


def test_num_periods_is_at_least_one():
    assert TemporalAttentionConfig(num_periods=1).num_time_ids == 3
    with pytest.raises(ValueError, match="num_periods=0"):
        TemporalAttentionConfig(num_periods=0)


def test_a_sequence_may_fill_the_position_table_but_not_exceed_it():
    model = convert(tiny_bert(), "faithful")            # 64 positions
    ok = torch.full((1, 64), 7)
    model(ok, time=torch.tensor([0]))
    with pytest.raises(ValueError, match="exceeds max_position_embeddings=64"):
        model(torch.full((1, 65), 7), time=torch.tensor([0]))


def test_scaled_attention_multiplies_each_query_by_its_periods_factor():
    model = convert(tiny_bert(), "scaled", period_scales=[1.0, 3.0])
    ids, am, _ = batch()
    ids, am = ids[:1], am[:1]
    with torch.no_grad():
        h = model.temporal(ids, am, time=torch.tensor([0]))["hidden_states"]
        s0 = model.temporal.attention_scores(1, ids, am, time=torch.tensor([0]))
        # the same layer input, read as the later period: every score is 3 times as large
        att = model.temporal.layers[1].attention
        s1 = att.scores(h[1], None, am.float(), torch.full((1, ids.shape[1]), 3.0))
    assert torch.allclose(s1, 3.0 * s0, atol=1e-5)
    with torch.no_grad():
        later = model.temporal.attention_scores(1, ids, am, time=torch.tensor([1]))
    assert not torch.allclose(later, s0, atol=1e-4)       # time changes the scores


def test_grow_vocab_refuses_ids_that_do_not_name_one_new_row_each():
    model = convert(tiny_bert(), "faithful")               # 120 rows
    for bad in ([120, 120], [-1, 121], [120]):
        with pytest.raises(ValueError, match="one distinct id per new token"):
            model.grow_vocab([[5], [6]], new_ids=bad)
    assert model.temporal.word_embeddings.num_embeddings == 120         # nothing was changed
    model.grow_vocab([[5, 6], [7]], new_ids=[0, 121])                   # id 0: a padded row, overwritten
    emb = model.temporal.word_embeddings.weight
    assert emb.shape[0] == 122 == model.config.vocab_size
    assert torch.allclose(emb[121], tiny_bert().bert.embeddings.word_embeddings.weight[7])


def test_from_hf_refuses_a_checkpoint_with_weights_it_cannot_place():
    hf = tiny_bert()

    class Extra:
        config = hf.config

        def state_dict(self):     # a tensor under a known module with a leaf our layer lacks (TF-style names)
            return {**hf.state_dict(), "bert.embeddings.LayerNorm.gamma": torch.ones(32)}
    with pytest.raises(ValueError, match=r"could not map bert weights.*unexpected \['temporal.embed_norm.gamma'\]"):
        TemporalAttentionForMaskedLM.from_hf(Extra(), mask_token_id=MASK)


def test_a_checkpoint_without_a_pad_id_pads_with_zero():
    from transformers import BertConfig, BertForMaskedLM

    torch.manual_seed(0)
    hf = BertForMaskedLM(BertConfig(vocab_size=120, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                                    intermediate_size=64, max_position_embeddings=64, pad_token_id=None)).eval()
    assert TemporalAttentionForMaskedLM.from_hf(hf, mask_token_id=MASK).config.pad_token_id == 0
