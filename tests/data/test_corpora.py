"""Period corpora, target usages, social corpora and time slicing: validation and behaviour."""

import networkx as nx
import pandas as pd
import pytest

from tempo_analysis.data import DataError, PeriodCorpus, SocialCorpus, TargetUsage, slice_times, usages_frame


def periods_df():
    return pd.DataFrame({
        "period": ["old", "old", "new", "new"],
        "text": ["The cell divided under the microscope.", "A prison cell, a cell block.",
                 "My cell phone died.", "Call my Cell."],
    })


def test_period_order_follows_first_appearance_or_given_order():
    pc = PeriodCorpus.from_frame(periods_df())
    assert pc.periods == ["old", "new"]
    assert pc.df["period_order"].tolist() == [0, 0, 1, 1]
    years = PeriodCorpus.from_frame(pd.DataFrame({"period": [2001, 1999], "text": ["a", "b"]}))
    assert years.periods == [1999, 2001]


def test_period_with_no_documents_is_refused():
    with pytest.raises(DataError, match=r"period.*\['mid'\].*no documents"):
        PeriodCorpus.from_frame(periods_df(), order=["old", "mid", "new"])
    with pytest.raises(DataError, match="no documents"):
        PeriodCorpus.from_frame(periods_df(), periods=["old", "new", "future"])


def test_empty_document_text_is_refused():
    df = periods_df()
    df.loc[2, "text"] = " "
    with pytest.raises(DataError, match=r"text.*'d2'"):
        PeriodCorpus.from_frame(df)


def test_ids_given_as_numbers_are_read_as_strings():
    """doc ids 1, 2, ... and post ids read from numbers are strings, as ids typed in a CSV are."""
    from tempo_analysis.data import Timelines

    pc = PeriodCorpus.from_frame(periods_df().assign(doc_id=[10, 11, 12, 13]))
    assert pc.df["doc_id"].tolist() == ["10", "11", "12", "13"]
    sc = SocialCorpus.from_frame(social_df().assign(doc_id=[1, 2, 3, 4]), nx.complete_graph(["u1", "u2", "u3"]))
    assert sc.df["doc_id"].tolist() == ["1", "2", "3", "4"]
    tl = Timelines.from_frame(pd.DataFrame({"timeline_id": [7, 7], "post_id": [1, 2], "timestamp": [0, 60],
                                            "text": ["a", "b"]}), time_unit="s")
    assert tl.df["post_id"].tolist() == ["1", "2"] and tl.df["timeline_id"].tolist() == ["7", "7"]


def test_find_usages_gives_offsets_and_a_seeded_sample():
    pc = PeriodCorpus.from_frame(periods_df())
    uses = pc.find_usages("cell")
    assert [u.surface for u in uses] == ["cell", "cell", "cell", "cell", "Cell"]
    assert all(u.text[u.start:u.end].lower() == "cell" for u in uses)
    a = pc.find_usages("cell", max_per_period=1, seed=3)
    b = pc.find_usages("cell", max_per_period=1, seed=3)
    assert [(u.doc_id, u.start) for u in a] == [(u.doc_id, u.start) for u in b] and len(a) == 2
    assert list(usages_frame(a).columns) == ["word", "period", "text", "start", "end", "doc_id"]


def test_target_usage_offsets_are_checked():
    with pytest.raises(DataError, match="outside the sentence"):
        TargetUsage("cell", "old", "a cell", 2, 99)
    with pytest.raises(DataError, match=r"point at 'a c'.*not at 'cell'"):
        TargetUsage.checked("cell", "old", "a cell", 0, 3, surface="cell")
    assert TargetUsage.checked("cell", "old", "a CELL", 2, 6, surface="cell").surface == "CELL"


def social_df():
    return pd.DataFrame({"unit": ["u1", "u2", "u3", "u1"], "time": [0, 0, 1, 1], "text": ["a", "b", "c", "d"]})


def test_social_corpus_from_graph_and_edges():
    g = nx.Graph([("u1", "u2"), ("u2", "u3")])
    g.add_node("u4")  # isolated units are allowed
    sc = SocialCorpus.from_frame(social_df(), g)
    assert sc.units == ["u1", "u2", "u3", "u4"] and sc.slices == [0, 1]
    assert sc.unit_index["u3"] == 2
    edges = pd.DataFrame({"source": ["u1"], "target": ["u2"]})
    sc2 = SocialCorpus.from_frame(social_df(), edges=edges)
    assert sc2.graph.number_of_edges() == 1 and "u3" in sc2.graph


def test_edges_as_tuples_carry_their_weight_or_one():
    sc = SocialCorpus.from_frame(social_df(), edges=[("u1", "u2", 2.5), ("u2", "u3")])
    assert sc.graph["u1"]["u2"]["weight"] == 2.5 and sc.graph["u2"]["u3"]["weight"] == 1.0
    for bad in ([("u1",)], [("u1", "u2", 1.0, "x")]):
        with pytest.raises(DataError, match=r"column 'edges' at rows \[0\].*not \(source, target\[, weight\]\)"):
            SocialCorpus.from_frame(social_df(), edges=bad)


