"""A damaged model is one clear error naming the folder and the safe fix: a truncated safetensors file
or a pickle renamed pytorch_model.bin never reaches the user as SafetensorError or UnpicklingError, the
pickle is never run, and unsafe loading (weights_only=False) is never suggested."""
from __future__ import annotations

import dataclasses
import pickle

import pytest
import torch
from safetensors.torch import load_file, save_file

from tempo_analysis.base import Estimator
from tempo_analysis.data.errors import DataError
from tempo_analysis.encoders import tiny_encoder
from tempo_analysis.hub import ModelNotAvailable, explain_load_errors


class Boom:
    def __reduce__(self):
        return (exec, ("raise SystemExit('the pickle ran')",))


@pytest.fixture(scope="module")
def saved_bert(tmp_path_factory):
    model, _ = tiny_encoder(hidden=16, layers=1, heads=2)
    d = tmp_path_factory.mktemp("bert")
    model.save_pretrained(d)
    return d, type(model)


def load(folder, cls):
    with explain_load_errors(folder, what="Encoder"):
        return cls.from_pretrained(folder, local_files_only=True)


def check(message, folder):
    assert str(folder) in message and "re-save the model as safetensors" in message
    assert "weights_only" not in message


def test_a_truncated_safetensors_file(saved_bert, tmp_path):
    src, cls = saved_bert
    d = tmp_path / "m"
    d.mkdir()
    for f in src.iterdir():
        (d / f.name).write_bytes(f.read_bytes())
    w = d / "model.safetensors"
    w.write_bytes(w.read_bytes()[: w.stat().st_size // 2])
    with pytest.raises(ModelNotAvailable, match="truncated or corrupt safetensors") as e:
        load(d, cls)
    check(str(e.value), d)


def test_a_pickle_renamed_pytorch_model_bin_is_never_run(saved_bert, tmp_path):
    src, cls = saved_bert
    d = tmp_path / "m"
    d.mkdir()
    (d / "config.json").write_bytes((src / "config.json").read_bytes())
    (d / "pytorch_model.bin").write_bytes(pickle.dumps(Boom()))
    with pytest.raises(ModelNotAvailable, match="a pickle file, which is never loaded") as e:
        load(d, cls)
    check(str(e.value), d)


@dataclasses.dataclass(frozen=True)
class WeightsConfig:
    size: int = 3


class Weights(Estimator):
    config_class = WeightsConfig
    kind = "weights"

    def fit(self, data):
        self._start_fit()
        self.model_ = torch.ones(3)
        return self

    def _save_fitted(self, folder):
        save_file({"w": self.model_}, str(folder / "w.safetensors"))

    def _load_fitted(self, folder):
        self.model_ = load_file(str(folder / "w.safetensors"))["w"]


def test_a_facade_folder_with_a_damaged_weight_file(tmp_path):
    Weights().fit(None).save(tmp_path / "run")
    w = tmp_path / "run" / "w.safetensors"
    w.write_bytes(w.read_bytes()[:20])
    with pytest.raises(DataError, match="Weights folder .*truncated or corrupt safetensors") as e:
        Weights.load(tmp_path / "run")
    check(str(e.value), tmp_path / "run")
