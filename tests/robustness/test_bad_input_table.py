"""The bad-input table (docs/ROBUSTNESS.md) for the data model and every loader, as tests.

Each row builds one bad input and states its outcome: a DataError whose message names the field
(and the file or rows) and the fix, or a documented rule that applies with a warning. The CLI rows
of the table are tested with the CLI (tests/cli, after the layout move).
"""

from __future__ import annotations

import gzip
import json
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import networkx as nx
import numpy as np
import pandas as pd
import pytest

from tempo_analysis.data import DataError, PeriodCorpus, SocialCorpus, Timelines, UnsortedTimestampsWarning
from tempo_analysis.data.errors import DataPathError, check_years
from tempo_analysis.data.loaders.acl_abstracts import load_acl_abstracts
from tempo_analysis.data.loaders.acl_xml import load_acl_xml
from tempo_analysis.data.loaders.dwug import load_dwug
from tempo_analysis.data.loaders.generic import load_period_corpus, load_social_corpus, load_timelines, read_table
from tempo_analysis.data.loaders.nltk_corpora import load_nltk_eras
from tempo_analysis.data.loaders.pseudoword import read_sources
from tempo_analysis.data.loaders.rumoureval import load_rumoureval
from tempo_analysis.data.loaders.semeval import load_semeval

from tempo_analysis.resolve import load_timelines as load_timelines_spec
from tempo_analysis.data.timelines import check_labels_seen
from tempo_analysis.evaluation.classification import cross_validate, timeline_folds
from tempo_analysis.stream.baselines import PriorRandomClassifier
from tempo_analysis.stream.labels import dev_is_usable, training_labels

from .builders import dwug_row, tweet, write_dwug, write_rumoureval, write_semeval


@dataclass
class Row:
    """One row of the table: ``run(tmp_path)`` and what must come of it."""

    id: str
    run: Callable[[Path], object]
    error: str | None = None          # regex the DataError message must match
    warn: str | None = None           # regex of the documented warning (the call then succeeds)
    check: Callable[[object], bool] | None = None   # on success: the rule was applied


def posts(**cols) -> pd.DataFrame:
    base = dict(timeline_id=["a", "a", "b", "b"], post_id=["1", "2", "3", "4"],
                timestamp=["2020-01-01", "2020-01-02", "2020-01-01", "2020-01-03"], text=["w", "x", "y", "z"])
    base.update(cols)
    return pd.DataFrame(base)


def cv_with_unlabelled_dev():
    """Cross-validation over six labelled timelines, except fold 0's dev timeline."""
    frame = pd.DataFrame(dict(timeline_id=[t for t in "abcdef" for _ in range(2)], post_id=[str(i) for i in range(12)],
                              timestamp=[1, 2] * 6, text=["w"] * 12, label=["x", "y"] * 6))
    dev = timeline_folds(Timelines.from_frame(frame, time_unit="s"), 3, 0.25, 0)[0].dev
    frame.loc[frame["timeline_id"].isin(dev), "label"] = None
    return cross_validate(lambda seed: PriorRandomClassifier(seed=seed), Timelines.from_frame(frame, time_unit="s"),
                          folds=3, fold_ids=[0], progress=False)


CSV_HEAD = "timeline_id,post_id,timestamp,text,label\n"
JSONL_OK = ('{"timeline_id": "a", "post_id": "1", "timestamp": 1, "text": "hi"}\n'
            '{"timeline_id": "a", "post_id": "2", "timestamp": 2, "text": "yo"}\n')


def load_spec(path, time_unit="s", kind="csv"):
    return load_timelines_spec(f"{kind}:{path}", time_unit=time_unit).data


def docs(**cols) -> pd.DataFrame:
    base = dict(period=[1990, 1990, 2000], text=["a cell", "the cell", "my cell phone"])
    base.update(cols)
    return pd.DataFrame(base)


def social(**cols) -> pd.DataFrame:
    base = dict(unit=["u", "v", "u"], time=[0, 1, 1], text=["a", "b", "c"])
    base.update(cols)
    return pd.DataFrame(base)


def write(tmp: Path, name: str, content: str | bytes) -> Path:
    p = tmp / name
    p.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return p


