"""Classification metrics and the timeline-level cross-validation protocol.

- `classification_scores(y_true, y_pred, label_names)`: per-class F1/precision/recall, macro-F1,
  confusion matrix (rows = truth, columns = prediction). Unlabelled rows (< 0) are skipped.
- `timeline_folds(timelines, k, dev_fraction, seed)`: k folds of WHOLE timelines (no timeline is
  ever split across train, dev and test), balanced by post count; the dev set is a share of the
  remaining timelines (paper appendix A: test 20%, then dev/train 25%/75%).
- `cross_validate(make_estimator, timelines, folds, seeds)`: fit on train (+dev), score on test,
  for every fold and seed; `aggregate` gives mean and std of per-class and macro F1.

An estimator is anything with `fit(train_timelines, dev_timelines) -> self` and
`predict(timelines) -> int codes per post (rows of timelines.df)` plus `label_names_`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from sklearn.metrics import confusion_matrix, precision_recall_fscore_support
from tqdm.auto import tqdm

from tempo_analysis.data.errors import DataError, data_error
from tempo_analysis.data.timelines import check_labels_seen


def classification_scores(y_true, y_pred, label_names) -> dict:
    """Per-class F1/precision/recall/support, macro-F1 and the confusion matrix.

    Macro-F1 averages the classes that occur in ``y_true`` or ``y_pred`` (scikit-learn's rule): a
    class that a test fold lacks and the model never predicts has no F1 to count, and counting it as
    0 would score a perfect classifier below 1. Such classes are listed under ``absent`` (their
    per-class entries read 0 with support 0, and ``aggregate`` leaves them out of that class's mean).
    """
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    if y_true.shape != y_pred.shape:
        raise ValueError(f"y_true has shape {y_true.shape} but y_pred has {y_pred.shape}; pass one prediction per post")
    keep = y_true >= 0
    if not keep.any():
        raise ValueError("no labelled rows to score (every y_true < 0); pass timelines with labels")
    y_true, y_pred = y_true[keep], y_pred[keep]
    labels = list(range(len(label_names)))
    p, r, f, s = precision_recall_fscore_support(y_true, y_pred, labels=labels, zero_division=0)
    present = np.isin(labels, np.concatenate([y_true, y_pred]))
    return {
        "f1": {n: float(v) for n, v in zip(label_names, f)},
        "precision": {n: float(v) for n, v in zip(label_names, p)},
        "recall": {n: float(v) for n, v in zip(label_names, r)},
        "support": {n: int(v) for n, v in zip(label_names, s)},
        "macro_f1": float(np.mean(f[present])),
        "absent": [n for n, here in zip(label_names, present) if not here],
        "confusion": confusion_matrix(y_true, y_pred, labels=labels).tolist(),
    }


@dataclass
class Split:
    """Timeline ids of one fold."""

    fold: int
    train: list
    dev: list
    test: list


def timeline_folds(timelines, k: int = 5, dev_fraction: float = 0.25, seed: int = 0) -> list[Split]:
    """k folds over whole timelines, balanced by post count; dev = dev_fraction of the rest."""
    ids = list(timelines.timeline_ids)
    if not isinstance(k, (int, np.integer)) or k < 2:
        raise ValueError(f"folds k={k!r} must be an integer >= 2")
    if len(ids) < k:
        raise ValueError(f"{len(ids)} timelines cannot make k={k} folds; use fewer folds or more timelines")
    if not 0 <= dev_fraction < 1:
        raise ValueError(f"dev_fraction={dev_fraction} must be in [0, 1)")
    sizes = timelines.df.groupby("timeline_id", sort=False).size()
    rng = np.random.default_rng(seed)
    order = [ids[i] for i in rng.permutation(len(ids))]
    # greedy: biggest timelines first (stable on the shuffled order), each to the lightest fold
    order = sorted(order, key=lambda t: -int(sizes[t]))
    folds, load = [[] for _ in range(k)], np.zeros(k)
    for t in order:
        j = int(np.argmin(load))
        folds[j].append(t)
        load[j] += sizes[t]
    splits = []
    for j in range(k):
        rest = [t for i, f in enumerate(folds) if i != j for t in f]
        rest = [rest[i] for i in np.random.default_rng(seed + 1 + j).permutation(len(rest))]
        n_dev = int(round(dev_fraction * len(rest)))
        if dev_fraction > 0:
            n_dev = min(max(n_dev, 1), len(rest) - 1)
        splits.append(Split(fold=j, train=sorted(rest[n_dev:], key=ids.index),
                            dev=sorted(rest[:n_dev], key=ids.index), test=sorted(folds[j], key=ids.index)))
    return splits


def _mean_std(values) -> dict:
    v = np.asarray(values, dtype=float)
    if not len(v):
        return {"mean": None, "std": None}     # e.g. a class absent from every test fold
    return {"mean": float(v.mean()), "std": float(v.std(ddof=1)) if len(v) > 1 else 0.0}


def aggregate(runs: list[dict], label_names) -> dict:
    """Mean/std over runs of per-class and macro F1; summed confusion; std over seeds of fold means."""
    if not runs:
        raise ValueError("no runs to aggregate")
    out = {
        "macro_f1": _mean_std([r["macro_f1"] for r in runs]),
        "f1": {n: _mean_std([r["f1"][n] for r in runs if n not in r.get("absent", ())]) for n in label_names},
        "confusion": np.sum([r["confusion"] for r in runs], axis=0).tolist(),
        "n_runs": len(runs),
    }
    seeds = sorted({r["seed"] for r in runs})
    per_seed = [np.mean([r["macro_f1"] for r in runs if r["seed"] == s]) for s in seeds]
    out["macro_f1_over_seeds"] = _mean_std(per_seed)
    return out


def check_classes(timelines, what: str = "the timelines") -> None:
    """Refuse to evaluate data with fewer than two classes: every model, the random baseline too, would
    score macro-F1 100 on it."""
    seen = sorted(set(timelines.df["label"].dropna())) if "label" in timelines.df else []
    if len(seen) < 2:
        raise DataError(f"{what} has {len(seen)} class(es) ({', '.join(map(repr, seen)) or 'none'}); evaluation "
                        "needs at least two, or every model scores 100. Fix: label posts of at least two classes.")


def cross_validate(make_estimator, timelines, *, folds: int = 5, seeds=(0,), dev_fraction: float = 0.25,
                   split_seed: int = 0, max_folds: int | None = None, fold_ids=None, progress: bool = True,
                   on_run=None) -> dict:
    """Timeline-level k-fold CV. make_estimator(seed) -> estimator (fit/predict/label_names_).

    Returns {"runs": [per fold & seed scores], "summary": aggregate(...), "label_names", "folds", ...}.
    `max_folds` runs only the first folds of the k-fold split (for a CPU budget), `fold_ids` only
    the listed folds (to share one evaluation between processes or machines: the split is the
    same in each); `on_run(run)` is called after each run (e.g. to write partial results).
    """
    if "label" not in timelines.df or not timelines.label_names:
        raise ValueError("cross_validate needs labelled timelines (a 'label' column)")
    check_classes(timelines)
    names = list(timelines.label_names)
    splits = timeline_folds(timelines, folds, dev_fraction, split_seed)
    if fold_ids is not None:
        ids = sorted({int(f) for f in fold_ids})
        if not ids or ids[0] < 0 or ids[-1] >= folds:
            raise ValueError(f"fold_ids {list(fold_ids)}: folds are numbered 0..{folds - 1}")
        if max_folds is not None:
            raise ValueError("give max_folds or fold_ids, not both")
        splits = [splits[f] for f in ids]
    splits = splits[: max_folds or folds]
    seeds = [int(s) for s in seeds]
    runs = []
    bar = tqdm(total=len(splits) * len(seeds), desc="cv", disable=not progress)
    for seed in seeds:
        for sp in splits:
            t0 = time.perf_counter()
            train, test = timelines.subset(sp.train), timelines.subset(sp.test)
            dev = timelines.subset(sp.dev) if sp.dev else None
            check_labels_seen(train, test, f"fold {sp.fold} test")
            if dev is not None and not dev.has_labelled_post(names):
                n_dev = f"{len(sp.dev)} timeline{'s' * (len(sp.dev) != 1)}"
                raise data_error("label", f"fold {sp.fold}'s dev split ({n_dev}) has no labelled post, so it cannot "
                                 "choose the best epoch",
                                 "use another split seed or a larger dev fraction (--split-seed, --dev-fraction), or "
                                 "a dev fraction of 0 to train for the full epochs")
            est = make_estimator(seed).fit(train, dev)
            if list(est.label_names_) != names:
                raise ValueError(f"estimator label names {est.label_names_} != data's {names}")
            pred = np.asarray(est.predict(test))
            run = dict(seed=seed, fold=sp.fold, n_train=len(train), n_test=len(test),
                       **classification_scores(test.label_codes(names), pred, names),
                       seconds=round(time.perf_counter() - t0, 2))
            runs.append(run)
            if on_run is not None:
                on_run(run)
            bar.update(1)
            bar.set_postfix(macro_f1=f"{run['macro_f1']:.3f}", refresh=False)
    bar.close()
    return {"label_names": names, "folds": folds, "folds_run": len(splits), "seeds": seeds,
            "runs": runs, "summary": aggregate(runs, names)}


def format_table(results: dict[str, dict], label_names) -> str:
    """Short text table: one row per model, per-class F1 and macro F1 as mean±std (percent).

    A row of one run says "(1 run)" instead of a std, which one run does not have."""
    head = ["model"] + list(label_names) + ["macro-F1"]
    rows = []
    for name, res in results.items():
        s = res["summary"] if "summary" in res else res
        cells = [f"{100 * s['f1'][n]['mean']:.1f}" if s['f1'][n]['mean'] is not None else "–" for n in label_names]
        mean = f"{100 * s['macro_f1']['mean']:.1f}"
        cells.append(f"{mean} (1 run)" if s.get("n_runs") == 1 else f"{mean} ± {100 * s['macro_f1']['std']:.1f}")
        rows.append([name] + cells)
    widths = [max(len(str(r[i])) for r in rows + [head]) for i in range(len(head))]
    line = lambda r: "  ".join(str(c).ljust(w) for c, w in zip(r, widths))  # noqa: E731
    return "\n".join([line(head), line(["-" * w for w in widths])] + [line(r) for r in rows])


__all__ = ["Split", "aggregate", "classification_scores", "cross_validate", "format_table", "timeline_folds"]
