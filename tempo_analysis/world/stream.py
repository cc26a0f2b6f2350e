"""Timelines with planted mood switches and escalations (the stream-classification world).

Each timeline is one author posting about 2-3 topics of their life. A hidden mood state
(valence "pos"/"neg", intensity 1..4) drives every post's wording. Per post, after the first:
  - "IS" (switch): the valence flips relative to the preceding posts; a new intensity 2..3.
  - "IE" (escalation): a run of 2-3 posts, each one intensity step stronger, same valence.
  - "O": the mood continues (sometimes easing by one step), or a neutral small-talk post
    (`noise`) that leaves the hidden mood unchanged. The first post is always "O".
Time gaps mix bursts (seconds to minutes) and silences (hours). With `time_signal` the gap
before a switch is a long silence and the gaps inside an escalation are bursts, so the time
gap carries real signal; ordinary posts draw a burst with probability `burstiness`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .config import StreamWorldConfig
from .text_stream import TOPICS, write_post, write_small_talk

LABELS = ("O", "IS", "IE")

# gap distributions, in seconds: log-normal (median, sigma), clipped to [low, high]
BURST = (90.0, 1.0, 5.0, 1800.0)                 # ~20 s .. ~7 min, mostly
SILENCE = (6 * 3600.0, 0.7, 1800.0, 3 * 86400.0)  # ~1.5 h .. ~1 day
LONG_SILENCE = (14 * 3600.0, 0.6, 3600.0, 4 * 86400.0)  # before a planted switch


def _gap(rng: np.random.Generator, spec: tuple) -> float:
    median, sigma, low, high = spec
    return float(np.clip(np.exp(np.log(median) + sigma * rng.standard_normal()), low, high))


def _gap_for(rng: np.random.Generator, label: str, cfg: StreamWorldConfig) -> tuple[float, str]:
    """(seconds, kind) for the gap before a post with this label."""
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
    plan = [dict(label="O", mood=valence, intensity=level, small_talk=False)]
    for _ in range(1, n_posts):
        r = rng.random()
        if run_left > 0 and level < 4:
            level += 1
            run_left -= 1
            plan.append(dict(label="IE", mood=valence, intensity=level, small_talk=False))
            continue
        run_left = 0
        if r < cfg.noise:
            plan.append(dict(label="O", mood="none", intensity=0, small_talk=True))
        elif r < cfg.noise + cfg.switch_rate:
            valence = "neg" if valence == "pos" else "pos"
            level = int(rng.integers(2, 4))     # a switch lands clearly in the new mood
            plan.append(dict(label="IS", mood=valence, intensity=level, small_talk=False))
        elif r < cfg.noise + cfg.switch_rate + cfg.escalation_rate and level < 4:
            lo, hi = cfg.escalation_length
            run_left = min(int(rng.integers(lo, hi + 1)), 4 - level) - 1
            level += 1
            plan.append(dict(label="IE", mood=valence, intensity=level, small_talk=False))
        else:
            if level > 1 and rng.random() < 0.25:  # moods ease off now and then (still "O")
                level -= 1
            plan.append(dict(label="O", mood=valence, intensity=level, small_talk=False))
    return plan


def timelines_frames(cfg: StreamWorldConfig) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(posts, truth) frames. posts: timeline_id, post_id, timestamp, author, label, text.
    truth: post_id, mood ("pos"/"neg"/"none"), intensity (0..4), gap_s, gap_kind."""
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
                gap, kind = _gap_for(rng, p["label"], cfg)
                gap = float(max(1.0, round(gap)))
                t += gap
            if p["small_talk"]:
                text = write_small_talk(rng)
            else:
                cue = None
                if p["label"] != "O" and rng.random() < cfg.cue_rate:
                    cue = "switch" if p["label"] == "IS" else "escalation"
                same = p["label"] == "O" and i > 0 and rng.random() < 0.3 * cfg.cue_rate
                stamp = start0 + pd.Timedelta(seconds=int(t))
                text = write_post(rng, p["mood"], p["intensity"], topics, cue=cue, same_cue=same,
                                  hour=stamp.hour, gap_s=0.0 if i == 0 else gap)
            pid = f"{tid}-{i:02d}"
            posts.append(dict(timeline_id=tid, post_id=pid,
                              timestamp=start0 + pd.Timedelta(seconds=int(t)),
                              author=f"user{k:03d}", label=p["label"], text=text))
            truth.append(dict(post_id=pid, mood=p["mood"], intensity=p["intensity"],
                              gap_s=gap, gap_kind=kind))
    posts_df = pd.DataFrame(posts, columns=["timeline_id", "post_id", "timestamp", "author", "label", "text"])
    posts_df["timestamp"] = pd.to_datetime(posts_df["timestamp"], utc=True).astype("datetime64[ns, UTC]")
    truth_df = pd.DataFrame(truth, columns=["post_id", "mood", "intensity", "gap_s", "gap_kind"])
    return posts_df, truth_df


def generate_timelines(cfg: StreamWorldConfig | None = None, with_truth: bool = False):
    """Timelines of the stream world (labels "O"/"IS"/"IE"); `with_truth` adds the hidden states."""
    from tempo_analysis.data import Timelines

    posts, truth = timelines_frames(cfg or StreamWorldConfig())
    tl = Timelines.from_frame(posts)
    return (tl, truth) if with_truth else tl
