"""RumourEval-2017 loader and the LRS switch rule."""

import json
from pathlib import Path

import pytest

from tempo_analysis.data import DataError
from tempo_analysis.data.loaders.rumoureval import load_rumoureval, load_rumoureval_frame, lrs_labels
from tempo_analysis.data.locations import shared_data_dir

SHARED = shared_data_dir()          # $TEMPO_ANALYSIS_SHARED_DATA, else shared/data above the checkout
REAL = SHARED / "rumoureval2017" if SHARED is not None else None
N, S = "no_switch", "switch"


def test_lrs_rule_on_hand_worked_threads():
    # source supports (b=1); deny -> 0; deny -> -1 (switch: 0 -> nonzero); query -> -2 (switch continues)
    assert lrs_labels(["support", "deny", "deny", "query"]) == [N, N, S, S]
    # staying on the source's side is never a switch: no switch has started
    assert lrs_labels(["support", "support", "comment", "support"]) == [N, N, N, N]
    # back to 0 ends the switch; leaving 0 again towards support is a new switch
    assert lrs_labels(["support", "deny", "deny", "support", "support", "comment"]) == [N, N, S, N, S, S]
    # a comment source (b=0): the first stance taken is a switch
    assert lrs_labels(["comment", "comment", "query", "comment"]) == [N, N, S, S]
    # the first post is never a switch even when it moves b off 0
    assert lrs_labels(["deny"]) == [N]
    with pytest.raises(DataError, match="stance 'agree'"):
        lrs_labels(["support", "agree"])


def _tweet(folder: Path, tid: str, text: str, when: str, parent=None):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{tid}.json").write_text(json.dumps(dict(
        id_str=tid, text=text, created_at=when, user={"screen_name": f"u{tid}"},
        in_reply_to_status_id_str=parent)))


def test_loader_reads_the_archive_layout(tmp_path):
    # train/<event>/<thread>/ and test/<thread>/ (the test split has no event level)
    t1 = tmp_path / "train" / "ev" / "100"
    _tweet(t1 / "source-tweet", "100", "claim", "Wed Aug 13 10:00:00 +0000 2014")
    _tweet(t1 / "replies", "103", "no way", "Wed Aug 13 10:05:00 +0000 2014", "100")
    _tweet(t1 / "replies", "101", "false!", "Wed Aug 13 10:01:00 +0000 2014", "100")
    _tweet(t1 / "replies", "102", "source?", "Wed Aug 13 10:01:00 +0000 2014", "101")  # tie: by id
    (t1 / "structure.json").write_text("{}")
    t2 = tmp_path / "test" / "200"
    _tweet(t2 / "source-tweet", "200", "other claim", "Thu Aug 14 10:00:00 +0000 2014")
    _tweet(t2 / "replies", "201", "true", "Thu Aug 14 11:00:00 +0000 2014", "200")
    (t2 / "structure.json").write_text("{}")
    for split, ann in (("train", {"100": "support", "101": "deny", "102": "query", "103": "comment"}),
                       ("test", {"200": "comment", "201": "support"})):
        (tmp_path / f"{split}-annotations").mkdir()
        (tmp_path / f"{split}-annotations" / "subtaskA.json").write_text(json.dumps(ann))
    tl = load_rumoureval(tmp_path)
    assert tl.timeline_ids == ["100", "200"] and tl.label_names == [N, S]
    one = tl.timeline("100")
    assert one["post_id"].tolist() == ["100", "101", "102", "103"]
    assert one["balance"].tolist() == [1, 0, -1, -1]
    assert one["label"].tolist() == [N, N, S, S]
    assert tl.timeline("200")["label"].tolist() == [N, S]
    assert set(tl.df["event"]) == {"ev", ""} and set(tl.df["split"]) == {"train", "test"}


