"""One estimator shape: each wing's facade lives in ``<wing>/estimator.py``, subclasses ``Estimator``,
and reads its defaults from the wing's one settings module ``<wing>/config.py``."""
from __future__ import annotations

import importlib
import inspect

import pytest

from tempo_analysis.base import Estimator

FACADES = {"stream": "TempoFormerClassifier", "semantic_change": "SemanticChangeRanker",
           "diffusion": "DiffusionMapper", "future_text": "FutureTextModel"}


@pytest.mark.parametrize("wing, name", FACADES.items())
def test_facade_lives_in_estimator_py_and_subclasses_estimator(wing, name):
    import tempo_analysis

    cls = getattr(importlib.import_module(f"tempo_analysis.{wing}.estimator"), name)
    assert issubclass(cls, Estimator)
    assert getattr(tempo_analysis, name) is cls
    assert "__init__" not in vars(cls), f"{name} keeps the base's __init__(config=None, **overrides)"
    assert "save" not in vars(cls) and "load" not in vars(cls), f"{name} keeps the base's save/load"


@pytest.mark.parametrize("wing, name", FACADES.items())
def test_defaults_live_in_the_wing_config_module(wing, name):
    cls = getattr(importlib.import_module(f"tempo_analysis.{wing}.estimator"), name)
    config = importlib.import_module(f"tempo_analysis.{wing}.config")
    assert cls.presets is config.PRESETS
    assert {"cli", "notebook"} <= set(config.PRESETS)
    assert cls.config_class is type(config.PRESETS["cli"])
    assert config.PRESETS["cli"] == cls.config_class(), "the cli preset is the documented default"
    assert cls().get_config() == cls.config_class(), f"{name}() runs the documented defaults"
    assert config.preset("notebook") == config.PRESETS["notebook"]


def test_one_signature_for_save_and_load():
    sigs = set()
    for wing, name in FACADES.items():
        cls = getattr(importlib.import_module(f"tempo_analysis.{wing}.estimator"), name)
        sigs.add((str(inspect.signature(cls.save)), str(inspect.signature(cls.load))))
    assert len(sigs) == 1, sigs
