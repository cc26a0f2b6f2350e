"""The timelines world: labels agree with the planted moods, gaps are bursty, time carries signal."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from tempo_analysis.world import StreamWorldConfig, generate_timelines, timelines_frames


@pytest.fixture(scope="module")
def frames():
    posts, truth = timelines_frames(StreamWorldConfig())
    return posts.merge(truth, on="post_id", validate="one_to_one")


def test_default_sizes_and_label_set(frames):
    n_tl = frames.timeline_id.nunique()
    sizes = frames.groupby("timeline_id").size()
    assert 60 <= n_tl <= 120 and sizes.min() >= 10 and sizes.max() <= 25
    assert set(frames.label) == {"O", "IS", "IE"}
    share = frames.label.value_counts(normalize=True)
    assert share["IS"] > 0.15 and share["IE"] > 0.07 and share["O"] > 0.5


def test_first_post_is_always_O(frames):
    firsts = frames.groupby("timeline_id").head(1)
    assert (firsts.label == "O").all()


def test_labels_follow_the_hidden_mood(frames):
    """IS <=> valence flips vs the last mood; IE <=> same valence, one step stronger."""
    for _, tl in frames.groupby("timeline_id"):
        last = None                       # (mood, intensity) of the last non-small-talk post
        for r in tl.itertuples():
            if r.mood == "none":
                assert r.label == "O"
                continue
            if last is None:
                assert r.label == "O"
            elif r.change_kind == "time":  # a switch only the gap shows: the mood carries on
                assert r.label == "IS" and r.mood == last[0] and r.intensity <= last[1]
            elif r.label == "IS":
                assert r.mood != last[0]
            elif r.label == "IE":
                assert r.mood == last[0] and r.intensity == last[1] + 1
            else:
                assert r.mood == last[0] and r.intensity <= last[1]
            last = (r.mood, r.intensity)


def test_timestamps_utc_increasing_and_gaps_irregular(frames):
    assert str(frames.timestamp.dt.tz) == "UTC"
    for _, tl in frames.groupby("timeline_id"):
        assert tl.timestamp.is_monotonic_increasing
    gaps = frames.gap_s.dropna()
    assert (gaps < 600).mean() > 0.3          # bursts: seconds to minutes
    assert (gaps > 3600).mean() > 0.3         # silences: hours
    assert gaps.std() / gaps.mean() > 1.0     # far from regular


def test_time_carries_signal(frames):
    x = frames.dropna(subset=["gap_s"])
    long = x.assign(long=x.gap_s > 3600).groupby("label").long.mean()
    short = x.assign(short=x.gap_s < 600).groupby("label").short.mean()
    assert long["IS"] > long["O"] + 0.3       # switches come after long silences
    assert short["IE"] > short["O"] + 0.25    # escalations come in bursts
    logs = np.log(x.gap_s).groupby(x.label).mean()
    assert logs["IS"] > logs["O"] > logs["IE"]


def test_time_switches_are_told_by_the_gap_alone(frames):
    """Both kinds of switch are planted; a time switch follows a gap longer than any ordinary gap,
    and its wording is drawn like an ordinary post's (no switch cue, no mention of the silence)."""
    from tempo_analysis.world.text_stream import SWITCH_CUES

    kinds = frames.groupby("label").change_kind.agg(set)
    assert kinds["O"] == {"none"} and kinds["IE"] == {"text"} and kinds["IS"] == {"text", "time"}
    time = frames[frames.change_kind == "time"]
    share = len(time) / (frames.label != "O").sum()
    assert 0.25 < share < 0.5                               # a known, sizeable share of the changes
    assert (time.gap_kind == "return").all()
    assert time.gap_s.min() > frames[frames.label == "O"].gap_s.max()
    cues = [c for v in SWITCH_CUES.values() for c in v]
    assert not time.text.apply(lambda t: any(c in t for c in cues)).any()
    text_is = frames[(frames.label == "IS") & (frames.change_kind == "text")]
    assert text_is.text.apply(lambda t: any(c in t for c in cues)).mean() > 0.4
    # same wording distribution as ordinary posts: same mix of intensities and of text lengths
    ordinary = frames[(frames.label == "O") & (frames.mood != "none") & (frames.gap_kind != "first")]
    assert abs(time.intensity.mean() - ordinary.intensity.mean()) < 0.35
    assert abs(time.text.str.len().mean() - ordinary.text.str.len().mean()) < 10


