"""tempo_analysis.notebook: project/data discovery and record_summary's merge into summary.json."""
import json
import threading

import numpy as np
import pytest

from tempo_analysis import notebook as nbk
from tempo_analysis.data.locations import ENV_DATA, data_dir, project_root


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for var in (ENV_DATA, nbk.ENV_SUMMARY, nbk.ENV_NOTEBOOK, "JPY_SESSION_NAME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(nbk, "_current_notebook", None)


def test_project_root_walks_up_to_pyproject(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("[project]\nname='x'\n")
    deep = tmp_path / "notebooks" / "sub"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    assert project_root() == tmp_path.resolve()
    assert data_dir() == tmp_path.resolve() / "data"
    assert nbk.summary_path() == tmp_path.resolve() / "build" / "summary.json"


def test_project_root_without_pyproject_falls_back_to_checkout_or_cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    root = project_root()
    # an editable install resolves to this checkout; a plain install to the working directory
    checkout = nbk.Path(nbk.__file__).resolve().parent.parent
    assert root in (checkout, tmp_path.resolve())
    if (checkout / "pyproject.toml").exists():
        assert root == checkout


def test_env_overrides_data_and_summary(tmp_path, monkeypatch):
    monkeypatch.setenv(ENV_DATA, str(tmp_path / "elsewhere"))
    monkeypatch.setenv(nbk.ENV_SUMMARY, str(tmp_path / "s.json"))
    assert data_dir() == (tmp_path / "elsewhere").resolve()
    assert nbk.summary_path() == (tmp_path / "s.json").resolve()


def test_record_summary_merges_keys_and_notebooks(tmp_path):
    path = tmp_path / "build" / "summary.json"
    nbk.record_summary({"stream.tempoformer.macro_f1": 0.5, "stream.n": 3}, notebook="01_stream", path=path)
    nbk.record_summary({"stream.tempoformer.macro_f1": 0.75}, notebook="01_stream", path=path)
    nbk.record_summary({"world.posts": 10}, notebook="00_overview.ipynb", path=path)
    data = json.loads(path.read_text())
    assert data["notebooks"]["01_stream"]["values"] == {"stream.tempoformer.macro_f1": 0.75, "stream.n": 3}
    assert data["notebooks"]["00_overview"]["values"] == {"world.posts": 10}
    assert "updated" in data["notebooks"]["01_stream"]
    # no temporary files left behind by the atomic write
    assert [p.name for p in path.parent.iterdir()] == ["summary.json"]


def test_an_interactive_run_does_not_inherit_make_demos_status(tmp_path, monkeypatch):
    """A notebook run in JupyterLab (no $TEMPO_ANALYSIS_SUMMARY) marks its entry interactive: make
    demo's "ok", seconds and parameters must not vouch for numbers another run wrote."""
    path = tmp_path / "build" / "summary.json"
    nbk.update_summary("03_x", {"status": "ok", "seconds": 200.0, "parameters": {}}, path=path)
    monkeypatch.delenv(nbk.ENV_SUMMARY, raising=False)
    monkeypatch.setattr(nbk, "summary_path", lambda start=None: path)
    nbk.record_summary({"diffusion.dcwe_ppl": 2.0}, notebook="03_x")
    entry = json.loads(path.read_text())["notebooks"]["03_x"]
    assert entry["status"] == "interactive" and entry["seconds"] is None and entry["parameters"] is None
    assert entry["values"] == {"diffusion.dcwe_ppl": 2.0}
    # make demo's runs name the file (the environment variable): their status is left to run_notebooks
    monkeypatch.setenv(nbk.ENV_SUMMARY, str(path))
    nbk.update_summary("03_x", {"status": "ok"}, path=path)
    nbk.record_summary({"diffusion.dcwe_ppl": 2.1}, notebook="03_x")
    assert json.loads(path.read_text())["notebooks"]["03_x"]["status"] == "ok"


def test_record_summary_converts_scalars_and_flattens(tmp_path):
    path = tmp_path / "s.json"
    got = nbk.record_summary(
        {"a": np.float32(0.25), "b": np.int64(7), "c": float("nan"), "d": {"e": True, "f": "x"}},
        notebook="nb",
        path=path,
    )
    assert got == {"a": 0.25, "b": 7, "c": None, "d.e": True, "d.f": "x"}
    assert isinstance(got["b"], int)
    assert json.loads(path.read_text())["notebooks"]["nb"]["values"]["c"] is None


def test_record_summary_uses_env_path_and_notebook(tmp_path, monkeypatch):
    monkeypatch.setenv(nbk.ENV_SUMMARY, str(tmp_path / "env.json"))
    monkeypatch.setenv(nbk.ENV_NOTEBOOK, "03_diffusion")
    nbk.record_summary({"k": 1})
    assert json.loads((tmp_path / "env.json").read_text())["notebooks"]["03_diffusion"]["values"] == {"k": 1}


def test_record_summary_uses_jupyter_session_name(tmp_path, monkeypatch):
    monkeypatch.setenv("JPY_SESSION_NAME", "/some/where/02_semantic.ipynb")
    nbk.record_summary({"k": 2}, path=tmp_path / "s.json")
    assert "02_semantic" in json.loads((tmp_path / "s.json").read_text())["notebooks"]


@pytest.mark.parametrize(
    "values, notebook, match",
    [
        ({"k": [1, 2]}, "nb", "'k'.*scalars"),
        ({"k": np.ones(3)}, "nb", "'k'.*scalars"),
        ({"": 1}, "nb", "non-empty string"),
        ([("k", 1)], "nb", "must be a dict"),
        ({"k": 1}, None, "pass notebook="),
    ],
)
def test_record_summary_rejects_bad_input(tmp_path, values, notebook, match):
    path = tmp_path / "s.json"
    with pytest.raises(ValueError, match=match):
        nbk.record_summary(values, notebook=notebook, path=path)
    assert not path.exists()


def test_corrupt_summary_file_is_reported(tmp_path):
    path = tmp_path / "s.json"
    path.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        nbk.record_summary({"k": 1}, notebook="nb", path=path)
    assert path.read_text() == "{not json"  # nothing overwritten
    for other in ("[1, 2]", '{"notebooks": [1]}'):
        path.write_text(other)
        with pytest.raises(ValueError, match="does not hold a"):
            nbk.record_summary({"k": 1}, notebook="nb", path=path)
        assert path.read_text() == other


def test_the_summary_is_written_into_new_folders_as_indented_json(tmp_path):
    path = tmp_path / "build" / "deep" / "s.json"
    nbk.record_summary({"k": 1}, notebook="nb", path=path)
    assert path.read_text().startswith('{\n  "notebooks": {\n    "nb": {')
    nested = tmp_path / "x" / "y" / "z.json"
    nbk.write_json_atomic(nested, {"a": 1})
    assert json.loads(nested.read_text()) == {"a": 1}


def test_concurrent_writers_lose_nothing(tmp_path):
    path = tmp_path / "s.json"

    def write(i):
        nbk.record_summary({f"k{i}": i}, notebook=f"nb{i % 3}", path=path)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(24)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    data = json.loads(path.read_text())["notebooks"]
    keys = {k for entry in data.values() for k in entry["values"]}
    assert keys == {f"k{i}" for i in range(24)}
    assert all(data[f"nb{i % 3}"]["values"][f"k{i}"] == i for i in range(24))


# --- the notebooks' recorded keys (each reuses the session's one nbclient run of its notebook) ---
def _notebook_values(notebook_runs, stem: str) -> dict:
    """Key numbers notebook `stem` recorded in the session's run (skipped if it is not tested)."""
    from _notebook_runs import NOTEBOOKS

    path = next((p for p in NOTEBOOKS if p.stem == stem), None)
    if path is None:
        pytest.skip(f"{stem} is not among the tested notebooks")
    run = notebook_runs.get(path)
    assert run.ok, "\n".join(run.errors)
    return notebook_runs.values(path)


# --- 04_future_text: the keys the notebook records, at its defaults (reuses the session's run) ---
@pytest.mark.slow
@pytest.mark.lm
def test_future_text_summary_keys(notebook_runs):
    v = _notebook_values(notebook_runs, "04_future_text")
    for model in ("baseline", "last-2", "last-3", "freq", "context", "context2"):
        assert v[f"future_text.{model}.content_ppl"] > 1
    assert v["future_text.control.content_ppl"] == v["future_text.baseline.content_ppl"]
    assert v["future_text.freq.content_ppl"] < 0.95 * v["future_text.control.content_ppl"]   # time matters (>= 5 %)
    assert v["future_text.gain"] == pytest.approx(1 - v["future_text.freq_content_ppl"] / v["future_text.control_content_ppl"])
    assert v["future_text.gain"] >= 0.05 and v["future_text.trend_response"] >= 2.0, v   # measured 7.2%, 4.17
    assert v["future_text.freq.alpha"] > 0
    # copy rate: the planted world builds abstracts from a finite set of sentences, so the yardstick is
    # the real test-year texts' own rate (the <= 0.2 target is for the real ACL abstracts)
    assert 0 < v["future_text.copy_rate.heldout"] < 1 and 0 <= v["future_text.copy_rate"] <= 1
    # generated-text response (issue target: >= 2): the injected words' occurrences per generated token
    # in texts sampled with / without the injection at the same seeds, both words written in one set or
    # the other; and the noise-free view, the model's expected count of them over the contexts it
    # generated, at least doubles too (the world's frames leave the trend word to the year)
    assert v["future_text.trend_evidence"] == 2 and v["future_text.trend_occurrences"] >= 6, v
    assert v["future_text.trend_response"] >= 2.0, v
    assert v["future_text.trend_expected_ratio"] >= 2.0, v
    # the what-if raises the injected words' bias and the model's forecast of them (sign), on the scale
    # of an x8 rise with the full-corpus history (log 8 = 2.08 logits if the history were taken at face
    # value; at least 1 logit: more than 2.5x the forecast probability)
    assert v["future_text.trend_bias_rise"] > 1.0 and v["future_text.trend_prob_ratio"] > 2.5


# ---------------------------------------------------------------- notebook 01 (stream): time must matter
STREAM_NOTEBOOK = "01_stream_classification"


@pytest.mark.slow
def test_stream_notebook_records_that_time_matters(notebook_runs):
    """At notebook 01's defaults TempoFormer beats its time-blind control, moving a change post from
    a 10 s to a 1 day gap moves its p(change), and only TempoFormer finds the time-only switches."""
    v = _notebook_values(notebook_runs, STREAM_NOTEBOOK)
    # the notebook's main result, at its defaults: TempoFormer reaches macro-F1 >= 0.8 on the test timelines
    assert v["stream.test_posts"] > 200 and v["stream.tempoformer.macro_f1"] >= 0.8, v
    assert v["stream.time_effect"] >= 0.10, v          # measured 0.255 at world seed 0 (two threads)
    assert v["stream.tempoformer_macro_f1"] == pytest.approx(v["stream.control_macro_f1"] + v["stream.time_effect"])
    assert v["stream.gap_sensitivity"] >= 0.2, v
    assert v["stream.control.gap_sensitivity"] < 1e-6  # the control never sees a gap
    assert v["stream.time_only_recall.tempoformer"] >= 0.6, v
    # the control finds the time-only switches no better than a guess from the class priors
    assert v["stream.time_only_recall.control"] <= v["stream.time_only_recall.chance"] + 0.1, v
    assert v["stream.tempoformer.macro_f1"] == pytest.approx(v["stream.control.macro_f1"] + v["stream.time_effect"])
    # among the baselines, the BiLSTM that reads the gaps finds the time-only switches; the one that does not, not
    assert v["stream.bilstm.time_only_recall"] <= v["stream.time_only_recall.chance"] + 0.1, v
    assert v["stream.time_bilstm.time_only_recall"] >= v["stream.bilstm.time_only_recall"] + 0.3, v
    # TempoFormer's temporal attention over sentence vectors finds them too (its time-blind form: 0.23 here)
    assert v["stream.tempoformer_vectors.time_only_recall"] >= v["stream.bilstm.time_only_recall"] + 0.3, v
    # ... and its own time-blind form, trained beside it, does not: time decides, not the architecture
    assert v["stream.tempoformer_vectors.control.time_only_recall"] <= v["stream.time_only_recall.chance"] + 0.1, v
    assert v["stream.tempoformer_vectors.control.gap_sensitivity"] < 1e-6, v
    assert v["stream.tempoformer_vectors.time_effect"] >= 0.05, v
    assert v["stream.tempoformer_vectors.gap_sensitivity"] >= 0.2, v
    assert v["stream.tempoformer_vectors.macro_f1"] == pytest.approx(
        v["stream.tempoformer_vectors.control.macro_f1"] + v["stream.tempoformer_vectors.time_effect"])


# ---------------------------------------------------------------- notebook 02 (semantic change): time must matter
SEMANTIC_NOTEBOOK = "02_semantic_change"


@pytest.mark.slow
def test_semantic_change_notebook_records_its_headline(notebook_runs):
    """At notebook 02's defaults on the planted world (world seed 0), temporal attention ranks the
    sense-bearing usages by their planted change (measured 0.812), and so does its time-blind control
    (0.810); on the probes, the same sentences in both periods, only temporal attention ranks (0.078
    against exactly 0 for any time-blind model)."""
    v = _notebook_values(notebook_runs, SEMANTIC_NOTEBOOK)
    ta, control = v["semantic_change.spearman"], v["semantic_change.control_spearman"]
    assert ta >= 0.7 and control >= 0.6 and v["semantic_change.plain_spearman"] >= 0.5, v
    assert v["semantic_change.time_effect"] == pytest.approx(ta - control, abs=1e-6)
    assert v["semantic_change.probe_time_effect"] >= 0.04, v


# ---------------------------------------------------------------- notebook 03 (diffusion): the map draws the spread
DIFFUSION_NOTEBOOK = "03_social_diffusion"


@pytest.mark.slow
def test_diffusion_notebook_records_the_map_in_both_worlds(notebook_runs):
    """Notebook 03 reads DCWE's map the paper's way in the walk and in the flight world (world seed 0):
    the map holds cells and DCWE's recovered mode is the planted one in both; the control's mode, the
    gain on the hidden items and the sigma precision are recorded beside it."""
    v = _notebook_values(notebook_runs, DIFFUSION_NOTEBOOK)
    for world in ("walk", "flight"):
        assert v[f"diffusion.{world}.planted_mode"] == world
        assert v[f"diffusion.{world}.recovered_mode"] == world, v
        assert v[f"diffusion.{world}.map_cells_held"] > 10, v
        assert f"diffusion.{world}.cwe_recovered_mode" in v
    assert -1 <= v["diffusion.dcwe_gain"] <= 1 and 0 <= v["diffusion.sigma_precision_at_k"] <= 1


# ---------------------------------------------------------------- teaching: a what-if widget driven in the kernel
@pytest.mark.slow
def test_stream_what_if_panel_responds_and_its_latency_is_recorded(notebook_runs):
    """Notebook 01 drives its what-if panel's gap slider from code (tempo_analysis.widgets.drive): the
    bars change on every move, and the median kernel-side time per move is recorded (not judged)."""
    v = _notebook_values(notebook_runs, STREAM_NOTEBOOK)
    assert v[f"ui.kernel_responds.{STREAM_NOTEBOOK}"] is True, "the what-if bars did not change when the gap moved"
    assert v[f"ui.kernel_latency_ms.{STREAM_NOTEBOOK}"] > 0


# --- 05_real_text: the real-data lesson's keys (skipped without the real data folder) ---
@pytest.mark.slow
@pytest.mark.realdata
def test_real_text_summary_keys(notebook_runs):
    from tempo_analysis.notebook import missing_data_reason

    reason = missing_data_reason("05_real_text")
    if reason:
        pytest.skip(reason)
    v = _notebook_values(notebook_runs, "05_real_text")
    top = [v[f"real.change_top5.{i}"] for i in range(5)]
    assert v["real.change_top5"] == ", ".join(top) and len(set(top)) == 5
    assert "pretraining" not in top                 # not found in 2000-2009: reported, never ranked
    assert v["real.recovered_mode"] in ("walk", "flight", None)
    assert 0 <= v["real.walk_share"] <= 1 and 0 <= v["real.expected_walk_share"] <= 1
    assert -0.5 < v["real.content_ppl_gain"] < 0.5
    for model in ("tempoformer_vectors", "control", "bilstm"):
        assert 0 < v[f"real.stream_macro_f1.{model}"] <= 1
    assert v["real.seconds"] > 0
