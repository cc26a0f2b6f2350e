"""`stream compare`: paired per-fold differences between `stream evaluate` results files."""

import json

import pytest

from tempo_analysis.cli import main
from tempo_analysis.stream.comparison import (choose_window_on_dev, format_markdown, load_evaluation, paired_comparison,
                                              select_seeds)


def _report(model, by_window, *, tune=None, split_seed=0, timelines=20):
    """A `stream evaluate` JSON: by_window {w: {(fold, seed): macro_f1}}."""
    return {"data": "csv:x.csv", "model": model, "ablation": "none", "timelines": timelines, "posts": 100,
            "label_names": ["no", "yes"], "folds": 3, "seeds": [0], "dev_fraction": 0.25,
            "split_seed": split_seed, "tune": tune,
            "by_window": {str(w): {"runs": [{"fold": f, "seed": s, "macro_f1": v, "f1": {"no": v + 0.1, "yes": v - 0.1}}
                                            for (f, s), v in runs.items()]}
                          for w, runs in by_window.items()}}


@pytest.fixture
def files(tmp_path):
    reports = {
        # two seeds: per-fold scores are their means (0.70, 0.60, 0.80)
        "bilstm": _report("bilstm", {5: {(0, 0): 0.6, (0, 1): 0.8, (1, 0): 0.6, (1, 1): 0.6, (2, 0): 0.8, (2, 1): 0.8}}),
        "ffn": _report("ffn_history", {5: {(0, 0): 0.5, (1, 0): 0.5, (2, 0): 0.5}}),
        # higher, but not a baseline: never the default reference
        "tf": _report("tempoformer", {20: {(0, 0): 0.9, (1, 0): 0.7, (2, 0): 0.75}}),
        # a baseline with the best mean but only two folds: not the default reference either
        "swnu": _report("swnu", {5: {(0, 0): 0.95, (1, 0): 0.95}}),
    }
    paths = {}
    for k, rep in reports.items():
        paths[k] = tmp_path / f"{k}.json"
        paths[k].write_text(json.dumps(rep))
    return paths


def test_differences_are_per_fold_against_the_best_full_baseline(files):
    rows = [r for k in ("bilstm", "ffn", "tf", "swnu") for r in load_evaluation(files[k])]
    res = paired_comparison(rows)
    assert res["reference"] == "bilstm w=5"
    by = {r["label"]: r for r in res["rows"]}
    assert by["bilstm w=5"]["per_fold"] == pytest.approx({"0": 0.7, "1": 0.6, "2": 0.8})
    tf = by["tempoformer w=20"]
    assert tf["delta_vs_reference"] == pytest.approx({"0": 0.2, "1": 0.1, "2": -0.05})
    assert tf["delta_mean"] == pytest.approx(0.25 / 3) and (tf["wins"], tf["losses"]) == (2, 1)
    # t interval over the 3 per-fold differences: mean ± t(0.975, df 2) · sd / √3, by hand:
    # sd = sqrt((0.11667² + 0.01667² + 0.13333²) / 2) = 0.125831; t = 4.302653; half = 0.312584
    assert tf["delta_ci95"] == pytest.approx([0.083333 - 0.312584, 0.083333 + 0.312584], abs=1e-5)
    assert by["bilstm w=5"]["delta_ci95"] is None  # the reference
    assert by["swnu w=5"]["delta_vs_reference"] == pytest.approx({"0": 0.25, "1": 0.35})  # shared folds only
    assert by["bilstm w=5"]["macro_f1_std"] == pytest.approx(0.1095445, abs=1e-6)  # over the 6 runs, ddof 1
    assert [r["label"] for r in res["rows"]][0] == "swnu w=5"  # sorted by mean
    table = format_markdown(res)
    assert "| tempoformer | 20 | 3 × 1 | 0.783 ± 0.104 |" in table and "+0.083 (+0.200, +0.100, -0.050) | [-0.229, +0.396] | 2 / 1 |" in table
    assert "0.950 / 0.950 / –" in table
    for r in res["rows"]:                    # a comparison written before ties were counted has no "ties"
        r.pop("ties")
    assert "| 2 / 1 |" in format_markdown(res) and "tied" not in format_markdown(res)


def test_against_names_the_reference_and_refuses_ambiguity(files):
    rows = load_evaluation(files["bilstm"]) + load_evaluation(files["ffn"])
    res = paired_comparison(rows, against="ffn_history")
    assert res["reference"] == "ffn_history w=5"
    assert {r["label"]: r["delta_mean"] for r in res["rows"]}["bilstm w=5"] == pytest.approx(0.2)
    with pytest.raises(ValueError, match="matches 0 rows"):
        paired_comparison(rows, against="lstm")


