"""The data specs at their edges: a parsed spec is immutable, the world rule's warning points at the
caller, each one-folder spec names its own example, the pseudoword spec's folder and seed, the two-period
check of the SemEval and DWUG specs, a target subset's truth table, and the ACL loader's defaults, which
are the CLI's."""
from __future__ import annotations

import dataclasses
import inspect
import warnings
from types import SimpleNamespace

import pandas as pd
import pytest

from tempo_analysis import resolve
from tempo_analysis.data import DataError, locations, specs
from tempo_analysis.data.change import ChangeData
from tempo_analysis.data.periods import PeriodCorpus


def test_a_parsed_spec_cannot_be_changed():
    s = specs.parse_spec("world:data/world", resolve.TIMELINE_SPECS)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.kind = "csv"


def test_the_missing_world_warning_points_at_the_line_that_asked_for_data(tmp_path, monkeypatch):
    monkeypatch.setenv(locations.ENV_DATA, str(tmp_path))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        resolve.load_change_data("world")
    ours = [w for w in caught if "generating the default world" in str(w.message)]
    assert len(ours) == 1 and ours[0].filename == __file__


@pytest.mark.parametrize("spec, load, example", [
    ("world:a,b", resolve.load_timelines, "world:data/world"),
    ("rumoureval2017:a,b", resolve.load_timelines, "rumoureval2017:../shared/data/rumoureval2017"),
    ("world:a,b", resolve.load_change_data, "world:data/world"),
    ("nltk:a,b", resolve.load_change_data, "nltk:../shared/data/nltk_data/corpora"),
    ("semeval:a,b", resolve.load_change_data, "semeval:path/to/semeval2020_ulscd_eng"),
    ("dwug:a,b", resolve.load_change_data, "dwug:path/to/dwug_en"),
    ("world:a,b", resolve.load_yearly, "world:data/world"),
])
def test_each_one_folder_spec_names_its_own_example(spec, load, example):
    with pytest.raises(DataError, match="give one folder") as err:
        load(spec)
    assert str(err.value).endswith(f"e.g. {example}")


@pytest.mark.parametrize("spec, message", [
    ("world:a,b", "give one world folder, e.g. world:data/world"),
    ("acl:a,b", "give one Anthology XML folder"),
])
def test_a_social_spec_takes_one_folder(spec, message):
    with pytest.raises(DataError, match=message):
        resolve.load_social(spec)


def test_the_timeline_subset_is_seeded_with_seed_0_by_default():
    every = resolve.load_timelines("world").data
    assert len(every.timeline_ids) > 4
    default = resolve.load_timelines("world", max_timelines=3).data
    assert list(default.timeline_ids) == list(resolve.load_timelines("world", max_timelines=3, seed=0).data.timeline_ids)
    others = {tuple(resolve.load_timelines("world", max_timelines=3, seed=s).data.timeline_ids) for s in (1, 2, 3)}
    assert others - {tuple(default.timeline_ids)}


@pytest.fixture
def fake_pseudoword(monkeypatch):
    """build_pseudoword replaced by a recorder: the spec's folder and config, without reading corpora."""
    calls = []

    def build(root, cfg):
        calls.append((root, cfg))
        corpus = PeriodCorpus.from_frame(pd.DataFrame({"text": ["a cell", "a cell phone"], "period": ["a", "b"]}))
        truth = pd.DataFrame({"word": ["cell"], "graded": [0.5], "binary": [1]})
        return SimpleNamespace(corpus=corpus, truth=truth, usages=None, notes=["built"])

    monkeypatch.setattr(resolve, "build_pseudoword", build)
    return calls


def test_the_pseudoword_spec_reads_the_given_folder_with_the_given_seed(tmp_path, fake_pseudoword):
    loaded = resolve.load_change_data(f"pseudoword:{tmp_path}", seed=3, max_sentences_per_period=50)
    data = loaded.data
    assert loaded.truth is data.truth and data.truth["word"].tolist() == ["cell"]     # injected: planted truth
    (root, cfg), = fake_pseudoword
    assert root == tmp_path and cfg.seed == 3 and cfg.max_sentences_per_period == 50
    assert data.name == f"pseudoword:{tmp_path}:seed=3" and data.targets == ["cell"] and data.notes[-1] == "built"
    resolve.load_change_data(f"pseudoword:{tmp_path}")
    assert fake_pseudoword[-1][1].seed == 0                                   # seed 0 unless asked