TIMELINES = [
    Row("timelines: NaN timestamps", lambda t: Timelines.from_frame(posts(timestamp=[1.0, np.nan, 3.0, 4.0]),
                                                                    time_unit="s"),
        error=r"column 'timestamp' at rows \[1\]: NaN"),
    Row("timelines: non-numeric timestamps", lambda t: Timelines.from_frame(posts(timestamp=["2020-01-01", "yesterday",
                                                                                   "2020-01-01", "2020-01-02"])),
        error=r"column 'timestamp' at rows \[1\]: unparseable.*'yesterday'.*ISO 8601"),
    Row("timelines: numbers mixed with date strings", lambda t: Timelines.from_frame(
        posts(timestamp=[5, "2020-01-01", "2020-01-01", "2020-01-02"])),
        error=r"column 'timestamp' at rows \[0\]: numbers mixed.*time_unit"),
    Row("timelines: numbers without a unit", lambda t: Timelines.from_frame(posts(timestamp=[1, 2, 3, 4])),
        error=r"column 'timestamp'.*declared unit.*time_unit="),
    Row("timelines: numbers in an object column (JSON) follow time_unit", lambda t: Timelines.from_frame(
        posts(timestamp=pd.Series([1, 2, 1, 3], dtype=object)), time_unit="s"),
        check=lambda tl: tl.df["seconds"].tolist() == [1.0, 2.0, 1.0, 3.0]),
    Row("timelines: unknown time unit", lambda t: Timelines.from_frame(posts(), time_unit="weeks"),
        error=r"time_unit='weeks' is not known.*'s', 'ms'"),
    Row("timelines: epoch value in a wrong unit", lambda t: Timelines.from_frame(
        posts(timestamp=[1.5e18, 1.6e18, 1.5e18, 1.6e18]), time_unit="s"),
        error=r"column 'timestamp'.*outside the years 1677-2262.*check time_unit"),
    Row("timelines: unsorted, sort=False", lambda t: Timelines.from_frame(
        posts(timestamp=["2020-01-02", "2020-01-01", "2020-01-01", "2020-01-02"]), sort=False),
        error=r"column 'timestamp' at timeline_ids \['a'\].*go backwards.*sort=True"),
    Row("timelines: unsorted, default (rule: sorted, warned)", lambda t: Timelines.from_frame(
        posts(timestamp=["2020-01-02", "2020-01-01", "2020-01-01", "2020-01-02"])),
        warn=r"sorted posts by timestamp in 1 timeline", check=lambda tl: tl.timeline("a")["post_id"].tolist() == ["2", "1"]),
    Row("timelines: duplicate post ids", lambda t: Timelines.from_frame(posts(post_id=["1", "2", "2", "4"])),
        error=r"column 'post_id' at post_ids \['2'\].*duplicate.*unique"),
    Row("timelines: missing post ids", lambda t: Timelines.from_frame(posts(post_id=["1", None, "3", "4"])),
        error=r"column 'post_id' at rows \[1\]: missing ids"),
    Row("timelines: empty text", lambda t: Timelines.from_frame(posts(text=["w", "  ", "y", "z"])),
        error=r"column 'text' at post_ids \['2'\].*empty.*drop"),
    Row("timelines: text that is not text", lambda t: Timelines.from_frame(posts(text=["w", 3.5, "y", "z"])),
        error=r"column 'text' at post_ids \['2'\].*not text"),
    Row("timelines: nested values (JSON)", lambda t: Timelines.from_frame(posts(label=[["a"], "b", "c", "d"])),
        error=r"column 'label' at rows \[0\].*single values"),
    Row("timelines: single-post timeline", lambda t: Timelines.from_frame(posts(timeline_id=["a", "a", "b", "c"])),
        error=r"column 'timeline_id' at timeline_ids \['b', 'c'\].*min_posts=1"),
    Row("timelines: min_posts=0", lambda t: Timelines.from_frame(posts(), min_posts=0),
        error=r"min_posts must be a positive integer"),
    Row("timelines: missing column", lambda t: Timelines.from_frame(posts().drop(columns="text")),
        error=r"missing column\(s\) \['text'\].*rename"),
    Row("timelines: no rows", lambda t: Timelines.from_frame(posts().iloc[:0]), error=r"no rows"),
    Row("timelines: 0-byte CSV", lambda t: Timelines.from_csv(write(t, "empty.csv", "")),
        error=r"cannot read timelines CSV '.*empty\.csv': the file is empty"),
    Row("timelines: broken CSV quoting", lambda t: Timelines.from_csv(write(t, "q.csv", 'timeline_id,text\n"a,b\n')),
        error=r"cannot read timelines CSV '.*q\.csv'.*EOF inside string"),
    Row("timelines: CSV not UTF-8", lambda t: Timelines.from_csv(write(t, "l1.csv", b"timeline_id,text\n\xff\xfe,x\n")),
        error=r"cannot read timelines CSV '.*l1\.csv'.*not UTF-8"),
    Row("timelines: broken JSON lines", lambda t: Timelines.from_jsonl(write(t, "b.jsonl", '{"timeline_id": "a"\n')),
        error=r"cannot read timelines JSON-lines file '.*b\.jsonl'"),
    Row("timelines: missing file", lambda t: Timelines.from_csv(t / "nope.csv"),
        error=r"'.*nope\.csv' does not exist"),
    Row("timelines: window size", lambda t: Timelines.from_frame(posts()).windows(0),
        error=r"window size w must be a positive integer"),
    Row("timelines: no timestamp column (rule: order-only, warned)",
        lambda t: Timelines.from_frame(posts().drop(columns="timestamp")),
        warn=r"no 'timestamp' column; each post's position in its timeline",
        check=lambda tl: tl.df["seconds"].tolist() == [0.0, 1.0, 0.0, 1.0]),
    Row("timelines: time_unit='position' (rule: order-only)",
        lambda t: Timelines.from_frame(posts(timestamp=["2020-01-09", "2020-01-01", "2020-01-01", "2020-01-02"]),
                                       time_unit="position"),
        check=lambda tl: tl.df["seconds"].tolist() == [0.0, 1.0, 0.0, 1.0]
        and tl.df["timestamp_original"].tolist()[:2] == ["2020-01-09", "2020-01-01"]),
    Row("timelines: label unseen in training (evaluation)",
        lambda t: check_labels_seen(Timelines.from_frame(posts(label=["a", "b", "a", "b"])),
                                    Timelines.from_frame(posts(label=["a", "c", None, "c"]))),
        error=r"column 'label' at post_ids \['2', '4'\] / rows \[1, 3\]: test labels \['c'\] never occur in training"),
    Row("timelines: no label column (training)",
        lambda t: training_labels(Timelines.from_frame(posts())),
        error=r"column 'label': the training timelines have no labels\. Fix: pass Timelines with a 'label' column"),
    Row("timelines: no labelled training post (training)",
        lambda t: training_labels(Timelines.from_frame(posts(label=[None] * 4), label_names=["a", "b"])),
        error=r"column 'label': every training post is unlabelled; nothing to learn from\. Fix: pass training"),
    Row("timelines: a fold whose dev split has no labelled post (evaluation)",
        lambda t: cv_with_unlabelled_dev(),
        error=r"column 'label': fold 0's dev split \(1 timeline\) has no labelled post, .* Fix: use another split seed"),
    Row("timelines: a dev split without a labelled post (training)",
        lambda t: dev_is_usable(Timelines.from_frame(posts(label=[None] * 4)), ["a", "b"]),
        error=r"column 'label': dev timelines have no labelled post, .* or pass dev=None"),
]

