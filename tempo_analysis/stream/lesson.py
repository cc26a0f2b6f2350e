"""Lesson 01's steps behind one call each: the data and split, TempoFormer and its time-blind
control, the baselines, the model over sentence vectors, the ablation rows and the key numbers.

Each training is memoised with :func:`tempo_analysis.notebook.cached` under a key that holds the
data's contents (``Timelines.fingerprint``), the split and the settings, so an edited file or a
regenerated world is trained on afresh and a rerun after ``make demo`` loads what it trained::

    from tempo_analysis.stream import lesson
    fitted = lesson.load_lesson("world", window=3, epochs=4)
    fitted = lesson.fit_lesson(fitted)              # TempoFormer and the control
    te = lesson.score_lesson(fitted)                # time_effect(...) of the two
"""
from __future__ import annotations

import numpy as np

from .config import NOTEBOOK_EXPERIMENT, preset
from .time_effect import headline_numbers, kind_recall, time_blind, time_effect, world_change_kinds


def lesson_settings(*, window: int = 3, epochs: int = 4, seed: int = 0, time_unit: str = "s") -> dict:
    """TempoFormer's settings in lesson 01: the ``notebook`` preset with the lesson's window, epochs,
    seed and the unit of the gaps (``"s"``, ``"min"``, ``"h"``, ``"D"``; other units read as seconds)."""
    from ..data.timelines import TIME_UNITS

    config = preset("notebook")
    return dict(config.to_dict(), window=int(window), epochs=int(epochs), seed=int(seed),
                model_kwargs=dict(config.model_kwargs, time_unit=TIME_UNITS.get(time_unit, 1.0)))


def load_lesson(data: str = "world", *, window: int = 3, epochs: int = 4, seed: int = 0, split_seed: int = 0,
                time_unit: str = "s", max_timelines=None, experiment=NOTEBOOK_EXPERIMENT) -> dict:
    """The lesson's timelines, its timeline-level split (``experiment``'s fold) and TempoFormer's
    settings (the ``notebook`` preset with ``window``, ``epochs``, ``seed`` and ``time_unit``).

    Returns ``{"data", "timelines", "truth", "kinds", "train", "dev", "test", "names", "settings",
    "params"}``; ``kinds`` is post_id -> change kind on the planted world (None for real data) and
    ``params`` the cache key every training of the lesson shares."""
    from ..resolve import load_timelines
    from .experiment import split_timelines

    settings = lesson_settings(window=window, epochs=epochs, seed=seed, time_unit=time_unit)
    loaded = load_timelines(data, time_unit=time_unit if not str(data).startswith("world") else None,
                            max_timelines=max_timelines, seed=split_seed)
    timelines, truth = loaded.data, loaded.truth
    train, dev, test = split_timelines(timelines, experiment.folds, experiment.fold, split_seed)
    params = dict(data=str(data), data_fingerprint=timelines.fingerprint(), max_timelines=max_timelines,
                  split_seed=split_seed, settings=settings)
    return {"data": str(data), "timelines": timelines, "truth": truth, "train": train, "dev": dev, "test": test,
            "kinds": world_change_kinds(truth) if truth is not None else None,
            "names": list(timelines.label_names), "settings": settings, "params": params}


def _cached_classifier(name: str, params: dict, fit):
    from ..notebook import cached
    from .estimator import TempoFormerClassifier

    return cached(name, params, fit, save=lambda c, folder: c.save(folder), load=TempoFormerClassifier.load)


def fit_lesson(lesson: dict, *, cache: bool = True) -> dict:
    """``lesson`` with ``"tempoformer"`` and ``"control"`` added: TempoFormer and its time-blind
    control (the same settings with the rotary time embedding removed), trained on the lesson's
    train timelines with the dev set picking the best epoch. ``cache`` memoises each training."""
    from .estimator import TempoFormerClassifier

    train, dev, settings = lesson["train"], lesson["dev"], lesson["settings"]
    out = dict(lesson)
    for key, s, name in (("tempoformer", settings, "01_stream-tempoformer"),
                         ("control", time_blind(settings), "01_stream-control")):
        def fit(s=s):
            return TempoFormerClassifier(**s).fit(train, dev)

        out[key] = _cached_classifier(name, dict(lesson["params"], settings=s), fit) if cache else fit()
    return out


