"""DCWE's model at its edges: the reference's graph sizes as config defaults, labels checked one list at
a time, an encoder config without a model type, a fresh GAT counter, batches with no or one offset
position, the default single slice, and the bounds of the dynamic vocabulary."""
import pytest
import torch

from tempo_analysis.diffusion.model import DCWEConfig, DCWEForMaskedLM, content_vocabulary
from tempo_analysis.encoders import tiny_encoder

TEXTS = ["the cloud stores data on a remote server", "rain falls from a dark cloud today",
         "we train neural networks on data", "a storm cloud over the hills"]


@pytest.fixture(scope="module")
def enc_tok():
    return tiny_encoder(head="mlm", seed=0)


def _model(enc_tok, **kw):
    enc, tok = enc_tok
    fresh, _ = tiny_encoder(head="mlm", seed=0)
    fresh.load_state_dict(enc.state_dict())
    kw = {"slices": [0, 1], "units": list("abc"), "dynamic_token_ids": content_vocabulary(TEXTS, tok), **kw}
    return DCWEForMaskedLM.from_encoder(fresh, node_features=torch.randn(3, 8, generator=torch.Generator().manual_seed(0)),
                                        edge_index=[[0, 1, 1, 2], [1, 0, 2, 1]], social_dim=6, gat_heads=2,
                                        offset_dropout=0.0, gat_dropout=0.0, **kw)


def _trained(m):
    """Non-zero offsets, as after training (the output layers start at zero)."""
    with torch.no_grad():
        for i, ffn in enumerate(m.dynamic.ffns):
            ffn.fc2.weight.normal_(0, 0.1, generator=torch.Generator().manual_seed(i))
            ffn.fc2.bias.normal_(0, 0.1, generator=torch.Generator().manual_seed(10 + i))
    return m.eval()


def test_the_config_defaults_are_the_references_graph_sizes():
    """REFERENCE-NOTES section 3: node2vec vectors of size 50, 2 GAT layers of 4 averaged heads, s of size 50;
    an unbuilt config describes one unit, one slice and no edges."""
    c = DCWEConfig()
    assert (c.node_dim, c.social_dim, c.gat_heads) == (50, 50, 4)
    assert (c.num_units, c.num_slices, c.num_edges, c.dynamic_vocab_size) == (1, 1, 0, 0)
    assert c.units == ["0"] and c.slices == [0]


@pytest.mark.parametrize("kw, message", [
    ({"num_units": 2, "units": ["a"]}, "1 unit labels for num_units=2"),
    ({"num_slices": 2, "slices": [2020, 2021, 2022]}, "3 slice labels for num_slices=2"),
])
def test_a_wrong_number_of_labels_is_refused_for_units_or_slices_alone(kw, message):
    with pytest.raises(ValueError, match=message):
        DCWEConfig(**kw)


@pytest.mark.parametrize("encoder", [None, {}, {"hidden_size": 8}])
def test_an_encoder_config_without_a_model_type_is_a_clear_error(encoder):
    with pytest.raises(ValueError, match="DCWEConfig.encoder is empty"):
        DCWEConfig(encoder=encoder).encoder_config()


def test_a_new_model_has_run_no_gat_pass(enc_tok):
    m = _model(enc_tok)
    assert m.dynamic.gnn_calls == 0
    tok = enc_tok[1]
    b = tok(TEXTS[:1], return_tensors="pt")
    m.eval()(**b, unit_ids=torch.tensor([0]), slice_ids=torch.tensor([1]))
    assert m.dynamic.gnn_calls == 2           # slice 1 and, for the walk prior, slice 0


def test_a_batch_without_dynamic_tokens_returns_empty_offsets_and_the_plain_embeddings(enc_tok):
    m = _trained(_model(enc_tok))
    tok = enc_tok[1]
    b = tok(["the a of"], return_tensors="pt")
    out = m(**b, unit_ids=torch.tensor([0]), slice_ids=torch.tensor([1]), labels=b["input_ids"])
    assert out.offsets.shape == (0, m.config.encoder["hidden_size"])
    assert not out.offset_positions.any() and out.prior_a == 0 and out.prior_w == 0


