"""DCWE model: start state = plain encoder, priors over offset positions only, one GAT pass per
slice per batch, ablations, save/load, classification head, content vocabulary."""
import pytest
import torch

from tempo_analysis.encoders import tiny_encoder
from tempo_analysis.diffusion.model import (DCWEConfig, DCWEForMaskedLM, DCWEForSequenceClassification,
                                           content_vocabulary)

TEXTS = ["the cloud stores data on a remote server", "rain falls from a dark cloud today",
         "we train neural networks on data", "a storm cloud over the hills", "server data in the cloud",
         "neural data today", "the hills and the rain", "remote storage of data"]


@pytest.fixture(scope="module")
def parts():
    enc, tok = tiny_encoder(head="mlm", seed=0)
    vocab = content_vocabulary(TEXTS, tok)
    x = torch.randn(5, 8, generator=torch.Generator().manual_seed(0))
    ei = torch.tensor([[0, 1, 1, 2, 3, 4], [1, 0, 2, 1, 4, 3]])
    return enc, tok, vocab, x, ei


def _model(parts, ablation="dcwe", **kw):
    enc, tok, vocab, x, ei = parts
    fresh, _ = tiny_encoder(head="mlm", seed=0)
    fresh.load_state_dict(enc.state_dict())
    return DCWEForMaskedLM.from_encoder(fresh, node_features=x, edge_index=ei, dynamic_token_ids=vocab,
                                        slices=[2019, 2020, 2021], units=list("abcde"), social_dim=6, gat_heads=2,
                                        ablation=ablation, **kw)


def _batch(tok, n=8, pad_to=None):
    b = tok(TEXTS[:n], padding="max_length" if pad_to else True, max_length=pad_to, return_tensors="pt")
    b["unit_ids"] = torch.arange(n) % 5
    b["slice_ids"] = torch.tensor([0, 1, 2, 1, 2, 0, 1, 2][:n])
    return b


def test_content_vocabulary_is_alphabetic_frequent_non_stopwords(parts):
    _, tok, vocab, _, _ = parts
    words = tok.convert_ids_to_tokens(vocab)
    assert words[:2] == ["data", "cloud"]  # most frequent first
    assert "the" not in words and "a" not in words and all(w.isalpha() for w in words)
    assert content_vocabulary(TEXTS, tok, top_k=3) == vocab[:3]
    with pytest.raises(ValueError, match="no alphabetic"):
        content_vocabulary(["the a of", "123 456"], tok)


@pytest.mark.parametrize("ablation", ["dcwe", "sa", "ta"])
def test_start_state_equals_plain_encoder(parts, ablation):
    enc, tok, *_ = parts
    m = _model(parts, ablation).eval()
    b = _batch(tok)
    labels = torch.where(b["attention_mask"].bool(), b["input_ids"], -100)
    plain = enc.eval()(input_ids=b["input_ids"], attention_mask=b["attention_mask"], labels=labels)
    assert torch.equal(m(**b).logits, plain.logits)               # no labels: full logits
    out = m(**b, labels=labels)                                   # labels: only labelled positions projected
    assert torch.allclose(out.logits, plain.logits[labels != -100], atol=1e-6)
    assert torch.allclose(out.loss, plain.loss)
    assert out.offsets.abs().max() == 0 and out.prior_a == 0 and out.prior_w == 0