def score_lesson(fitted: dict, *, cache: bool = True) -> dict:
    """:func:`~tempo_analysis.stream.time_effect.time_effect` of the two fitted models on the test
    timelines (macro-F1, gap sensitivity, recall on the time-only switches); its ``"models"`` are
    ``{"tempoformer", "control"}``. ``cache`` memoises the scores with the trainings' key."""
    from ..notebook import cached

    models = {"tempoformer": fitted["tempoformer"], "control": fitted["control"]}

    def compute():
        te = time_effect(fitted["train"], fitted["dev"], fitted["test"], fitted["settings"], kinds=fitted["kinds"],
                         models=models)
        return {k: v for k, v in te.items() if k != "models"}

    te = cached("01_stream-scores", fitted["params"], compute) if cache else compute()
    return dict(te, models=models)


def time_switch_posts(fitted: dict) -> list:
    """Test posts whose switch only the gap reveals (planted world), else the test's labelled changes."""
    test, kinds = fitted["test"], fitted["kinds"]
    if kinds is not None:
        posts = [p for p in test.df["post_id"] if kinds.get(p) == "time"]
    else:
        labels = test.df.set_index("post_id")["label"]
        posts = [p for p, lab in labels.dropna().items() if lab not in ("O", "no_switch", "N-Sw")]
    return posts or [test.df["post_id"].iloc[-1]]


def fit_baselines(fitted: dict, names, *, cache: bool = True) -> dict:
    """Each baseline of ``names`` trained and scored on the lesson's split: ``{name: {"summary",
    "recall_by_kind"}}`` (recall per change kind on the planted world; not for ``random``, whose
    recall is the chance)."""
    from ..notebook import cached
    from .experiment import fit_and_score

    train, dev, test, kinds = fitted["train"], fitted["dev"], fitted["test"], fitted["kinds"]
    time_unit = fitted["settings"]["model_kwargs"]["time_unit"]

    def run(name):
        out = fit_and_score(name, train, dev, test, window=fitted["settings"]["window"],
                            seed=fitted["settings"]["seed"], progress=False, model_kwargs={"time_unit": time_unit})
        row = {"summary": out["summary"]}
        if kinds is not None and name != "random":
            row["recall_by_kind"] = kind_recall(out["proba"].argmax(-1), test, kinds, list(out["model"].label_names_))
        return row

    results = {}
    for name in names:
        params = dict(fitted["params"], model=name, kinds=kinds is not None)
        results[name] = cached(f"01_stream-{name}", params, lambda name=name: run(name)) if cache else run(name)
    return results


def recall_table(te: dict, results: dict):
    """Recall per kind of switch, one row per model (TempoFormer, the control and the baselines)."""
    import pandas as pd

    recall = {"tempoformer": te["tempoformer"].get("recall_by_kind"),
              "time-blind control": te["control"].get("recall_by_kind")}
    recall.update({m: r.get("recall_by_kind") for m, r in results.items()})
    recall = {m: {k: v["recall"] for k, v in r.items()} for m, r in recall.items() if r}
    return pd.DataFrame(recall).T.rename(columns=lambda k: f"recall on {k} switches")


def vector_time_effect(fitted: dict) -> dict:
    """TempoFormer over sentence vectors against its time-blind form, on the lesson's split (both
    train in seconds): a :func:`time_effect` result."""
    from .experiment import make_classifier

    settings = dict(window=fitted["settings"]["window"], seed=fitted["settings"]["seed"], progress=False,
                    model_kwargs={"time_unit": fitted["settings"]["model_kwargs"]["time_unit"]})
    train, dev = fitted["train"], fitted["dev"]
    return time_effect(train, dev, fitted["test"], settings, kinds=fitted["kinds"],
                       fit=lambda name, s: make_classifier("tempoformer_vectors", **s).fit(train, dev))