@pytest.mark.parametrize("column, value, error", [
    ("doc_id", None, r"column 'doc_id' at rows \[2\]: missing document ids"),
    ("unit", None, r"column 'unit' at rows \[2\]: documents without a social unit"),
    ("time", None, r"column 'time' at rows \[2\]: documents without a time slice"),
    ("text", "  ", r"column 'text' at doc_ids \['c'\].*: empty or missing text"),
    ("text", 7, r"column 'text' at doc_ids \['c'\].*: values that are not text \(e.g. 7\)"),
])
def test_one_bad_document_among_good_ones_is_named(column, value, error):
    df = social_df().assign(doc_id=["a", "b", "c", "d"]).astype(object)
    df.loc[2, column] = value
    with pytest.raises(DataError, match=error):
        SocialCorpus.from_frame(df, nx.complete_graph(["u1", "u2", "u3"]))


def test_an_edge_table_or_list_passed_as_the_graph_is_read_as_edges():
    for edges in (pd.DataFrame({"source": ["u1", "u2"], "target": ["u2", "u3"]}), [("u1", "u2"), ("u2", "u3")]):
        sc = SocialCorpus.from_frame(social_df(), edges)
        assert sorted(map(sorted, sc.graph.edges)) == [["u1", "u2"], ["u2", "u3"]]
    with pytest.raises(DataError, match="graph must be a networkx.Graph"):
        SocialCorpus.from_frame(social_df(), {"u1": "u2"})
    shifted = SocialCorpus.from_frame(social_df().set_index(pd.Index([5, 6, 7, 8])), edges)
    assert list(shifted.df.columns) == ["doc_id", "unit", "time", "text"]        # the index is not a column


def test_the_users_graph_is_not_changed():
    g = nx.Graph([(1, 2), (2, 3), (3, 3)])                   # int labels and a self-loop
    df = social_df().assign(unit=[1, 2, 3, 1])
    with pytest.warns(UserWarning, match="self-loop"):
        sc = SocialCorpus.from_frame(df, g)
    assert sorted(sc.graph.nodes) == ["1", "2", "3"] and sc.graph.number_of_edges() == 2
    assert sorted(g.nodes) == [1, 2, 3] and g.has_edge(3, 3)   # the caller's graph as it was


def test_edge_to_unknown_unit_is_refused():
    edges = pd.DataFrame({"source": ["u1", "u2"], "target": ["u2", "ghost"]})
    with pytest.raises(DataError, match=r"unknown unit.*'ghost'"):
        SocialCorpus.from_frame(social_df(), edges=edges)


def test_document_unit_missing_from_graph_is_refused():
    with pytest.raises(DataError, match=r"\['u3'\].*not nodes of the graph"):
        SocialCorpus.from_frame(social_df(), nx.Graph([("u1", "u2")]))


def test_time_slice_with_no_documents_is_refused():
    with pytest.raises(DataError, match=r"time slice\(s\) \[2\]"):
        SocialCorpus.from_frame(social_df(), nx.complete_graph(["u1", "u2", "u3"]), slices=[0, 1, 2])


def test_slice_times_by_year_month_and_bins():
    ts = ["2019-12-31T23:30:00-02:00", "2020-03-01", "2021-07-04"]
    years, order = slice_times(ts, by="year")
    assert years.tolist() == [2020, 2020, 2021] and order == [2020, 2021]
    months, _ = slice_times(ts, by="month")
    assert months.tolist() == ["2020-01", "2020-03", "2021-07"]
    bins, names = slice_times([1995, 2003, 2010], bins=[1990, 2000, 2020], labels=["90s", "00s+"])
    assert bins.tolist() == ["90s", "00s+", "00s+"] and names == ["90s", "00s+"]
    with pytest.raises(DataError, match=r"rows \[0\].*outside the bins"):
        slice_times([1980, 1995], bins=[1990, 2000])


def test_slice_bins_are_left_closed_strictly_increasing_and_read_dates_in_utc():
    edges, _ = slice_times([1990, 1999.5, 2000, 2019], bins=[1990, 2000, 2020])
    assert edges.tolist() == ["1990–2000", "1990–2000", "2000–2020", "2000–2020"]     # [a, b)
    with pytest.raises(DataError, match=r"rows \[0\].*outside the bins"):
        slice_times([2020], bins=[1990, 2000, 2020])                                    # the last edge is open
    for bad in ([1990, 2000, 2000, 2010], [1990, 2010, 2000, 2020]):
        with pytest.raises(DataError, match="strictly increasing"):
            slice_times([1995], bins=bad)
    with pytest.raises(DataError, match="at least two edges"):
        slice_times([1995], bins=[1990])
    stamps = ["2004-12-31T23:00:00-02:00", "2004-12-31T23:00:00Z"]    # 2005-01-01 01:00 UTC, and 2004
    for cut in ("2005-01-01", "2005-01-01T00:00:00+00:00"):           # naive edges are UTC, aware ones as given
        got, _ = slice_times(stamps, bins=["2000-01-01", cut, "2010-01-01"], labels=["early", "late"])
        assert got.tolist() == ["late", "early"]