def test_training_moves_offsets_and_priors_use_offset_positions_only(parts):
    _, tok, vocab, *_ = parts
    torch.manual_seed(0)
    m = _model(parts, offset_dropout=0.0, gat_dropout=0.0)
    opt = torch.optim.AdamW(m.parameters(), lr=1e-2)
    b = _batch(tok)
    for _ in range(3):
        out = m(**b, labels=b["input_ids"])
        out.loss.backward()
        opt.step()
        opt.zero_grad()
    m.eval()
    gat_before = m.dynamic.social[1].gat1.lin.weight.detach().clone()
    out = m(**b, labels=b["input_ids"])
    assert out.offsets.abs().max() > 0 and out.prior_a > 0 and out.prior_w > 0
    # offset positions = real tokens of the dynamic vocabulary, nothing else
    is_dyn = torch.isin(b["input_ids"], torch.tensor(vocab)) & b["attention_mask"].bool()
    assert torch.equal(out.offset_positions, is_dyn)
    assert out.offsets.shape[0] == int(is_dyn.sum())
    # extra padding changes neither the priors nor the real tokens' logits
    padded = _batch(tok, pad_to=32)
    out_pad = m(**padded, labels=padded["input_ids"])
    assert torch.allclose(out_pad.prior_a, out.prior_a, atol=1e-6)
    assert torch.allclose(out_pad.prior_w, out.prior_w, atol=1e-6)
    # priors recomputed by hand from the definition (lambda_a = 1e-3 * lambda_w)
    assert m.config.lambda_a == pytest.approx(1e-3 * m.config.lambda_w)
    assert out.prior_a.item() == pytest.approx(m.config.lambda_a * out.offsets.pow(2).sum(-1).mean().item(), rel=1e-5)
    # the social component received gradients (it is trained, not frozen)
    assert not torch.equal(gat_before, _model(parts).dynamic.social[1].gat1.lin.weight)


def test_one_gnn_pass_per_slice_per_batch(parts):
    _, tok, *_ = parts
    for ablation, expected in (("dcwe", 3), ("ta", 1), ("sa", 0)):
        m = _model(parts, ablation)
        m.dynamic.gnn_calls = 0
        m(**_batch(tok, n=8))  # 8 examples over slices {0, 1, 2}
        assert m.dynamic.gnn_calls == expected, ablation
    m = _model(parts).eval()
    m.dynamic.training_priors = False  # inference: no o_{t-1} pass needed
    b = _batch(tok, n=8)
    b["slice_ids"] = torch.full((8,), 2)
    m.dynamic.gnn_calls = 0
    m(**b)
    assert m.dynamic.gnn_calls == 1


def test_save_and_load_roundtrip(parts, tmp_path):
    _, tok, vocab, *_ = parts
    m = _model(parts)
    with torch.no_grad():
        for ffn in m.dynamic.ffns:
            ffn.fc2.weight.normal_(0, 0.1)
    m.eval()
    b = _batch(tok)
    ref = m(**b).logits
    m.save_pretrained(tmp_path)
    assert (tmp_path / "model.safetensors").is_file()
    m2 = DCWEForMaskedLM.from_pretrained(tmp_path).eval()
    assert torch.allclose(m2(**b).logits, ref, atol=1e-6)
    assert m2.dynamic_token_ids == sorted(vocab) and m2.config.slices == [2019, 2020, 2021]
    assert torch.equal(m2.dynamic.edge_index, m.dynamic.edge_index)


def test_lookups_and_config_errors(parts):
    m = _model(parts)
    assert m.unit_ids(["b", "e"]).tolist() == [1, 4]
    assert m.slice_ids([2021, "2019"]).tolist() == [2, 0]
    with pytest.raises(ValueError, match="not nodes of this model's social graph"):
        m.unit_ids(["zzz"])
    with pytest.raises(ValueError, match="not slices of this model"):
        m.slice_ids([1999])
    with pytest.raises(ValueError, match="ablation"):
        DCWEConfig(ablation="both")


def test_static_and_dynamic_embeddings(parts):
    m = _model(parts).eval()
    ids = m.dynamic_token_ids[:2]
    e, d = m.static_and_dynamic([ids[0], ids[0], ids[1]], [0, 3, 1], [0, 2, 1])
    assert torch.equal(e, d)  # untrained: no offsets
    with torch.no_grad():
        m.dynamic.ffns[2].fc2.bias.fill_(0.5)
    e, d = m.static_and_dynamic([ids[0], ids[0]], [0, 3], [0, 2])
    assert torch.equal(e[0], d[0]) and not torch.equal(e[1], d[1])


