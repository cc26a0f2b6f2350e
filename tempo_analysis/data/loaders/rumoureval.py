"""RumourEval-2017 (SemEval-2017 Task 8) threads -> timelines with LRS stance-switch labels.

Layout read (any root path; the published archive, as in ../shared/data/rumoureval2017)::

    <root>/{train,dev,test}/[<event>/]<thread_id>/{structure.json, source-tweet/<id>.json, replies/<id>.json}
    <root>/{train,dev,test}-annotations/subtaskA.json      {tweet_id: support|deny|query|comment}

Every thread becomes one timeline: the source tweet first, then the replies by `created_at`
(ties by tweet id). The LRS label of each post (Tseriotou et al. 2024, as used by TempoFormer)
comes from the running balance b = #support - #(deny + query), the source tweet counted:

- the first post is never a switch;
- a later post is a **switch** if the previous b == 0 and the new b != 0, or if b keeps the sign
  of the previous b and a switch towards that sign has already started in this thread;
- otherwise it is **no switch**.

On the full archive this gives 325 timelines and 5,568 posts (paper Table 1).

A thread is found by its ``structure.json``. A folder that has ``source-tweet/`` but no
``structure.json`` (a damaged copy) is not read: a warning counts and names such folders
(``df.attrs["skipped_threads"]``).
"""

from __future__ import annotations

import json
import warnings
from datetime import datetime
from pathlib import Path

import pandas as pd

from ..errors import DataError, DataPathError

SPLITS = ("train", "dev", "test")
STANCES = ("support", "deny", "query", "comment")
LRS_LABELS = ("no_switch", "switch")  # paper: N-Sw, Sw
_DELTA = {"support": 1, "deny": -1, "query": -1, "comment": 0}
_TWITTER_TIME = "%a %b %d %H:%M:%S %z %Y"


def lrs_labels(stances) -> list[str]:
    """LRS switch labels for one timeline's stances (source first), by the running-balance rule."""
    labels, b, started = [], 0, {1: False, -1: False}
    for i, stance in enumerate(stances):
        if stance is not None and stance not in _DELTA:
            raise DataError(f"stance {stance!r} is not one of {STANCES}. Fix: use RumourEval subtask A labels.")
        prev, b = b, b + _DELTA.get(stance, 0)  # a missing stance counts as a comment
        if i == 0:
            labels.append(LRS_LABELS[0])
            continue
        sign, prev_sign = (b > 0) - (b < 0), (prev > 0) - (prev < 0)
        if prev == 0 and b != 0:
            started[sign] = True
            labels.append(LRS_LABELS[1])
        elif b != 0 and sign == prev_sign and started[sign]:
            labels.append(LRS_LABELS[1])
        else:
            labels.append(LRS_LABELS[0])
    return labels