def test_a_batch_with_one_dynamic_token_gets_its_offset(enc_tok):
    m = _trained(_model(enc_tok))
    tok = enc_tok[1]
    b = tok(["the cloud"], return_tensors="pt")
    assert int(m.dynamic.dynamic_mask[b["input_ids"]].sum()) == 1
    e = m.encoder.get_input_embeddings()(b["input_ids"])
    moved, offsets, prior_a, _, pos = m.input_embeddings(b["input_ids"], b["attention_mask"], torch.tensor([0]),
                                                          torch.tensor([1]))
    assert offsets.shape == (1, e.shape[-1]) and offsets.abs().max() > 0 and prior_a > 0
    torch.testing.assert_close(moved[pos], e[pos] + offsets)
    torch.testing.assert_close(moved[~pos], e[~pos])


def test_without_slices_the_model_has_one_slice(enc_tok):
    m = _model(enc_tok, slices=None)
    assert m.config.num_slices == 1 and m.config.slices == [0] and len(m.dynamic.ffns) == 1


def test_the_dynamic_vocabulary_may_span_the_whole_vocabulary_but_not_beyond(enc_tok):
    V = enc_tok[0].get_input_embeddings().num_embeddings
    m = _model(enc_tok, dynamic_token_ids=[0, V - 1])
    assert m.dynamic_token_ids == [0, V - 1]
    for bad in ([-1, 5], [5, V], [V + 3]):
        with pytest.raises(ValueError, match="outside the encoder's vocabulary"):
            _model(enc_tok, dynamic_token_ids=bad)


def test_a_year_read_as_a_float_finds_its_slice(enc_tok):
    """A year column with a missing value reads as floats; 2020.0 is the slice labelled 2020."""
    m = _model(enc_tok, slices=[2020, 2021])
    assert m.slice_ids([2021.0, 2020, "2021"]).tolist() == [1, 0, 1]
    with pytest.raises(ValueError, match="not slices of this model"):
        m.slice_ids([2022.0])


def test_type_level_and_encoding_passes_skip_the_previous_slice(enc_tok):
    """Analyses need o_t only: one GAT pass for slice 1, not a second one for the walk prior's o_0; and
    the model is left as it was found."""
    m = _trained(_model(enc_tok))
    tok = enc_tok[1]
    cloud = tok.convert_tokens_to_ids("cloud")
    m.dynamic.gnn_calls = 0
    static, dynamic = m.static_and_dynamic([cloud], [0], [1])
    assert m.dynamic.gnn_calls == 1 and m.dynamic.training_priors
    assert (dynamic - static).abs().max() > 0
    b = tok(TEXTS[:2], padding=True, return_tensors="pt")
    m.dynamic.gnn_calls = 0
    hidden = m.encode(b["input_ids"], torch.tensor([0, 2]), torch.tensor([1, 1]), b["attention_mask"])
    assert m.dynamic.gnn_calls == 1 and m.dynamic.training_priors
    assert len(hidden) == m.config.encoder["num_hidden_layers"] + 1


def test_hidden_states_are_returned_only_when_asked_for(enc_tok):
    m = _model(enc_tok).eval()
    b = enc_tok[1](TEXTS[:2], padding=True, return_tensors="pt")
    ids = {"unit_ids": torch.tensor([0, 1]), "slice_ids": torch.tensor([0, 1])}
    assert m(**b, **ids).hidden_states is None
    assert m(**b, **ids, labels=b["input_ids"]).hidden_states is None
    assert len(m(**b, **ids, output_hidden_states=True).hidden_states) == m.config.encoder["num_hidden_layers"] + 1