def test_classification_head(parts):
    _, tok, vocab, x, ei = parts
    enc, _ = tiny_encoder(seed=0)
    m = DCWEForSequenceClassification.from_encoder(enc, node_features=x, edge_index=ei, dynamic_token_ids=vocab,
                                                   num_slices=3, social_dim=6, gat_heads=2, num_labels=2)
    b = _batch(tok)
    labels = torch.tensor([0, 1, 0, 1, 0, 1, 0, 1])
    opt = torch.optim.AdamW(m.parameters(), lr=5e-3)
    losses = []
    for _ in range(15):
        out = m(**b, labels=labels)
        out.loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append(out.task_loss.item())
    assert out.logits.shape == (8, 2)
    assert losses[-1] < losses[0] * 0.5  # it can fit a labelled social corpus


def test_pretrained_weights_are_kept():
    """The default encoder's pretrained body survives wrapping (needs the embedded MiniLM)."""
    from tempo_analysis.encoders import load_encoder

    plain, tok = load_encoder("default", head="mlm")
    m = DCWEForMaskedLM.from_encoder("default", node_features=torch.randn(2, 4), edge_index=[[0, 1], [1, 0]],
                                     dynamic_token_ids=content_vocabulary(TEXTS, tok), num_slices=2).eval()
    for name, p in plain.bert.state_dict().items():
        assert torch.equal(p, m.encoder.bert.state_dict()[name]), name
    b = tok(TEXTS[:2], padding=True, return_tensors="pt")
    h_plain = plain.eval().bert(**b).last_hidden_state
    h_dcwe = m(**b, unit_ids=torch.tensor([0, 1]), slice_ids=torch.tensor([0, 1]),
               output_hidden_states=True).hidden_states[-1]
    assert torch.allclose(h_plain, h_dcwe, atol=1e-5)


@pytest.mark.parametrize("edges, message", [
    (torch.tensor([[0, 1], [1, 2], [2, 0]]), r"edge_index has shape \(3, 2\).*pass its transpose"),
    (torch.tensor([[0, 1], [7, 2]]), r"edge_index names units \[7\] but there are 5 units")])
def test_a_malformed_edge_index_is_refused_when_the_model_is_built(parts, edges, message):
    """(source, target) pairs used to be reshaped into another graph without a word, and an unknown
    unit failed only inside the GAT's forward pass."""
    enc, tok, vocab, x, _ = parts
    with pytest.raises(ValueError, match=message):
        DCWEForMaskedLM.from_encoder(enc, node_features=x, edge_index=edges, dynamic_token_ids=vocab, num_slices=2)


def test_the_walk_prior_is_the_mean_squared_step_between_adjacent_slices(parts):
    """prior_w = λw · mean over offset positions in slices t > 0 of ‖FFN_t([e; s_t]) − FFN_{t−1}([e; s_{t−1}])‖²,
    each unit's social vector taken from its own slice's GAT (computed here by hand)."""
    _, tok, *_ = parts
    m = _model(parts, offset_dropout=0.0, gat_dropout=0.0)
    torch.manual_seed(0)
    with torch.no_grad():
        for f in m.dynamic.ffns:
            f.fc2.weight.normal_(0, 0.1)                  # non-zero offsets (W2 starts at zero)
    m.eval()
    b = _batch(tok)
    out = m(**b)
    bi, li = out.offset_positions.nonzero(as_tuple=True)
    e = m.encoder.get_input_embeddings()(b["input_ids"])[bi, li]
    d = m.dynamic
    steps = []
    with torch.no_grad():
        for k in range(len(bi)):
            t, u = int(b["slice_ids"][bi[k]]), int(b["unit_ids"][bi[k]])
            if t == 0:
                continue
            o = [d.ffns[s](torch.cat([e[k], d.social[s](d.node_features, d.edge_index)[u]])) for s in (t, t - 1)]
            steps.append((o[0] - o[1]).pow(2).sum())
    assert len(steps) and out.prior_w.item() == pytest.approx(m.config.lambda_w * torch.stack(steps).mean().item(),
                                                              rel=1e-5)