def _read_json(path: Path, what: str):
    try:
        return json.loads(path.read_text(encoding="utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise DataError(f"{path}: not a readable JSON {what} ({e}). Fix: point root at an unmodified "
                        "RumourEval-2017 archive, or repair that file.") from None


def _read_tweet(path: Path) -> dict:
    tw = _read_json(path, "tweet")
    try:
        if not isinstance(tw.get("text"), str) or not str(tw["id_str"]).isdigit():
            raise ValueError("'text' must be a string and 'id_str' a tweet id of digits")
        return dict(post_id=str(tw["id_str"]), text=str(tw["text"]),
                    timestamp=datetime.strptime(tw["created_at"], _TWITTER_TIME),
                    author=str((tw.get("user") or {}).get("screen_name", "")),
                    parent_id=tw.get("in_reply_to_status_id_str"))
    except (KeyError, ValueError, TypeError, AttributeError) as e:
        raise DataError(f"{path}: not a Twitter JSON tweet with id_str/text/created_at ({e}). "
                        "Fix: point root at an unmodified RumourEval-2017 archive.") from e


def load_rumoureval_frame(root, splits=SPLITS) -> pd.DataFrame:
    """All threads as one DataFrame (timeline_id, post_id, timestamp, text, label, author, stance,
    balance, event, split, parent_id), rows in timeline order."""
    root = Path(root)
    if not root.is_dir():
        raise DataPathError(f"RumourEval folder {str(root)!r} does not exist. Fix: pass the folder that holds "
                        "train/, dev/, test/ and *-annotations/ (e.g. ../shared/data/rumoureval2017).")
    stance: dict[str, str] = {}
    found = [s for s in splits if (root / s).is_dir()]
    if not found:
        raise DataError(f"{root} has none of the split folders {list(splits)}. Fix: pass the archive's root.")
    for s in found:
        ann = root / f"{s}-annotations" / "subtaskA.json"
        if ann.is_file():
            data = _read_json(ann, "annotation file")
            if not isinstance(data, dict):
                raise DataError(f"{ann}: expected a JSON object {{tweet_id: stance}}, got a {type(data).__name__}. "
                                "Fix: use the archive's subtaskA.json.")
            bad = {k: v for k, v in data.items() if v not in STANCES}
            if bad:
                k, v = next(iter(bad.items()))
                raise DataError(f"{ann}: tweet {k}: stance {v!r} is not one of {STANCES} ({len(bad)} such). "
                                "Fix: use RumourEval subtask A labels.")
            stance.update({str(k): v for k, v in data.items()})
        else:
            warnings.warn(f"{ann} is missing: posts of split {s!r} have no stance, counted as comments",
                          stacklevel=2)
    skipped = [str(d.parent.relative_to(root)) for s in found for d in sorted((root / s).rglob("source-tweet"))
               if d.is_dir() and not (d.parent / "structure.json").is_file()]
    if skipped:
        warnings.warn(f"{root}: {len(skipped)} thread folder(s) have source-tweet/ but no structure.json and are not "
                      f"read (first: {skipped[:3]}). Fix: restore structure.json from the RumourEval-2017 archive",
                      stacklevel=2)
    rows, unlabeled = [], 0
    for s in found:
        for structure in sorted((root / s).rglob("structure.json")):
            thread = structure.parent
            sources = sorted((thread / "source-tweet").glob("*.json"))
            if len(sources) != 1:
                raise DataError(f"{thread}: expected one source-tweet/*.json, found {len(sources)}.")
            src = _read_tweet(sources[0])
            replies = sorted((_read_tweet(p) for p in (thread / "replies").glob("*.json")),
                             key=lambda t: (t["timestamp"], int(t["post_id"])))
            posts = [src] + replies
            stances = [stance.get(p["post_id"]) for p in posts]
            unlabeled += sum(x is None for x in stances)
            balance = 0
            for p, st, lab in zip(posts, stances, lrs_labels(stances)):
                balance += _DELTA.get(st, 0)
                event = thread.parent.name if thread.parent != root / s else ""
                rows.append(dict(timeline_id=thread.name, post_id=p["post_id"], timestamp=p["timestamp"],
                                 text=p["text"], label=lab, author=p["author"], stance=st, balance=balance,
                                 event=event, split=s, parent_id=p["parent_id"]))
    if not rows:
        raise DataError(f"no threads (structure.json) under {root}. Fix: pass the RumourEval-2017 root.")
    if unlabeled:
        warnings.warn(f"{unlabeled} posts have no subtask-A stance; they count as comments in the balance",
                      stacklevel=2)
    df = pd.DataFrame(rows)
    df["timestamp"] = pd.to_datetime(df["timestamp"], utc=True)
    df.attrs["skipped_threads"] = skipped
    return df


def load_rumoureval(root, splits=SPLITS):
    """RumourEval-2017 as :class:`~tempo_analysis.data.Timelines` with LRS labels ("no_switch", "switch")."""
    from ..timelines import Timelines

    df = load_rumoureval_frame(root, splits)
    # replies are already time-sorted after their source; the sort only breaks exact ties by row order
    return Timelines.from_frame(df, min_posts=1, label_names=list(LRS_LABELS))


__all__ = ["LRS_LABELS", "STANCES", "load_rumoureval", "load_rumoureval_frame", "lrs_labels"]
