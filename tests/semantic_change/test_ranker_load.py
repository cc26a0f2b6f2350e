"""SemanticChangeRanker.load checks the saved folder before reading it (the round trip itself:
test_figures_widgets.py::test_ranker_save_load_roundtrip)."""

from __future__ import annotations

import socket

import pytest

from tempo_analysis.data.errors import DataError
from tempo_analysis.semantic_change import SemanticChangeRanker

FILES = ["config.json", "meta.json", "model/config.json", "model/model.safetensors", "vectors.npz", "usages.csv", "scores.csv"]


def test_ranker_load_names_the_folder_and_the_missing_file(tmp_path, monkeypatch):
    """An empty folder gave a raw FileNotFoundError on meta.json; a folder without model/ was handed to
    transformers, which took the path for a hub id. Now: one error naming the folder, the file and the fix."""
    def no_network(address, *a, **k):
        raise AssertionError(f"a network call to {address} while loading a saved ranker")

    monkeypatch.setattr(socket, "create_connection", no_network)
    folder = tmp_path / "ranker"
    folder.mkdir()
    fix = r"\. Fix: pass a folder written by SemanticChangeRanker\.save"
    for i, name in enumerate(FILES):
        with pytest.raises(DataError, match=rf"^SemanticChangeRanker folder '.*ranker' has no {name}.*{fix}") as e:
            SemanticChangeRanker.load(folder)
        assert isinstance(e.value, FileNotFoundError)
        (folder / name).parent.mkdir(exist_ok=True)
        (folder / name).write_text({"meta.json": "{not json", "config.json": "{}"}.get(name, ""))
    with pytest.raises(DataError, match=r"folder '.*ranker': meta.json is not valid JSON .*Fix: pass a folder"):
        SemanticChangeRanker.load(folder)
    with pytest.raises(DataError, match=rf"^SemanticChangeRanker folder '.*nowhere' does not exist{fix}"):
        SemanticChangeRanker.load(tmp_path / "nowhere")
