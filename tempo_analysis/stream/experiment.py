"""The stream-classification experiment protocol: models by name, splits, scoring, recorded runs.

- `make_classifier(name, **settings)`: TempoFormer or a baseline by name (the CLI and the CV).
- `split_timelines(...)`: one fold of the timeline-level split (no timeline in two parts).
- `fit_and_score(name, train, dev, test, **settings)`: fit, predict, per-class and macro F1.
- `notebook_defaults()`: notebook 01's settings (its main result is checked from the notebook's own run).
- `recorded_ablation(...)`: a recorded `tempo-analysis stream evaluate --ablation` run, when it
  was made at the given settings.
Cross-validation over folds x seeds is `tempo_analysis.evaluation.classification.cross_validate`.
"""

from __future__ import annotations

import inspect
import json
import time
from pathlib import Path

from tempo_analysis.data.locations import project_root
from tempo_analysis.data.timelines import check_labels_seen
from tempo_analysis.evaluation.classification import aggregate, classification_scores, timeline_folds

from .baselines import BiLSTMClassifier, FFNHistoryClassifier, PostEncoderClassifier, PriorRandomClassifier
from .classifier import TempoFormerClassifier
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


def notebook_defaults() -> dict:
    """The settings notebook 01 runs with by default (and the test asserting its macro-F1 uses).

    A single timeline-level split of the planted world (fold 0 of 5; dev = 25% of the rest: 72 /
    24 / 24 timelines), TempoFormer on the embedded MiniLM (post vectors = token means, as MiniLM
    was trained) with the local stack frozen and cached, windows of 3 posts, 4 epochs. Measured on
    this split (seed 0) on the world with time-only switches: test macro-F1 0.876 (two torch threads;
    0.891 with one, see docs/TEACHING.md). The notebook also trains the time-blind control
    (`ablations[0]`, `time_effect.time_blind`) at the same settings. On the earlier 90-timeline
    world the same model scored 0.78-0.84 depending on the settings: a test fold of 18 timelines
    was too small to rank settings, hence 120 timelines.
    """
    return {
        "data": "world",
        "folds": 5,
        "fold": 0,
        "seed": 0,
        "window": 3,
        "tempoformer": dict(encoder="default", window=3, epochs=4, lr=1e-4, head_lr=2e-3, batch_size=8,
                            max_length=64, freeze_local=True, summary="auto", seed=0),
        "baselines": ["random", "ffn_history", "bilstm", "time_bilstm", "tempoformer_vectors"],
        # vanilla_mha is the time-blind control, trained in the notebook itself; the others are read
        # from runs recorded at these settings (docs/results/stream/world_ablation_*.json)
        "ablations": ["vanilla_mha", "sequential_rope", "no_gate_norm"],
        "run_ablations": False,
    }


# the settings a recorded ablation run must share with the notebook's full model to be comparable
_RECORDED_KEYS = ("encoder", "epochs", "lr", "head_lr", "batch_size", "max_length", "freeze_local")


def recorded_ablation(ablation: str, *, settings: dict, data: str = "world", max_timelines=None,
                      fold: int = 0, folds: int = 5, folder=None, n_posts: int | None = None) -> dict | None:
    """{"summary", "source"} of a recorded `stream evaluate --ablation` run matching these settings.

    Notebook 01 shows these instead of retraining every ablation (each costs as much as the main
    model). Files: `<folder>/<data>_ablation_<name>.json` as written by `tempo-analysis stream
    evaluate --max-folds 1` (default folder: the checkout's docs/results/stream). Returns None when
    there is no such file or it was made with other data, split, window, seed or training settings,
    on a data set of another size than `n_posts` (when given), or it is marked "superseded", so a
    stale or foreign record is never shown as if it matched.
    """
    check_ablation(ablation)
    folder = Path(folder) if folder is not None else project_root() / "docs" / "results" / "stream"
    path = folder / f"{str(data).partition(':')[0]}_ablation_{ablation}.json"
    if not path.is_file():
        return None
    rec = json.loads(path.read_text())
    by_window = rec.get("by_window", {}).get(str(settings.get("window")))
    runs = (by_window or {}).get("runs", [])
    same = (rec.get("data") == data and rec.get("ablation") == ablation and max_timelines is None
            and "superseded" not in rec and (n_posts is None or rec.get("posts") == n_posts)
            and rec.get("folds") == folds and len(runs) == 1 and runs[0].get("fold") == fold
            and runs[0].get("seed") == settings.get("seed", 0)
            and all(rec.get("settings", {}).get(k) == settings.get(k) for k in _RECORDED_KEYS
                    if k in settings))
    if not same:
        return None
    return {"summary": by_window["summary"], "source": str(path)}


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
    """The keyword settings model `name` takes (its constructor's arguments)."""
    if name not in CLASSES:
        raise ValueError(f"model {name!r} is not known; valid names: {', '.join(CLASSES)}")
    return [k for k in inspect.signature(CLASSES[name].__init__).parameters if k != "self"]


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
           "notebook_defaults", "recorded_ablation", "split_timelines"]
