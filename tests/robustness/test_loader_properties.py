"""Property-based tests of the loaders: any generated CSV, JSON-lines or folder input either loads
into a valid structure or raises the project's DataError; never any other exception."""

from __future__ import annotations

import csv
import gzip
import io
import json
import math
import os
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tempo_analysis.data import DataError, PeriodCorpus, SocialCorpus, Timelines
from tempo_analysis.data.loaders.dwug import load_dwug
from tempo_analysis.data.loaders.generic import load_period_corpus, load_social_corpus, load_timelines
from tempo_analysis.data.loaders.rumoureval import load_rumoureval
from tempo_analysis.data.loaders.semeval import load_semeval

from .builders import DWUG_HEADER

# 60 examples per test in `make test`; TEMPO_HYPOTHESIS_EXAMPLES=1000 for a deeper search.
SETTINGS = settings(max_examples=int(os.environ.get("TEMPO_HYPOTHESIS_EXAMPLES", "60")), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

# ----------------------------------------------------------------------------------- value strategies
words = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
messy = st.one_of(words, st.sampled_from(["", " ", "nan", "NaN", "NULL", "None", "1", "0", "-1", "1e400", "true",
                                          "a,b", '"q"', "x\ny", "\t", "2020-01-01", "2020-13-45", "20061"]))
timestamp = st.one_of(st.sampled_from(["2020-01-01", "2020-01-01T12:00:00Z", "2019-12-31 23:59:59+02:00",
                                       "not a date", "", "1e12", "2262-05-01", "1600-01-01"]),
                      st.integers(-10**20, 10**20).map(str), st.floats(allow_nan=True).map(repr),
                      st.datetimes().map(str))
json_scalar = st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20), st.floats(allow_nan=False), messy)
json_value = st.recursive(json_scalar, lambda kids: st.one_of(st.lists(kids, max_size=3),
                                                              st.dictionaries(words, kids, max_size=3)), max_leaves=5)
small_ids = st.sampled_from(["a", "b", "c", "1", "2", "", "nan"])


