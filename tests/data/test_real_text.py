"""Lesson 05's library steps (tempo_analysis.real_text) on small frames, and on the real data when present."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from tempo_analysis import notebook as nbk
from tempo_analysis import real_text as rt
from tempo_analysis.data.errors import DataError
from tempo_analysis.data.locations import ENV_SHARED_DATA, shared_data_dir

SHARED = shared_data_dir()
NO_DATA = f"no real data folder (set ${ENV_SHARED_DATA}, or put shared/data above the checkout)"


def _fake_shared(tmp_path, *, drop=None):
    for rel in rt.REQUIRED.values():
        if rel == drop:
            continue
        path = tmp_path / rel
        if rel.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("x")
    return tmp_path


def test_check_data_dir_names_the_missing_file(tmp_path):
    assert rt.check_data_dir(_fake_shared(tmp_path / "ok")) == (tmp_path / "ok").resolve()
    for rel in rt.REQUIRED.values():
        folder = _fake_shared(tmp_path / rel.replace("/", "_"), drop=rel)
        with pytest.raises(FileNotFoundError, match=rf"has no {rel}.*Fix: point DATA_DIR"):
            rt.check_data_dir(folder)
    with pytest.raises(FileNotFoundError, match="is not a folder"):
        rt.check_data_dir(tmp_path / "nowhere")


def test_lesson_05_is_skipped_with_a_reason_only_without_the_data(monkeypatch, tmp_path):
    monkeypatch.setenv(ENV_SHARED_DATA, str(tmp_path / "nowhere"))
    monkeypatch.chdir(tmp_path)            # no shared/data above this folder either
    monkeypatch.setattr("tempo_analysis.data.locations.project_root", lambda start=None: tmp_path)
    reason = nbk.missing_data_reason("05_real_text.ipynb")
    assert reason and ENV_SHARED_DATA in reason
    assert nbk.missing_data_reason("02_semantic_change") is None
    monkeypatch.setenv(ENV_SHARED_DATA, str(tmp_path))
    assert nbk.missing_data_reason("05_real_text") is None


def _abstracts():
    old = ["We parse the sentence with a grammar. The attention of the reader matters here.",
           "A tree transformer rewrites the parse. The corpus has a grammar for each sentence."] * 6
    new = ["We train a transformer with attention. The model reads each sentence of the corpus.",
           "Pretraining the transformer helps. Attention weights show the grammar of the sentence."] * 6
    rows = [(f"o{i}", 2001 + i % 5, t) for i, t in enumerate(old)] + [(f"n{i}", 2019 + i % 3, t)
                                                                   for i, t in enumerate(new)]
    return pd.DataFrame(rows, columns=["doc_id", "year", "text"])


def test_change_data_reports_rare_words_and_never_scores_them():
    out = rt.change_data(_abstracts(), changing=("transformer", "attention", "pretraining"),
                         stable=("grammar", "sentence", "corpus"), min_usages=3)
    report = out["report"].set_index("word")
    assert report.loc["pretraining", "status"] == "not found in 2000-2009"
    assert report.loc["attention", "status"] == "ranked"
    assert report.loc["transformer", "usages 2000-2009"] == 6          # whole words, case-insensitive
    assert "pretraining" not in out["data"].targets
    assert set(out["data"].targets) == {"transformer", "attention", "grammar", "sentence", "corpus"}
    assert list(out["data"].corpus.periods) == ["2000-2009", "2018-2021"]
    frame = _abstracts()
    frame = frame.drop(frame.index[frame["text"].str.contains("tree transformer")][:4])   # 2 old usages left
    few = rt.change_data(frame, changing=("transformer", "attention"), stable=("grammar", "sentence"), min_usages=3)
    assert few["report"].set_index("word").loc["transformer", "status"] == "only 2 usages in 2000-2009"
    assert "transformer" not in few["data"].targets


def test_change_data_refuses_what_it_cannot_rank():
    with pytest.raises(DataError, match="only 0 of the words"):
        rt.change_data(_abstracts(), changing=("kernel",), stable=("svm",))
    with pytest.raises(DataError, match="no abstracts in 1990s"):
        rt.change_data(_abstracts(), periods={"1990s": (1990, 1999), "2018-2021": (2018, 2021)})


def test_sentences_split_at_sentence_ends():
    frame = pd.DataFrame({"doc_id": ["a"], "year": [2020], "text": ["We train a model. It works well (mostly). Ok."]})
    assert rt.sentences(frame)["text"].tolist() == ["We train a model.", "It works well (mostly)."]


def test_separation_measures_changing_words_above_controls():
    report = pd.DataFrame({"word": list("abcd"), "role": ["expected to change"] * 2 + ["stable control"] * 2})
    high = pd.DataFrame({"word": list("abcd"), "score": [0.9, 0.8, 0.1, 0.2]})
    assert rt.separation(high, report) > 5
    assert rt.separation(high.assign(score=[0.1, 0.2, 0.9, 0.8]), report) < -5
    assert math.isnan(rt.separation(high.assign(score=[0.5] * 4), report))


def test_usage_examples_show_the_word_in_both_periods():
    data = rt.change_data(_abstracts(), changing=("transformer", "attention"), stable=("grammar", "sentence"))["data"]
    ex = rt.usage_examples(data, "transformer", per_period=2)
    assert ex["period"].tolist() == ["2000-2009"] * 2 + ["2018-2021"] * 2
    assert all("TRANSFORMER" in u for u in ex["usage"])


@pytest.mark.parametrize("method", list(rt.OWN_DATA))
def test_own_data_examples_load_through_the_library(method, tmp_path):
    ex = rt.own_data_example(method, tmp_path)
    assert (tmp_path / ex["file"]).is_file() and len(ex["frame"]) == 3
    loaded = ex["loaded"]
    assert len(loaded.df if hasattr(loaded, "df") else loaded) == 3
    assert ex["command"] and ex["call"]


def test_own_data_example_names_the_methods():
    with pytest.raises(ValueError, match="use one of"):
        rt.own_data_example("topic models", ".")


@pytest.mark.realdata
@pytest.mark.skipif(SHARED is None, reason=NO_DATA)
def test_the_anthology_loads_for_the_lesson():
    acl = rt.load_anthology(rt.check_data_dir(SHARED))
    years = set(acl["abstracts"]["year"])
    assert {2000, 2009, 2018, 2020, 2021} <= years            # 2018, 2020, 2021 come from the XML
    venues = acl["venues"]
    assert len(venues.units) >= 10 and venues.graph.number_of_edges() > 0
    assert rt.venue_table(venues).to_numpy().max() <= 15      # the per venue-and-year sample
    change = rt.change_data(acl["abstracts"])
    report = change["report"].set_index("word")
    assert report.loc["pretraining", "status"] == "not found in 2000-2009"
    assert {"attention", "embedding", "corpus"} <= set(change["data"].targets)


def test_read_spread_reads_the_stored_maps_on_a_rerun(monkeypatch, tmp_path):
    """The r̂ tables are memoised with the fit's key: a rerun rebuilds the maps without embedding."""
    from types import SimpleNamespace

    import networkx as nx

    from tempo_analysis.diffusion import lesson as dlesson

    monkeypatch.setenv(nbk.ENV_CACHE, str(tmp_path / "cache"))
    graph = nx.Graph([("a", "b"), ("b", "c")])
    rhat = pd.DataFrame({"unit": ["a", "a", "b", "c"], "time": [2017, 2018, 2018, 2019], "rhat": [3.0, 2.0, 1.0, 2.0],
                         "n": [1, 2, 1, 1], "rank": [1.0, 2.0, 3.0, 2.0], "n_neighbors": [3] * 4, "example": ["x"] * 4})
    index = SimpleNamespace(units=["a", "b", "c"], slices=[2017, 2018, 2019])
    calls = []

    def read_maps(mapper, word, anchor):
        calls.append((word, anchor))
        maps = {v: SimpleNamespace(rhat=rhat, index=index) for v in ("dcwe", "cwe")}
        return maps

    monkeypatch.setattr(dlesson, "read_maps", read_maps)
    fitted = {"mappers": {"data": SimpleNamespace(corpus_=SimpleNamespace(graph=graph))}, "params": {"fit": 1}}
    first = rt.read_spread(fitted, anchor="encoder")
    again = rt.read_spread(fitted, anchor="encoder")
    assert calls == [("transformer", "encoder")]                    # the rerun embeds nothing
    pd.testing.assert_frame_equal(first["table"], again["table"])
    assert again["maps"]["dcwe"].first == {"a": 2017, "b": 2018, "c": 2019}
    assert again["table"].set_index("model").loc["dcwe", "cells_held"] == 4
    rt.read_spread(fitted, anchor="decoder")                        # another anchor is read afresh
    assert calls[-1] == ("transformer", "decoder")


