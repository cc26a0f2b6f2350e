"""Timelines: validation (one test per bad-input case) and window construction."""

import numpy as np
import pandas as pd
import pytest

from tempo_analysis.data import DataError, Timelines, UnsortedTimestampsWarning


def frame(**over):
    base = dict(
        timeline_id=["a", "a", "a", "b", "b"],
        post_id=["1", "2", "3", "4", "5"],
        timestamp=["2020-01-01T00:00:00Z", "2020-01-01T00:00:05Z", "2020-01-01T01:00:00Z",
                   "2021-06-01T10:00:00+02:00", "2021-06-01T10:00:00+02:00"],
        text=["first", "second", "third", "fourth", "fifth"],
        label=["O", "IS", None, "O", "IE"],
    )
    base.update(over)
    return pd.DataFrame(base)


def test_timestamps_are_normalised_to_utc():
    tl = Timelines.from_frame(frame())
    assert str(tl.df["timestamp"].dt.tz) == "UTC"
    assert tl.df.loc[3, "timestamp"] == pd.Timestamp("2021-06-01T08:00:00Z")


def test_numeric_timestamps_need_and_use_a_unit():
    df = frame(timestamp=[0, 5, 3600, 100, 100])
    with pytest.raises(DataError, match="time_unit"):
        Timelines.from_frame(df)
    tl = Timelines.from_frame(df, time_unit="min")
    assert tl.windows(3).gaps[2].tolist() == [3600 * 60.0, (3600 - 5) * 60.0, 0.0]


def test_unsorted_timestamps_are_sorted_with_a_warning_or_refused():
    df = frame(timestamp=["2020-01-01T00:00:10Z", "2020-01-01T00:00:05Z", "2020-01-01T01:00:00Z",
                          "2021-01-01", "2021-01-02"])
    with pytest.warns(UnsortedTimestampsWarning, match="1 timeline"):
        tl = Timelines.from_frame(df)
    assert tl.df["post_id"].tolist()[:3] == ["2", "1", "3"]
    with pytest.raises(DataError, match=r"timestamp.*'a'.*sort"):
        Timelines.from_frame(df, sort=False)


@pytest.mark.parametrize("bad", [np.nan, "not a date"])
def test_nan_or_unparseable_timestamps_name_the_row(bad):
    df = frame()
    df.loc[2, "timestamp"] = bad
    with pytest.raises(DataError, match=r"column 'timestamp'.*rows \[2\]"):
        Timelines.from_frame(df)


def test_nan_numeric_timestamp_names_the_row():
    with pytest.raises(DataError, match=r"rows \[1\]"):
        Timelines.from_frame(frame(timestamp=[0.0, np.nan, 2.0, 3.0, 4.0]), time_unit="s")


def test_duplicate_post_ids_are_refused():
    with pytest.raises(DataError, match=r"post_id.*'2'.*unique"):
        Timelines.from_frame(frame(post_id=["1", "2", "2", "4", "5"]))


@pytest.mark.parametrize("bad", ["", "   ", None])
def test_empty_text_is_refused(bad):
    df = frame()
    df.loc[1, "text"] = bad
    with pytest.raises(DataError, match=r"column 'text'.*'2'.*drop"):
        Timelines.from_frame(df)


def test_single_post_timeline_is_refused_unless_allowed():
    df = frame(timeline_id=["a", "a", "a", "b", "c"])
    with pytest.raises(DataError, match=r"'b'.*'c'.*min_posts=1"):
        Timelines.from_frame(df)
    tl = Timelines.from_frame(df, min_posts=1)
    w = tl.windows(4)
    assert w.mask[3].tolist() == [False, False, False, True]


def test_missing_column_lists_what_is_there():
    with pytest.raises(DataError, match=r"missing column.*'text'"):
        Timelines.from_frame(frame().drop(columns="text"))


def test_windows_are_left_padded_with_an_explicit_mask_and_true_gaps():
    tl = Timelines.from_frame(frame())
    w = tl.windows(3)
    assert len(w) == 5 and w.width == 3
    # First post of a timeline: a real post with gap 0, padding marked only by the mask.
    assert w.post_index[0].tolist() == [-1, -1, 0] and w.mask[0].tolist() == [False, False, True]
    assert w.gaps[2].tolist() == [3600.0, 3595.0, 0.0]
    # Equal timestamps give a true gap of 0 that is NOT padding.
    assert w.mask[4].tolist() == [False, True, True] and w.gaps[4].tolist() == [0.0, 0.0, 0.0]
    assert (w.target_index == w.post_index[:, -1]).all()
    # Windows never cross timelines.
    assert w.post_index[3].tolist() == [-1, -1, 3]
    assert w.labels.tolist() == [2, 1, -1, 2, 0]  # label_names sorted: IE, IS, O


def test_subset_and_select():
    tl = Timelines.from_frame(frame())
    sub = tl.subset(["b"])
    assert sub.timeline_ids == ["b"] and len(sub) == 2
    assert list(sub.df.columns) == list(tl.df.columns) and sub.df.index.tolist() == [0, 1]   # same table, renumbered
    w = tl.windows(2).select(np.array([0, 4]))
    assert w.target_index.tolist() == [0, 4]
    with pytest.raises(DataError, match="unknown timeline"):
        tl.subset(["zzz"])


def test_csv_round_trip(tmp_path):
    path = tmp_path / "t.csv"
    frame().to_csv(path, index=False)
    from tempo_analysis.data.loaders.generic import load_timelines

    tl = load_timelines(path)
    assert tl.df["post_id"].tolist() == ["1", "2", "3", "4", "5"]
    assert tl.label_names == ["IE", "IS", "O"]
