"""One estimator shape for the four facades, in the spirit of scikit-learn.

Every facade (:class:`~tempo_analysis.TempoFormerClassifier`, :class:`~tempo_analysis.SemanticChangeRanker`,
:class:`~tempo_analysis.DiffusionMapper`, :class:`~tempo_analysis.FutureTextModel`) subclasses
:class:`Estimator` and so behaves the same way::

    est = Facade()                        # the documented defaults (the wing's "cli" preset)
    est = Facade("notebook")              # a named preset from the wing's config module
    est = Facade(config, epochs=2)        # a settings object, with fields overridden by name
    est.fit(data)                         # validates the settings first, then trains; returns est
    est.save("run/")                      # safetensors + JSON, under the output policy
    est2 = Facade.load("run/")            # fitted as it was; load("run/", device="cpu") overrides
    est.visualize_...()                   # plotly figures

- ``__init__`` only stores what it is given (``config`` and ``overrides``); nothing is checked or
  loaded until :meth:`fit`, which resolves them with :meth:`get_config` into ``config_``.
- What ``fit`` learns ends in ``_``; before ``fit`` (or ``load``) a method that needs it raises
  :class:`NotFittedError` saying what to call.
- ``save(folder, *, overwrite=False)`` and ``load(folder, **overrides)`` have one signature in
  every facade. The folder holds ``config.json`` (the resolved settings) and the output manifest.

A subclass sets ``config_class`` (a dataclass), ``presets`` (name -> settings), ``kind`` (the
manifest kind), ``fitted_attribute`` (the attribute ``fit`` always sets), and implements ``fit``,
``_save_fitted(folder)`` and ``_load_fitted(folder)``.
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, ClassVar, Mapping

from tempo_analysis.data.errors import DataError

CONFIG_FILE = "config.json"


class NotFittedError(DataError, AttributeError):
    """A fitted attribute was asked for before ``fit`` or ``load``."""


def config_to_dict(config) -> dict:
    """The JSON-ready fields of a settings dataclass (its own ``to_dict`` when it has one)."""
    if hasattr(config, "to_dict"):
        return config.to_dict()
    return {f.name: getattr(config, f.name) for f in dataclasses.fields(config)}


def _short(value) -> str:
    """A setting as repr shows it: plain values in full, anything else (a model object) by its type."""
    plain = (str, int, float, bool, type(None))
    if isinstance(value, plain) or (isinstance(value, (list, tuple)) and all(isinstance(v, plain) for v in value)):
        text = repr(value)
        return text if len(text) <= 80 else text[:77] + "..."
    return f"<{type(value).__name__}>"


class Estimator:
    """Base of the four facades: ``Facade(config=None, **overrides)``; ``fit(data)`` returns ``self``."""

    config_class: ClassVar[type]
    presets: ClassVar[Mapping[str, Any]] = {}
    default_preset: ClassVar[str] = "cli"
    kind: ClassVar[str] = "estimator"
    fitted_attribute: ClassVar[str] = "model_"

    def __init__(self, config=None, **overrides):
        self.config = config
        self.overrides = overrides

    # ----- settings -------------------------------------------------------------------------------
    @classmethod
    def _fields(cls) -> list[str]:
        return [f.name for f in dataclasses.fields(cls.config_class)]

    @classmethod
    def _base_config(cls, config):
        name = cls.__name__
        if config is None:
            config = cls.default_preset if cls.presets else cls.config_class()
        if isinstance(config, str):
            key = config.strip().lower()
            if key not in cls.presets:
                raise DataError(f"{name}: unknown preset {config!r}. Fix: pass one of "
                                f"{', '.join(map(repr, cls.presets))}, or a {cls.config_class.__name__}.")
            return cls.presets[key]
        if isinstance(config, Mapping):
            return cls._config_from_dict(dict(config), what=f"{name}(config=...)")
        if not isinstance(config, cls.config_class):
            raise DataError(f"{name}: config must be a {cls.config_class.__name__}, a preset name or a dict, "
                            f"not {type(config).__name__}. Fix: {name}({cls.config_class.__name__}(...)) "
                            f"or {name}('notebook').")
        return config

    @classmethod
    def _config_from_dict(cls, values: dict, *, what: str):
        unknown = sorted(set(values) - set(cls._fields()))
        if unknown:
            raise DataError(f"{what}: unknown setting {unknown[0]!r}. Fix: use one of "
                            f"{', '.join(cls._fields())}.")
        if hasattr(cls.config_class, "from_dict"):
            return cls.config_class.from_dict(values)
        return cls.config_class(**values)

    def get_config(self):
        """The settings ``fit`` runs with: the preset or ``config``, with ``overrides`` applied and checked."""
        base = self._base_config(self.config)
        if not self.overrides:
            return base
        unknown = sorted(set(self.overrides) - set(self._fields()))
        if unknown:
            raise DataError(f"{type(self).__name__}: unknown setting {unknown[0]!r}. Fix: use one of "
                            f"{', '.join(self._fields())}.")
        return dataclasses.replace(base, **self.overrides)

    def _start_fit(self):
        """Resolve and check the settings (``config_``) before any data or model is touched."""
        self.config_ = self.get_config()
        return self.config_

    def __repr__(self) -> str:
        parts = [] if self.config is None else [repr(self.config) if isinstance(self.config, str)
                                                else f"{type(self.config).__name__}(...)"]
        parts += [f"{k}={_short(v)}" for k, v in self.overrides.items()]
        return f"{type(self).__name__}({', '.join(parts)})"

    # ----- fitted state ---------------------------------------------------------------------------
    def _is_fitted(self) -> bool:
        return self.fitted_attribute in vars(self)

    def _check_fitted(self) -> None:
        if not self._is_fitted():
            name = type(self).__name__
            raise NotFittedError(f"this {name} is not fitted yet. Fix: call fit(data) first, or read a saved "
                                 f"one with {name}.load(folder).")

    def fit(self, data, *args, **kwargs) -> Estimator:   # pragma: no cover - every facade has its own
        raise NotImplementedError

    # ----- persistence ----------------------------------------------------------------------------
    def save(self, folder, *, overwrite: bool = False) -> Path:
        """Write the fitted estimator to ``folder``: ``config.json`` plus the facade's own files.

        The output policy of :mod:`tempo_analysis.outputs` applies: the folder is written whole into
        a temporary sibling and renamed into place; a non-empty folder that tempo_analysis did not
        write is refused unless ``overwrite=True``.
        """
        from tempo_analysis.outputs import atomic_output_dir

        self._check_fitted()
        with atomic_output_dir(folder, overwrite=overwrite, kind=self.kind) as tmp:
            (tmp / CONFIG_FILE).write_text(json.dumps(config_to_dict(self.config_), indent=2, default=str),
                                           encoding="utf-8")
            self._save_fitted(Path(tmp))
        return Path(folder)

    @classmethod
    def load(cls, folder, **overrides) -> Estimator:
        """Read an estimator written by :meth:`save`, fitted as it was; ``overrides`` replace saved
        settings that only change how it runs (``device``, ``progress``)."""
        from tempo_analysis.hub import require_saved_files

        name = cls.__name__
        fix = f"pass a folder written by {name}.save (est.save(DIR))"
        d = require_saved_files(folder, (CONFIG_FILE, *cls._saved_files()), what=f"{name} folder", fix=fix)
        try:
            values = json.loads((d / CONFIG_FILE).read_text(encoding="utf-8"))
            if not isinstance(values, dict):
                raise ValueError("not a JSON object")
        except ValueError as e:
            raise DataError(f"{name} folder {str(d)!r}: {CONFIG_FILE} is not valid settings ({e}). "
                            f"Fix: {fix}.") from None
        config = cls._config_from_dict(values, what=f"{name} folder {str(d)!r}: {CONFIG_FILE}")
        est = cls(config, **overrides)
        est.config_ = est.get_config()
        try:
            est._load_fitted(d)
        except Exception as e:
            from tempo_analysis.hub import damaged_message, damaged_weights

            if damaged_weights(e):
                raise DataError(damaged_message(f"{name}", d, e)) from None
            raise
        return est

    @classmethod
    def _saved_files(cls) -> tuple:
        """Files (or tuples of alternatives) a saved folder must hold besides ``config.json``."""
        return ()

    def _save_fitted(self, folder: Path) -> None:   # pragma: no cover - every facade has its own
        raise NotImplementedError

    def _load_fitted(self, folder: Path) -> None:   # pragma: no cover - every facade has its own
        raise NotImplementedError