# the stream --data specs (csv:FILE / jsonl:FILE) as `tempo-analysis stream evaluate` reads them
STREAM_SPECS = [
    Row("stream csv: missing column", lambda t: load_spec(write(t, "m.csv", "timeline_id,post_id,timestamp\na,1,1\n")),
        error=r"Timelines input is missing column\(s\) \['text'\]; it has \['timeline_id', 'post_id', 'timestamp'\]"),
    Row("stream csv: a time unit but no timestamp column",
        lambda t: load_spec(write(t, "m2.csv", "timeline_id,post_id,text\na,1,x\na,2,y\n")),
        error=r"missing column\(s\) \['timestamp'\]"),
    Row("stream csv: empty text", lambda t: load_spec(write(t, "e.csv", CSV_HEAD + "a,1,1,hi,x\na,2,2,,y\n")),
        error=r"column 'text' at post_ids \['2'\] / rows \[1\]: empty or missing text"),
    Row("stream csv: NaN timestamp", lambda t: load_spec(write(t, "n.csv", CSV_HEAD + "a,1,1,hi,x\na,2,,yo,y\n")),
        error=r"column 'timestamp' at rows \[1\]: NaN or infinite timestamps"),
    Row("stream csv: non-numeric timestamp",
        lambda t: load_spec(write(t, "t.csv", CSV_HEAD + "a,1,2020-01-01,hi,x\na,2,soon,yo,y\n"), None),
        error=r"column 'timestamp' at rows \[1\]: unparseable timestamps \['soon'\]"),
    Row("stream csv: unsorted timestamps (rule: sorted, warned)",
        lambda t: load_spec(write(t, "u.csv", CSV_HEAD + "a,1,5,hi,x\na,2,3,yo,y\n")),
        warn=r"sorted posts by timestamp in 1 timeline", check=lambda tl: tl.df["post_id"].tolist() == ["2", "1"]),
    Row("stream csv: duplicate post ids", lambda t: load_spec(write(t, "d.csv", CSV_HEAD + "a,1,1,hi,x\na,1,2,yo,y\n")),
        error=r"column 'post_id' at post_ids \['1'\] / rows \[0, 1\]: duplicate post ids"),
    Row("stream csv: timeline of one post",
        lambda t: load_spec(write(t, "o.csv", CSV_HEAD + "a,1,1,hi,x\na,2,2,yo,y\nb,3,1,hey,x\n")),
        error=r"column 'timeline_id' at timeline_ids \['b'\]: timeline\(s\) with fewer than min_posts=2 posts"),
    Row("stream csv: no timestamp column (rule: order-only, warned)",
        lambda t: load_spec(write(t, "p.csv", "timeline_id,post_id,text\na,1,hi\na,2,yo\n"), None),
        warn=r"position in its timeline", check=lambda tl: tl.df["seconds"].tolist() == [0.0, 1.0]),
    Row("stream jsonl: empty text", lambda t: load_spec(write(t, "e.jsonl", JSONL_OK + '{"timeline_id": "a", '
                                                        '"post_id": "3", "timestamp": 3, "text": ""}\n'), "s", "jsonl"),
        error=r"column 'text' at post_ids \['3'\] / rows \[2\]: empty or missing text"),
    Row("stream jsonl: --time-unit position", lambda t: load_spec(write(t, "p.jsonl", JSONL_OK), "position", "jsonl"),
        check=lambda tl: tl.df["seconds"].tolist() == [0.0, 1.0]),
    Row("stream jsonl: numeric timestamps follow the time unit, never a guessed date",
        lambda t: load_spec(write(t, "ms.jsonl", JSONL_OK.replace('"timestamp": 2', '"timestamp": 2000')
                                  .replace('"timestamp": 1', '"timestamp": 1000')), "ms", "jsonl"),
        check=lambda tl: tl.df["seconds"].tolist() == [1.0, 2.0]),
    Row("stream jsonl: int labels with a null stay '0' and '1', as in a CSV", lambda t: load_spec(write(
        t, "null.jsonl", "".join(f'{{"timeline_id": "a", "post_id": "{i}", "timestamp": {i}, "text": "hi", "label": {v}}}\n'
                                 for i, v in enumerate(["0", "null", "1"]))), "s", "jsonl"),
        check=lambda tl: tl.label_names == ["0", "1"]),
    Row("stream jsonl: a BOM is allowed", lambda t: load_spec(write(t, "bom.jsonl", "\ufeff" + JSONL_OK), "s", "jsonl"),
        check=lambda tl: len(tl) == 2),
    Row("stream csv: a row with a field too many", lambda t: load_spec(write(t, "x.csv", CSV_HEAD + "a,1,1,hi,x,EXTRA\n"
                                                                       "a,2,2,yo,y\n")),
        error=r"a row has more fields than the header"),
    Row("stream csv: a timestamp relative to now", lambda t: load_spec(write(t, "now.csv", CSV_HEAD + "a,1,2020-01-01,hi,x\n"
                                                                        "a,2,today,yo,y\n"), None),
        error=r"column 'timestamp'.*unparseable timestamps \['today'\]"),
    Row("stream csv: labels stay text when some are blank", lambda t: load_spec(write(t, "l.csv", CSV_HEAD +
                                                                                "a,1,1,hi,0\na,2,2,yo,\na,3,3,ok,1\n")),
        check=lambda tl: sorted(tl.label_names) == ["0", "1"]),
    Row("stream csv: a label spelled None or NA is a label, not a missing one", lambda t: load_spec(write(
        t, "na.csv", CSV_HEAD + "a,1,1,hi,None\na,2,2,yo,NA\na,3,3,ok,switch\n")),
        check=lambda tl: sorted(tl.label_names) == ["NA", "None", "switch"] and tl.df["label"].notna().all()),
    Row("stream csv: a post whose text is N/A or null is kept", lambda t: load_spec(write(
        t, "natext.csv", CSV_HEAD + "a,1,1,N/A,x\na,2,2,null,y\n")),
        check=lambda tl: tl.df["text"].tolist() == ["N/A", "null"]),
]

