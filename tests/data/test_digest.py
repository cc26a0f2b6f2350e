"""Content digests (data/digest.py and each data class's fingerprint): what notebook caches key on, so that
an edited file or a regenerated world under the same data spec is trained on afresh."""
from __future__ import annotations

import networkx as nx
import pandas as pd
import pytest

from tempo_analysis.data import PeriodCorpus, SocialCorpus, Timelines
from tempo_analysis.data.change import ChangeData
from tempo_analysis.data.digest import frame_digest


def test_frame_digest_reads_the_columns_in_order_and_the_extras():
    df = pd.DataFrame({"a": [1, 2], "b": ["x", "y"], "c": [0.5, 0.25]})
    d = frame_digest(df, ["a", "b"])
    assert len(d) == 16 and d == frame_digest(df.copy(), ["a", "b"])
    assert frame_digest(df.assign(c=[9, 9]), ["a", "b"]) == d             # other columns do not count
    assert frame_digest(df.assign(b=["x", "z"]), ["a", "b"]) != d         # a value
    assert frame_digest(df.iloc[::-1], ["a", "b"]) != d                   # the row order
    assert frame_digest(df, ["b", "a"]) != d                              # the columns named
    assert frame_digest(df.rename(columns={"b": "b2"}), ["a", "b2"]) != d  # ... by their names too
    assert frame_digest(df, ["a", "b"], ["l1"]) != d != frame_digest(df, ["a", "b"], ["l2"])
    assert frame_digest(df.set_index("a"), ["b"]) == frame_digest(df, ["b"])   # not the index
    with pytest.raises(KeyError):
        frame_digest(df, ["missing"])


def _timelines(**change):
    base = dict(timeline_id=["a", "a", "b", "b"], post_id=["1", "2", "3", "4"],
                timestamp=["2020-01-01", "2020-01-02", "2020-01-01", "2020-01-03"], text=["w", "x", "y", "z"],
                label=["O", "IS", "O", "IE"])
    base.update(change)
    return Timelines.from_frame(pd.DataFrame(base))


def test_timelines_fingerprint_follows_what_the_models_read():
    fp = _timelines().fingerprint()
    assert fp == _timelines().fingerprint()
    assert _timelines(text=["w", "x!", "y", "z"]).fingerprint() != fp                  # an edited post
    assert _timelines(label=["O", "O", "O", "IE"]).fingerprint() != fp                 # a label
    assert _timelines(label=["O", "IE", "O", "IS"]).fingerprint() != fp                 # ... the same set, moved
    assert _timelines(timestamp=["2020-01-01", "2020-01-05", "2020-01-01", "2020-01-03"]).fingerprint() != fp
    assert _timelines(post_id=["1", "2", "3", "5"]).fingerprint() != fp
    base = _timelines()
    assert Timelines(base.df, label_names=["IE", "IS", "O", "X"]).fingerprint() != fp  # the label set
    unlabelled = _timelines().df.drop(columns="label")
    assert Timelines(unlabelled).fingerprint() != fp


def _social(**change):
    df = pd.DataFrame({"unit": ["u1", "u2", "u3", "u1"], "time": [0, 0, 1, 1], "text": ["a", "b", "c", "d"]})
    g = nx.Graph()
    g.add_edge("u1", "u2", weight=change.pop("weight", 1.0))
    g.add_edge("u2", "u3")
    for u, v in change.pop("extra_edges", []):
        g.add_edge(u, v)
    return SocialCorpus.from_frame(df.assign(**change), g)


def test_social_corpus_fingerprint_follows_the_documents_and_the_graph():
    fp = _social().fingerprint()
    assert fp == _social().fingerprint()
    assert _social(text=["a", "b", "c", "e"]).fingerprint() != fp                    # a document
    assert _social(unit=["u1", "u2", "u3", "u2"]).fingerprint() != fp                # who wrote it
    assert _social(weight=2.0).fingerprint() != fp                                   # a tie's weight
    assert _social(extra_edges=[("u1", "u3")]).fingerprint() != fp                   # a new tie


def test_change_data_fingerprint_follows_the_corpus_targets_and_truth():
    corpus = PeriodCorpus.from_frame(pd.DataFrame({"period": ["a", "a", "b"], "text": ["x cell", "y", "z cell"]}),
                                    order=["a", "b"])
    truth = pd.DataFrame({"word": ["cell"], "graded": [0.5]})
    fp = ChangeData("w", corpus, ["cell"], truth).fingerprint()
    assert fp == ChangeData("w", corpus, ["cell"], truth.copy()).fingerprint()
    other = PeriodCorpus.from_frame(pd.DataFrame({"period": ["a", "a", "b"], "text": ["x cell", "y", "z cells"]}),
                                   order=["a", "b"])
    assert ChangeData("w", other, ["cell"], truth).fingerprint() != fp
    assert ChangeData("w", corpus, ["cell", "y"], truth).fingerprint() != fp
    assert ChangeData("w", corpus, ["cell"], truth.assign(graded=[0.6])).fingerprint() != fp
    assert ChangeData("w", corpus, ["cell"], None).fingerprint() != fp


# Lessons 01 and 04 memoise their training in their wing's lesson module, keyed by the data's contents:
# tests/stream/test_lesson.py and tests/future_text/test_lesson.py check those keys; lesson 03's below.
def test_lesson_03s_cache_keys_hold_the_datas_fingerprint(monkeypatch):
    """Lesson 03 memoises its fits in diffusion.lesson: the key names the world's contents and the corpus's."""
    from tempo_analysis import notebook
    from tempo_analysis.diffusion import lesson
    from tempo_analysis.resolve import planted_world

    keys = []
    monkeypatch.setattr(notebook, "cached", lambda name, params, fit, **kw: keys.append(params) or object())
    lesson.fit_worlds(0, modes=("walk",))
    world = planted_world("social", 0, mode="walk")
    lesson.fit_data(world.data)
    edited = SocialCorpus(world.data.df.assign(text=world.data.df["text"] + " ."), world.data.graph, world.data.slices)
    lesson.fit_data(edited)
    assert [k["data_fingerprint"] for k in keys[:2]] == [world.data.fingerprint()] * 2
    assert keys[2]["data_fingerprint"] != keys[1]["data_fingerprint"]
