"""The stream-classification experiment protocol: models by name, splits, scoring, recorded runs.

- `make_classifier(name, **settings)`: TempoFormer or a baseline by name (the CLI and the CV).
- `split_timelines(...)`: one fold of the timeline-level split (no timeline in two parts).
- `fit_and_score(name, train, dev, test, **settings)`: fit, predict, per-class and macro F1.
- `recorded_ablation(...)`: a recorded `tempo-analysis stream evaluate --ablation` run (a curated
  file of the package's assets), when it was made at the given settings.
The settings and presets (notebook 01's too) are :mod:`tempo_analysis.stream.config`.
Cross-validation over folds x seeds is `tempo_analysis.evaluation.classification.cross_validate`.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import time
from importlib import resources

from tempo_analysis.base import Estimator
from tempo_analysis.data.timelines import check_labels_seen
from tempo_analysis.evaluation.classification import aggregate, classification_scores, timeline_folds

from .baselines import BiLSTMClassifier, FFNHistoryClassifier, PostEncoderClassifier, PriorRandomClassifier
from .estimator import TempoFormerClassifier
from .llm_prompt import FewShotLLMClassifier
from .robert import RoBERTClassifier
from .signature import SeqSigNetClassifier, SWNUClassifier
from .time_bilstm import TimeAwareBiLSTMClassifier
from .vector_tempoformer import VectorTempoFormerClassifier
from .names import BASELINES, MODELS, check_ablation

# every model by the name the CLI, the CV and fit_and_score take (names.MODELS, in that order)
CLASSES = {"tempoformer": TempoFormerClassifier, "tempoformer_vectors": VectorTempoFormerClassifier,
           "random": PriorRandomClassifier,
           "post_encoder": PostEncoderClassifier, "ffn_history": FFNHistoryClassifier,
           "bilstm": BiLSTMClassifier, "time_bilstm": TimeAwareBiLSTMClassifier, "robert": RoBERTClassifier,
           "swnu": SWNUClassifier, "seq_sig_net": SeqSigNetClassifier, "llm_few_shot": FewShotLLMClassifier}


# the settings a recorded ablation run must share with the notebook's full model to be comparable
_RECORDED_KEYS = ("encoder", "epochs", "lr", "head_lr", "batch_size", "max_length", "freeze_local")
RECORDED_ABLATIONS = "stream_ablations.json"   # in tempo_analysis/assets/recorded/


def recorded_runs() -> dict:
    """The curated record of `stream evaluate --ablation` runs notebook 01 shows (with the command
    that regenerates each, the machine and the wall time), read from the package's assets."""
    text = resources.files("tempo_analysis").joinpath("assets", "recorded", RECORDED_ABLATIONS).read_text("utf-8")
    return json.loads(text)


def recorded_ablation(ablation: str, *, settings: dict, data: str = "world", max_timelines=None,
                      fold: int = 0, folds: int = 5, n_posts: int | None = None,
                      records: dict | None = None) -> dict | None:
    """{"summary", "source", "command"} of a recorded `stream evaluate --ablation` run matching these settings,
    plus "definition" where the run was made under an earlier definition of its ablation.

    Notebook 01 shows these instead of retraining every ablation (each costs as much as the main
    model). The runs are :func:`recorded_runs` (``records``: another such dict). Returns None when
    there is no record of that ablation, or it was made with other data, split, window, seed or
    training settings, or on a data set of another size than `n_posts` (when given), so a stale or
    foreign record is never shown as if it matched.
    """
    check_ablation(ablation)
    records = recorded_runs() if records is None else records
    rec = records.get("runs", {}).get(ablation)
    if rec is None:
        return None
    same = (rec.get("data") == data and rec.get("ablation") == ablation and max_timelines is None
            and (n_posts is None or rec.get("posts") == n_posts)
            and rec.get("folds") == folds and rec.get("fold") == fold
            and rec.get("window") == settings.get("window") and rec.get("seed") == settings.get("seed", 0)
            and all(rec.get("settings", {}).get(k) == settings.get(k) for k in _RECORDED_KEYS
                    if k in settings))
    if not same:
        return None
    out = {"summary": rec["summary"], "source": f"tempo_analysis/assets/recorded/{RECORDED_ABLATIONS}",
           "command": rec.get("command")}
    if rec.get("definition"):  # a run made under an earlier definition of its ablation says so
        out["definition"] = rec["definition"]
    return out


def split_timelines(timelines, folds: int = 5, fold: int = 0, seed: int = 0, dev_fraction: float = 0.25):
    """(train, dev, test) Timelines of one fold of the timeline-level split (no timeline shared)."""
    sp = timeline_folds(timelines, folds, dev_fraction, seed)[fold]
    return timelines.subset(sp.train), timelines.subset(sp.dev), timelines.subset(sp.test)


def fit_and_score(name: str, train, dev, test, **settings) -> dict:
    """Fit model `name` (make_classifier) on train/dev, score on test.

    Returns {"summary": mean/std dict as cross_validate gives (one run), "runs": [run],
    "model": the fitted classifier, "proba": its test probabilities, "seconds": fit+predict time}.
    """
    check_labels_seen(train, test)
    t0 = time.perf_counter()
    clf = make_classifier(name, **settings).fit(train, dev)
    proba = clf.predict_proba(test)
    pred = clf.predict(test) if name == "random" else proba.argmax(-1)
    names = list(clf.label_names_)
    run = dict(seed=settings.get("seed", 0), fold=0, n_train=len(train), n_test=len(test),
               **classification_scores(test.label_codes(names), pred, names))
    return {"summary": aggregate([run], names), "runs": [run], "model": clf, "proba": proba,
            "seconds": round(time.perf_counter() - t0, 1)}


def model_settings(name: str) -> list[str]:
    """The keyword settings model `name` takes (its constructor's arguments; a facade's config fields)."""
    if name not in CLASSES:
        raise ValueError(f"model {name!r} is not known; valid names: {', '.join(CLASSES)}")
    cls = CLASSES[name]
    if issubclass(cls, Estimator):
        return [f.name for f in dataclasses.fields(cls.config_class)]
    return [k for k in inspect.signature(cls.__init__).parameters if k != "self"]


def check_settings(name: str, settings: dict) -> None:
    """Raise ValueError naming every setting that model `name` does not take (none is ignored)."""
    unknown = sorted(set(settings) - set(model_settings(name)))
    if unknown:
        raise ValueError(f"{', '.join(unknown)} do(es) not apply to {name!r}; drop them. {name!r} takes: "
                         f"{', '.join(model_settings(name))}")


def make_classifier(name: str, strict: dict | None = None, **settings):
    """TempoFormer or a baseline by name (names.MODELS: "tempoformer", "random", "bilstm", "swnu", ...).

    settings are the class's keyword arguments; keys a class does not take are ignored, so one
    settings dict can drive every model (e.g. window, epochs, seed, encoder, progress). `strict`
    settings are checked first (check_settings): a key the class does not take raises.
    """
    if strict:
        check_settings(name, strict)
        settings = {**settings, **strict}
    params = model_settings(name)
    return CLASSES[name](**{k: v for k, v in settings.items() if k in params})


__all__ = ["BASELINES", "CLASSES", "MODELS", "check_settings", "fit_and_score", "make_classifier", "model_settings",
           "recorded_ablation", "recorded_runs", "split_timelines"]