PERIODS = [
    Row("periods: mixed label types", lambda t: PeriodCorpus.from_frame(docs(period=[1, "late", "late"])),
        error=r"column 'period' mixes label types: 1 \(number\), 'late' \(string\).*order="),
    Row("periods: mixed types are fine with an explicit order", lambda t: PeriodCorpus.from_frame(
        docs(period=[1, "late", "late"]), order=[1, "late"]), check=lambda c: c.periods == [1, "late"]),
    Row("periods: a CSV column mixing number-like and text labels", lambda t: load_period_corpus(write(
        t, "p.csv", "period,text\n1990,a cell\nlate,the cell\n")),
        error=r"column 'period' mixes number-like labels \['1990'\] with text labels \['late'\].*order="),
    Row("periods: text labels (rule: first appearance, warned)", lambda t: PeriodCorpus.from_frame(
        docs(period=["late", "early", "early"])), warn=r"column 'period': text labels are ordered by first "
        r"appearance \['late', 'early'\].*order=\[\.\.\.\]", check=lambda c: c.periods == ["late", "early"]),
    Row("periods: number-like text labels sort by value", lambda t: PeriodCorpus.from_frame(
        docs(period=["10", "9", "9"])), check=lambda c: c.periods == ["9", "10"]),
    Row("periods: two spellings of one number", lambda t: PeriodCorpus.from_frame(docs(period=["1", "1.0", "2"])),
        error=r"column 'period': labels \['1', '1.0'\] spell the same number"),
    Row("periods: period_order not numeric", lambda t: PeriodCorpus.from_frame(docs(period_order=["x", "x", 2])),
        error=r"column 'period_order' at rows \[0, 1\]: values that are not numbers"),
    Row("periods: two period_order values for one period", lambda t: PeriodCorpus.from_frame(
        docs(period_order=[1, 2, 3])), error=r"column 'period_order'.*\[1990\].*more than one period_order"),
    Row("periods: order lists a period twice", lambda t: PeriodCorpus.from_frame(docs(), order=[1990, 2000, 1990]),
        error=r"lists a period twice"),
    Row("periods: order is not a list", lambda t: PeriodCorpus.from_frame(docs(), order=1990),
        error=r"order= must be a list"),
    Row("periods: missing period", lambda t: PeriodCorpus.from_frame(docs(period=[1990, None, 2000])),
        error=r"column 'period' at rows \[1\]: documents without a period"),
    Row("periods: duplicate doc ids", lambda t: PeriodCorpus.from_frame(docs(doc_id=["a", "a", "b"])),
        error=r"column 'doc_id' at doc_ids \['a'\] / rows \[0, 1\]: duplicate"),
    Row("periods: empty text", lambda t: PeriodCorpus.from_frame(docs(text=["a", "", "b"])),
        error=r"column 'text' at doc_ids \['d1'\] / rows \[1\]: empty or missing text. Fix: drop these documents"),
    Row("periods: numeric text column", lambda t: PeriodCorpus.from_frame(docs(text=[1, 2, 3])),
        error=r"column 'text'.*not text.*right column"),
    Row("periods: a declared period without documents", lambda t: PeriodCorpus.from_frame(docs(),
                                                                                         order=[1990, 1995, 2000]),
        error=r"period\(s\) \[1995\] have no documents"),
    Row("periods: single period where two are needed", lambda t: PeriodCorpus.from_frame(
        docs(period=[1990] * 3)).require_periods(2, "semantic change"),
        error=r"semantic change needs at least 2 periods, but the corpus has 1 \(\[1990\]\)"),
    Row("periods: a text null or NA in a CSV is kept", lambda t: load_period_corpus(
        write(t, "p.csv", "period,text\n1990,null\n2000,NA\n")), check=lambda c: c.df["text"].tolist() == ["null", "NA"]),
    Row("periods: a text null in a corpus CSV is kept", lambda t: PeriodCorpus.from_csv(
        write(t, "p.csv", "period,text\n1990,null\n2000,None\n")), check=lambda c: c.df["text"].tolist() == ["null", "None"]),
    Row("periods: 0-byte CSV", lambda t: load_period_corpus(write(t, "empty.csv", "")),
        error=r"cannot read CSV file '.*empty\.csv': the file is empty"),
    Row("periods: typo year", lambda t: check_years([2019, 20061, 2020], where="--test-year"),
        error=r"--test-year: column 'year' at rows \[1\]: years \[20061\] lie outside 1000-2100.*year_range"),
    Row("periods: year that is not a whole number", lambda t: check_years([2019, 2019.5]),
        error=r"column 'year' at rows \[1\]: values that are not whole-number years"),
    Row("periods: widened year range", lambda t: check_years([800, 900], year_range=(500, 2100)),
        check=lambda r: r is None),
]