def test_the_pseudoword_spec_without_a_folder_reads_the_shared_data_folder(tmp_path, monkeypatch, fake_pseudoword):
    (tmp_path / "nltk_data").mkdir()
    monkeypatch.setenv(locations.ENV_SHARED_DATA, str(tmp_path))
    data = resolve.load_change_data("pseudoword", seed=1).data
    assert fake_pseudoword[0][0] == tmp_path and data.name == "pseudoword:seed=1"


def test_the_pseudoword_spec_refuses_two_folders_and_a_missing_one(tmp_path, fake_pseudoword):
    with pytest.raises(DataError, match="give one shared data folder"):
        resolve.load_change_data(f"pseudoword:{tmp_path},{tmp_path}")
    with pytest.raises(DataError, match="folder .* does not exist. Fix: give the shared data folder"):
        resolve.load_change_data(f"pseudoword:{tmp_path / 'nope'}")
    assert not fake_pseudoword


@pytest.mark.parametrize("kind", ["semeval", "dwug"])
def test_semeval_and_dwug_need_two_periods(kind, tmp_path, monkeypatch):
    def one_period(path, **kw):
        corpus = PeriodCorpus.from_frame(pd.DataFrame({"text": ["a cell"], "period": ["1800"]}))
        return SimpleNamespace(corpus=corpus, targets=["cell"], truth=None, usages=None, period_sizes=None)

    monkeypatch.setattr(resolve, f"load_{kind}", one_period)
    with pytest.raises(DataError, match=f"semantic change ranking on --data '{kind}:.*needs at least 2 periods"):
        resolve.load_change_data(f"{kind}:{tmp_path}")


def test_a_target_subset_keeps_the_truth_tables_columns_and_numbers_its_rows_afresh():
    corpus = PeriodCorpus.from_frame(pd.DataFrame({"text": ["a b", "b c"], "period": ["x", "y"]}))
    truth = pd.DataFrame({"word": ["a", "b", "c"], "graded": [0.1, 0.2, 0.3]})
    data = ChangeData("t", corpus, ["a", "b", "c"], truth)
    sub = resolve._subset(data, ["c", "a"])
    assert list(sub.truth.columns) == ["word", "graded"] and list(sub.truth.index) == [0, 1]
    assert sub.truth["word"].tolist() == ["a", "c"] and sub.targets == ["c", "a"]


def test_the_acl_loaders_defaults_are_the_clis(monkeypatch, tmp_path):
    from tempo_analysis.cli.diffusion import ACL_DEFAULTS

    seen = {}
    monkeypatch.setattr(resolve, "acl_social_corpus", lambda folder, **kw: seen.update(kw, folder=folder) or "corpus")
    assert resolve.load_social(f"acl:{tmp_path}") == resolve.Resolved("corpus", None)
    first, last = (int(y) for y in ACL_DEFAULTS["years"].split("-"))
    assert list(seen["years"]) == list(range(first, last + 1))
    assert (seen["theta"], seen["min_papers"]) == (ACL_DEFAULTS["theta"], ACL_DEFAULTS["min_papers"])
    assert seen["seed"] == 0 and seen["progress"] is True and seen["max_docs_per_unit_slice"] is None
    assert inspect.signature(resolve.load_change_data).parameters["seed"].default == 0


def test_the_acl_yearly_spec_takes_at_most_two_folders_and_shows_no_progress_by_default(tmp_path, monkeypatch):
    with pytest.raises(DataError, match="use acl:ABSTRACTS_DIR,XML_DIR"):
        resolve.load_yearly(f"acl:{tmp_path},{tmp_path},{tmp_path}")
    seen = {}
    frame = pd.DataFrame({"doc_id": ["a", "b"], "year": [2019, 2020], "text": ["x y", "y z"]})
    monkeypatch.setattr(resolve, "load_acl_abstracts", lambda abstracts, xml, progress: seen.update(
        abstracts=abstracts, xml=xml, progress=progress) or frame)
    resolve.load_yearly(f"acl:{tmp_path},{tmp_path}")
    assert seen == {"abstracts": tmp_path, "xml": tmp_path, "progress": False}
    resolve.load_yearly(f"acl:{tmp_path}", progress=True)
    assert seen == {"abstracts": tmp_path, "xml": None, "progress": True}


def test_a_yearly_csv_keeps_texts_that_read_like_missing_values(tmp_path):
    f = tmp_path / "texts.csv"
    f.write_text('doc_id,year,text\n007,2019,NA\nx,2020,null\ny,2020,"real text"\n')
    loaded = resolve.load_yearly(f"csv:{f}")
    frame, truth = loaded.data, loaded.truth
    assert truth is None and sorted(frame["text"]) == ["NA", "null", "real text"]
    assert "007" in set(frame["doc_id"])
