"""Tiny on-disk inputs in the real formats (DWUG, SemEval-2020, RumourEval-2017), for the bad-input
table and the property-based tests. Each writer takes the parts a test wants to break."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

DWUG_HEADER = ["lemma", "pos", "date", "grouping", "identifier", "description", "context", "indexes_target_token",
               "indexes_sentence"]


def dwug_row(lemma: str, grouping, identifier: str, context: str, word: str | None = None) -> list[str]:
    """One uses.csv row whose offsets point at the first whole occurrence of ``word`` (default: the lemma)."""
    word = word or lemma.split("_")[0]
    start = context.index(word)
    return [lemma, "NN", "1850", str(grouping), identifier, "", context, f"{start}:{start + len(word)}",
            f"0:{len(context)}"]


def write_dwug(root: Path, uses: dict[str, list[list[str]]] | None = None, stats: str | None = None) -> Path:
    """DIR/data/<lemma>/uses.csv (tab-separated) and, optionally, DIR/stats/opt/stats_groupings.csv."""
    if uses is None:
        uses = {"plane_nn": [dwug_row("plane_nn", 1, "p1", "the plane of the table"),
                             dwug_row("plane_nn", 2, "p2", "the plane landed late")]}
    for lemma, rows in uses.items():
        d = root / "data" / lemma
        d.mkdir(parents=True, exist_ok=True)
        lines = ["\t".join(DWUG_HEADER)] + ["\t".join(r) for r in rows]
        (d / "uses.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    if stats is not None:
        (root / "stats" / "opt").mkdir(parents=True, exist_ok=True)
        (root / "stats" / "opt" / "stats_groupings.csv").write_text(stats, encoding="utf-8")
    return root


def write_semeval(root: Path, targets: str = "plane_nn\ntip_vb\n",
                  corpus1=("the plane_nn of the table", "he tip_vb his hat"),
                  corpus2=("the plane_nn landed", "we tip_vb the waiter"),
                  graded: str | None = "plane_nn\t0.88\ntip_vb\t0.68\n") -> Path:
    for i, lines in enumerate((corpus1, corpus2), 1):
        d = root / f"corpus{i}" / "lemma"
        d.mkdir(parents=True, exist_ok=True)
        with gzip.open(d / f"c{i}.txt.gz", "wt", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
    (root / "targets.txt").write_text(targets, encoding="utf-8")
    if graded is not None:
        (root / "truth").mkdir(exist_ok=True)
        (root / "truth" / "graded.txt").write_text(graded, encoding="utf-8")
    return root


def tweet(tid: str, text: str = "a claim", when: str = "Wed Aug 13 10:00:00 +0000 2014", parent=None) -> dict:
    return dict(id_str=tid, text=text, created_at=when, user={"screen_name": f"u{tid}"},
                in_reply_to_status_id_str=parent)


def write_rumoureval(root: Path, source=None, replies=None, annotations=None) -> Path:
    """train/ev/100/ with a source tweet and replies, and train-annotations/subtaskA.json.

    Any of the parts may be a dict (written as JSON) or a str (written as is, to plant broken files).
    """
    source = tweet("100") if source is None else source
    replies = [tweet("101", "false!", "Wed Aug 13 10:01:00 +0000 2014", "100")] if replies is None else replies
    annotations = {"100": "support", "101": "deny"} if annotations is None else annotations
    thread = root / "train" / "ev" / "100"
    (thread / "source-tweet").mkdir(parents=True, exist_ok=True)
    (thread / "replies").mkdir(parents=True, exist_ok=True)

    def dump(obj):
        return obj if isinstance(obj, str) else json.dumps(obj)
    (thread / "source-tweet" / "100.json").write_text(dump(source), encoding="utf-8")
    for i, r in enumerate(replies):
        name = r["id_str"] if isinstance(r, dict) and isinstance(r.get("id_str"), str) else f"r{i}"
        (thread / "replies" / f"{name}.json").write_text(dump(r), encoding="utf-8")
    (thread / "structure.json").write_text("{}")
    (root / "train-annotations").mkdir(exist_ok=True)
    (root / "train-annotations" / "subtaskA.json").write_text(dump(annotations), encoding="utf-8")
    return root
