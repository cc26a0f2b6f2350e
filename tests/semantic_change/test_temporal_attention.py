"""Temporal attention model: pretrained weights kept, identity at init, per-example normalisation,
the faithful form's O(n·d) route and rank-1 property, fused attention, save/load."""
import math

import pytest
import torch
import torch.nn.functional as F
from transformers import (BertConfig, BertForMaskedLM, DistilBertConfig, DistilBertForMaskedLM,
                          RobertaConfig, RobertaForMaskedLM)

from tempo_analysis.semantic_change.model import (TemporalAttentionConfig, TemporalAttentionForMaskedLM,
                                                 convert_state_dict)

MASK = 4


def tiny_bert(seed=0):
    torch.manual_seed(seed)
    cfg = BertConfig(vocab_size=120, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=64)
    return BertForMaskedLM(cfg).eval()


def batch(seed=0, B=3, n=12):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(5, 120, (B, n), generator=g)
    am = torch.ones_like(ids)
    am[1, 8:] = 0
    ids[1, 8:] = 0
    labels = torch.full_like(ids, -100)
    labels[:, 3], labels[:, 5] = ids[:, 3], ids[:, 5]
    ids = ids.clone()
    ids[:, 3] = MASK
    return ids, am, labels


def convert(hf, form, **kw):
    return TemporalAttentionForMaskedLM.from_hf(hf, time_attention=form, mask_token_id=MASK, **kw).eval()


def peaked(hf, factor=30.0):
    """Scale the queries and keys so that attention is far from uniform: at BERT's init scale every
    pattern is near uniform, and a converted model that changed the attention would not show."""
    with torch.no_grad():
        for name, module in hf.named_modules():
            if name.rpartition(".")[2] in ("query", "key", "q_lin", "k_lin"):
                module.weight.mul_(factor)
    return hf


def assert_same_hidden_states(ref, ours, am):
    real = am.bool()
    assert len(ref.hidden_states) == len(ours.hidden_states)
    for i, (a, b) in enumerate(zip(ref.hidden_states, ours.hidden_states)):
        torch.testing.assert_close(b[real], a[real], atol=1e-5, rtol=1e-5, msg=f"hidden state {i}")


