"""A behavioural contract for estimators, in the spirit of scikit-learn's ``check_estimator``.

:func:`check_estimator` runs the same checks on any :class:`~tempo_analysis.base.Estimator`, given a
way to build it with a tiny configuration, the data to fit it on and a function reading what it
predicts. The four facades pass it (``tests/contract/``); a new method should too::

    from tempo_analysis.testing import check_estimator
    check_estimator(lambda **kw: MyFacade(TINY, **kw), data, outputs=lambda est: est.predict(data),
                    bad_override={"epochs": -1})
"""
from __future__ import annotations

import inspect
import pickle
import tempfile
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

from tempo_analysis.base import CONFIG_FILE, Estimator, NotFittedError
from tempo_analysis.data.errors import DataError


def assert_same_outputs(a: Any, b: Any, *, atol: float = 1e-5, where: str = "outputs") -> None:
    """``a`` and ``b`` hold the same values: arrays and frames to ``atol``, containers item by item."""
    if isinstance(a, pd.DataFrame):
        pd.testing.assert_frame_equal(a.reset_index(drop=True), b.reset_index(drop=True), atol=atol,
                                      check_dtype=False, obj=where)
    elif isinstance(a, pd.Series):
        pd.testing.assert_series_equal(a, b, atol=atol, check_dtype=False, obj=where)
    elif isinstance(a, dict):
        assert set(a) == set(b), f"{where}: keys {sorted(map(str, a))} != {sorted(map(str, b))}"
        for k in a:
            assert_same_outputs(a[k], b[k], atol=atol, where=f"{where}[{k!r}]")
    elif isinstance(a, (list, tuple)) and not (a and isinstance(a[0], (int, float, np.number))):
        assert len(a) == len(b), f"{where}: {len(a)} items != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same_outputs(x, y, atol=atol, where=f"{where}[{i}]")
    elif isinstance(a, (np.ndarray, list, tuple, float, np.floating)) or hasattr(a, "numpy"):
        x = np.asarray(a.numpy() if hasattr(a, "numpy") else a, dtype=float)
        y = np.asarray(b.numpy() if hasattr(b, "numpy") else b, dtype=float)
        np.testing.assert_allclose(x, y, atol=atol, err_msg=where)
    else:
        assert a == b, f"{where}: {a!r} != {b!r}"


def _snapshot(data):
    """What the input holds: its own content fingerprint when it has one (the data types do), else its
    pickled bytes (compared in memory only, never written). A fingerprint ignores caches a library
    fills on first use (networkx's node and edge views), which are no change to the data."""
    if callable(getattr(data, "fingerprint", None)):
        frame = getattr(data, "df", None)
        whole = pickle.dumps(frame) if isinstance(frame, pd.DataFrame) else None   # every column, not only those read
        return data.fingerprint(), whole
    if isinstance(data, (tuple, list)) and any(callable(getattr(d, "fingerprint", None)) for d in data):
        return [_snapshot(d) for d in data]
    return pickle.dumps(data)


def check_estimator(make: Callable[..., Estimator], data, *, outputs: Callable[[Estimator], Any],
                    fit: Callable[[Estimator, Any], Any] | None = None, figures: Callable[[Estimator], list] = None,
                    bad_override: dict | None = None, atol: float = 1e-5) -> Estimator:
    """Run the estimator contract; returns the fitted estimator.

    - ``make(**overrides)`` builds an unfitted estimator with a tiny configuration;
    - ``fit(est, data)`` fits it (default ``est.fit(data)``), ``outputs(est)`` reads what it predicts;
    - ``figures(est)`` returns the figures of its ``visualize_*`` methods;
    - ``bad_override`` is a setting ``fit`` must refuse, naming it, before any work.
    """
    import plotly.graph_objects as go

    fit = fit or (lambda est, d: est.fit(d))
    before = _snapshot(data)
    est = make()
    cls = type(est)
    name = cls.__name__
    assert isinstance(est, Estimator), f"{name} does not subclass tempo_analysis.base.Estimator"

    # the shared signatures
    assert list(inspect.signature(cls.__init__).parameters) == ["self", "config", "overrides"], \
        f"{name}.__init__ must be (config=None, **overrides)"
    assert list(inspect.signature(cls.save).parameters) == ["self", "folder", "overwrite"], \
        f"{name}.save must be save(folder, *, overwrite=False)"
    assert list(inspect.signature(cls.load).parameters) == ["folder", "overrides"], \
        f"{name}.load must be load(folder, **overrides)"

    # __init__ stores, and checks nothing; repr shows the settings before fit
    stored = make(unknown_setting_xyz=1)
    assert stored.overrides.get("unknown_setting_xyz") == 1, f"{name}.__init__ must store its overrides"
    text = repr(stored)
    assert text.startswith(f"{name}(") and "unknown_setting_xyz=1" in text, f"repr shows the settings: {text}"

    # not fitted: a clear error naming what to call
    for call in (lambda: outputs(est), lambda: est.save(tempfile.mkdtemp())):
        try:
            call()
        except NotFittedError as e:
            assert "fit" in str(e), f"{name}: the not-fitted error must say to call fit: {e}"
        else:
            raise AssertionError(f"{name}: used before fit, it must raise NotFittedError")

    # settings are checked by fit, before any work, naming the setting
    for bad in ({"unknown_setting_xyz": 1}, bad_override or {}):
        if not bad:
            continue
        try:
            fit(make(**bad), data)
        except (DataError, ValueError, TypeError) as e:
            key = next(iter(bad))
            assert key in str(e), f"{name}: the error for {bad} must name {key!r}: {e}"
        else:
            raise AssertionError(f"{name}.fit accepted the bad setting {bad}")
        assert _snapshot(data) == before, f"{name}.fit changed its input data (with the bad setting {bad})"

    # fit returns self, does not change its input, and what it learns ends in "_"
    before_attrs = set(vars(est))
    returned = fit(est, data)
    assert returned is est, f"{name}.fit must return self"
    assert _snapshot(data) == before, f"{name}.fit changed its input data"
    new = [a for a in set(vars(est)) - before_attrs if not a.startswith("_")]
    bad_names = [a for a in new if not a.endswith("_")]
    assert not bad_names, f"{name}.fit set public attributes without a trailing underscore: {bad_names}"
    assert est._is_fitted(), f"{name}.fit did not set {cls.fitted_attribute}"
    first = outputs(est)

    # save / load round trip gives the same predictions
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "saved"
        assert est.save(folder) == folder
        assert (folder / CONFIG_FILE).is_file(), f"{name}.save must write {CONFIG_FILE}"
        loaded = cls.load(folder)
        assert type(loaded) is cls and loaded._is_fitted()
        assert_same_outputs(first, outputs(loaded), atol=atol, where=f"{name} outputs after load")
        # a saved folder is ours: saving again over it works, and a user's folder is refused
        est.save(folder)
        user = Path(tmp) / "user"
        user.mkdir()
        (user / "notes.txt").write_text("mine")
        try:
            est.save(user)
        except DataError:
            pass
        else:
            raise AssertionError(f"{name}.save overwrote a folder it did not write")
        assert (user / "notes.txt").read_text() == "mine"

    # predicting twice gives the same answer, and figures are plotly figures
    assert_same_outputs(first, outputs(est), atol=atol, where=f"{name} outputs, asked twice")
    for fig in (figures(est) if figures else []):
        assert isinstance(fig, go.Figure), f"{name}: a visualize_* method returned {type(fig).__name__}"
    return est
