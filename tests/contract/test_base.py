"""The Estimator base and the contract check itself, on a small numpy estimator (no model needed).

`check_estimator` must pass a well-behaved estimator and catch each way of breaking the contract."""
from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from tempo_analysis.base import Estimator, NotFittedError
from tempo_analysis.data.errors import DataError
from tempo_analysis.testing import check_estimator


@dataclasses.dataclass(frozen=True)
class MeanConfig:
    scale: float = 1.0
    device: str = "cpu"

    def __post_init__(self):
        if not (isinstance(self.scale, (int, float)) and self.scale > 0):
            raise DataError(f"scale must be a number above 0, not {self.scale!r}. Fix: scale=1.0")


class MeanModel(Estimator):
    """Predicts the scaled column means of the data it saw."""
    config_class = MeanConfig
    presets = {"cli": MeanConfig(), "notebook": MeanConfig(scale=2.0)}
    kind = "mean-model"

    def fit(self, data):
        cfg = self._start_fit()
        self.model_ = np.asarray(data, dtype=float).mean(axis=0) * cfg.scale
        return self

    def predict(self, data):
        self._check_fitted()
        return np.broadcast_to(self.model_, np.shape(data)).copy()

    def _save_fitted(self, folder):
        (folder / "means.json").write_text(json.dumps(self.model_.tolist()))

    def _load_fitted(self, folder):
        self.model_ = np.array(json.loads((folder / "means.json").read_text()))

    @classmethod
    def _saved_files(cls):
        return ("means.json",)


DATA = [[1.0, 2.0], [3.0, 4.0]]


def run(cls, **kw):
    data = [list(row) for row in DATA]
    return check_estimator(lambda **o: cls(**o), data, outputs=lambda est: est.predict(DATA),
                           bad_override={"scale": -1.0}, **kw)


def test_a_well_behaved_estimator_passes():
    est = run(MeanModel)
    np.testing.assert_allclose(est.predict(DATA)[0], [2.0, 3.0])


def test_presets_config_objects_dicts_and_overrides():
    assert MeanModel().get_config() == MeanConfig()
    assert MeanModel("notebook").get_config().scale == 2.0
    assert MeanModel(" Notebook ").get_config().scale == 2.0
    assert MeanModel({"scale": 3.0}).get_config().scale == 3.0
    assert MeanModel(MeanConfig(scale=4.0), scale=5.0).get_config().scale == 5.0
    assert repr(MeanModel("notebook", scale=5.0)) == "MeanModel('notebook', scale=5.0)"
    assert repr(MeanModel(scale=object(), device=("a", "b"))) == "MeanModel(scale=<object>, device=('a', 'b'))"
    with pytest.raises(DataError, match="unknown preset 'papr'.*'cli', 'notebook'"):
        MeanModel("papr").fit(DATA)
    with pytest.raises(DataError, match="unknown setting 'scal'.*scale"):
        MeanModel({"scal": 1.0}).get_config()
    with pytest.raises(DataError, match="config must be a MeanConfig"):
        MeanModel(3).get_config()


def test_not_fitted_names_the_fix():
    with pytest.raises(NotFittedError, match=r"not fitted yet.*fit\(data\).*MeanModel.load"):
        MeanModel().predict(DATA)


def test_load_overrides_and_damaged_config(tmp_path):
    MeanModel().fit(DATA).save(tmp_path / "m")
    assert MeanModel.load(tmp_path / "m", device="meta").config_.device == "meta"
    (tmp_path / "m" / "config.json").write_text("[1, 2")
    with pytest.raises(DataError, match="config.json is not valid settings"):
        MeanModel.load(tmp_path / "m")
    with pytest.raises(DataError, match="has no config.json"):
        MeanModel.load(tmp_path)


# --- each break of the contract is caught ------------------------------------------------------------
class ReturnsNone(MeanModel):
    def fit(self, data):
        super().fit(data)


class MutatesInput(MeanModel):
    def fit(self, data):
        data[0][0] = 99.0
        return super().fit(data)


class NoFittedCheck(MeanModel):
    def predict(self, data):
        return np.zeros(np.shape(data))

    def _check_fitted(self):
        pass


class PublicLearnedName(MeanModel):
    def fit(self, data):
        super().fit(data)
        self.means = self.model_
        return self


class ForgetsOnLoad(MeanModel):
    def _load_fitted(self, folder):
        self.model_ = np.zeros(2)


class ValidatesLate(MeanModel):
    def fit(self, data):
        self.model_ = np.asarray(data, dtype=float).mean(axis=0)
        return self


class ChecksInInit(MeanModel):
    def __init__(self, config=None, **overrides):
        super().__init__(config, **overrides)
        self.get_config()


@pytest.mark.parametrize("cls, message", [
    (ReturnsNone, "must return self"),
    (MutatesInput, "changed its input"),
    (NoFittedCheck, "NotFittedError"),
    (PublicLearnedName, "without a trailing underscore"),
    (ForgetsOnLoad, "after load"),
    (ValidatesLate, "accepted the bad setting"),
    (ChecksInInit, "unknown setting"),
])
def test_each_break_is_caught(cls, message):
    with pytest.raises((AssertionError, DataError), match=message):
        run(cls)
