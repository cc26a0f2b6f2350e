"""Social corpora: ACL venue network (author Jaccard), generic CSV, splits, bad input messages."""
import warnings

import networkx as nx
import pandas as pd
import pytest

from tempo_analysis.data.locations import shared_data_dir
from tempo_analysis.data.social_corpora import acl_social_corpus, author_jaccard_graph, csv_social_corpus
from tempo_analysis.diffusion.corpora import graph_tensors, split_corpus

SHARED = shared_data_dir()          # $TEMPO_ANALYSIS_SHARED_DATA, else shared/data above the checkout
REAL = SHARED / "acl_anthology_xml" / "xml" if SHARED is not None else None


def _papers():
    rows = []
    for year in (2018, 2019):
        for i in range(4):
            rows.append(dict(paper_id=f"A{year}-{i}", year=year, venue="acl", volume_id="x", title="t",
                             authors=["ann", "bob", f"a{i}"], abstract=f"neural network paper {i} from {year}"))
            rows.append(dict(paper_id=f"E{year}-{i}", year=year, venue="emnlp", volume_id="x", title="t",
                             authors=["ann", f"e{i}"], abstract=f"network of roads {i}"))
            rows.append(dict(paper_id=f"L{year}-{i}", year=year, venue="lrec", volume_id="x", title="t",
                             authors=[f"l{i}"], abstract=f"a corpus resource {i}"))
    rows.append(dict(paper_id="N1", year=2019, venue="acl", volume_id="x", title="t", authors=["z"], abstract=""))
    return pd.DataFrame(rows)


def test_author_jaccard_edges():
    g = author_jaccard_graph(_papers(), theta=0.01)
    # acl authors {ann,bob,a0..a3,z}, emnlp {ann,e0..e3}: 1 shared of 11 -> 0.0909
    assert g.has_edge("acl", "emnlp") and g["acl"]["emnlp"]["weight"] == pytest.approx(1 / 11)
    assert "lrec" in g and g.degree("lrec") == 0  # isolated venue stays a node
    assert not author_jaccard_graph(_papers(), theta=0.1).has_edge("acl", "emnlp")


def test_acl_social_corpus_from_papers():
    c = acl_social_corpus(_papers(), years=[2018, 2019], min_papers=4, progress=False)
    assert c.units == ["acl", "emnlp", "lrec"] and c.slices == [2018, 2019]
    assert len(c) == 24  # the paper without an abstract is dropped
    assert set(c.df.columns) >= {"doc_id", "unit", "time", "text", "title"}
    c2 = acl_social_corpus(_papers(), years=[2018, 2019], min_papers=4, max_docs_per_unit_slice=2, progress=False)
    assert c2.df.groupby(["unit", "time"]).size().max() == 2
    with pytest.raises(ValueError, match="min_papers"):
        acl_social_corpus(_papers(), years=[2018, 2019], min_papers=50, progress=False)
    with pytest.raises(ValueError, match=r"year\(s\) \[2020\] have no abstracts"):
        acl_social_corpus(_papers(), years=[2018, 2019, 2020], min_papers=4, progress=False)


def test_acl_social_corpus_counts_what_it_drops():
    """Papers without an abstract and venues under min_papers were dropped silently: now a warning and attrs."""
    papers = _papers()
    papers = papers.drop(papers.index[papers["paper_id"].isin(["L2018-0", "L2019-0"])])      # lrec: 6 abstracts
    with pytest.warns(UserWarning, match=r"dropped 1 paper\(s\) without an abstract and 6 abstract\(s\) of 1 "
                                         r"venue\(s\) with fewer than min_papers=7 in years 2018-2019: lrec \(6\)"):
        c = acl_social_corpus(papers, years=[2018, 2019], min_papers=7, progress=False)
    assert c.units == ["acl", "emnlp"] and len(c) == 16
    assert c.df.attrs["dropped_no_abstract"] == 1 and c.df.attrs["dropped_venues"] == {"lrec": 6}
    papers = _papers()
    papers = papers[papers["abstract"] != ""]
    with warnings.catch_warnings():
        warnings.simplefilter("error")                     # nothing dropped: no warning
        c = acl_social_corpus(papers, years=[2018, 2019], min_papers=4, progress=False)
    assert c.df.attrs["dropped_no_abstract"] == 0 and c.df.attrs["dropped_venues"] == {}


def test_graph_tensors_and_split():
    c = acl_social_corpus(_papers(), years=[2018, 2019], min_papers=4, progress=False)
    units, ei = graph_tensors(c)
    assert units == c.units and ei.shape == (2, 2)  # one edge, both directions
    assert sorted(map(tuple, ei.T.tolist())) == [(0, 1), (1, 0)]
    tr, dv, te = split_corpus(c, dev=0.25, test=0.25, seed=0)
    assert len(tr) + len(dv) + len(te) == len(c)
    assert set(tr["time"]) == {2018, 2019} and set(te["time"]) == {2018, 2019}  # stratified by slice
    assert not set(tr["doc_id"]) & set(te["doc_id"])


def test_csv_corpus_and_bad_input(tmp_path):
    docs = pd.DataFrame({"unit": ["a", "b", "c"], "time": [1, 1, 2], "text": ["x y", "y z", "z w"]})
    edges = pd.DataFrame({"source": ["a"], "target": ["b"]})
    docs.to_csv(tmp_path / "docs.csv", index=False)
    edges.to_csv(tmp_path / "edges.csv", index=False)
    # declared units without c, but c has documents -> clear message naming the unit and the fix
    with pytest.raises(ValueError, match=r"unit\(s\) \['c'\].*not nodes of the graph"):
        csv_social_corpus(tmp_path / "docs.csv", tmp_path / "edges.csv", units=["a", "b"])
    c = csv_social_corpus(tmp_path / "docs.csv", tmp_path / "edges.csv")
    assert c.units == ["a", "b", "c"] and c.graph.degree("c") == 0  # undeclared: c becomes an isolated node
    # a declared slice without documents -> clear message
    with pytest.raises(ValueError, match=r"time slice\(s\) \[3\] have no documents"):
        csv_social_corpus(tmp_path / "docs.csv", tmp_path / "edges.csv", units=["a", "b", "c"], slices=[1, 2, 3])
    with pytest.raises(FileNotFoundError, match="documents CSV"):
        csv_social_corpus(tmp_path / "nope.csv", tmp_path / "edges.csv")


@pytest.mark.realdata
def test_acl_real_network():
    if REAL is None or not REAL.is_dir():
        pytest.skip(f"real ACL Anthology XML not found at {REAL or 'shared/data/acl_anthology_xml/xml'} (absent from the "
                    "shared data folder, or no such folder here: set $TEMPO_ANALYSIS_SHARED_DATA); skipping")
    c = acl_social_corpus(REAL, years=[2019, 2020], min_papers=50, max_docs_per_unit_slice=5, progress=False)
    assert {"acl", "emnlp", "naacl"} <= set(c.units) and c.slices == [2019, 2020]
    assert c.graph.has_edge("acl", "emnlp")  # big NLP venues share many authors
    assert nx.number_connected_components(c.graph) < len(c.units)