def test_a_batch_with_nothing_masked_has_a_zero_loss_that_still_backpropagates(enc_tok):
    m = _model(enc_tok)
    b = enc_tok[1](TEXTS[:2], padding=True, return_tensors="pt")
    out = m(**b, unit_ids=torch.tensor([0, 1]), slice_ids=torch.tensor([0, 1]),
            labels=torch.full_like(b["input_ids"], -100))
    assert out.logits.shape[0] == 0 and out.task_loss.item() == 0.0
    out.loss.backward()                     # no NaN, no error: an empty batch of targets is not an error


def _tiny_distilbert():
    from transformers import DistilBertConfig, DistilBertForMaskedLM

    torch.manual_seed(0)
    return DistilBertForMaskedLM(DistilBertConfig(vocab_size=50, dim=16, n_layers=1, n_heads=2, hidden_dim=32)).eval()


def test_the_mlm_head_is_found_as_one_module_or_not_at_all(enc_tok):
    from tempo_analysis.diffusion.model import mlm_head

    assert mlm_head(enc_tok[0]) is enc_tok[0].cls            # BERT: one head module
    assert mlm_head(_tiny_distilbert()) is None               # DistilBERT: the head is split over four modules


@pytest.mark.parametrize("which", ["bert", "distilbert"])
def test_masked_lm_forward_projects_only_the_labelled_positions(enc_tok, which):
    """The fast path (BERT: the head on masked positions only) and the fallback (a split head: the full HF
    forward, then the labelled rows) both give the full model's logits at the labelled positions, in order."""
    from tempo_analysis.diffusion.model import masked_lm_forward

    enc = enc_tok[0].eval() if which == "bert" else _tiny_distilbert()
    ids = torch.randint(5, 50, (2, 6), generator=torch.Generator().manual_seed(0))
    att = torch.ones_like(ids)
    labels = torch.full_like(ids, -100)
    labels[0, 2], labels[1, 4], labels[1, 1] = ids[0, 2], ids[1, 4], ids[1, 1]
    emb = enc.get_input_embeddings()(ids)
    full = enc(inputs_embeds=emb, attention_mask=att).logits
    logits, loss, hidden = masked_lm_forward(enc, emb, att, None, labels)
    torch.testing.assert_close(logits, full[labels != -100])
    assert logits.shape == (3, full.shape[-1]) and hidden is None
    torch.testing.assert_close(loss, torch.nn.functional.cross_entropy(full[labels != -100], labels[labels != -100]))
    no_labels, none, _ = masked_lm_forward(enc, emb, att, None, None)
    assert none is None
    torch.testing.assert_close(no_labels, full)


def test_the_classifier_needs_two_labels_and_reads_the_first_token(enc_tok):
    from tempo_analysis.diffusion.model import DCWEForSequenceClassification

    enc, tok = enc_tok
    kw = dict(node_features=torch.randn(3, 8, generator=torch.Generator().manual_seed(0)),
              edge_index=[[0, 1], [1, 0]], dynamic_token_ids=content_vocabulary(TEXTS, tok), slices=[0, 1],
              social_dim=6, gat_heads=2)
    for n in (0, 1):
        with pytest.raises(ValueError, match="num_labels >= 2"):
            DCWEForSequenceClassification.from_encoder(tiny_encoder(seed=0)[0], num_labels=n, **kw)
    m = DCWEForSequenceClassification.from_encoder(tiny_encoder(seed=0)[0], num_labels=3, **kw).eval()
    b = tok(TEXTS[:2], padding=True, return_tensors="pt")
    ids = {"unit_ids": torch.tensor([0, 2]), "slice_ids": torch.tensor([1, 0])}
    out = m(**b, **ids, output_hidden_states=True)
    assert out.logits.shape == (2, 3)
    torch.testing.assert_close(out.logits, m.classifier(out.hidden_states[-1][:, 0]))
    assert m(**b, **ids).hidden_states is None


def test_the_dynamic_vocabulary_size_defaults_to_the_pipelines():
    import inspect

    from tempo_analysis.diffusion.config import DiffusionTrainConfig

    default = inspect.signature(content_vocabulary).parameters["top_k"].default
    assert default == DiffusionTrainConfig().top_k == 10000
