"""`stream time-effect`: TempoFormer against its time-blind control on one split, from the command line.

The models are replaced by a rule that reads the gap (and, as the control, one that cannot), so the
command's own work is what is tested: the split, the settings both models get, the no-change label,
the time effect, the gap sensitivity and the gap sweep written to the JSON."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from tempo_analysis.cli import main
from tempo_analysis.resolve import load_timelines
from tempo_analysis.stream.experiment import split_timelines
from tempo_analysis.cli.stream_time_effect import world_kinds

from .test_time_effect import gap_timelines

FITTED = []


class GapRule:
    """p(switch) rises with the log gap to the previous post; with ablation vanilla_mha it is constant."""

    def __init__(self, **settings):
        self.settings, self.window = settings, settings["window"]

    def fit(self, train, dev=None):
        FITTED.append(dict(self.settings, train=tuple(train.timeline_ids), dev=tuple(dev.timeline_ids) if dev else ()))
        self.label_names_ = list(train.label_names)
        return self

    def predict_proba(self, timelines):
        df = timelines.df
        gap = df.groupby("timeline_id", sort=False)["seconds"].diff().fillna(0.0).to_numpy()
        p = 1 / (1 + np.exp(-(np.log1p(gap) - np.log(3600.0))))
        if self.settings.get("ablation") == "vanilla_mha":
            p = np.full(len(df), 0.3)
        out = np.zeros((len(df), len(self.label_names_)))
        out[:, self.label_names_.index("switch")] = p
        out[:, self.label_names_.index("stay")] = 1 - p
        return out


@pytest.fixture
def posts_csv(tmp_path):
    df = gap_timelines(n_timelines=10).df[["timeline_id", "post_id", "seconds", "text", "label"]]
    df = df.rename(columns={"seconds": "timestamp"}).assign(label=lambda d: d["label"].map({"IS": "switch", "O": "stay"}))
    path = tmp_path / "posts.csv"
    df.to_csv(path, index=False)
    return path


@pytest.fixture
def gap_rule(monkeypatch):
    FITTED.clear()
    monkeypatch.setattr("tempo_analysis.stream.experiment.make_classifier", lambda name, **s: GapRule(**s))


def run(posts_csv, *extra):
    out = posts_csv.parent / "te.json"
    rc = main(["stream", "time-effect", "--data", f"csv:{posts_csv}", "--time-unit", "s", "--window", "4",
               "--seed", "3", "--folds", "5", "--fold", "1", "--out", str(out), *extra])
    return rc, out


def test_time_effect_command_reports_both_models_and_the_gap_what_ifs(posts_csv, gap_rule, capsys):
    rc, out = run(posts_csv, "--no-change-label", "stay")
    assert rc == 0, capsys.readouterr().err
    report = json.loads(out.read_text())
    # both models on the same split, with the same window and seed; the control has no time
    assert [f["ablation"] if "ablation" in f else None for f in FITTED] == [None, "vanilla_mha"]
    assert {(f["window"], f["seed"], f["train"], f["dev"]) for f in FITTED} == {
        (4, 3, FITTED[0]["train"], FITTED[0]["dev"])}
    assert report["split"]["fold"] == 1 and report["split"]["test_timelines"] == 2
    assert (report["timelines"], report["posts"]) == (10, len(pd.read_csv(posts_csv)))   # the data it read
    assert report["settings"]["window"] == 4 and report["settings"]["seed"] == 3 and "progress" not in report["settings"]
    train, dev, _ = split_timelines(load_timelines(f"csv:{posts_csv}", time_unit="s").data, 5, 1, 0, 0.25)
    assert (FITTED[0]["train"], FITTED[0]["dev"]) == (tuple(train.timeline_ids), tuple(dev.timeline_ids))
    assert set(FITTED[0]["train"]).isdisjoint(FITTED[0]["dev"])
    t, c = report["tempoformer"], report["control"]
    assert report["time_effect"] == pytest.approx(t["macro_f1"] - c["macro_f1"]) and report["time_effect"] > 0.3
    # the gap moves the model with time (10 s -> 1 day: p(switch) from ~0 to ~1), not the control
    assert report["gap_sensitivity"] == t["gap_sensitivity"] > 0.9 and c["gap_sensitivity"] == 0.0
    sweep = report["gap_sweep"]
    assert len(sweep["gap_s"]) == len(sweep["tempoformer"]) == len(sweep["control"]) == 25
    assert sweep["gap_s"][0] == 1.0 and sweep["gap_s"][-1] == 4 * 86400.0
    assert np.all(np.diff(sweep["tempoformer"]) > 0) and np.ptp(sweep["control"]) == 0.0
    assert sweep["control"][0] == pytest.approx(0.3)      # p(change) = 1 - p("stay"), the named label
    assert report["time_only_recall"] is None              # only the planted world knows its kinds
    posts = pd.read_csv(posts_csv)
    test = posts[~posts["timeline_id"].isin(FITTED[0]["train"] + FITTED[0]["dev"])]
    assert report["split"]["test_change_posts"] == int((test["label"] == "switch").sum()) > 0
    printed = capsys.readouterr().out
    assert "time effect (macro-F1 difference)" in printed and "gap sensitivity" in printed


def test_labels_without_a_known_no_change_label_are_refused_before_training(posts_csv, gap_rule, capsys):
    rc, out = run(posts_csv)
    err = capsys.readouterr().err
    assert rc == 2 and "--no-change-label" in err and "'stay'" in err and not FITTED
    rc, out = run(posts_csv, "--no-change-label", "calm")
    err = capsys.readouterr().err
    assert rc == 2 and "'calm' is not one of the labels" in err and not FITTED and not out.exists()


def test_a_test_split_without_change_posts_is_refused_before_training(posts_csv, gap_rule, capsys):
    df = pd.read_csv(posts_csv)
    test = split_timelines(load_timelines(f"csv:{posts_csv}", time_unit="s").data, 5, 0, 0, 0.25)[2]
    df.loc[df["timeline_id"].isin(test.timeline_ids), "label"] = "stay"     # fold 0's test timelines: no switch
    df.to_csv(posts_csv, index=False)
    rc, out = run(posts_csv, "--no-change-label", "stay", "--fold", "0")
    err = capsys.readouterr().err
    assert rc == 2 and "holds no labelled change post" in err and "--fold 0 of 5" in err, err
    assert not FITTED and not out.exists()


def test_two_folds_are_enough(posts_csv, gap_rule, capsys):
    rc, out = run(posts_csv, "--no-change-label", "stay", "--folds", "2", "--fold", "1")
    assert rc == 0, capsys.readouterr().err
    assert json.loads(out.read_text())["split"]["test_timelines"] == 5


@pytest.mark.parametrize("extra, says", [(["--fold", "5"], "--fold 5: folds are numbered 0 to 4"),
                                         (["--folds", "1", "--fold", "0"], "--folds 1: use 2 or more"),
                                         (["--dev-fraction", "0", "--patience", "2"], "--patience"),
                                         (["--dev-fraction", "1"], "--dev-fraction 1.0"),
                                         (["--window", "0"], "--window 0"),
                                         (["--variant", "tempoformer_vectors", "--freeze-local"],
                                          "--freeze-local do(es) not apply to 'tempoformer_vectors'")])
def test_bad_options_are_refused_before_any_work(posts_csv, gap_rule, capsys, extra, says, monkeypatch):
    def no_data(*args, **kwargs):
        raise AssertionError("the data was read before the options were checked")

    monkeypatch.setattr("tempo_analysis.resolve.load_timelines", no_data)
    rc, out = run(posts_csv, *extra)
    err = capsys.readouterr().err
    assert rc == 2 and says in err, err
    assert not FITTED and not out.exists()


def test_world_kinds_cover_the_worlds_posts_and_only_the_world_has_them():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # no world on disk: both generate the same default world
        kinds = world_kinds("world")
        posts = set(load_timelines("world").data.df["post_id"].astype(str))
    assert set(kinds.index) == posts and {"time", "text", "none"} <= set(kinds)
    assert world_kinds("csv:whatever.csv") is None and world_kinds("rumoureval2017:/no/such/folder") is None


def test_the_documented_command_trains_as_notebook_01_does():
    """docs/methods/stream.md's time-effect command gives TempoFormer the settings notebook 01 computes
    (its `settings = ...` line, evaluated with the notebook's constants and presets)."""
    import ast
    import dataclasses
    import shlex
    from pathlib import Path

    from tempo_analysis.cli import build_parser
    from tempo_analysis.cli.stream_time_effect import time_effect_settings
    from tempo_analysis.stream.config import NOTEBOOK_EXPERIMENT
    from tempo_analysis.stream.estimator import TempoFormerClassifier
    from tempo_analysis.stream.experiment import make_classifier
    from tempo_analysis.stream.lesson import lesson_settings

    root = Path(__file__).resolve().parents[2]
    doc = (root / "docs" / "methods" / "stream.md").read_text(encoding="utf-8")
    lines = [x.strip() for x in doc.splitlines() if x.strip().startswith("tempo-analysis stream time-effect --data world")]
    assert len(lines) == 1
    args = build_parser().parse_args(shlex.split(lines[0])[1:])
    name, cli = time_effect_settings(args)
    # the same split: fold 0 of 5, split seed 0, a quarter of the rest as dev
    exp = NOTEBOOK_EXPERIMENT
    assert (args.folds, args.fold, args.split_seed, args.dev_fraction) == (exp.folds, exp.fold, exp.split_seed,
                                                                           exp.dev_fraction)
    # the notebook's settings: its parameters cell's constants through lesson.load_lesson's settings
    tree = ast.parse((root / "notebooks" / "01_stream_classification.py").read_text(encoding="utf-8"))
    names = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            try:
                names[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                pass
    assert "lesson.load_lesson(DATA, window=WINDOW, epochs=EPOCHS, seed=SEED" in ast.unparse(tree)
    notebook = lesson_settings(window=names["WINDOW"], epochs=names["EPOCHS"], seed=names["SEED"],
                               time_unit=names["TIME_UNIT"])

    def fields(clf):
        config = clf.get_config()
        return {f.name: getattr(config, f.name) for f in dataclasses.fields(config) if f.name != "progress"}

    assert name == "tempoformer"
    assert fields(make_classifier(name, **cli)) == fields(TempoFormerClassifier(**notebook))
    assert fields(make_classifier(name, **cli)) != fields(TempoFormerClassifier())


def test_world_kinds_without_a_world_on_disk_are_the_generated_worlds(monkeypatch):
    """No data/world: the kinds come from the default world generated in memory, as the timelines do."""
    from tempo_analysis.world import StreamWorldConfig
    from tempo_analysis.world.stream import generate_timelines

    monkeypatch.setattr("tempo_analysis.resolve.open_world", lambda path=None: None)
    kinds = world_kinds("world")
    timelines, truth = generate_timelines(StreamWorldConfig(), with_truth=True)
    assert set(kinds.index) == set(timelines.df["post_id"].astype(str))
    assert (kinds == "time").sum() == (truth["change_kind"] == "time").sum() > 0
