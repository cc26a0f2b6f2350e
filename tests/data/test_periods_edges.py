"""PeriodCorpus and TargetUsage at their edges: offsets at the sentence's ends, what an error names, one
bad row among good ones, labels that are not labels, and the index a frame arrives with."""

import dataclasses

import pandas as pd
import pytest

from tempo_analysis.data import DataError, PeriodCorpus
from tempo_analysis.data.periods import TargetUsage


def docs(**over):
    base = dict(doc_id=["a", "b", "c"], period=["old", "new", "new"],
                text=["a cell here", "my cell phone", "the cell rang"])
    base.update(over)
    return pd.DataFrame(base)


def test_a_usage_spans_the_whole_sentence_at_most_and_one_character_at_least():
    assert TargetUsage("cell", "old", "cell", 0, 4).surface == "cell"
    with pytest.raises(DataError, match="outside the sentence"):
        TargetUsage("cell", "old", "cell", 2, 2)                         # an empty span
    with pytest.raises(DataError, match="outside the sentence"):
        TargetUsage("cell", "old", "cell", 0, 5)


@pytest.mark.parametrize("text", ["", 123, None])
def test_a_usage_needs_a_sentence(text):
    with pytest.raises(DataError, match="non-empty sentence"):
        TargetUsage("cell", "old", text, 0, 1)


def test_a_usage_error_names_its_document_or_else_its_word():
    with pytest.raises(DataError) as e:
        TargetUsage("cell", "old", "a cell", 0, 99, doc_id="doc-7")
    assert "doc-7" in str(e.value)
    with pytest.raises(DataError) as e:
        TargetUsage("cell", "old", "a cell", 0, 99)
    assert "cell" in str(e.value)
    with pytest.raises(DataError) as e:
        TargetUsage.checked("mouse", "old", "a cell", 0, 1, surface="cell")
    assert "mouse" in str(e.value) and "'a'" in str(e.value)
    with pytest.raises(DataError) as e:
        TargetUsage("cell", "old", "", 0, 1, doc_id="doc-9")
    assert "doc-9" in str(e.value)


def test_a_usage_is_frozen():
    u = TargetUsage("cell", "old", "a cell", 2, 6)
    with pytest.raises(dataclasses.FrozenInstanceError):
        u.start = 0


def test_one_missing_id_or_one_non_text_among_good_rows_is_refused():
    with pytest.raises(DataError, match="missing document ids"):
        PeriodCorpus.from_frame(docs(doc_id=["a", None, "c"]), order=["old", "new"])
    with pytest.raises(DataError, match="not text"):
        PeriodCorpus.from_frame(docs(text=["a cell here", 42, "the cell rang"]), order=["old", "new"])


def test_periods_and_order_must_be_lists_of_labels():
    with pytest.raises(DataError, match="periods= must be a list"):
        PeriodCorpus.from_frame(docs(), periods="old")
    with pytest.raises(DataError, match="order=/periods= must list period labels"):
        PeriodCorpus.from_frame(docs(), order=["old", ["new"]])


def test_the_frames_own_index_is_not_kept_as_a_column():
    df = docs().set_axis([10, 20, 30])
    c = PeriodCorpus.from_frame(df, order=["old", "new"])
    assert list(c.df.columns) == ["doc_id", "period", "period_order", "text"]
    assert list(c.df.index) == [0, 1, 2] and c.periods == ["old", "new"]


def test_a_period_ordered_but_not_declared_and_without_documents_is_left_out():
    c = PeriodCorpus.from_frame(docs(), order=["old", "mid", "new"], periods=["old", "new"])
    assert c.periods == ["old", "new"] and dict(zip(c.df["doc_id"], c.df["period_order"])) == {"a": 0, "b": 2, "c": 2}


def test_require_periods_asks_for_two_by_default():
    two = PeriodCorpus.from_frame(docs(), order=["old", "new"])
    assert two.require_periods() is two
    one = PeriodCorpus.from_frame(docs(period=["old"] * 3), order=["old"])
    with pytest.raises(DataError, match="at least 2 periods"):
        one.require_periods()


def test_sentences_are_one_periods_documents_in_corpus_order():
    c = PeriodCorpus.from_frame(docs(), order=["old", "new"])
    assert c.sentences("new") == ["my cell phone", "the cell rang"] and c.sentences("old") == ["a cell here"]


def test_find_usages_refuses_a_word_that_is_not_text_and_samples_distinct_usages_in_order():
    with pytest.raises(DataError, match="non-empty string"):
        PeriodCorpus.from_frame(docs(), order=["old", "new"]).find_usages(5)
    many = PeriodCorpus.from_frame(pd.DataFrame({"period": ["old"] * 20, "doc_id": [f"{i:02d}" for i in range(20)],
                                                 "text": [f"cell number {i}" for i in range(20)]}), order=["old"])
    for k in (5, 15):
        got = many.find_usages("cell", max_per_period=k, seed=1)
        ids = [u.doc_id for u in got]
        assert len(ids) == k and len(set(ids)) == k and ids == sorted(ids)
    assert len(many.find_usages("cell", max_per_period=20)) == 20
