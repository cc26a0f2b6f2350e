"""Does the model use time? TempoFormer against its time-blind control, and gap what-ifs.

A temporal model earns its place only if it beats the same model with time removed, and if
moving a post in time moves its prediction. This module measures both:

- `time_blind(settings)`: the control's settings: the same TempoFormer with the rotary time
  embedding removed (ablation ``vanilla_mha``: plain multi-head attention over the window's
  [CLS] vectors; the post gaps enter nowhere else), trained with the same seed and split.
- `change_probability(proba, label_names)`: p(change) = 1 - p(the no-change label).
- `gap_what_if(clf, timelines, post_ids, gaps)`: p(change) of each post when the gap to its
  previous post is set to each of `gaps` seconds (one batched prediction, nothing retrained).
- `what_if(clf, timelines, post_id, text=..., gap_seconds=..., window=...)`: class probabilities of
  one post after editing its text, its gap to the previous post, or the window size.
- `gap_sensitivity(clf, timelines, post_ids)`: mean |p(change) at 1 day - p(change) at 10 s|.
- `kind_recall(pred, timelines, kinds, label_names)`: recall per change kind (e.g. the planted
  world's "time" switches, which only the gap reveals).
- `time_effect(train, dev, test, settings, kinds=...)`: all of it for TempoFormer and its control.

On the planted world `kinds` is the truth's ``change_kind`` column (`world_change_kinds`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tempo_analysis.data import Timelines
from tempo_analysis.evaluation.classification import classification_scores

from .estimator import TempoFormerClassifier

NO_CHANGE = ("O", "no_switch", "N-Sw")  # labels that mean "no change"
LOW_GAP, HIGH_GAP = 10.0, 86400.0  # the gap_sensitivity what-if: 10 seconds -> 1 day
CONTROL = "vanilla_mha"  # the time-blind ablation


def time_blind(settings: dict) -> dict:
    """Settings of the time-blind control: the same model and training, rotary time removed."""
    return dict(settings, ablation=CONTROL)


def no_change_index(label_names, no_change: str | None = None) -> int:
    """Index of the no-change label: ``no_change`` when given, else the one of "O", "no_switch", "N-Sw"."""
    names = [str(n) for n in label_names]
    if no_change is not None:
        if str(no_change) not in names:
            raise ValueError(f"no_change={no_change!r} is not one of the labels {names}; name the label that "
                             "means 'no change'")
        return names.index(str(no_change))
    hits = [i for i, n in enumerate(label_names) if n in NO_CHANGE]
    if len(hits) != 1:
        raise ValueError(f"labels {names} need exactly one no-change label, one of {NO_CHANGE}; name yours with "
                         "no_change= (CLI: --no-change-label)")
    return hits[0]


def change_probability(proba: np.ndarray, label_names, no_change: str | None = None) -> np.ndarray:
    """p(change) per row: 1 - p(no-change label)."""
    return 1.0 - np.asarray(proba)[..., no_change_index(label_names, no_change)]


def change_posts(timelines, label_names=None, no_change: str | None = None) -> list[str]:
    """post_ids of the labelled change posts (every label but the no-change one)."""
    names = timelines.label_names if label_names is None else label_names
    df = timelines.df
    keep = df["label"].notna() & (df["label"] != names[no_change_index(names, no_change)])
    return df.loc[keep, "post_id"].tolist()


def _window_copy(df: pd.DataFrame, row: int, window: int) -> pd.DataFrame:
    """The posts of `row`'s window (its timeline, up to and including it, the last `window`)."""
    tl = df["timeline_id"].to_numpy()
    start = row
    while start > 0 and row - start + 1 < window and tl[start - 1] == tl[row]:
        start -= 1
    return df.iloc[start : row + 1]


def gap_what_if(clf, timelines, post_ids, gaps, no_change: str | None = None) -> np.ndarray:
    """[len(post_ids), len(gaps)] p(change) of each post with its gap to the previous post set to
    each of `gaps` seconds (earlier posts stay where they are). A timeline's first post has no
    previous post: its row is its own p(change), the same for every gap.

    One batched `predict_proba` over copies of each post's window; nothing is retrained.
    """
    gaps = np.asarray(gaps, dtype=np.float64).ravel()
    if (gaps < 0).any():
        raise ValueError(f"gaps must be >= 0 seconds (the post stays after the previous one), got {gaps.min()}")
    df = timelines.df
    where = {p: i for i, p in enumerate(df["post_id"].astype(str))}
    missing = [p for p in map(str, post_ids) if p not in where]
    if missing:
        raise ValueError(f"post_ids {missing[:5]} are not in these timelines")
    parts, targets = [], []
    n = 0
    for k, pid in enumerate(map(str, post_ids)):
        win = _window_copy(df, where[pid], clf.window)
        for j, g in enumerate(gaps):
            part = win.copy()
            part["timeline_id"] = f"{part['timeline_id'].iloc[0]}~{k}~{j}"
            part["post_id"] = part["post_id"].astype(str) + f"~{k}~{j}"
            if len(part) > 1:
                sec = part["seconds"].to_numpy().copy()
                sec[-1] = sec[-2] + g
                part["seconds"] = sec
                part["timestamp"] = pd.to_datetime(sec, unit="s", utc=True)
            parts.append(part)
            n += len(part)
            targets.append(n - 1)
    edited = Timelines(pd.concat(parts, ignore_index=True), label_names=timelines.label_names)
    proba = clf.predict_proba(edited)[np.asarray(targets)]
    return change_probability(proba, clf.label_names_, no_change).reshape(len(post_ids), len(gaps))


