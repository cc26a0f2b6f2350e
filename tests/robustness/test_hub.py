"""The one model-name check (tempo_analysis.hub): offline hub names fail at once, path-like names
that do not exist are missing paths, and the encoders use the same check."""

from __future__ import annotations

import json
import socket
import subprocess
import sys

import pytest

from tempo_analysis import encoders, hub
from tempo_analysis.hub import ModelNotAvailable, from_pretrained_kwargs, is_path_like, resolve_model_name


@pytest.fixture
def no_network(monkeypatch):
    """The hub is unreachable and any connection attempt fails the test (so: no retries at all)."""
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setattr(hub, "_connect", lambda host, port, timeout: False)
    monkeypatch.setattr(hub, "hub_cached", lambda name, filename="config.json": False)


@pytest.fixture
def no_socket(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("no connection may be attempted")
    monkeypatch.setattr(socket, "create_connection", boom)


def test_offline_by_env_fails_at_once_without_touching_the_network(monkeypatch, no_socket):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(hub, "hub_cached", lambda name, filename="config.json": False)
    with pytest.raises(ModelNotAvailable, match=r"Causal LM 'gpt2' is not a local folder.*offline.*pass that local "
                                                r"folder path instead"):
        resolve_model_name("gpt2", what="Causal LM")   # at once: no_socket fails any connection attempt


def test_unreachable_hub_fails_at_once_with_the_download_command(no_network):
    with pytest.raises(ModelNotAvailable, match=r"huggingface-cli download gpt2 --local-dir \./gpt2") as e:
        resolve_model_name("gpt2", what="--lm model", hint="use lm=None for the small GPT-2 trained from scratch")
    assert str(e.value).endswith("Or use lm=None for the small GPT-2 trained from scratch.")
    assert "no local folder" not in str(e.value)


def test_an_org_slash_name_offline_also_reports_the_missing_local_folder(no_network, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ModelNotAvailable, match=r"'mymodels/bert' is not a local folder.*no local folder "
                                                r"'.*mymodels/bert' either; if you meant a path, check it"):
        resolve_model_name("mymodels/bert")


@pytest.mark.parametrize("name", ["./mymodel", "../models/x", "~/no-such-model-here", "/abs/model", "a/b/c",
                                  "models/", "my model", "C:\\models\\bert", "mymodels/bert"])
def test_path_like_names_that_do_not_exist_are_missing_paths(name, tmp_path, monkeypatch, no_socket):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mymodels").mkdir()                # so mymodels/bert is a path, not an org/name
    assert is_path_like(name)
    with pytest.raises(ModelNotAvailable, match=r"path '.*' does not exist \(looked for '.*'\): check the path"):
        resolve_model_name(name)


@pytest.mark.parametrize("name", ["gpt2", "bert-base-uncased", "sentence-transformers/all-MiniLM-L6-v2", "a.b_c-d/e"])
def test_hub_ids_are_not_path_like(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert not is_path_like(name)


def test_local_folders(tmp_path, no_socket):
    (tmp_path / "m").mkdir()
    with pytest.raises(ModelNotAvailable, match=r"folder '.*m' has no config\.json: pass a folder saved with save_pretrained"):
        resolve_model_name(tmp_path / "m")
    (tmp_path / "m" / "config.json").write_text(json.dumps({"model_type": "gpt2"}))
    assert resolve_model_name(tmp_path / "m") == str((tmp_path / "m").resolve())
    assert from_pretrained_kwargs(str(tmp_path / "m")) == {"local_files_only": True}
    (tmp_path / "w.bin").write_bytes(b"x")
    with pytest.raises(ModelNotAvailable, match=r"'.*w\.bin' is a file; pass the folder"):
        resolve_model_name(tmp_path / "w.bin")
    with pytest.raises(ValueError, match="non-empty"):
        resolve_model_name("  ")


def test_a_cached_hub_name_loads_offline_with_local_files_only(monkeypatch, no_network):
    monkeypatch.setattr(hub, "hub_cached", lambda name, filename="config.json": True)
    assert resolve_model_name("gpt2") == "gpt2"
    assert from_pretrained_kwargs("gpt2") == {"local_files_only": True}     # no retry loop in transformers


def test_a_reachable_hub_is_asked_once_at_its_endpoint(monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", "http://mirror.example:8080")
    monkeypatch.setattr(hub, "hub_cached", lambda name, filename="config.json": False)
    calls = []
    monkeypatch.setattr(hub, "_connect", lambda host, port, timeout: calls.append((host, port)) or True)
    assert resolve_model_name("org/model") == "org/model"
    assert calls == [("mirror.example", 8080)]
    assert from_pretrained_kwargs("org/model") == {"local_files_only": False}


def test_encoders_use_the_same_check(no_network, tmp_path, monkeypatch):
    assert encoders.EncoderNotAvailable is ModelNotAvailable
    monkeypatch.chdir(tmp_path)
    with pytest.raises(encoders.EncoderNotAvailable, match=r"Encoder 'bert-base-uncased'.*offline.*Or use 'default'"):
        encoders.resolve_encoder("bert-base-uncased")
    (tmp_path / "mymodels").mkdir()
    with pytest.raises(encoders.EncoderNotAvailable, match=r"Encoder path 'mymodels/bert' does not exist"):
        encoders.load_encoder("mymodels/bert")


def test_the_check_imports_nothing_heavy():
    code = "import sys, tempo_analysis.hub; print(sorted(m for m in ('torch', 'transformers', 'pandas') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"


def test_the_hub_probe_gives_up_after_its_timeout_even_when_name_lookup_hangs(monkeypatch):
    """create_connection's timeout does not bound the DNS lookup; the probe itself must stop waiting."""
    import contextlib
    import threading

    release, finished = threading.Event(), threading.Event()

    def stalled_lookup(address, timeout=None):
        release.wait(30)                     # a resolver that does not answer
        finished.set()
        return contextlib.nullcontext()

    monkeypatch.setattr(socket, "create_connection", stalled_lookup)
    probe = hub._connect.__wrapped__         # without the per-process memo
    try:
        assert probe("hub.example", 443, 0.05) is False
        assert not finished.is_set()         # it answered while the lookup was still stalled
    finally:
        release.set()

    def refused(address, timeout=None):
        raise ConnectionRefusedError(address)

    monkeypatch.setattr(socket, "create_connection", refused)
    assert probe("hub.example", 443, 5.0) is False

    def broken(address, timeout=None):
        raise RuntimeError("not a network answer")

    monkeypatch.setattr(socket, "create_connection", broken)
    with pytest.raises(RuntimeError, match="not a network answer"):
        probe("hub.example", 443, 5.0)


def test_the_hub_probe_answers_yes_for_a_listening_port():
    server = socket.create_server(("127.0.0.1", 0))
    try:
        port = server.getsockname()[1]
        assert hub._connect.__wrapped__("127.0.0.1", port, 5.0) is True
    finally:
        server.close()


def test_an_endpoint_without_a_host_is_unreachable_without_a_probe(monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", "file:///srv/models")
    monkeypatch.setattr(hub, "_connect", lambda host, port, timeout: pytest.fail("probed an endpoint with no host"))
    assert hub.hub_reachable() is False


@pytest.mark.parametrize("endpoint, address", [(None, ("huggingface.co", 443)),
                                               ("https://mirror.example", ("mirror.example", 443)),
                                               ("http://mirror.example", ("mirror.example", 80))])
def test_the_probe_uses_the_schemes_port_when_the_endpoint_names_none(monkeypatch, endpoint, address):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    if endpoint is None:
        monkeypatch.delenv("HF_ENDPOINT", raising=False)
    else:
        monkeypatch.setenv("HF_ENDPOINT", endpoint)
    calls = []
    monkeypatch.setattr(hub, "_connect", lambda host, port, timeout: calls.append((host, port)) or True)
    assert hub.hub_reachable() is True and calls == [address]


def test_a_name_the_cache_cannot_hold_is_not_cached():
    assert hub.hub_cached("not a valid // repo id") is False


def test_saved_folders_need_one_of_each_entrys_alternatives(tmp_path):
    from tempo_analysis.data.errors import DataPathError

    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "pytorch_model.bin").write_text("")          # the second of two alternatives is enough
    entries = ["config.json", ("model.safetensors", "pytorch_model.bin")]
    assert hub.require_saved_files(tmp_path, entries, what="Model", fix="save it") == tmp_path
    for options, nor in ((("model.safetensors", "weights.bin"), "weights.bin"),
                         (("model.safetensors", "weights.bin", "model.bin"), "weights.bin, model.bin")):
        with pytest.raises(DataPathError, match=rf"has no model.safetensors \(nor {nor}\)\. Fix: save it"):
            hub.require_saved_files(tmp_path, [options], what="Model", fix="save it")
    with pytest.raises(DataPathError, match=r"has no vocab.txt\. Fix: save it"):   # one option: no "nor"
        hub.require_saved_files(tmp_path, ["vocab.txt"], what="Model", fix="save it")
