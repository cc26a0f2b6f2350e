"""The recorded study files read back: one run per (data seed, model seed, method), the frequency baseline
once per data seed, and the seed spread that notebook 02 shows next to its single run."""
import json
import math

import pytest

from tempo_analysis.semantic_change.study import recorded_study, seed_spread


def _run(method, rho, data_seed=0, model_seed=None):
    r = {"data_seed": data_seed, "method": method, "metrics": {"spearman": rho, "pearson": rho / 2},
         "scorer": "cosine", "layers": 4, "wall_s": 1.0}
    if model_seed is not None:
        r["model_seed"] = model_seed
    return r


@pytest.fixture
def study_file(tmp_path):
    runs = [_run("frequency", 0.1, model_seed=0)]
    for seed, (ta, tt) in reversed(list(enumerate([(0.5, 0.2), (-0.1, 0.2), (0.2, 0.1)]))):   # seed 2 first
        runs += [_run("temporal-attention", ta, model_seed=seed), _run("time-token", tt, model_seed=seed),
                 _run("no-time", 0.0, model_seed=seed)]
    runs += [_run("temporal-attention", 0.9, data_seed=1, model_seed=0)]
    p = tmp_path / "study.json"
    p.write_text(json.dumps({"args": {}, "runs": runs}))
    return p


def test_seed_spread_summarises_each_method_over_its_model_seeds(study_file):
    t = seed_spread(study_file).set_index("method")
    assert list(t.index) == ["temporal-attention", "time-token", "no-time"]       # frequency has no seed
    ta = t.loc["temporal-attention"]
    assert ta["seeds"] == 3 and ta["by_seed"] == [0.5, -0.1, 0.2]          # data seed 0 only: not the 0.9
    assert math.isclose(ta["mean"], 0.2) and math.isclose(ta["min"], -0.1) and math.isclose(ta["max"], 0.5)
    assert math.isclose(ta["std"], 0.3)                                     # n - 1
    assert seed_spread(study_file, data_seed=1).set_index("method").loc["temporal-attention", "by_seed"] == [0.9]
    assert bool(ta["sees_time"]) and not bool(t.loc["no-time", "sees_time"])
    assert math.isclose(t.loc["time-token", "mean"], 0.5 / 3)


def test_recorded_study_picks_one_data_seed_and_one_model_seed(study_file):
    t = recorded_study(study_file).set_index("method")
    assert t.loc["temporal-attention", "spearman"] == 0.5 and t.loc["frequency", "spearman"] == 0.1
    assert len(t) == 4
    t1 = recorded_study(study_file, model_seed=1).set_index("method")
    assert t1.loc["temporal-attention", "spearman"] == -0.1 and "frequency" in t1.index
    t2 = recorded_study(study_file, data_seed=1).set_index("method")
    assert list(t2.index) == ["temporal-attention"] and t2.loc["temporal-attention", "spearman"] == 0.9


def test_files_without_model_seeds_read_as_seed_zero_and_absent_files_as_none(tmp_path):
    p = tmp_path / "old.json"
    p.write_text(json.dumps({"runs": [_run("plain", 0.3), _run("temporal-attention", 0.4)]}))
    assert list(recorded_study(p)["spearman"]) == [0.3, 0.4]
    assert seed_spread(p).set_index("method").loc["plain", "seeds"] == 1
    assert recorded_study(tmp_path / "none.json") is None and seed_spread(tmp_path / "none.json") is None


def test_recorded_study_says_whether_each_run_was_z_scored(tmp_path):
    runs = [dict(_run("plain", 0.3), zscore=True), dict(_run("temporal-attention", 0.4), zscore=False),
            _run("frequency", 0.1)]
    p = tmp_path / "study.json"
    p.write_text(json.dumps({"runs": runs}))
    assert list(recorded_study(p)["zscore"]) == [True, False, None]


def test_the_first_run_in_the_file_picks_the_data_seed_and_a_run_without_a_model_seed_is_seed_zero(tmp_path):
    runs = [_run("plain", 0.3, data_seed=1), _run("plain", 0.5, data_seed=0),
            _run("temporal-attention", 0.12345, data_seed=1, model_seed=1),
            _run("temporal-attention", 0.9, data_seed=1)]                     # no model seed: seed 0
    p = tmp_path / "study.json"
    p.write_text(json.dumps({"runs": runs}))
    assert recorded_study(p).set_index("method").loc["plain", "spearman"] == 0.3
    t = seed_spread(p).set_index("method")
    assert t.loc["plain", "by_seed"] == [0.3]                                  # data seed 1, not the 0.5
    assert t.loc["temporal-attention", "by_seed"] == [0.9, 0.123]             # seed 0 first; 3 decimals
    assert math.isnan(t.loc["plain", "std"]) and math.isclose(t.loc["temporal-attention", "std"], 0.5491,
                                                               abs_tol=1e-4)


def test_the_packaged_study_says_how_it_was_made_and_holds_what_notebook_02_shows():
    """The recorded pseudoword study ships with the package (assets/recorded) with the command that
    regenerates it; its numbers are the recorded run's (the time ablation at data seed 2)."""
    study = recorded_study()
    command = study.attrs["command"]
    assert command.startswith("OMP_NUM_THREADS=1 python ") and "/scripts/semantic_change_study.py " in command
    assert "--data pseudoword" in command and study.attrs["machine"] and study.attrs["wall_s"] > 0
    s = study.set_index("method")
    assert list(s.index) == ["frequency", "plain", "no-time", "temporal-attention", "time-token", "both"]
    assert round(s.loc["temporal-attention", "spearman"], 3) == 0.698 and round(s.loc["no-time", "spearman"], 3) == 0.702