EDGES = pd.DataFrame(dict(source=["u"], target=["v"]))
SOCIAL = [
    Row("social: self-loop (rule: dropped, warned)", lambda t: SocialCorpus.from_frame(
        social(), edges=[("u", "v"), ("u", "u")]),
        warn=r"dropped 1 self-loop.*'u'", check=lambda c: c.graph.number_of_edges() == 1),
    Row("social: self-loop in a graph (rule: dropped, warned)", lambda t: SocialCorpus.from_frame(
        social(), nx.Graph([("u", "v"), ("v", "v")])), warn=r"self-loop", check=lambda c: not nx.number_of_selfloops(c.graph)),
    Row("social: time-slice gaps (rule: kept in order, warned)", lambda t: SocialCorpus.from_frame(
        social(time=[0, 2, 5]), edges=EDGES), warn=r"time slices \[0, 2, 5\] have gaps.*\[1, 3, 4\].*slices=",
        check=lambda c: c.slices == [0, 2, 5]),
    Row("social: isolated units are allowed", lambda t: SocialCorpus.from_frame(social(), edges=EDGES, units=["u", "v", "w"]),
        check=lambda c: c.units == ["u", "v", "w"] and c.graph.degree("w") == 0),
    Row("social: mixed time label types", lambda t: SocialCorpus.from_frame(social(time=[0, "late", "late"]), edges=EDGES),
        error=r"column 'time' mixes label types"),
    Row("social: slices= lists a slice twice", lambda t: SocialCorpus.from_frame(
        social(), edges=[("u", "v")], slices=[0, 0, 1]), error=r"slices= lists a time slice twice: \[0, 0, 1\]"),
    Row("social: text time slices (rule: first appearance, warned)", lambda t: SocialCorpus.from_frame(
        social(time=["spring", "summer", "autumn"]), edges=EDGES),
        warn=r"column 'time': text labels are ordered by first appearance.*slices=\[\.\.\.\]",
        check=lambda c: c.slices == ["spring", "summer", "autumn"]),
    Row("social: a CSV time column mixing number-like and text labels", lambda t: load_social_corpus(
        write(t, "d.csv", "unit,time,text\nu,1,a\nv,late,b\n"), write(t, "e.csv", "source,target\nu,v\n")),
        error=r"column 'time' mixes number-like labels \['1'\] with text labels \['late'\].*slices="),
    Row("social: a unit called NA and a text null in CSVs are data", lambda t: load_social_corpus(
        write(t, "d.csv", "unit,time,text\nNA,0,null\nv,1,b\n"), write(t, "e.csv", "source,target\nNA,v\n")),
        check=lambda c: c.units == ["NA", "v"] and c.df["text"].tolist() == ["null", "b"] and c.graph.has_edge("NA", "v")),
    Row("social: edge to an unknown unit", lambda t: SocialCorpus.from_frame(social(), edges=[("u", "ghost")]),
        error=r"column 'source/target'.*unknown unit.*'ghost'"),
    Row("social: edge with a missing endpoint", lambda t: SocialCorpus.from_frame(
        social(), edges=pd.DataFrame(dict(source=["u"], target=[None]))),
        error=r"column 'source/target' at rows \[0\]: edges with a missing endpoint"),
    Row("social: non-numeric weight", lambda t: SocialCorpus.from_frame(
        social(), edges=pd.DataFrame(dict(source=["u"], target=["v"], weight=["heavy"]))),
        error=r"column 'weight' at rows \[0\].*'heavy'"),
    Row("social: malformed edge tuple", lambda t: SocialCorpus.from_frame(social(), edges=[("u",)]),
        error=r"column 'edges' at rows \[0\].*\(source, target\[, weight\]\)"),
    Row("social: unit not in the graph", lambda t: SocialCorpus.from_frame(social(unit=["u", "v", "x"]),
                                                                      nx.Graph([("u", "v")])),
        error=r"column 'unit'.*\['x'\].*not nodes of the graph"),
    Row("social: duplicate doc ids", lambda t: SocialCorpus.from_frame(social(doc_id=["a", "a", "b"]), edges=EDGES),
        error=r"column 'doc_id' at doc_ids \['a'\] / rows \[0, 1\]: duplicate"),
    Row("social: a pair listed twice (rule: one tie, the last weight, warned)", lambda t: SocialCorpus.from_frame(
        social(), edges=pd.DataFrame(dict(source=["u", "v"], target=["v", "u"], weight=[1.0, 5.0]))),
        warn=r"1 edge\(s\) repeat a pair already listed.*rows 0 and 1, weights 1 and 5",
        check=lambda c: c.graph["u"]["v"]["weight"] == 5.0),
    Row("social: 0-byte edge CSV", lambda t: load_social_corpus(write(t, "d.csv", "unit,time,text\nu,0,a\n"),
                                                                write(t, "e.csv", "")),
        error=r"cannot read CSV file '.*e\.csv': the file is empty"),
]


def dwug_mixed(t):
    return load_dwug(write_dwug(t, {"plane_nn": [dwug_row("plane_nn", 1, "p1", "the plane of the table"),
                                                 dwug_row("plane_nn", "late", "p2", "the plane landed")]}))


def dwug_file(t, content: str):
    root = write_dwug(t)
    (root / "data" / "plane_nn" / "uses.csv").write_text(content, encoding="utf-8")
    return load_dwug(root)


def dwug_clash(t):
    return load_dwug(write_dwug(t, {"plane_nn": [dwug_row("plane_nn", 1, "p1", "the plane of the table"),
                                                 dwug_row("plane_nn", 2, "p1", "the plane landed")]}))


def dwug_without_uses(t):
    """plane_nn is read; tip_vb's folder holds no uses.csv (a renamed file), so its word and truth are left out;
    a hidden folder (.ipynb_checkpoints) is not a lemma folder."""
    root = write_dwug(t, stats="lemma\tchange_graded\nplane_nn\t0.5\ntip_vb\t0.2\n")
    (root / "data" / "tip_vb").mkdir()
    (root / "data" / "tip_vb" / "uses.tsv").write_text("a file under another name")
    (root / "data" / ".ipynb_checkpoints").mkdir()
    return load_dwug(root)


def semeval_latin1(t):
    root = write_semeval(t)
    with gzip.open(root / "corpus1" / "lemma" / "c1.txt.gz", "wb") as f:
        f.write("the plane_nn of the café\nhe tip_vb his hat\n".encode("latin-1"))
    return load_semeval(root)


def semeval_gz(t):
    root = write_semeval(t)
    (root / "corpus1" / "lemma" / "c1.txt.gz").write_bytes(b"\x1f\x8b\x08broken")
    return load_semeval(root)


def nltk_folder(t, book: bytes = b"The cell of the old monk was cold.", house: int = 1) -> Path:
    """A tiny NLTK corpora folder: one Gutenberg book and one Brown file (``house`` sentences with 'house')."""
    (t / "gutenberg").mkdir()
    (t / "gutenberg" / "austen-emma.txt").write_bytes(b"[Emma by Jane Austen 1816]\n\n" + book + b"\n")
    (t / "brown").mkdir()
    (t / "brown" / "ca01").write_text("The/at house/nn stood/vbd on/in the/at hill/nn ./.\n" * house)
    return t