def score_row(fitted: dict, proba) -> dict:
    """``{"summary": ...}`` of test probabilities ``proba``: the row shape of the comparison and
    ablation tables (per-class F1 and macro-F1 of one run at the lesson's seed)."""
    from ..evaluation.classification import aggregate, classification_scores

    test, names = fitted["test"], fitted["names"]
    scores = classification_scores(test.label_codes(names), np.asarray(proba).argmax(-1), names)
    return {"summary": aggregate([dict(scores, seed=fitted["settings"]["seed"])], names)}


def ablation_rows(fitted: dict, te: dict, ablations, *, retrain: bool = False) -> dict:
    """The rows of the ablation table: the full model, then each of ``ablations``. The time-blind
    control is the one trained in :func:`fit_lesson`; the others are retrained (``retrain``) or read
    from the run recorded at these settings (:func:`~tempo_analysis.stream.experiment.recorded_ablation`;
    a row without a record is left out and named in ``"missing"``)."""
    from ..notebook import cached
    from ..stream.experiment import fit_and_score, recorded_ablation

    test, settings = fitted["test"], fitted["settings"]
    rows, missing = {"TempoFormer": score_row(fitted, te["tempoformer"]["proba"])}, []
    for ab in ablations:
        ab_settings = dict(settings, ablation=ab)
        if ab == time_blind(settings)["ablation"]:
            rows[f"− {ab}"] = score_row(fitted, te["control"]["proba"])
        elif retrain:
            rows[f"− {ab}"] = cached(
                f"01_stream-ablation-{ab}", dict(fitted["params"], settings=ab_settings),
                lambda s=ab_settings: {"summary": fit_and_score("tempoformer", fitted["train"], fitted["dev"],
                                                                test, **s)["summary"]})
        else:
            recorded = recorded_ablation(ab, settings=ab_settings, data=fitted["data"],
                                         max_timelines=fitted["params"]["max_timelines"],
                                         n_posts=len(fitted["timelines"]))
            if recorded is None:
                missing.append(ab)
            else:
                rows[f"− {ab}"] = recorded
    return {"rows": rows, "missing": missing}


def lesson_numbers(te: dict, results: dict | None = None, vec_te: dict | None = None, *, test_posts=None) -> dict:
    """The key numbers lesson 01 records in ``build/summary.json`` (``stream.*`` names): the
    headline (:func:`~tempo_analysis.stream.time_effect.headline_numbers`), gap sensitivities and
    recall on the time-only switches, and, when given, each baseline's macro-F1 and the model over
    sentence vectors against its time-blind form."""
    from ..study import summary_keys

    keys = {**summary_keys("01", headline_numbers(te)), "stream.gap_sensitivity": te["gap_sensitivity"],
            "stream.control.gap_sensitivity": te["control"]["gap_sensitivity"],
            "stream.control.macro_f1": te["control"]["macro_f1"]}
    if test_posts is not None:
        keys["stream.test_posts"] = int(test_posts)
    if te["time_only_recall"]:
        keys.update({f"stream.time_only_recall.{k}": te["time_only_recall"][k]
                     for k in ("tempoformer", "control", "chance")})
    for m, r in (results or {}).items():
        keys[f"stream.{m}.macro_f1"] = r["summary"]["macro_f1"]["mean"]
        if "time" in (r.get("recall_by_kind") or {}):
            keys[f"stream.{m}.time_only_recall"] = r["recall_by_kind"]["time"]["recall"]
    if vec_te is not None:
        keys.update({"stream.tempoformer_vectors.time_effect": vec_te["time_effect"],
                     "stream.tempoformer_vectors.gap_sensitivity": vec_te["gap_sensitivity"],
                     "stream.tempoformer_vectors.control.macro_f1": vec_te["control"]["macro_f1"],
                     "stream.tempoformer_vectors.control.gap_sensitivity": vec_te["control"]["gap_sensitivity"]})
        if vec_te["time_only_recall"]:
            keys["stream.tempoformer_vectors.control.time_only_recall"] = vec_te["time_only_recall"]["control"]
    return keys


__all__ = ["ablation_rows", "fit_baselines", "fit_lesson", "lesson_numbers", "lesson_settings", "load_lesson", "recall_table",
           "score_lesson", "score_row", "time_switch_posts", "vector_time_effect"]
