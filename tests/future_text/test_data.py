"""Yearly data: validation, the ``--data`` loader (world, acl, csv), split, ACL abstracts loader
(fixture + real data when present)."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

from tempo_analysis.data import locations
from tempo_analysis.data.errors import DataError
from tempo_analysis.data.loaders.acl_abstracts import ACL_SPLIT, load_acl_abstracts
from tempo_analysis.resolve import load_yearly
from tempo_analysis.data.yearly import yearly_frame
from tempo_analysis.future_text.splits import default_split, select_years, split_years, subsample_per_year

SHARED = locations.shared_data_dir()

XML = """<?xml version='1.0' encoding='UTF-8'?>
<collection id="{cid}">
  <volume id="main">
    <meta><year>{year}</year></meta>
    {papers}
  </volume>
</collection>
"""
PAPER = "<paper id='{i}'><title>T{i}</title><author><first>A</first><last>B</last></author><abstract>{a}</abstract></paper>"


def test_yearly_frame_validates_and_drops_blank_with_warning():
    df = pd.DataFrame({"year": [2019, "2020", 2021], "text": ["a b", "  ", "c d"]})
    with pytest.warns(UserWarning, match="dropping 1 row"):
        out = yearly_frame(df)
    assert out["year"].tolist() == [2019, 2021] and out["year"].dtype.kind == "i"
    with pytest.raises(DataError, match="year must be an integer"):
        yearly_frame(pd.DataFrame({"year": ["x", 2020], "text": ["a", "b"]}))
    with pytest.raises(DataError, match="missing column"):
        yearly_frame(pd.DataFrame({"date": [2020], "text": ["a"]}))


def test_split_and_defaults():
    df = yearly_frame(pd.DataFrame({"year": [2017, 2018, 2019, 2020, 2021] * 2, "text": list("abcdefghij")}))
    assert default_split(df) == (2020, 2021)
    train, dev, test = split_years(df, 2020, 2021)
    assert sorted(set(train["year"])) == [2017, 2018, 2019] and set(dev["year"]) == {2020} and set(test["year"]) == {2021}
    with pytest.raises(DataError, match="test_year=2022 has no documents"):
        split_years(df, 2020, 2022)
    assert subsample_per_year(df, 1)["year"].value_counts().max() == 1
    picked = select_years(df, first_year=2019, max_docs_per_year=1)
    assert picked["year"].tolist() == [2019, 2020, 2021]


def test_csv_spec(tmp_path):
    p = tmp_path / "t.csv"
    pd.DataFrame({"year": [2000, 2001], "text": ["x y", "z w"]}).to_csv(p, index=False)
    loaded = load_yearly(f"csv:{p}")
    frame, truth = loaded.data, loaded.truth
    assert len(frame) == 2 and truth is None
    with pytest.raises(DataError, match=r"not understood.*world\[:DIR\], acl"):
        load_yearly("parquet:x")
    with pytest.raises(DataError, match="not found"):
        load_yearly(f"csv:{tmp_path / 'missing.csv'}")


def test_world_spec_reads_the_committed_world_with_its_trend_truth():
    loaded = load_yearly("world")
    frame, truth = loaded.data, loaded.truth
    assert list(frame.columns) == ["doc_id", "year", "text"] and frame["year"].dtype.kind == "i"
    assert frame["year"].is_monotonic_increasing and frame["year"].nunique() >= 4
    assert {"word", "year", "rate", "doc_share"} <= set(truth.columns)


def test_world_spec_generates_in_memory_when_no_world_is_on_disk(tmp_path, monkeypatch):
    monkeypatch.setenv(locations.ENV_DATA, str(tmp_path))
    with pytest.warns(UserWarning, match="generating the default world"):
        loaded = load_yearly("world")
        frame, truth = loaded.data, loaded.truth
    loaded = load_yearly(f"world:{locations.project_root() / 'data' / 'world'}")
    committed, committed_truth = loaded.data, loaded.truth
    pd.testing.assert_frame_equal(frame, committed)                   # the same seeded documents
    assert len(truth) == len(committed_truth)


def test_world_spec_never_regenerates_a_broken_world(tmp_path, monkeypatch):
    (tmp_path / "world").mkdir()
    (tmp_path / "world" / "config.json").write_text("{}")
    monkeypatch.setenv(locations.ENV_DATA, str(tmp_path))
    with pytest.raises((FileNotFoundError, ValueError)):
        load_yearly("world")
    with pytest.raises((FileNotFoundError, ValueError)):
        load_yearly(f"world:{tmp_path / 'world'}")


def test_acl_spec_finds_the_shared_folders_or_takes_given_ones(tmp_path, monkeypatch):
    abs_dir, xml_dir = tmp_path / "acl_abstracts_by_year", tmp_path / "acl_anthology_xml" / "xml"
    abs_dir.mkdir(), xml_dir.mkdir(parents=True)
    a = "We study neural parsing of sentences with a large corpus of text and strong baselines."
    (abs_dir / "papers_2019.txt").write_text(f"{a}\n")
    c = "Pretraining transformers on unlabeled text helps every downstream task we tried here."
    (xml_dir / "2020.acl.xml").write_text(XML.format(cid="2020.acl", year=2020, papers=PAPER.format(i=1, a=c)))
    monkeypatch.setenv(locations.ENV_SHARED_DATA, str(tmp_path))
    loaded = load_yearly("acl")
    frame, truth = loaded.data, loaded.truth            # no folders: shared/data
    assert frame["year"].tolist() == [2019, 2020] and truth is None
    given = load_yearly(f"acl:{abs_dir},{xml_dir}").data
    pd.testing.assert_frame_equal(given, frame)
    with pytest.warns(UserWarning, match="no xml_dir"):                 # abstracts only: no XML fill
        only = load_yearly(f"acl:{abs_dir}").data
    assert only["year"].tolist() == [2019]
    with pytest.raises(DataError, match="does not exist"):
        load_yearly(f"acl:{tmp_path / 'nope'}")


def test_acl_loader_fills_missing_years_from_xml_and_dedupes(tmp_path):
    abs_dir, xml_dir = tmp_path / "abs", tmp_path / "xml"
    abs_dir.mkdir(), xml_dir.mkdir()
    a = "We study neural parsing of sentences with a large corpus of text and strong baselines."
    b = "A kernel method for sentiment classification of product reviews in many domains."
    (abs_dir / "papers_2019.txt").write_text(f"{a}\n{b}\n\nshort\n")
    c = "Pretraining transformers on unlabeled text helps every downstream task we tried here."
    papers = "".join(PAPER.format(i=i, a=x) for i, x in enumerate([c, a.upper(), ""], 1))   # a duplicate (case) + empty
    (xml_dir / "2020.acl.xml").write_text(XML.format(cid="2020.acl", year=2020, papers=papers))
    with pytest.warns(UserWarning, match="1 duplicate"):
        df = load_acl_abstracts(abs_dir, xml_dir, fill_years=(2020,), progress=False)
    assert df["year"].tolist() == [2019, 2019, 2020] and df["source"].tolist() == ["file", "file", "xml"]
    assert df.attrs["dropped_duplicates"] == 1 and df.attrs["dropped_short"] == 1
    with pytest.warns(UserWarning, match="no xml_dir"):
        load_acl_abstracts(abs_dir, None, fill_years=(2020,), progress=False)


@pytest.mark.realdata
def test_acl_real_data_2017_2018():
    if SHARED is None:
        pytest.skip("no shared/data folder on this machine (real ACL data absent)")
    abs_dir, xml_dir = SHARED / "acl_abstracts_by_year", SHARED / "acl_anthology_xml" / "xml"
    if not abs_dir.is_dir() or not xml_dir.is_dir():
        pytest.skip(f"real ACL data not found under {SHARED} (../shared/data is absent on this machine)")
    df = load_acl_abstracts(abs_dir, xml_dir, years=[2017, 2018], progress=False)
    counts = df.groupby("year").size().to_dict()
    assert counts[2017] > 2000 and counts[2018] > 2000          # 2018 comes from the XML
    assert set(df.loc[df["year"] == 2018, "source"]) == {"xml"}
    assert not df["text"].str.lower().duplicated().any()
    assert ACL_SPLIT == {"train": (2003, 2019), "dev": 2020, "test": 2021}


def test_acl_loader_counts_the_xml_papers_without_an_abstract(tmp_path):
    """XML papers of a filled year without an abstract were dropped silently: now a count in attrs and the warning."""
    abs_dir, xml_dir = tmp_path / "abs", tmp_path / "xml"
    abs_dir.mkdir(), xml_dir.mkdir()
    (abs_dir / "papers_2019.txt").write_text("We study neural parsing of sentences with a large corpus of text.\n")
    c = "Pretraining transformers on unlabeled text helps every downstream task we tried here."
    papers = "".join(PAPER.format(i=i, a=x) for i, x in enumerate([c, "", ""], 1))
    (xml_dir / "2020.acl.xml").write_text(XML.format(cid="2020.acl", year=2020, papers=papers))
    with pytest.warns(UserWarning, match=r"acl_abstracts: dropped 0 short \(< 50 chars\), 0 duplicate abstracts "
                                         r"\(first occurrence kept\) and 2 XML paper\(s\) of year\(s\) \[2020\] that "
                                         r"have no abstract"):
        df = load_acl_abstracts(abs_dir, xml_dir, fill_years=(2020,), progress=False)
    assert df["year"].tolist() == [2019, 2020] and df.attrs["dropped_no_abstract"] == 2


def _acl_years(folder, years) -> None:
    folder.mkdir()
    for y in years:
        (folder / f"papers_{y}.txt").write_text("".join(f"Abstract {i} of the year {y}: we study parsing of text "
                                                        f"with a large corpus.\n" for i in range(3)))


def test_the_cumulative_2000_bucket_is_recorded_and_a_training_split_over_it_warns(tmp_path):
    """papers_2000.txt holds every paper up to 2000: not one year. Defaults are unchanged, but attrs say so
    and a split that trains on it warns, naming --first-year 2003 (ACL_SPLIT)."""
    _acl_years(tmp_path / "abs", range(2000, 2006))
    with pytest.warns(UserWarning, match="no xml_dir"):
        frame = load_yearly(f"acl:{tmp_path / 'abs'}").data
    assert frame.attrs["cumulative_years"] == [2000] and sorted(set(frame["year"])) == list(range(2000, 2006))
    with pytest.warns(UserWarning, match=r"train years \(2000, 2003\) include \[2000\].*cumulative.*papers_2000\.txt"
                                         r".*--first-year 2003"):
        train, _, _ = split_years(frame, 2004, 2005)
    assert sorted(set(train["year"])) == [2000, 2001, 2002, 2003]             # the split itself is unchanged
    subset = yearly_frame(select_years(frame, None, max_docs_per_year=1, seed=0))   # what training reads
    with pytest.warns(UserWarning, match=r"include \[2000\]"):
        split_years(subset, 2004, 2005)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        split_years(select_years(frame, first_year=2001), 2004, 2005)          # --first-year: no 2000, no warning
        split_years(frame, 2004, 2005, train_years=(2001, 2003))
        split_years(pd.DataFrame(frame.to_dict("list")), 2004, 2005)        # another corpus's 2000: a plain year
    later = load_acl_abstracts(tmp_path / "abs", years=range(2001, 2006), progress=False)
    assert later.attrs["cumulative_years"] == []