def test_evaluations_on_other_folds_are_refused(files, tmp_path):
    other = tmp_path / "other.json"
    other.write_text(json.dumps(_report("bilstm", {10: {(0, 0): 0.5}}, split_seed=1)))
    with pytest.raises(ValueError, match="'split_seed'.*cannot be paired"):
        paired_comparison(load_evaluation(files["ffn"]) + load_evaluation(other))
    fewer = tmp_path / "fewer.json"
    fewer.write_text(json.dumps(_report("bilstm", {10: {(0, 0): 0.5}}, timelines=19)))
    with pytest.raises(ValueError, match="'timelines'"):
        paired_comparison(load_evaluation(files["ffn"]) + load_evaluation(fewer))


def test_cli_compare_writes_the_table_and_json(files, tmp_path, capsys):
    md, js = tmp_path / "cmp.md", tmp_path / "cmp.json"
    assert main(["stream", "compare", str(files["bilstm"]), f"{files['tf']}=TempoFormer (frozen)",
                 "--out", str(md), "--json", str(js)]) == 0
    printed = capsys.readouterr().out
    assert "| TempoFormer (frozen) | 20 |" in printed and "(reference)" in printed
    assert md.read_text().startswith("# tempo_analysis stream compare") and "| TempoFormer (frozen) |" in md.read_text()
    saved = json.loads(js.read_text())
    assert saved["reference"] == "bilstm w=5" and len(saved["rows"]) == 2
    # the same file twice under one name: refused, with the way out
    assert main(["stream", "compare", str(files["ffn"]), str(files["ffn"])]) == 2
    assert "both hold (fold, seed) [(0, 0), (1, 0), (2, 0)]" in capsys.readouterr().err
    assert main(["stream", "compare", str(files["ffn"]), str(files["ffn"]) + "=other"]) == 0
    assert main(["stream", "compare", str(tmp_path / "missing.json")]) == 2
    assert "no such results file" in capsys.readouterr().err


def test_folds_run_in_separate_files_are_joined(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(_report("tempoformer", {20: {(0, 0): 0.7, (1, 0): 0.6}})))
    b.write_text(json.dumps(_report("tempoformer", {20: {(2, 0): 0.8}})))
    res = paired_comparison(load_evaluation(a) + load_evaluation(b))
    (row,) = res["rows"]
    assert row["folds"] == [0, 1, 2] and row["per_fold"] == pytest.approx({"0": 0.7, "1": 0.6, "2": 0.8})
    assert row["source"] == f"{a} + {b}"


def test_only_folds_runs_the_named_folds_of_the_same_split():
    from tempo_analysis.evaluation.classification import cross_validate

    from .conftest import make_timelines

    tl = make_timelines(n_timelines=9, n_posts=(4, 3, 5), labels=("no", "yes"), seed=3)

    class Majority:
        def fit(self, train, dev=None):
            self.label_names_ = list(train.label_names)
            self.train_ids_ = sorted(set(train.df["timeline_id"]))
            return self

        def predict(self, t):
            return [0] * len(t.df)

    seen = []

    def make(seed):
        seen.append(Majority())
        return seen[-1]

    full = cross_validate(make, tl, folds=3, progress=False)
    part = cross_validate(make, tl, folds=3, fold_ids=[2], progress=False)
    assert [r["fold"] for r in part["runs"]] == [2]
    assert seen[-1].train_ids_ == seen[2].train_ids_  # fold 2 trains on the same timelines either way
    assert part["runs"][0]["n_test"] == full["runs"][2]["n_test"]
    with pytest.raises(ValueError, match="0..2"):
        cross_validate(make, tl, folds=3, fold_ids=[3], progress=False)


def _tuned(by_window, dev):
    """A --tune report: by_window {w: {(fold, seed): test macro_f1}}, dev {w: {(fold, seed): best dev F1}}."""
    rep = _report("bilstm", by_window, tune={"lr": [1e-3, 1e-4]})
    for w, res in rep["by_window"].items():
        for run in res["runs"]:
            best = dev[int(w)][(run["fold"], run["seed"])]
            worse = best - (0.2 if int(w) == 40 else 0.05)  # the first grid point is not the best one
            run["tuned"] = {"chosen": {"lr": 1e-4}, "grid": [{"lr": 1e-3, "dev_macro_f1": worse},
                                                              {"lr": 1e-4, "dev_macro_f1": best}]}
    return rep