def test_fit_stream_is_memoised_and_keeps_json_rows(monkeypatch, tmp_path):
    import numpy as np

    from tempo_analysis.stream import lesson as slesson

    monkeypatch.setenv(nbk.ENV_CACHE, str(tmp_path / "cache"))
    trained = []
    fitted = {"names": ["O", "IS"], "params": {"data_fingerprint": "f"}}
    row = {"summary": {"macro_f1": {"mean": np.float64(0.5)}, "IS": {"f1": np.array([0.25])}}}
    monkeypatch.setattr(slesson, "load_lesson", lambda data, **kw: fitted)
    monkeypatch.setattr(slesson, "vector_time_effect",
                        lambda f: trained.append("te") or {"tempoformer": {"proba": 1}, "control": {"proba": 2}})
    monkeypatch.setattr(slesson, "fit_baselines", lambda f, names, cache=True: {"bilstm": row})
    monkeypatch.setattr(slesson, "score_row", lambda f, proba: row)
    first = rt.fit_stream(tmp_path)
    again = rt.fit_stream(tmp_path)
    assert trained == ["te"] and again == first
    assert again["macro_f1"] == {"tempoformer_vectors": 0.5, "control": 0.5, "bilstm": 0.5}
    assert again["names"] == ["O", "IS"] and again["rows"][rt.STREAM_MODELS["bilstm"]]["summary"]["IS"]["f1"] == [0.25]


def test_real_text_ranking_keeps_its_own_time_lr_and_otherwise_notebook_02s_settings():
    # lesson 05's recorded numbers were measured at this time_lr; notebook 02's own value may move
    from dataclasses import replace

    from tempo_analysis.semantic_change.config import PRESETS, preset

    cfg = rt.change_config("temporal-attention", samples=40, train_sentences=3000, seed=0)
    nb = preset("notebook")
    assert cfg.train.time_lr == rt.REAL_TEXT_TIME_LR == 1e-2
    assert (cfg.scorer, cfg.zscore) == (PRESETS["cli"].scorer, PRESETS["cli"].zscore)
    assert replace(cfg.train, time_lr=nb.train.time_lr, max_sentences=nb.train.max_sentences) == nb.train
    assert rt.change_config("plain").train is None
