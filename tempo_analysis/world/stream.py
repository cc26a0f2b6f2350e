"""Timelines with planted mood switches and escalations (the stream-classification world).

Each timeline is one author posting about 2-3 topics of their life. A hidden mood state
(valence "pos"/"neg", intensity 1..4) drives every post's wording. Per post, after the first:
  - "IS" (switch), two kinds, marked in the truth's `change_kind`:
      "text": the valence flips relative to the preceding posts; a new intensity 2..3;
      "time": the author comes back after days of silence (a `RETURN` gap, longer than any
              ordinary gap) and the text continues the mood exactly as an "O" post would, so
              ONLY the time gap shows the switch (a time-blind model cannot find it);
  - "IE" (escalation): a run of 2-3 posts, each one intensity step stronger, same valence;
  - "O": the mood continues (sometimes easing by one step), or a neutral small-talk post
    (`noise`) that leaves the hidden mood unchanged. The first post is always "O".
Time gaps mix bursts (seconds to minutes) and silences (hours, at most `SILENCE`'s cap). With
`time_signal` the gap before a text switch is a long silence and the gaps inside an escalation
are bursts, so the gap also helps on text-decidable changes; ordinary posts draw a burst with
probability `burstiness`. The text never depends on the gap (openers follow the hour of day
only), so the time-decidable switches stay invisible in the text.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tempo_analysis.data.timelines import Timelines

from .config import StreamWorldConfig
from .text_stream import TOPICS, write_post, write_small_talk

LABELS = ("O", "IS", "IE")

# gap distributions, in seconds: log-normal (median, sigma), clipped to [low, high]
BURST = (90.0, 1.0, 5.0, 1800.0)                 # ~20 s .. ~7 min, mostly
SILENCE = (4 * 3600.0, 0.6, 1800.0, 9 * 3600.0)  # ~1 h .. 9 h: an ordinary pause
LONG_SILENCE = (14 * 3600.0, 0.6, 3600.0, 4 * 86400.0)  # before a text switch (with time_signal)
RETURN = (36 * 3600.0, 0.35, 18 * 3600.0, 5 * 86400.0)  # before a time switch: ~1 .. 3 days,
# never shorter than 18 h, so longer than every ordinary gap


def _gap(rng: np.random.Generator, spec: tuple) -> float:
    median, sigma, low, high = spec
    return float(np.clip(np.exp(np.log(median) + sigma * rng.standard_normal()), low, high))


def _gap_for(rng: np.random.Generator, label: str, cfg: StreamWorldConfig) -> tuple[float, str]:
    """(seconds, kind) for the gap before a post with this label ("IS*" = a time switch)."""
    if label == "IS*":
        return _gap(rng, RETURN), "return"
    if label == "IS" and rng.random() < cfg.time_signal:
        return _gap(rng, LONG_SILENCE), "silence"
    if label == "IE" and rng.random() < cfg.time_signal:
        return _gap(rng, BURST), "burst"
    if rng.random() < cfg.burstiness:
        return _gap(rng, BURST), "burst"
    return _gap(rng, SILENCE), "silence"


def _plan_timeline(rng: np.random.Generator, n_posts: int, cfg: StreamWorldConfig) -> list[dict]:
    """The hidden state and label of every post of one timeline (no text, no times yet)."""
    valence = "pos" if rng.random() < 0.5 else "neg"
    level = int(rng.integers(1, 3))
    run_left = 0                              # posts left in the current escalation run
    plan = [dict(label="O", mood=valence, intensity=level, small_talk=False, kind="none")]
    for _ in range(1, n_posts):
        r = rng.random()
        if run_left > 0 and level < 4:
            level += 1
            run_left -= 1
            plan.append(dict(label="IE", mood=valence, intensity=level, small_talk=False, kind="text"))
            continue
        run_left = 0
        if r < cfg.noise:
            plan.append(dict(label="O", mood="none", intensity=0, small_talk=True, kind="none"))
            continue
        r -= cfg.noise
        if r < cfg.switch_rate:
            valence = "neg" if valence == "pos" else "pos"
            level = int(rng.integers(2, 4))     # a switch lands clearly in the new mood
            plan.append(dict(label="IS", mood=valence, intensity=level, small_talk=False, kind="text"))
            continue
        r -= cfg.switch_rate
        if r < cfg.escalation_rate and level < 4:
            lo, hi = cfg.escalation_length
            run_left = min(int(rng.integers(lo, hi + 1)), 4 - level) - 1
            level += 1
            plan.append(dict(label="IE", mood=valence, intensity=level, small_talk=False, kind="text"))
            continue
        time_switch = cfg.escalation_rate <= r < cfg.escalation_rate + cfg.time_switch_rate
        # an ordinary continuation; a time switch is worded exactly like one (same draws)
        if level > 1 and rng.random() < 0.25:  # moods ease off now and then
            level -= 1
        plan.append(dict(label="IS" if time_switch else "O", mood=valence, intensity=level,
                         small_talk=False, kind="time" if time_switch else "none"))
    return plan


def timelines_frames(cfg: StreamWorldConfig) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(posts, truth) frames. posts: timeline_id, post_id, timestamp, author, label, text.
    truth: post_id, mood ("pos"/"neg"/"none"), intensity (0..4), gap_s, gap_kind
    ("first"/"burst"/"silence"/"return"), change_kind ("none" for "O"; "text" for a text-decidable
    switch or escalation; "time" for a switch that only the time gap shows)."""
    cfg.validate()
    rng = np.random.default_rng(cfg.seed)
    start0 = pd.Timestamp(cfg.start, tz="UTC") if pd.Timestamp(cfg.start).tzinfo is None \
        else pd.Timestamp(cfg.start).tz_convert("UTC")
    topic_names = sorted(TOPICS)
    posts, truth = [], []
    for k in range(cfg.n_timelines):
        tid = f"t{k:03d}"
        lo, hi = cfg.posts_per_timeline
        n_posts = int(rng.integers(lo, hi + 1))
        n_topics = int(rng.integers(2, 4))
        topics = [topic_names[i] for i in rng.choice(len(topic_names), size=n_topics, replace=False)]
        t = float(rng.integers(0, cfg.span_days * 86400))   # seconds after start0
        for i, p in enumerate(_plan_timeline(rng, n_posts, cfg)):
            if i == 0:
                gap, kind = float("nan"), "first"
            else:
                gap, kind = _gap_for(rng, "IS*" if p["kind"] == "time" else p["label"], cfg)
                gap = float(max(1.0, round(gap)))
                t += gap
            if p["small_talk"]:
                text = write_small_talk(rng)
            else:
                cue = None
                worded_as = "O" if p["kind"] == "time" else p["label"]  # a time switch reads as "O"
                if worded_as != "O" and rng.random() < cfg.cue_rate:
                    cue = "switch" if worded_as == "IS" else "escalation"
                same = worded_as == "O" and i > 0 and rng.random() < 0.3 * cfg.cue_rate
                stamp = start0 + pd.Timedelta(seconds=int(t))
                text = write_post(rng, p["mood"], p["intensity"], topics, cue=cue, same_cue=same,
                                  hour=stamp.hour)
            pid = f"{tid}-{i:02d}"
            posts.append(dict(timeline_id=tid, post_id=pid,
                              timestamp=start0 + pd.Timedelta(seconds=int(t)),
                              author=f"user{k:03d}", label=p["label"], text=text))
            truth.append(dict(post_id=pid, mood=p["mood"], intensity=p["intensity"],
                              gap_s=gap, gap_kind=kind, change_kind=p["kind"]))
    posts_df = pd.DataFrame(posts, columns=["timeline_id", "post_id", "timestamp", "author", "label", "text"])
    posts_df["timestamp"] = pd.to_datetime(posts_df["timestamp"], utc=True).astype("datetime64[ns, UTC]")
    truth_df = pd.DataFrame(truth, columns=["post_id", "mood", "intensity", "gap_s", "gap_kind", "change_kind"])
    return posts_df, truth_df


def generate_timelines(cfg: StreamWorldConfig | None = None, with_truth: bool = False):
    """Timelines of the stream world (labels "O"/"IS"/"IE"); `with_truth` adds the hidden states."""
    posts, truth = timelines_frames(cfg or StreamWorldConfig())
    tl = Timelines.from_frame(posts)
    return (tl, truth) if with_truth else tl
