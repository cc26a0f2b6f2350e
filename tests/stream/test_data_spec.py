"""load_timelines: the stream section of tempo_analysis.resolve (world rule, RumourEval, CSV/JSONL)."""

import warnings

import pytest

from tempo_analysis.data import DataError, locations
from tempo_analysis.resolve import load_timelines
from tempo_analysis.data.timelines import subsample_timelines
from tempo_analysis.world import StreamWorldConfig, generate_timelines

from .conftest import make_timelines


def test_world_reads_the_committed_world_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tl = load_timelines("world").data
    assert tl.label_names == ["IE", "IS", "O"] and len(tl.timeline_ids) == 120


def test_position_time_unit_makes_the_world_order_only():
    """--time-unit position on data with real timestamps: each post's index in its timeline is its
    time (the posts, their order and labels unchanged); a numeric unit leaves the timestamps alone."""
    real, order = load_timelines("world").data, load_timelines("world", time_unit="position").data
    assert order.df["post_id"].tolist() == real.df["post_id"].tolist()
    assert order.df["label"].fillna("").tolist() == real.df["label"].fillna("").tolist()
    expected = real.df.groupby("timeline_id", sort=False).cumcount().astype(float).tolist()
    assert order.df["seconds"].tolist() == expected
    assert load_timelines("world", time_unit="h").data.df["seconds"].tolist() == real.df["seconds"].tolist()


def test_no_world_on_disk_generates_the_stream_part_in_memory(tmp_path, monkeypatch):
    monkeypatch.setenv(locations.ENV_DATA, str(tmp_path))
    with pytest.warns(UserWarning, match="generating the default world"):
        tl = load_timelines("world").data
    assert tl.df.equals(generate_timelines(StreamWorldConfig()).df)
    # ... and it is the same data as the world on disk
    monkeypatch.delenv(locations.ENV_DATA)
    disk = load_timelines("world").data.df
    assert disk["post_id"].tolist() == tl.df["post_id"].tolist() and disk["label"].tolist() == tl.df["label"].tolist()


def test_a_broken_world_raises_instead_of_being_regenerated(tmp_path, monkeypatch):
    (tmp_path / "world").mkdir()
    (tmp_path / "world" / "config.json").write_text("{}")  # its other files are missing
    monkeypatch.setenv(locations.ENV_DATA, str(tmp_path))
    with pytest.raises((FileNotFoundError, ValueError)):
        load_timelines("world")
    with pytest.raises((FileNotFoundError, ValueError)):
        load_timelines(f"world:{tmp_path}")


def test_csv_and_jsonl_files_and_the_subset(tmp_path):
    tl = make_timelines(n_timelines=5, n_posts=(3, 2), seed=1)
    df = tl.df.drop(columns=["seconds"]).assign(timestamp=tl.df["seconds"])
    df.to_csv(tmp_path / "posts.csv", index=False)
    df.to_json(tmp_path / "posts.jsonl", orient="records", lines=True)
    for kind in ("csv", "jsonl"):
        back = load_timelines(f"{kind}:{tmp_path / f'posts.{kind}'}", time_unit="s").data
        assert back.df["post_id"].tolist() == tl.df["post_id"].tolist()
        assert back.df["seconds"].tolist() == tl.df["seconds"].tolist()
    # a timeline of one post has no stream to classify: refused, naming it
    df.iloc[:4].to_csv(tmp_path / "one.csv", index=False)  # tl1 keeps one of its two posts
    with pytest.raises(DataError, match=r"timeline_ids \['tl1'\]: timeline\(s\) with fewer than min_posts=2"):
        load_timelines(f"csv:{tmp_path / 'one.csv'}", time_unit="s")
    sub = load_timelines(f"csv:{tmp_path / 'posts.csv'}", time_unit="s", max_timelines=3, seed=2).data
    assert sub.timeline_ids == subsample_timelines(tl, 3, seed=2).timeline_ids and len(sub.timeline_ids) == 3
    with pytest.raises(DataError, match="not found"):
        load_timelines(f"csv:{tmp_path / 'missing.csv'}")
    with pytest.raises(DataError, match=r"world\[:DIR\], rumoureval2017\[:DIR\], csv:FILE, jsonl:FILE"):
        load_timelines("nltk")


def test_rumoureval_without_a_folder_is_looked_up_in_shared_data(tmp_path, monkeypatch):
    monkeypatch.setenv(locations.ENV_SHARED_DATA, str(tmp_path))
    with pytest.raises(DataError, match="rumoureval2017"):  # shared/data has no rumoureval2017/
        load_timelines("rumoureval2017")


@pytest.mark.realdata
def test_real_rumoureval_by_name():
    shared = locations.shared_data_dir()
    if shared is None or not (shared / "rumoureval2017").is_dir():
        pytest.skip("RumourEval-2017 not found in shared/data; real-data check skipped")
    tl = load_timelines("rumoureval2017", max_timelines=12, seed=0).data
    assert len(tl.timeline_ids) == 12 and tl.label_names == ["no_switch", "switch"]
