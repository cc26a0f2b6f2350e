"""`stream compare` at its edges: malformed files, older files without the split fields, joined timings,
per-class F1, one-run rows, a two-fold interval, and the window chosen on dev among more windows."""

import json
import warnings

import pytest

from tempo_analysis.stream.comparison import (choose_window_on_dev, delta_interval, join_parts, load_evaluation,
                                              paired_comparison)

from .test_paired_comparison import _report


def _write(tmp_path, name, report):
    p = tmp_path / f"{name}.json"
    p.write_text(json.dumps(report))
    return p


@pytest.mark.parametrize("content", [{"model": "bilstm"}, [1, 2]])
def test_a_file_without_by_window_is_refused_by_name(tmp_path, content):
    p = _write(tmp_path, "bad", content)
    with pytest.raises(ValueError, match="no 'by_window' field"):
        load_evaluation(p)


def test_a_file_written_before_the_split_fields_pairs_with_one_that_records_the_defaults(tmp_path):
    old = _report("bilstm", {5: {(0, 0): 0.6, (1, 0): 0.6, (2, 0): 0.6}})
    del old["dev_fraction"], old["split_seed"]
    new = _report("tempoformer", {5: {(0, 0): 0.7, (1, 0): 0.7, (2, 0): 0.7}})          # 0.25, seed 0
    rows = load_evaluation(_write(tmp_path, "old", old)) + load_evaluation(_write(tmp_path, "new", new))
    res = paired_comparison(rows)
    assert res["split"]["dev_fraction"] == 0.25 and res["split"]["split_seed"] == 0
    other = _report("tempoformer", {5: {(0, 0): 0.7, (1, 0): 0.7, (2, 0): 0.7}}, split_seed=1)
    with pytest.raises(ValueError, match="split_seed"):
        paired_comparison(load_evaluation(_write(tmp_path, "old2", old))
                          + load_evaluation(_write(tmp_path, "o", other)))


def test_joined_parts_add_their_seconds_and_an_untimed_part_makes_the_sum_unknown(tmp_path):
    a = _report("bilstm", {5: {(0, 0): 0.6}})
    b = _report("bilstm", {5: {(1, 0): 0.7}})
    c = _report("bilstm", {5: {(2, 0): 0.8}})
    a["seconds"], b["seconds"] = 10.0, 5.0
    rows = [load_evaluation(_write(tmp_path, k, r))[0] for k, r in (("a", a), ("b", b), ("c", c))]
    (ab,) = join_parts(rows[:2])
    assert ab.seconds == 15.0 and ab.folds == [0, 1]
    assert join_parts([rows[0], rows[2]])[0].seconds is None
    assert join_parts([rows[2], rows[0]])[0].seconds is None


def test_rows_report_each_class_f1_and_a_single_run_has_zero_spread(tmp_path):
    one = _report("bilstm", {5: {(0, 0): 0.6}})
    two = _report("tempoformer", {5: {(0, 0): 0.7, (0, 1): 0.9}})
    res = paired_comparison(load_evaluation(_write(tmp_path, "one", one))
                            + load_evaluation(_write(tmp_path, "two", two)))
    assert res["label_names"] == ["no", "yes"]
    by = {r["name"]: r for r in res["rows"]}
    assert by["bilstm"]["f1"] == pytest.approx({"no": 0.7, "yes": 0.5})
    assert by["bilstm"]["macro_f1_std"] == 0.0
    assert by["tempoformer"]["macro_f1_std"] == pytest.approx(0.1414214, abs=1e-6)          # ddof 1 over 2 runs


def test_the_interval_needs_two_folds_and_takes_the_t_quantile_with_one_degree_of_freedom():
    assert delta_interval([0.2]) is None and delta_interval([]) is None
    lo, hi = delta_interval([0.1, 0.3])
    # mean 0.2, sd 0.141421, t(0.975, df 1) = 12.706205: half = 12.706205 * 0.141421 / sqrt(2) = 1.270620
    assert (lo, hi) == pytest.approx((0.2 - 1.270620, 0.2 + 1.270620), abs=1e-5)


def test_the_window_is_chosen_on_dev_also_when_the_model_ran_more_windows(tmp_path):
    grid = lambda s: {"grid": [{"dev_macro_f1": s}]}                                       # noqa: E731
    rep = _report("tempoformer", {5: {(0, 0): 0.5}, 10: {(0, 0): 0.6}, 20: {(0, 0): 0.7}}, tune=True)
    for w, dev in ((5, 0.9), (10, 0.4), (20, 0.8)):
        rep["by_window"][str(w)]["runs"][0]["tuned"] = grid(dev)
    rows = load_evaluation(_write(tmp_path, "tf", rep))
    with warnings.catch_warnings():
        warnings.simplefilter("error")                    # every model has dev scores: nothing to warn about
        (chosen,) = choose_window_on_dev(rows, [10, 20])
    assert chosen.window == "dev:10,20"
    assert chosen.runs[0]["window"] == 20 and chosen.runs[0]["macro_f1"] == 0.7           # 0.8 > 0.4 on dev