def perturb_time(model, scale=1.0, seed=1):
    """Give the time parameters non-trivial values (as after training)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for n, p in model.named_parameters():
            if "time" in n:
                p.copy_(torch.randn(p.shape, generator=g) * scale)


@pytest.mark.parametrize("form", ["faithful", "modulated", "none"])
def test_encoder_layers_equal_checkpoint(form):
    hf = tiny_bert()
    model = convert(hf, form)
    src = hf.state_dict()
    ours = model.state_dict()
    for i in range(2):
        pairs = {f"bert.encoder.layer.{i}.attention.self.query.weight": f"temporal.layers.{i}.attention.query.weight",
                 f"bert.encoder.layer.{i}.attention.self.value.bias": f"temporal.layers.{i}.attention.value.bias",
                 f"bert.encoder.layer.{i}.attention.output.dense.weight": f"temporal.layers.{i}.attn_out.weight",
                 f"bert.encoder.layer.{i}.intermediate.dense.weight": f"temporal.layers.{i}.ffn_in.weight",
                 f"bert.encoder.layer.{i}.output.LayerNorm.weight": f"temporal.layers.{i}.ffn_norm.weight"}
        for a, b in pairs.items():
            assert torch.equal(src[a], ours[b]), (a, b)
    mapped, has_head = convert_state_dict(src, "bert", 2)
    assert has_head and model.config.head_from_checkpoint
    # every mapped checkpoint tensor landed unchanged
    for k, v in mapped.items():
        assert torch.equal(ours[k], v), k
    assert torch.equal(ours["temporal.word_embeddings.weight"], src["bert.embeddings.word_embeddings.weight"])


def test_a_checkpoint_has_an_mlm_head_only_with_its_dense_norm_and_bias():
    src = tiny_bert().state_dict()
    assert convert_state_dict(src, "bert", 2)[1]
    body = {k: v for k, v in src.items() if not k.startswith("cls.")}
    assert not convert_state_dict(body, "bert", 2)[1]                       # a bare encoder
    for part in ("cls.predictions.bias", "cls.predictions.transform.dense.weight"):
        assert not convert_state_dict({**body, part: src[part]}, "bert", 2)[1]   # part of a head


def test_default_encoder_weights_are_kept():
    """The real MiniLM with its embedded MLM adapter merged: every tensor, head included, is kept."""
    from tempo_analysis.encoders import load_encoder

    model, tok = TemporalAttentionForMaskedLM.from_pretrained_encoder("default")
    hf, _ = load_encoder("default", head="mlm")            # checkpoint + the embedded MLM adapter
    mapped, has_head = convert_state_dict(hf.state_dict(), "bert", model.config.num_hidden_layers)
    assert has_head and model.config.head_from_checkpoint     # the adapter brings a trained MLM head
    ours = model.state_dict()
    layer_keys = [k for k in mapped if k.startswith("temporal.layers.")]
    assert len(layer_keys) == 16 * 6
    for k in mapped:
        assert torch.equal(ours[k], mapped[k]), k


@pytest.mark.parametrize("form", ["faithful", "modulated"])
def test_identity_at_init_same_mlm_loss(form):
    hf = peaked(tiny_bert())
    model = convert(hf, form)    # the default form: the time term enters through gates that start at 0
    ids, am, labels = batch()
    with torch.no_grad():
        ref = hf(input_ids=ids, attention_mask=am, labels=labels, output_hidden_states=True)
        ours = model(ids, am, time=torch.tensor([0, 1, 0]), labels=labels, output_hidden_states=True)
    assert torch.allclose(ref.loss, ours.loss, atol=1e-5), (ref.loss, ours.loss)
    assert_same_hidden_states(ref, ours, am)


@pytest.mark.parametrize("make", [
    lambda: RobertaForMaskedLM(RobertaConfig(vocab_size=120, hidden_size=32, num_hidden_layers=2,
                                             num_attention_heads=2, intermediate_size=64,
                                             max_position_embeddings=70, pad_token_id=1)),
    lambda: DistilBertForMaskedLM(DistilBertConfig(vocab_size=120, dim=32, n_layers=2, n_heads=2,
                                                   hidden_dim=64, max_position_embeddings=64)),
], ids=["roberta", "distilbert"])
def test_other_bert_like_encoders_convert_exactly(make):
    torch.manual_seed(0)
    hf = peaked(make().eval())
    model = convert(hf, "modulated")
    ids, am, labels = batch()
    ids[1, 8:] = hf.config.pad_token_id
    with torch.no_grad():
        ref = hf(input_ids=ids, attention_mask=am, labels=labels, output_hidden_states=True)
        ours = model(ids, am, time=torch.tensor([1, 0, 1]), labels=labels, output_hidden_states=True)
    assert torch.allclose(ref.loss, ours.loss, atol=1e-5), (ref.loss, ours.loss)
    assert_same_hidden_states(ref, ours, am)


@pytest.mark.parametrize("form", ["faithful", "modulated", "scaled"])
def test_results_do_not_depend_on_batch_composition(form):
    kw = {"period_scales": [1.0, 2.0]} if form == "scaled" else {}
    model = convert(tiny_bert(), form, **kw)
    perturb_time(model, 0.5)
    ids, am, _ = batch(n=12)
    short = ids[1:2, :8]
    with torch.no_grad():
        alone = model.temporal(short, torch.ones_like(short), time=torch.tensor([1]))["last_hidden_state"][0]
        for mates_time in ([0, 1, 0], [1, 1, 1]):
            full = model.temporal(ids, am, time=torch.tensor(mates_time))["last_hidden_state"][1, :8]
            assert torch.allclose(alone, full, atol=1e-5)


def test_time_changes_the_representation_after_training():
    model = convert(tiny_bert(), "faithful")
    perturb_time(model, 3.0)
    ids, am, _ = batch()
    with torch.no_grad():
        a = model.temporal(ids, am, time=torch.tensor([0, 0, 0]))["last_hidden_state"]
        a2 = model.temporal(ids, am, time=torch.tensor([0, 0, 0]))["last_hidden_state"]
        b = model.temporal(ids, am, time=torch.tensor([1, 1, 1]))["last_hidden_state"]
    assert torch.equal(a, a2)
    assert (a - b).abs().max() > 1e-2


@pytest.mark.parametrize("time_norm", [None, "all_heads", "per_head"])
def test_faithful_equals_explicit_triple_product(time_norm):
    """The O(n·d) route equals softmax-input Q Tᵀ T Kᵀ / (‖T‖_F √d) built the slow way, per example.
    ‖T‖ is over every head's T together by default (the library's choice, docs/methods/semantic_change.md);
    time_norm="per_head" divides each head by its own ‖T_h‖ (the paper's eq. 2, written for one head)."""
    kw = {} if time_norm is None else {"time_norm": time_norm}
    model = convert(tiny_bert(), "faithful", time_residual=False, **kw)
    perturb_time(model, 0.5)
    ids, am, _ = batch()
    time = torch.tensor([0, 1, 1])
    with torch.no_grad():
        fast = model.temporal.attention_scores(0, ids, am, time)
        hs = model.temporal(ids, am, time=time)["hidden_states"][0]
        att = model.temporal.layers[0].attention
        tids = model.temporal.time_ids(ids, am, time)[0]
        X_t = model.temporal.time_embeddings(tids)
        for b in range(3):
            real = am[b].bool()
            x = hs[b][real]
            q, k = att._split(att.query(x)[None])[0], att._split(att.key(x)[None])[0]
            T = att._split(att.time(X_t[b][real])[None])[0]             # [H, n, d]
            slow = torch.einsum("hid,had,hae,hje->hij", q, T, T, k)      # Σ_a (q_i·t_a)(t_a·k_j)
            norm_all, norm_head = T.norm(), T.norm(dim=(1, 2))[:, None, None]
            assert not torch.allclose(norm_head, norm_all.expand_as(norm_head))   # the two rules differ here
            slow = slow / (norm_head if time_norm == "per_head" else norm_all) / math.sqrt(att.d)
            n = int(real.sum())
            assert torch.allclose(fast[b][:, :n, :n], slow, atol=1e-4, rtol=1e-4)


def test_time_norm_is_checked_and_defaults_to_all_heads():
    assert TemporalAttentionConfig().time_norm == "all_heads"
    with pytest.raises(ValueError, match="time_norm='heads' is not one of"):
        TemporalAttentionConfig(time_norm="heads")


def test_faithful_is_rank_one_when_all_tokens_share_a_time():
    model = convert(tiny_bert(), "faithful", time_residual=False)
    perturb_time(model, 0.5)
    ids = batch()[0][:1]
    ids[ids == MASK] = 7                          # no [MASK]: every token has the period's time
    am = torch.ones_like(ids)
    S = model.temporal.attention_scores(1, ids, am, torch.tensor([1]))[0]    # [H, n, n]
    for h in range(S.shape[0]):
        sv = torch.linalg.svdvals(S[h].double())
        assert sv[1] / sv[0] < 1e-5                # rank 1
        order = torch.argsort(S[h], dim=1)
        for i in range(S.shape[1]):                # every query ranks the keys the same way (or reversed)
            assert torch.equal(order[i], order[0]) or torch.equal(order[i], order[0].flip(0))
    # the modulated form keeps query-specific rankings
    mod = convert(tiny_bert(), "modulated")
    perturb_time(mod, 0.3)
    S2 = mod.temporal.attention_scores(1, ids, am, torch.tensor([1]))[0]
    assert torch.linalg.svdvals(S2[0].double())[1] / torch.linalg.svdvals(S2[0].double())[0] > 1e-2
    o2 = torch.argsort(S2[0], dim=1)
    assert any(not torch.equal(o2[i], o2[0]) and not torch.equal(o2[i], o2[0].flip(0)) for i in range(1, len(o2)))


@pytest.mark.parametrize("form", ["faithful", "modulated", "none"])
def test_attention_goes_through_fused_sdpa(form, monkeypatch):
    model = convert(tiny_bert(), form)
    calls = []
    real = F.scaled_dot_product_attention

    def spy(*a, **k):
        calls.append(a[0].shape)
        return real(*a, **k)

    monkeypatch.setattr(F, "scaled_dot_product_attention", spy)
    ids, am, labels = batch()
    model(ids, am, time=torch.tensor([0, 1, 0]), labels=labels)
    assert len(calls) == model.config.num_hidden_layers
    assert calls[0] == (3, 2, 12, 16)              # [B, H, n, d]: no n×n×d tensor is built


def test_save_and_from_pretrained_roundtrip(tmp_path):
    model = convert(tiny_bert(), "faithful")
    perturb_time(model, 0.3)
    model.save_pretrained(tmp_path)
    assert (tmp_path / "model.safetensors").is_file()
    again = TemporalAttentionForMaskedLM.from_pretrained(tmp_path).eval()
    assert again.config.time_attention == "faithful" and again.config.num_periods == 2
    ids, am, labels = batch()
    with torch.no_grad():
        a = model(ids, am, time=torch.tensor([0, 1, 1]), labels=labels).loss
        b = again(ids, am, time=torch.tensor([0, 1, 1]), labels=labels).loss
    assert torch.equal(a, b)


def test_grow_vocab_initialises_from_pieces():
    model = convert(tiny_bert(), "modulated")
    W = model.temporal.word_embeddings.weight.detach().clone()
    model.grow_vocab([[10, 11], [12]])
    assert model.config.vocab_size == 122
    assert torch.allclose(model.temporal.word_embeddings.weight[120], W[[10, 11]].mean(0))
    assert model.head.bias.shape == (122,)


def test_bad_input_messages():
    model = convert(tiny_bert(), "faithful")
    ids, am, _ = batch()
    with pytest.raises(ValueError, match="time is required"):
        model(ids, am)
    with pytest.raises(ValueError, match="outside 0..1"):
        model(ids, am, time=torch.tensor([0, 2, 0]))
    with pytest.raises(ValueError, match="one period index per example"):
        model(ids, am, time=torch.tensor([0, 1]))
    with pytest.raises(ValueError, match="time_attention"):
        TemporalAttentionConfig(time_attention="bogus")
    with pytest.raises(ValueError, match="period_scales"):
        TemporalAttentionConfig(time_attention="scaled")