def nltk_spec(t, spec: str = "nltk:{t}", **folder):
    from tempo_analysis.resolve import load_change_data
    return load_change_data(spec.format(t=nltk_folder(t, **folder))).data


def rumoureval_without_structure(t):
    write_rumoureval(t)
    orphan = t / "train" / "ev" / "200" / "source-tweet"
    orphan.mkdir(parents=True)
    (orphan / "200.json").write_text(json.dumps(tweet("200")))
    return load_rumoureval(t)


ACL_XML_PANELS = ("<collection id='2006.amta'>" + "".join(
    f"<volume id='panel{v}'><meta><year>2006</year></meta><paper id='1'><title>Panel {v}</title>"
    "<url>2006.amta-panels.1</url></paper></volume>" for v in (1, 2)) + "</collection>")
ACL_XML_ONE = ("<collection id='P18'><volume id='1'><meta><year>2018</year></meta><paper id='1'><title>T</title>"
               "<abstract>{}</abstract></paper><paper id='2'><title>U</title><abstract>{}</abstract></paper>"
               "</volume></collection>")


def acl_social_small_venue(t):
    from tempo_analysis.data.social_corpora import acl_social_corpus
    rows = [dict(paper_id=f"{v}{y}-{i}", year=y, venue=v, volume_id="x", title="t", authors=["ann", f"{v}{i}"],
                 abstract=f"an abstract {i}") for v, n in (("acl", 2), ("emnlp", 2), ("lrec", 1))
            for y in (2018, 2019) for i in range(n)]
    return acl_social_corpus(pd.DataFrame(rows), years=[2018, 2019], min_papers=4, progress=False)


