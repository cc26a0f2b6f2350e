"""Timelines at its edges: time zones of numbers and datetimes, one missing timestamp among many, equal
timestamps, bool min_posts, missing labels, one-post windows, JSON lines read as written, and the seeded
subset of whole timelines."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from tempo_analysis.data import DataError, Timelines
from tempo_analysis.data.timelines import subsample_timelines



def frame(**over):
    base = dict(timeline_id=["a", "a", "a", "b", "b"], post_id=["1", "2", "3", "4", "5"],
                timestamp=["2020-01-01T00:00:00Z", "2020-01-01T00:00:05Z", "2020-01-01T01:00:00Z",
                           "2021-06-01T10:00:00+02:00", "2021-06-01T11:00:00+02:00"],
                text=["first", "second", "third", "fourth", "fifth"], label=["O", "IS", None, "O", "IE"])
    base.update(over)
    return pd.DataFrame(base)


def test_numeric_and_naive_datetime_timestamps_come_out_in_utc():
    tl = Timelines.from_frame(frame(timestamp=[0, 5, 3600, 100, 200]), time_unit="s")
    assert str(tl.df["timestamp"].dt.tz) == "UTC"
    assert tl.df.loc[0, "timestamp"] == pd.Timestamp("1970-01-01T00:00:00Z")
    naive = pd.to_datetime(["2020-01-01 00:00", "2020-01-01 00:01", "2020-01-01 00:02", "2020-02-01 00:00",
                            "2020-02-02 00:00"])
    tl = Timelines.from_frame(frame(timestamp=naive))
    assert str(tl.df["timestamp"].dt.tz) == "UTC" and tl.df.loc[1, "seconds"] - tl.df.loc[0, "seconds"] == 60


def test_one_missing_timestamp_among_many_is_named():
    with pytest.raises(DataError, match="missing .*timestamps") as e:
        Timelines.from_frame(frame(timestamp=["2020-01-01", None, "2020-01-03", "2020-01-04", "2020-01-05"]))
    assert "1" in str(e.value)
    with pytest.raises(DataError, match="missing .*timestamps"):
        Timelines.from_frame(frame(timestamp=pd.to_datetime(["2020-01-01", None, "2020-01-03", "2020-01-04",
                                                              "2020-01-05"])))


def test_equal_timestamps_in_a_timeline_are_in_order():
    same = ["2020-01-01T00:00:00Z"] * 3 + ["2020-01-02T00:00:00Z"] * 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")                 # no UnsortedTimestampsWarning, and sort=False accepts it
        tl = Timelines.from_frame(frame(timestamp=same), sort=False)
    assert tl.df["post_id"].tolist() == ["1", "2", "3", "4", "5"]          # input order kept for ties


@pytest.mark.parametrize("min_posts", [True, 0, 1.5, "2"])
def test_min_posts_must_be_a_positive_integer(min_posts):
    with pytest.raises(DataError, match="min_posts must be a positive integer"):
        Timelines.from_frame(frame(), min_posts=min_posts)


def test_label_codes_are_minus_one_where_a_label_is_missing_or_there_is_no_label_column():
    tl = Timelines.from_frame(frame())
    codes = tl.label_codes(["O", "IS", "IE"])
    assert codes.tolist() == [0, 1, -1, 0, 2]
    unlabelled = Timelines.from_frame(frame().drop(columns="label"))
    assert unlabelled.label_codes(["O"]).tolist() == [-1] * 5


def test_has_labelled_post_is_true_with_one_label_and_false_with_none():
    tl = Timelines.from_frame(frame())
    assert tl.has_labelled_post() and tl.has_labelled_post(["O", "IS", "IE"])
    for label in ("O", "IS"):  # the first label name (code 0) counts too
        one = Timelines.from_frame(frame(label=[None, None, label, None, None]))
        assert one.has_labelled_post(["O", "IS", "IE"])
    assert not Timelines.from_frame(frame(label=[None] * 5)).has_labelled_post(["O", "IS", "IE"])
    assert not Timelines.from_frame(frame().drop(columns="label")).has_labelled_post(["O"])


def test_the_input_frames_index_does_not_become_a_column():
    df = frame().set_index(pd.Index([10, 11, 12, 13, 14], name="row"))
    tl = Timelines.from_frame(df)
    assert "index" not in tl.df.columns and "row" not in tl.df.columns
    assert tl.df.index.tolist() == [0, 1, 2, 3, 4]


def test_a_one_post_window_holds_only_the_current_post():
    w = Timelines.from_frame(frame()).windows(1)
    assert w.post_index.tolist() == [[0], [1], [2], [3], [4]] and w.mask.all() and (w.gaps == 0).all()
    with pytest.raises(DataError, match="positive integer"):
        Timelines.from_frame(frame()).windows(0)


def test_json_lines_are_read_as_written(tmp_path):
    """Ids with leading zeros stay text, and a numeric timestamp keeps its declared unit."""
    p = tmp_path / "t.jsonl"
    rows = [{"timeline_id": "007", "post_id": f"00{i}", "timestamp": 10 * i, "text": f"post {i}", "label": "O"}
            for i in range(3)]
    p.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    tl = Timelines.from_jsonl(p, time_unit="s")
    assert tl.timeline_ids == ["007"] and tl.df["post_id"].tolist() == ["000", "001", "002"]
    assert tl.df["seconds"].tolist() == [0.0, 10.0, 20.0]


def _many(n=8):
    ids = [f"t{k}" for k in range(n) for _ in range(2)]
    return Timelines.from_frame(pd.DataFrame({
        "timeline_id": ids, "post_id": [str(i) for i in range(2 * n)],
        "timestamp": np.arange(2 * n, dtype=float), "text": ["x"] * (2 * n)}), time_unit="s")


def test_the_subset_of_timelines_is_seeded_whole_and_exactly_as_large_as_asked():
    tl = _many(8)
    for k in (2, 5, 7):
        sub = subsample_timelines(tl, k, seed=3)
        assert len(sub.timeline_ids) == k and len(sub) == 2 * k
        assert sub.timeline_ids == [t for t in tl.timeline_ids if t in set(sub.timeline_ids)]   # order kept
        assert subsample_timelines(tl, k, seed=3).timeline_ids == sub.timeline_ids
    assert subsample_timelines(tl, 8) is tl and subsample_timelines(tl, None) is tl
    with pytest.raises(ValueError, match="max_timelines=1 must be >= 2"):
        subsample_timelines(tl, 1)