def what_if(clf, timelines, post_id, *, text: str | None = None, gap_seconds: float | None = None,
            window: int | None = None) -> np.ndarray:
    """Class probabilities of `post_id` after editing its text and/or its gap to the previous post.

    Only the post's own window matters for its prediction, so the timeline is cut after the post;
    `gap_seconds` moves the post (not the earlier ones) to `previous post time + gap_seconds`.
    `window` predicts with another window size.
    """
    df = timelines.df
    hit = np.flatnonzero(df["post_id"].to_numpy() == str(post_id))
    if len(hit) == 0:
        raise ValueError(f"post_id {post_id!r} is not in these timelines")
    row = int(hit[0])
    tl_rows = np.flatnonzero(df["timeline_id"].to_numpy() == df["timeline_id"].iloc[row])
    sub = df.iloc[tl_rows[tl_rows <= row]].copy().reset_index(drop=True)
    if text is not None:
        if not str(text).strip():
            raise ValueError("text must not be empty")
        sub.loc[len(sub) - 1, "text"] = str(text)
    if gap_seconds is not None:
        if gap_seconds < 0:
            raise ValueError(f"gap_seconds={gap_seconds} must be >= 0 (the post stays after the previous one)")
        if len(sub) > 1:
            new = float(sub["seconds"].iloc[-2]) + float(gap_seconds)
            sub.loc[len(sub) - 1, "seconds"] = new
            sub.loc[len(sub) - 1, "timestamp"] = pd.Timestamp(new, unit="s", tz="UTC")
    edited = Timelines(sub, label_names=timelines.label_names)
    return clf.predict_proba(edited, window=window)[-1]


def longest_gap(timelines, at_least: float = 4 * 86400.0) -> float:
    """The longest gap between two consecutive posts of one timeline, in seconds, and at least
    ``at_least``: the top of a gap slider or sweep, so that every post's own gap lies on it."""
    gaps = timelines.df.groupby("timeline_id", sort=False)["seconds"].diff().dropna()
    return max(float(at_least), float(gaps.max()) if len(gaps) else 0.0)


def gap_sweep(clf, timelines, post_id, gaps=None, no_change: str | None = None) -> pd.DataFrame:
    """p(change) of one post against its gap to the previous post (default: 1 s .. 4 days, log-spaced)."""
    gaps = np.geomspace(1.0, 4 * 86400.0, 41) if gaps is None else np.asarray(gaps, dtype=np.float64)
    p = gap_what_if(clf, timelines, [post_id], gaps, no_change)[0]
    return pd.DataFrame({"gap_s": gaps, "p_change": p})


def gap_sensitivity(clf, timelines, post_ids=None, low: float = LOW_GAP, high: float = HIGH_GAP,
                    no_change: str | None = None) -> float:
    """Mean |p(change) with gap `high` - p(change) with gap `low`| over `post_ids` (default: the
    labelled change posts). 0 for a model that ignores time."""
    ids = change_posts(timelines, clf.label_names_, no_change) if post_ids is None else list(post_ids)
    if not ids:
        raise ValueError("no posts to move: pass post_ids or timelines with labelled change posts")
    p = gap_what_if(clf, timelines, ids, [low, high], no_change)
    return float(np.abs(p[:, 1] - p[:, 0]).mean())


def kind_recall(pred, timelines, kinds, label_names) -> dict:
    """Recall (predicted label == true label) per change kind. `kinds`: post_id -> kind (a dict or
    a Series); posts missing from it, or of kind "none", are skipped. {kind: {"recall", "n"}}."""
    kinds = pd.Series(kinds) if not isinstance(kinds, pd.Series) else kinds
    df = timelines.df
    k = df["post_id"].astype(str).map(kinds)
    y = timelines.label_codes(label_names)
    pred = np.asarray(pred)
    out = {}
    for kind in sorted(set(k.dropna()) - {"none"}):
        sel = (k == kind).to_numpy() & (y >= 0)
        out[kind] = {"recall": float((pred[sel] == y[sel]).mean()) if sel.any() else float("nan"),
                     "n": int(sel.sum())}
    return out


def world_change_kinds(truth: pd.DataFrame) -> pd.Series:
    """post_id -> change kind ("none" / "text" / "time") from the planted world's timeline truth."""
    if "change_kind" not in truth:
        raise ValueError("this world's timelines_truth has no change_kind column; regenerate it with "
                         "`tempo-analysis world --out data/`")
    return pd.Series(truth["change_kind"].to_numpy(), index=truth["post_id"].astype(str))