def test_time_signal_zero_removes_it():
    posts, truth = timelines_frames(StreamWorldConfig(time_signal=0.0, n_timelines=120))
    x = posts.merge(truth, on="post_id")
    x = x[x.change_kind != "time"]  # time switches always follow a return gap, whatever time_signal
    silence = x[x.gap_kind != "first"].groupby("label").gap_kind.apply(lambda s: (s == "silence").mean())
    assert abs(silence["IS"] - silence["O"]) < 0.15 and abs(silence["IE"] - silence["O"]) < 0.15
    # notebook 00's what-if: with the time switches off as well, no label has its own gaps
    posts, _ = timelines_frames(StreamWorldConfig(time_signal=0.0, time_switch_rate=0.0, n_timelines=120))
    gap_h = pd.to_datetime(posts["timestamp"]).groupby(posts["timeline_id"]).diff().dt.total_seconds() / 3600
    median = gap_h.groupby(posts["label"]).median()
    assert median.max() < 1.0, median.to_dict()


def test_text_is_clean_english_of_modest_length(frames):
    words = frames.text.str.split().str.len()
    assert words.min() >= 3 and words.max() < 60
    assert frames.text.str.match(r"^[A-Z]").all()
    assert frames.text.str.contains(r"[.!?]$").all()
    assert frames.text.nunique() > 0.9 * len(frames)
    assert not frames.text.str.contains(r"\{|\}|  ").any()


def test_escalation_posts_use_stronger_wording(frames):
    from tempo_analysis.world.text_stream import FEELINGS

    def level_of(text, mood):
        hits = [lvl for lvl in range(1, 5) for f in FEELINGS[(mood, lvl)] if f" {f}" in text]
        return max(hits) if hits else None

    x = frames[frames.mood != "none"]
    found = [level_of(t, m) for t, m in zip(x.text, x.mood)]
    ok = [f == i for f, i in zip(found, x.intensity) if f is not None]
    assert len(ok) > 0.9 * len(x) and np.mean(ok) > 0.9


def test_knobs_change_the_world():
    base = timelines_frames(StreamWorldConfig())[0]
    more = timelines_frames(StreamWorldConfig(switch_rate=0.3))[0]
    assert (more.label == "IS").mean() > (base.label == "IS").mean() + 0.08
    quiet = timelines_frames(StreamWorldConfig(noise=0.0))[1]
    assert (quiet.mood == "none").sum() == 0
    noisy = timelines_frames(StreamWorldConfig(noise=0.3))[1]
    assert (noisy.mood == "none").mean() > 0.2
    small = timelines_frames(StreamWorldConfig(n_timelines=5, posts_per_timeline=(3, 4)))[0]
    assert small.timeline_id.nunique() == 5 and small.groupby("timeline_id").size().between(3, 4).all()
    bursty = timelines_frames(StreamWorldConfig(burstiness=1.0, time_signal=0.0))[1]
    assert (bursty.gap_kind == "silence").sum() == 0
    text_only = timelines_frames(StreamWorldConfig(time_switch_rate=0.0))[1]
    assert (text_only.change_kind == "time").sum() == 0 and (text_only.gap_kind == "return").sum() == 0


def test_seeds():
    a = timelines_frames(StreamWorldConfig(seed=3))[0]
    b = timelines_frames(StreamWorldConfig(seed=3))[0]
    c = timelines_frames(StreamWorldConfig(seed=4))[0]
    pd.testing.assert_frame_equal(a, b)
    assert not a.text.equals(c.text)


def test_generate_timelines_returns_validated_timelines():
    tl = generate_timelines(StreamWorldConfig(n_timelines=4))
    assert tl.label_names == ["IE", "IS", "O"] or set(tl.label_names) <= {"O", "IS", "IE"}
    assert len(tl.timeline_ids) == 4
    windows = tl.windows(5)
    assert windows.mask[:, -1].all()
    tl2, truth = generate_timelines(StreamWorldConfig(n_timelines=4), with_truth=True)
    assert len(truth) == len(tl2)


@pytest.mark.parametrize("field,value", [("n_timelines", 0), ("switch_rate", 1.5), ("time_switch_rate", -0.1),
                                         ("posts_per_timeline", (5, 2)),
                                         ("noise", -0.1), ("noise", 0.7), ("start", "not a date"), ("seed", -1)])
def test_bad_config_names_the_field(field, value):
    cfg = dataclasses.replace(StreamWorldConfig(), **{field: value})
    with pytest.raises(ValueError, match=field):
        timelines_frames(cfg)
