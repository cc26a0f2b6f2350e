"""tempo_analysis: temporal NLP — models that know when a text was written, and how language changes over time.

Four methods, one wing each, on one data model (:mod:`tempo_analysis.data`, with the data-spec
resolver :mod:`tempo_analysis.resolve`), one encoder loader (:mod:`tempo_analysis.encoders`)
and one training loop (:mod:`tempo_analysis.training`). Each method has one facade::

    from tempo_analysis import (TempoFormerClassifier, SemanticChangeRanker,
                                DiffusionMapper, FutureTextModel)

``fit`` returns ``self``, learned attributes end in ``_``, ``save``/``load`` round-trip, and
``visualize_*`` return plotly figures. The facades are imported on first use (PEP 562), so
``import tempo_analysis`` (and ``tempo-analysis --help``) does not load torch.
"""
from __future__ import annotations

import importlib

__version__ = "0.1.0"

_FACADES = {
    "TempoFormerClassifier": "tempo_analysis.stream.estimator",
    "SemanticChangeRanker": "tempo_analysis.semantic_change.estimator",
    "DiffusionMapper": "tempo_analysis.diffusion.estimator",
    "FutureTextModel": "tempo_analysis.future_text.estimator",
}

__all__ = list(_FACADES)


def __getattr__(name: str):
    if name in _FACADES:
        value = getattr(importlib.import_module(_FACADES[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