def test_a_thread_folder_without_structure_json_is_counted_and_named(tmp_path):
    """Threads are found by structure.json; a damaged copy without it was skipped silently. It is still not
    read (the threads that load do not change), but a warning names it."""
    for tid, structure in (("100", True), ("200", False), ("300", False)):
        t = tmp_path / "train" / "ev" / tid
        _tweet(t / "source-tweet", tid, "claim", "Wed Aug 13 10:00:00 +0000 2014")
        _tweet(t / "replies", f"{tid}1", "no way", "Wed Aug 13 10:05:00 +0000 2014", tid)
        if structure:
            (t / "structure.json").write_text("{}")
    (tmp_path / "train-annotations").mkdir()
    (tmp_path / "train-annotations" / "subtaskA.json").write_text(json.dumps({"100": "support", "1001": "deny"}))
    with pytest.warns(UserWarning, match=r"2 thread folder\(s\) have source-tweet/ but no structure\.json and are "
                                         r"not read \(first: \['train/ev/200', 'train/ev/300'\]\)"):
        df = load_rumoureval_frame(tmp_path)
    assert df["timeline_id"].unique().tolist() == ["100"]
    assert df.attrs["skipped_threads"] == ["train/ev/200", "train/ev/300"]


def test_loader_errors_name_the_fix(tmp_path):
    with pytest.raises(DataError, match="does not exist"):
        load_rumoureval(tmp_path / "nope")
    with pytest.raises(DataError, match="split folders"):
        load_rumoureval(tmp_path)


@pytest.mark.realdata
def test_real_rumoureval_gives_the_lrs_dataset():
    if REAL is None or not REAL.is_dir():
        pytest.skip(f"RumourEval-2017 not found at {REAL or 'shared/data/rumoureval2017'} (absent from the shared "
                    "data folder, or no such folder here: set $TEMPO_ANALYSIS_SHARED_DATA); real-data check skipped")
    tl = load_rumoureval(REAL)
    assert len(tl.timeline_ids) == 325 and len(tl) == 5568
    df = tl.df
    # paper Table 1: timeline length mean 17.1 (median 13); minority events per timeline mean 6.5 (median 0);
    # time between posts mean 1h26m40s (median 1m39s)
    sizes = df.groupby("timeline_id").size()
    switches = df.groupby("timeline_id")["label"].apply(lambda s: (s == S).sum())
    gaps = df.groupby("timeline_id")["seconds"].diff().dropna()
    assert round(sizes.mean(), 1) == 17.1 and sizes.median() == 13
    assert round(switches.mean(), 1) in (6.4, 6.5) and switches.median() == 0
    assert abs(gaps.mean() - (3600 + 26 * 60 + 40)) < 60 and gaps.median() == 99
    first = df.groupby("timeline_id").head(1)
    assert (first["post_id"] == first["timeline_id"]).all() and (first["label"] == N).all()


@pytest.mark.realdata
def test_real_archive_has_no_thread_without_structure_json():
    if REAL is None or not REAL.is_dir():
        pytest.skip("RumourEval-2017 not found in the shared data folder (or no such folder here); real-data check skipped")
    assert load_rumoureval_frame(REAL).attrs["skipped_threads"] == []


def test_order_only_reading_keeps_a_thread_with_a_single_post(tmp_path):
    from tempo_analysis.resolve import load_timelines

    one = tmp_path / "test" / "300"                     # a source tweet no one replied to
    _tweet(one / "source-tweet", "300", "lonely claim", "Fri Aug 15 10:00:00 +0000 2014")
    (one / "structure.json").write_text("{}")
    two = tmp_path / "test" / "400"
    _tweet(two / "source-tweet", "400", "claim", "Fri Aug 15 11:00:00 +0000 2014")
    _tweet(two / "replies", "401", "true", "Fri Aug 15 12:00:00 +0000 2014", "400")
    (two / "structure.json").write_text("{}")
    (tmp_path / "test-annotations").mkdir()
    (tmp_path / "test-annotations" / "subtaskA.json").write_text(json.dumps({"300": "comment", "400": "comment",
                                                                            "401": "support"}))
    timed = load_timelines(f"rumoureval2017:{tmp_path}").data
    order = load_timelines(f"rumoureval2017:{tmp_path}", time_unit="position").data
    assert order.timeline_ids == timed.timeline_ids == ["300", "400"]
    assert order.df["seconds"].tolist() == [0.0, 0.0, 1.0]