def test_the_window_chosen_on_dev_takes_each_fold_from_the_better_dev_window(tmp_path):
    w20 = {(0, 0): 0.70, (1, 0): 0.60, (2, 0): 0.80}
    w40 = {(0, 0): 0.90, (1, 0): 0.50, (2, 0): 0.85, (2, 1): 0.1}  # (2, 1) has no w=20 partner
    dev = {20: {(0, 0): 0.60, (1, 0): 0.70, (2, 0): 0.75}, 40: {(0, 0): 0.65, (1, 0): 0.60, (2, 0): 0.75, (2, 1): 0.9}}
    a, b = tmp_path / "w20.json", tmp_path / "w40.json"
    a.write_text(json.dumps(_tuned({20: w20}, dev)))
    b.write_text(json.dumps(_tuned({40: w40}, dev)))
    rows = load_evaluation(a) + load_evaluation(b)
    with pytest.warns(UserWarning, match=r"\(2, 1\)"):
        (chosen,) = choose_window_on_dev(rows, [40, 20])
    # fold 0: 40 is better on dev; fold 1: 20; fold 2: a dev tie goes to the smaller window
    assert chosen.label == "bilstm (tuned on dev) w=dev:20,40"
    assert [(r["fold"], r["window"], r["macro_f1"]) for r in chosen.runs] == [(0, 40, 0.9), (1, 20, 0.6), (2, 20, 0.8)]
    with pytest.warns(UserWarning):
        res = paired_comparison(rows + choose_window_on_dev(rows, [20, 40]), against="bilstm (tuned on dev) w=20")
    row = {r["label"]: r for r in res["rows"]}["bilstm (tuned on dev) w=dev:20,40"]
    assert row["delta_vs_reference"] == pytest.approx({"0": 0.2, "1": 0.0, "2": 0.0})
    assert "| bilstm (tuned on dev) | dev:20,40 | 3 × 1 |" in format_markdown(res)


def test_the_window_on_dev_needs_dev_scores_and_two_windows(tmp_path, files, capsys):
    plain = tmp_path / "w40.json"
    plain.write_text(json.dumps(_report("bilstm", {40: {(f, s): 0.5 for f in range(3) for s in (0, 1)}})))
    rows = load_evaluation(files["bilstm"]) + load_evaluation(plain)
    with pytest.raises(ValueError, match="no dev scores.*bilstm.*--tune"):
        choose_window_on_dev(rows, [5, 40])
    # beside a tuned model, an untuned one is named in a warning and gets no chosen row
    dev = {5: {(f, 0): 0.6 for f in range(3)}, 40: {(f, 0): 0.7 for f in range(3)}}
    tuned = tmp_path / "tuned.json"
    tuned.write_text(json.dumps(_tuned({5: dev[5], 40: dev[40]}, dev)))
    with pytest.warns(UserWarning, match=r"no dev scores.*bilstm \(.*w40.json.*fixed-window rows are kept"):
        chosen = choose_window_on_dev(rows + load_evaluation(tuned, name="tuned"), [5, 40])
    assert [r.label for r in chosen] == ["tuned w=dev:5,40"]
    with pytest.raises(ValueError, match="two or more windows"):
        choose_window_on_dev(rows, [5])
    with pytest.raises(ValueError, match="no model has runs at all of these windows"):
        choose_window_on_dev(rows, [5, 10])
    assert main(["stream", "compare", str(files["bilstm"]), "--window-on-dev", "5,x"]) == 2
    assert "integers joined by commas" in capsys.readouterr().err