def load_or_data_error(fn, *args, **kwargs):
    """Run a loader: return its result, or None when it raised DataError. Any other exception fails."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(*args, **kwargs)
        except DataError:
            return None


_ROOT: list[Path] = []


@pytest.fixture(scope="module", autouse=True)
def scratch():
    """One scratch folder for all generated inputs of this module, removed at the end."""
    with tempfile.TemporaryDirectory(prefix="tempo-prop-") as d:
        _ROOT.append(Path(d))
        yield
        _ROOT.pop()


def newdir() -> Path:
    return Path(tempfile.mkdtemp(dir=_ROOT[-1]))


def tmpfile(name: str, data: str | bytes) -> Path:
    folder = newdir()
    p = folder / name
    p.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return p


def csv_text(columns: list[str], rows: list[list[str]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(columns)
    w.writerows(rows)
    return buf.getvalue()


# ----------------------------------------------------------------------------------- invariants
def check_timelines(tl: Timelines, min_posts: int = 2) -> None:
    df = tl.df
    assert list(df.columns[:5]) == ["timeline_id", "post_id", "timestamp", "text", "seconds"]
    assert len(df) > 0 and df["post_id"].is_unique
    assert all(isinstance(t, str) and t.strip() for t in df["text"])
    sec = df["seconds"].to_numpy()
    assert np.isfinite(sec).all()
    tl_ids = df["timeline_id"].to_numpy()
    starts = np.r_[True, tl_ids[1:] != tl_ids[:-1]]
    assert starts.sum() == len(set(tl_ids)), "each timeline is one contiguous block"
    assert (np.diff(sec)[~starts[1:]] >= 0).all(), "posts are time-sorted within a timeline"
    assert df.groupby("timeline_id").size().min() >= min_posts
    w = tl.windows(3)
    assert w.post_index.shape == (len(df), 3) and w.mask[:, -1].all() and (w.gaps[w.mask] >= 0).all()


def check_periods(c: PeriodCorpus) -> None:
    df = c.df
    assert c.periods and df["doc_id"].is_unique and set(df["period"]) == set(c.periods)
    assert all(isinstance(t, str) and t.strip() for t in df["text"])
    assert (df["period_order"] == df["period"].map({p: i for i, p in enumerate(c.periods)})).all()


def check_social(c: SocialCorpus) -> None:
    assert set(c.df["unit"]) <= set(c.graph.nodes)
    assert not any(a == b for a, b in c.graph.edges)
    assert set(c.df["time"]) == set(c.slices) and c.df["doc_id"].is_unique
    assert all(math.isfinite(d.get("weight", 1.0)) for _, _, d in c.graph.edges(data=True))


# ----------------------------------------------------------------------------------- CSV
@SETTINGS
@given(rows=st.lists(st.tuples(small_ids, st.one_of(small_ids, st.integers(0, 5).map(str)), timestamp, messy),
                     max_size=8),
       columns=st.permutations(["timeline_id", "post_id", "timestamp", "text"]).map(list) | st.just(["timeline_id", "text"]),
       time_unit=st.sampled_from([None, "s", "ms", "weeks"]), min_posts=st.sampled_from([1, 2, 0]),
       sort=st.booleans())
def test_timelines_csv(rows, columns, time_unit, min_posts, sort):
    order = ["timeline_id", "post_id", "timestamp", "text"]
    body = [[dict(zip(order, r))[c] for c in columns] for r in rows]
    path = tmpfile("posts.csv", csv_text(columns, body))
    tl = load_or_data_error(Timelines.from_csv, path, time_unit=time_unit, min_posts=min_posts, sort=sort)
    if tl is not None:
        check_timelines(tl, min_posts)


@SETTINGS
@given(data=st.one_of(st.binary(max_size=200), st.text(max_size=200).map(lambda s: s.encode("utf-8"))))
def test_arbitrary_bytes_as_csv_and_jsonl(data):
    for name, load in (("x.csv", load_timelines), ("x.jsonl", load_timelines), ("x.csv", load_period_corpus),
                       ("x.json", load_period_corpus), ("x.tsv", load_period_corpus)):
        result = load_or_data_error(load, tmpfile(name, data))
        if isinstance(result, Timelines):
            check_timelines(result)
        elif result is not None:
            check_periods(result)


@SETTINGS
@given(rows=st.lists(st.tuples(st.one_of(small_ids, st.sampled_from(["1990", "2000", "1990.0", "late"])), messy,
                               st.one_of(st.none(), small_ids)), max_size=8),
       with_ids=st.booleans(), use_year=st.booleans())
def test_period_corpus_csv(rows, with_ids, use_year):
    cols = ["year" if use_year else "period", "text"] + (["doc_id"] if with_ids else [])
    body = [[p, t] + ([i or ""] if with_ids else []) for p, t, i in rows]
    c = load_or_data_error(load_period_corpus, tmpfile("docs.csv", csv_text(cols, body)))
    if c is not None:
        check_periods(c)


@SETTINGS
@given(docs=st.lists(st.tuples(small_ids, st.sampled_from(["0", "1", "3", "x", "", "1.5"]), messy), max_size=8),
       edges=st.lists(st.tuples(small_ids, small_ids, st.sampled_from(["", "1", "0.5", "x", "inf", "-2"])), max_size=6),
       weighted=st.booleans())
def test_social_corpus_csv(docs, edges, weighted):
    d = tmpfile("docs.csv", csv_text(["unit", "time", "text"], [list(r) for r in docs]))
    e = tmpfile("edges.csv", csv_text(["source", "target"] + (["weight"] if weighted else []),
                                      [list(r) if weighted else list(r[:2]) for r in edges]))
    c = load_or_data_error(load_social_corpus, d, e)
    if c is not None:
        check_social(c)


# ----------------------------------------------------------------------------------- JSON lines
post_record = st.fixed_dictionaries(
    {}, optional={"timeline_id": json_value, "post_id": json_value, "timestamp": st.one_of(json_value, timestamp),
                  "text": json_value, "label": json_value, "author": json_value})
good_record = st.fixed_dictionaries({"timeline_id": st.sampled_from(["a", "b"]), "post_id": st.integers(0, 9),
                                     "timestamp": st.one_of(timestamp, st.integers(0, 10**10)),
                                     "text": st.one_of(messy, st.integers())})


@SETTINGS
@given(records=st.lists(st.one_of(post_record, good_record, json_value), max_size=8),
       time_unit=st.sampled_from([None, "s"]))
def test_timelines_jsonl(records, time_unit):
    path = tmpfile("posts.jsonl", "".join(json.dumps(r) + "\n" for r in records))
    tl = load_or_data_error(Timelines.from_jsonl, path, time_unit=time_unit, min_posts=1)
    if tl is not None:
        check_timelines(tl, 1)


@SETTINGS
@given(records=st.lists(st.fixed_dictionaries({}, optional={"period": json_value, "text": json_value,
                                                            "doc_id": json_value, "period_order": json_value}),
                        max_size=8))
def test_period_corpus_jsonl(records):
    c = load_or_data_error(load_period_corpus, tmpfile("docs.jsonl", "".join(json.dumps(r) + "\n" for r in records)))
    if c is not None:
        check_periods(c)


# ----------------------------------------------------------------------------------- folders
dwug_cell = st.one_of(messy, st.sampled_from(["1", "2", "late", "0:3", "4:9", "3:1", "x:y", "0:400"]))


@SETTINGS
@given(lemmas=st.dictionaries(st.sampled_from(["plane_nn", "tip_vb", "cell", "plane"]),
                              st.lists(st.tuples(st.sampled_from(["1", "2", "late", "", "2.0", "1850"]),
                                                 st.one_of(st.just(None), st.sampled_from(["p1", "p2", "p3"])),
                                                 st.sampled_from(["the plane of a cell", "tip tip", "", " a cell",
                                                                  "plane"]) | messy,
                                                 dwug_cell), max_size=4), max_size=3),
       stats=st.one_of(st.none(), st.text(max_size=60)), pos=st.sampled_from(["strip", "keep"]))
def test_dwug_folder(lemmas, stats, pos):
    root = newdir()
    for lemma, rows in lemmas.items():
        (root / "data" / lemma).mkdir(parents=True)
        lines = ["\t".join(DWUG_HEADER)]
        for i, (g, ident, ctx, span) in enumerate(rows):
            cells = [lemma, "NN", "1850", g, ident or f"{lemma}-{i}", "", ctx.replace("\t", " ").replace("\n", " "),
                     span, "0:1"]
            lines.append("\t".join(cells))
        (root / "data" / lemma / "uses.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    if stats is not None:
        (root / "stats").mkdir()
        (root / "stats" / "stats_groupings.csv").write_text(stats, encoding="utf-8")
    d = load_or_data_error(load_dwug, root, pos=pos)
    if d is not None:
        check_periods(d.corpus)
        assert d.usages and all(u.surface.strip() for u in d.usages)
        assert {u.period for u in d.usages} <= set(d.corpus.periods)


@SETTINGS
@given(targets=st.text(max_size=40), c1=st.lists(messy, max_size=4), c2=st.lists(messy, max_size=4),
       graded=st.one_of(st.none(), st.text(max_size=40)), keep=st.sampled_from(["targets", "all"]))
def test_semeval_folder(targets, c1, c2, graded, keep):
    root = newdir()
    for i, lines in enumerate((c1, c2), 1):
        (root / f"corpus{i}").mkdir()
        with gzip.open(root / f"corpus{i}" / "c.txt.gz", "wt", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
    (root / "targets.txt").write_text(targets, encoding="utf-8")
    if graded is not None:
        (root / "truth").mkdir()
        (root / "truth" / "graded.txt").write_text(graded, encoding="utf-8")
    d = load_or_data_error(load_semeval, root, keep=keep)
    if d is not None:
        check_periods(d.corpus)
        assert d.targets and d.corpus.periods == ["corpus1", "corpus2"]
        if d.truth is not None:
            assert d.truth["word"].is_unique


tweet_record = st.fixed_dictionaries(
    {"id_str": st.one_of(st.integers(100, 105).map(str), json_value), "text": json_value,
     "created_at": st.one_of(st.sampled_from(["Wed Aug 13 10:00:00 +0000 2014", "Wed Aug 13 10:00:01 +0000 2014",
                                              "yesterday"]), json_value)},
    optional={"user": json_value, "in_reply_to_status_id_str": json_value})


@SETTINGS
@given(source=st.one_of(tweet_record, json_value), replies=st.lists(st.one_of(tweet_record, json_value), max_size=3),
       annotations=st.one_of(st.dictionaries(st.integers(100, 105).map(str),
                                             st.sampled_from(["support", "deny", "query", "comment", "agree"])),
                             json_value),
       raw=st.one_of(st.none(), st.text(max_size=20)))
def test_rumoureval_folder(source, replies, annotations, raw):
    root = newdir()
    thread = root / "train" / "100"
    (thread / "source-tweet").mkdir(parents=True)
    (thread / "replies").mkdir()
    (thread / "structure.json").write_text("{}")
    (thread / "source-tweet" / "100.json").write_text(raw if raw is not None else json.dumps(source), encoding="utf-8")
    for i, r in enumerate(replies):
        (thread / "replies" / f"r{i}.json").write_text(json.dumps(r), encoding="utf-8")
    (root / "train-annotations").mkdir()
    (root / "train-annotations" / "subtaskA.json").write_text(json.dumps(annotations), encoding="utf-8")
    tl = load_or_data_error(load_rumoureval, root)
    if tl is not None:
        check_timelines(tl, 1)
        assert set(tl.df["label"]) <= {"switch", "no_switch"}