def acl_train_over_2000(t):
    from tempo_analysis.resolve import load_yearly
    from tempo_analysis.future_text.splits import split_years
    for y in range(2000, 2006):
        write(t, f"papers_{y}.txt", f"An abstract of {y} about parsing text with a large corpus of sentences.\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                   # "no xml_dir" (2018, 2020, 2021 absent): another row
        frame = load_yearly(f"acl:{t}").data
    return split_years(frame, 2004, 2005)


def yearly_csv(t, body: str):
    from tempo_analysis.resolve import load_yearly
    path = write(t, "y.csv", "doc_id,year,text\n" + body)
    return load_yearly(f"csv:{path}").data


LOADERS = [
    Row("yearly csv: texts and ids as written", lambda t: yearly_csv(t, "007,2019,NA\n008,2020,123\n"),
        check=lambda f: f["doc_id"].tolist() == ["007", "008"] and f["text"].tolist() == ["NA", "123"]),
    Row("yearly csv: an id used twice", lambda t: yearly_csv(t, "a,2019,x\na,2020,y\n"),
        error=r"column 'doc_id': ids \['a'\] are used by more than one row"),
    Row("yearly csv: an empty id", lambda t: yearly_csv(t, "a,2019,x\n,2020,y\n"),
        error=r"column 'doc_id' at rows \[1\]: empty id"),
    Row("yearly csv: an infinite year", lambda t: yearly_csv(t, "a,2019,x\nb,inf,y\n"),
        error=r"column 'year' at rows \[1\]: year must be an integer"),
    Row("dwug: groupings of mixed types", dwug_mixed,
        error=r"column 'grouping' mixes numbers \['1'\] with labels \['late'\].*uses\.csv.*1 = earlier"),
    Row("dwug: 0-byte uses.csv", lambda t: dwug_file(t, ""),
        error=r"cannot read DWUG file '.*plane_nn/uses\.csv': the file is empty"),
    Row("dwug: a row with too few fields", lambda t: dwug_file(t, "lemma\tgrouping\tcontext\tindexes_target_token\n"
                                                                  "plane\t1\tthe plane\n"),
        error=r"uses\.csv line\(s\) \[2\]: a different number of tab-separated fields than the header \(4\)"),
    Row("dwug: a row with too many fields", lambda t: dwug_file(t, "lemma\tgrouping\tcontext\tindexes_target_token\n"
                                                                   "plane\t1\tthe plane\t4:9\textra\n"),
        error=r"uses\.csv line\(s\) \[2\]: a different number of tab-separated fields"),
    Row("dwug: empty grouping", lambda t: load_dwug(write_dwug(t, {"plane_nn": [
        dwug_row("plane_nn", "", "p1", "the plane of the table")]})),
        error=r"uses\.csv row 2 \(lemma 'plane_nn'\): column 'grouping' is empty"),
    Row("dwug: one identifier for two usages", dwug_clash, error=r"column 'identifier': ids \['p1'\]"),
    Row("dwug: the same usage listed twice (rule: counted once, warned)", lambda t: load_dwug(write_dwug(t, {"plane_nn": [
        dwug_row("plane_nn", 1, "p1", "the plane of the table"), dwug_row("plane_nn", 1, "p1", "the plane of the table"),
        dwug_row("plane_nn", 2, "p2", "the plane landed")]})), warn=r"skipped 1 DWUG usage row\(s\) that repeat",
        check=lambda d: len(d.usages) == 2),
    Row("dwug: offsets on another word (rule: kept, warned)", lambda t: load_dwug(write_dwug(t, {"plane_nn": [
        dwug_row("plane_nn", 1, "p1", "the plane of the table", word="table"),
        dwug_row("plane_nn", 2, "p2", "the plane landed")]})), warn=r"1 DWUG usage\(s\) whose offsets point at a token "
        r"that does not begin like its lemma.*'table'", check=lambda d: len(d.usages) == 2),
    Row("dwug: a lemma folder without uses.csv (rule: skipped, named, warned)", dwug_without_uses,
        warn=r"skipped 1 DWUG lemma folder\(s\) without a readable uses\.csv file .*: \S*data/tip_vb\. Fix: restore",
        check=lambda d: d.targets == ["plane"] and list(d.truth["word"]) == ["plane"]
        and [p.rsplit("/", 1)[-1] for p in d.skipped_folders] == ["tip_vb"]),
    Row("dwug: text groupings (rule: alphabetical, warned)", lambda t: load_dwug(write_dwug(t, {"plane_nn": [
        dwug_row("plane_nn", "early", "p1", "the plane of the table"), dwug_row("plane_nn", "middle", "p2", "a plane"),
        dwug_row("plane_nn", "late", "p3", "the plane landed")]})), warn=r"column 'grouping': text labels \['early', "
        r"'late', 'middle'\] are taken in alphabetical order.*compares the first \('early'\) with the last \('middle'\)",
        check=lambda d: d.corpus.periods == ["early", "late", "middle"]),
    Row("dwug: a graded score that is not a number", lambda t: load_dwug(write_dwug(
        t, stats="lemma\tchange_graded\nplane_nn\tabc\n")), error=r"column 'change_graded' at rows \[2\].*'abc'"),
    Row("dwug: unknown pos option", lambda t: load_dwug(write_dwug(t), pos="lemma"), error=r"pos must be 'strip' or 'keep'"),
    Row("dwug: missing folder", lambda t: load_dwug(t / "nope"), error=r"nope/data does not exist"),
    Row("dwug: single grouping loads, and a two-period analysis refuses it", lambda t: load_dwug(write_dwug(
        t, {"plane_nn": [dwug_row("plane_nn", 1, "p1", "the plane of the table")]})).corpus.require_periods(2),
        error=r"needs at least 2 periods, but the corpus has 1 \(\['1'\]\)"),
    Row("semeval: empty targets.txt", lambda t: load_semeval(write_semeval(t, targets="\n")),
        error=r"targets\.txt lists no targets"),
    Row("semeval: targets.txt not UTF-8", lambda t: (write_semeval(t), (t / "targets.txt").write_bytes(b"\xffplane\n"),
                                                     load_semeval(t)),
        error=r"targets\.txt: not UTF-8"),
    Row("semeval: corrupt gzip", semeval_gz, error=r"c1\.txt\.gz: not a readable gzip file"),
    Row("semeval: a corpus line that is not UTF-8 (rule: replaced, warned)", semeval_latin1,
        warn=r"c1\.txt\.gz: 1 byte sequence\(s\) that are not UTF-8 were replaced", check=lambda d: d is not None),
    Row("semeval: a truth word listed twice", lambda t: load_semeval(write_semeval(
        t, graded="plane_nn\t0.1\nplane_nn\t0.2\n")), error=r"graded\.txt: word\(s\) \['plane'\] are listed twice"),
    Row("semeval: score not a number", lambda t: load_semeval(write_semeval(t, graded="plane_nn\thigh\n")),
        error=r"graded\.txt line 1: score 'high' is not a number"),
    Row("semeval: unknown text option", lambda t: load_semeval(write_semeval(t), text="lemmas"),
        error=r"text must be 'lemma' or 'token'"),
    Row("rumoureval: annotation file not JSON", lambda t: load_rumoureval(write_rumoureval(t, annotations="{oops")),
        error=r"subtaskA\.json: not a readable JSON annotation file"),
    Row("rumoureval: unknown stance", lambda t: load_rumoureval(write_rumoureval(t, annotations={"100": "agree"})),
        error=r"subtaskA\.json: tweet 100: stance 'agree' is not one of"),
    Row("rumoureval: tweet id not digits", lambda t: load_rumoureval(write_rumoureval(
        t, replies=[tweet("abc", parent="100")])), error=r"abc\.json: not a Twitter JSON tweet"),
    Row("rumoureval: tweet file is a list", lambda t: load_rumoureval(write_rumoureval(t, source="[1, 2]")),
        error=r"100\.json: not a Twitter JSON tweet"),
    Row("rumoureval: tweet text missing", lambda t: load_rumoureval(write_rumoureval(
        t, source={**tweet("100"), "text": None})), error=r"100\.json: not a Twitter JSON tweet"),
    Row("acl abstracts: a file names a typo year", lambda t: (write(t, "papers_2019.txt", "x" * 60 + "\n"),
                                                              write(t, "papers_0219.txt", "y" * 60 + "\n"),
                                                              load_acl_abstracts(t, progress=False)),
        error=r"papers_0219\.txt.*outside 1000-2100"),
    Row("acl xml: missing folder", lambda t: load_acl_xml(t / "nope", progress=False), error=r"is not a folder"),
    Row("acl xml: broken XML", lambda t: (write(t, "P18.xml", "<collection"), load_acl_xml(t, progress=False)),
        error=r"P18\.xml is not well-formed XML"),
    Row("nltk: unknown corpus", lambda t: load_nltk_eras(t, old="reuters"), error=r"unknown NLTK corpus 'reuters'"),
    Row("nltk: a book with bytes that are not UTF-8 (rule: replaced, counted, warned)", lambda t: load_nltk_eras(
        nltk_folder(t, b"The cell of the old caf\xe9 was cold.")),
        warn=r"1 byte sequence\(s\) that are not UTF-8 were replaced by '\ufffd' in 1 file\(s\): "
             r"gutenberg/austen-emma\.txt \(1\)",
        check=lambda c: c.df.attrs["replaced_characters"] == {"gutenberg/austen-emma.txt": 1}),
    Row("nltk spec: no demo word frequent enough in both eras", nltk_spec,
        error=r"nltk targets: none of the 24 word\(s\) occurs in at least min_count=15 sentences of every period.*"
              r"Fix: use a larger max_sentences_per_period"),
    Row("nltk spec: some demo words too rare (rule: not ranked, named, warned)", lambda t: nltk_spec(
        t, book=b" ".join(b"The house was old." for _ in range(15)), house=15),
        warn=r"nltk targets: 23 of 24 target word\(s\) occur in fewer than min_count=15 sentences of a period and are "
             r"not ranked: gay \(gutenberg 0, brown 0\)",
        check=lambda d: d.targets == ["house"] and any(n.startswith("targets: 23 of 24") for n in d.notes)),
    Row("nltk spec: a second folder after a comma", lambda t: nltk_spec(t, "nltk:{t},{t}"),
        error=r"give one folder; the part\(s\) \[.*\] after the comma would be ignored\. Fix: give one folder, "
              r"e\.g\. nltk:"),
    Row("rumoureval spec: a second folder after a comma", lambda t: load_timelines_spec(
        f"rumoureval2017:{write_rumoureval(t)},{t}"), error=r"give one folder; the part\(s\) .* would be ignored"),
    Row("rumoureval: a thread folder without structure.json (rule: not read, warned)", rumoureval_without_structure,
        warn=r"1 thread folder\(s\) have source-tweet/ but no structure\.json and are not read "
             r"\(first: \['train/ev/200'\]\)", check=lambda tl: tl.timeline_ids == ["100"]),
    Row("acl xml: two volumes reuse url ids (rule: the later gets its XML id, warned)", lambda t: (
        write(t, "2006.amta.xml", ACL_XML_PANELS), load_acl_xml(t, progress=False))[1],
        warn=r"1 paper\(s\) reuse a url id of an earlier volume .*'2006\.amta-panels\.1' -> '2006\.amta-panel2\.1'",
        check=lambda df: df["paper_id"].tolist() == ["2006.amta-panel2.1", "2006.amta-panels.1"]),
    Row("acl xml: a file whose root is not <collection> (rule: skipped, warned)", lambda t: (
        write(t, "P18.xml", ACL_XML_ONE.format("x", "y")), write(t, "notes.xml", "<notes/>"),
        load_acl_xml(t, progress=False))[2],
        warn=r"skipped 1 XML file\(s\) .* root element is not <collection>.*\['notes\.xml'\]",
        check=lambda df: df.attrs["skipped_files"] == ["notes.xml"]),
    Row("acl abstracts: XML papers without an abstract (rule: dropped, counted, warned)", lambda t: (
        write(t, "papers_2019.txt", "x" * 60 + "\n"), (t / "xml").mkdir(), write(t / "xml", "P18.xml", ACL_XML_ONE.format("", "z" * 60)),
        load_acl_abstracts(t, t / "xml", fill_years=[2018], progress=False))[3],
        warn=r"and 1 XML paper\(s\) of year\(s\) \[2018\] that have no abstract",
        check=lambda df: df.attrs["dropped_no_abstract"] == 1 and df["year"].tolist() == [2018, 2019]),
    Row("acl social: venues under min_papers (rule: dropped, counted, warned)", acl_social_small_venue,
        warn=r"dropped 0 paper\(s\) without an abstract and 2 abstract\(s\) of 1 venue\(s\) with fewer than "
             r"min_papers=4 in years 2018-2019: lrec \(2\)",
        check=lambda c: c.units == ["acl", "emnlp"] and c.df.attrs["dropped_venues"] == {"lrec": 2}),
    Row("acl future text: training over the cumulative 2000 bucket (rule: kept, warned)", acl_train_over_2000,
        warn=r"train years \(2000, 2003\) include \[2000\]: in the ACL abstracts that year is the cumulative bucket "
             r"papers_2000\.txt .*--first-year 2003", check=lambda split: 2000 in set(split[0]["year"])),
    Row("pseudoword: a missing source (rule: built without it, warned)", lambda t: (
        (t / "nltk_data" / "corpora" / "brown").mkdir(parents=True),
        write(t / "nltk_data" / "corpora" / "brown", "ca01", "The/at house/nn stood/vbd on/in the/at hill/nn ./.\n"),
        read_sources(t))[2],
        warn=r"pseudoword: source\(s\) missing, the benchmark is built without them: gutenberg \(.*does not exist\); "
             r"state_union .*; inaugural .*; acl2005 \(.*papers_2005\.txt does not exist\)"),
    Row("generic: unknown file type", lambda t: read_table(write(t, "x.parquet", "")), error=r"unknown file type '\.parquet'"),
    Row("generic: a folder for a file", lambda t: load_timelines(t), error=r"is not a file"),
    Row("generic: JSON that is not a table", lambda t: read_table(write(t, "x.json", '"just a string"')),
        error=r"cannot read JSON file '.*x\.json'"),
]

ROWS = TIMELINES + STREAM_SPECS + PERIODS + SOCIAL + LOADERS


@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
def test_bad_input(row: Row, tmp_path):
    if row.error is not None:
        with pytest.raises(DataError, match=row.error):
            row.run(tmp_path)
        return
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        result = row.run(tmp_path)
    messages = [str(w.message) for w in seen]
    if row.warn is not None:
        assert any(__import__("re").search(row.warn, m) for m in messages), messages
    else:
        assert not messages, messages
    if row.check is not None:
        assert row.check(result)


def test_row_ids_are_unique():
    ids = [r.id for r in ROWS]
    assert len(ids) == len(set(ids))


def test_missing_paths_are_both_data_errors_and_file_not_found(tmp_path):
    """One error type at the boundary, without breaking callers that catch FileNotFoundError."""
    for call in (lambda: load_acl_abstracts(tmp_path / "nope", progress=False), lambda: load_rumoureval(tmp_path / "x"),
                 lambda: read_table(tmp_path / "x.csv"), lambda: load_semeval(tmp_path / "x")):
        with pytest.raises(DataPathError) as e:
            call()
        assert isinstance(e.value, DataError) and isinstance(e.value, FileNotFoundError)


def test_unsorted_warning_is_its_own_category():
    with pytest.warns(UnsortedTimestampsWarning):
        Timelines.from_frame(posts(timestamp=["2020-01-02", "2020-01-01", "2020-01-01", "2020-01-02"]))


def test_every_row_is_documented():
    """docs/ROBUSTNESS.md lists every row of this table (regenerate its table when adding one)."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "ROBUSTNESS.md").read_text(encoding="utf-8")
    missing = [r.id for r in ROWS if f"`test_bad_input[{r.id}]`" not in doc]
    assert not missing, f"rows missing from docs/ROBUSTNESS.md: {missing}"