def test_seeds_pair_rows_seed_for_seed_and_name_what_they_lack(tmp_path, capsys):
    four = tmp_path / "tf.json"
    three = tmp_path / "bilstm.json"
    # seed 1 is far better for the model: with it, the model's fold means are higher
    rep = _report("tempoformer", {40: {(f, s): (0.9 if s == 1 else 0.6) for f in range(3) for s in (0, 1, 12)}})
    rep["seconds"] = 90.0
    for run in rep["by_window"]["40"]["runs"]:
        run["seconds"] = 10.0
    four.write_text(json.dumps(rep))
    three.write_text(json.dumps(_report("bilstm", {40: {(0, 0): 0.7, (1, 0): 0.5, (2, 0): 0.6}})))
    part = tmp_path / "bilstm_seed12.json"   # seed 12 run in its own process: joined before selecting
    part.write_text(json.dumps(_report("bilstm", {40: {(0, 12): 0.7, (1, 12): 0.5}})))
    rows = load_evaluation(four) + load_evaluation(three) + load_evaluation(part)
    with pytest.warns(UserWarning) as caught:
        kept = select_seeds(rows, [12, 0])
    (warned,) = [str(w.message) for w in caught]   # one warning: the joined row, not each file
    assert warned.startswith("bilstm w=40 (") and "lacks seeds {2: [12]}" in warned
    res = paired_comparison(kept, against="bilstm")
    row = {r["name"]: r for r in res["rows"]}["tempoformer"]
    assert row["seeds"] == [0, 12] and row["n_runs"] == 6
    assert row["seconds"] == 60.0   # the kept runs' time, not the file's
    assert row["delta_vs_reference"] == pytest.approx({"0": -0.1, "1": 0.1, "2": 0.0})
    with pytest.warns(UserWarning, match=r"bilstm.*has no run with seeds \[1\]"):
        (only,) = select_seeds(rows, [1])
    assert only.name == "tempoformer" and only.seeds == [1]
    out, md = tmp_path / "t.json", tmp_path / "t.md"
    with pytest.warns(UserWarning):
        assert main(["stream", "compare", str(four), str(three), str(part), "--seeds", "0,12", "--against", "bilstm",
                     "--json", str(out), "--out", str(md)]) == 0
    assert "(seeds 0, 12 only)" in md.read_text().splitlines()[0]
    saved = json.loads(out.read_text())
    assert saved["selected_seeds"] == [0, 12]
    assert {r["name"]: r["seeds"] for r in saved["rows"]} == {"tempoformer": [0, 12], "bilstm": [0, 12]}
    assert main(["stream", "compare", str(four), "--seeds", "0,x"]) == 2
    assert "integers joined by commas" in capsys.readouterr().err


def test_ties_folds_and_seed_counts_are_reported_as_they_are(tmp_path):
    # equal fold means reached over different numbers of seeds differ by ~1e-16: ties, not wins or losses
    ref = _report("bilstm", {5: {(0, 0): 0.15, (1, 0): 0.7, (2, 0): 0.5}})
    tied = _report("ffn_history", {5: {(0, 0): 0.1, (0, 1): 0.2, (1, 0): 0.6, (1, 1): 0.7, (1, 2): 0.8,
                                       (2, 0): 0.5, (2, 1): 0.5}})
    for k, rep in {"ref": ref, "tied": tied}.items():
        (tmp_path / f"{k}.json").write_text(json.dumps(rep))
    rows = load_evaluation(tmp_path / "ref.json") + load_evaluation(tmp_path / "tied.json")
    res = paired_comparison(rows, against="bilstm")
    row = {r["name"]: r for r in res["rows"]}["ffn_history"]
    assert (row["wins"], row["losses"], row["ties"]) == (0, 0, 3)
    assert row["seeds_per_fold"] == {"0": 2, "1": 3, "2": 2}
    table = format_markdown(res)
    assert "| ffn_history | 5 | 3 × 2–3 |" in table and "0 / 0 (3 tied)" in table


def test_without_a_row_on_every_fold_the_reference_is_still_a_baseline(tmp_path):
    # every file ran two of the three folds (--max-folds 2): TempoFormer, though best, is not the reference
    files = {"b": _report("bilstm", {5: {(0, 0): 0.6, (1, 0): 0.6}}),
             "t": _report("tempoformer", {20: {(0, 0): 0.9, (1, 0): 0.9}}),
             "s": _report("swnu", {5: {(0, 0): 0.95}})}   # best baseline, but fewer folds
    rows = []
    for k, rep in files.items():
        (tmp_path / f"{k}.json").write_text(json.dumps(rep))
        rows += load_evaluation(tmp_path / f"{k}.json")
    res = paired_comparison(rows)
    assert res["reference"] == "bilstm w=5"
    table = format_markdown(res)
    # swnu shares only fold 0 with the reference: the difference says which fold it is
    assert "+0.350 (0: +0.350)" in table and "+0.300 (+0.300, +0.300)" not in table


def test_seeds_name_a_fold_that_loses_every_run(tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps(_report("bilstm", {5: {(0, 0): 0.6, (1, 0): 0.6, (2, 5): 0.9}})))
    with pytest.warns(UserWarning, match=r"lacks seeds \{2: \[0\]\}.*folds \[2\] are left out"):
        (kept,) = select_seeds(load_evaluation(path), [0])
    assert kept.folds == [0, 1]