def score_model(clf, test, kinds=None, no_change: str | None = None) -> dict:
    """macro-F1, per-class F1, recall per change kind and gap sensitivity of one fitted classifier."""
    names = list(clf.label_names_)
    proba = clf.predict_proba(test)
    pred = proba.argmax(-1)
    scores = classification_scores(test.label_codes(names), pred, names)
    out = {"macro_f1": float(scores["macro_f1"]), "f1": {n: float(v) for n, v in scores["f1"].items()},
           "gap_sensitivity": gap_sensitivity(clf, test, no_change=no_change), "proba": proba}
    if kinds is not None:
        out["recall_by_kind"] = kind_recall(pred, test, kinds, names)
    return out


def time_effect(train, dev, test, settings: dict, *, kinds=None, fit=None, models: dict | None = None,
                no_change: str | None = None) -> dict:
    """TempoFormer against its time-blind control, trained with the same seed and split.

    settings: TempoFormerClassifier settings by name (the control gets `time_blind(settings)`).
    kinds: optional post_id -> change kind, for recall on the time-decidable switches.
    fit: optional `fit(name, settings) -> fitted classifier` (e.g. a cached training, or another
    model that takes `ablation`, such as tempoformer_vectors); default trains a
    TempoFormerClassifier on (train, dev). models: already fitted {"tempoformer", "control"}.
    no_change: the label that means "no change" (default: the one of NO_CHANGE among the labels).

    Returns {"tempoformer": score_model(...), "control": score_model(...), "time_effect":
    macro-F1 difference, "gap_sensitivity": TempoFormer's, "time_only_recall": {"tempoformer",
    "control", "chance"} (None without "time" kinds)}. "chance" is the training share of the
    switch label: the recall of a guess drawn from the class priors.
    """
    def default_fit(name, s):
        return TempoFormerClassifier(**s).fit(train, dev)

    fit = fit or default_fit
    models = dict(models or {})
    if "tempoformer" not in models:  # (not setdefault: its argument would train the model every time)
        models["tempoformer"] = fit("tempoformer", dict(settings))
    if "control" not in models:
        models["control"] = fit("control", time_blind(settings))
    res = {name: score_model(models[name], test, kinds, no_change) for name in ("tempoformer", "control")}
    res["time_effect"] = res["tempoformer"]["macro_f1"] - res["control"]["macro_f1"]
    res["gap_sensitivity"] = res["tempoformer"]["gap_sensitivity"]
    res["time_only_recall"] = None
    if kinds is not None and "time" in res["tempoformer"]["recall_by_kind"]:
        kinds_s = pd.Series(kinds) if not isinstance(kinds, pd.Series) else kinds
        switch = test.df["post_id"].astype(str).map(kinds_s) == "time"
        # a guess from the class priors (labelled training posts) finds a switch with the prior of its label
        prior = train.df["label"].dropna().value_counts(normalize=True)
        chance = float(test.df.loc[switch, "label"].dropna().map(prior).fillna(0.0).mean())
        res["time_only_recall"] = {"tempoformer": res["tempoformer"]["recall_by_kind"]["time"]["recall"],
                                   "control": res["control"]["recall_by_kind"]["time"]["recall"],
                                   "chance": chance, "n": res["tempoformer"]["recall_by_kind"]["time"]["n"]}
    res["models"] = models
    return res



def describe_time_effect(res: dict, names=("TempoFormer", "control")) -> str:
    """The lines a notebook prints for a `time_effect` result: the macro-F1 difference, the gap
    sensitivity of both models and, on the planted world, their recall on the time-only switches.
    names: how to call the model with time and its time-blind control."""
    with_time, blind = names
    lines = [f"time effect (macro-F1 difference): {res['time_effect']:+.3f}",
             f"gap sensitivity (mean |Δ p(change)| on test change posts, gap {LOW_GAP:g} s → {HIGH_GAP / 86400:g} day): "
             f"{with_time} {res['gap_sensitivity']:.3f} · {blind} {res['control']['gap_sensitivity']:.3f}"]
    if res.get("time_only_recall"):
        r = res["time_only_recall"]
        lines.append(f"recall on the {r['n']} time-only switches: {with_time} {r['tempoformer']:.3f} · {blind} "
                     f"{r['control']:.3f} · chance (the switch prior) {r['chance']:.3f}")
    return "\n".join(lines)




def headline_numbers(te: dict) -> dict:
    """Lesson 01's headline from a :func:`time_effect` result: ``time_effect`` (TempoFormer's test
    macro-F1 minus its time-blind control's), ``tempoformer_macro_f1`` and ``control_macro_f1``."""
    return {"time_effect": float(te["time_effect"]), "tempoformer_macro_f1": float(te["tempoformer"]["macro_f1"]),
            "control_macro_f1": float(te["control"]["macro_f1"])}


__all__ = ["CONTROL", "HIGH_GAP", "LOW_GAP", "NO_CHANGE", "change_posts", "change_probability", "describe_time_effect", "headline_numbers",
           "gap_sensitivity", "gap_sweep", "gap_what_if", "kind_recall", "longest_gap", "no_change_index", "score_model",
           "time_blind", "time_effect", "what_if", "world_change_kinds"]
