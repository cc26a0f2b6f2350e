"""ACL Anthology XML loader: a tiny fixture (always) and the real snapshot (when present)."""
import shutil
from pathlib import Path

import pytest

from tempo_analysis.data.loaders.acl_xml import COLUMNS, load_acl_xml, parse_acl_xml_file, parse_collection_id
from tempo_analysis.data.locations import shared_data_dir

FIXTURE = Path(__file__).parent / "fixtures" / "acl_xml"
SHARED = shared_data_dir()          # $TEMPO_ANALYSIS_SHARED_DATA, else shared/data above the checkout
REAL = SHARED / "acl_anthology_xml" / "xml" if SHARED is not None else None


def test_fixture_rows_and_columns():
    df = load_acl_xml(FIXTURE, progress=False)
    assert list(df.columns) == COLUMNS
    assert len(df) == 4
    assert df["year"].dtype.kind == "i"
    assert list(df["year"]) == [2018, 2018, 2019, 2020]  # sorted by (year, paper_id)
    first = df.set_index("paper_id").loc["P18-1001"]
    assert first["venue"] == "acl" and first["volume_id"] == "P18-1"
    assert first["authors"] == ["Ben Athiwaratkun", "Andrew Wilson"]
    assert first["title"] == "Probabilistic FastText for Word Embeddings"  # nested <fixed-case> flattened
    assert first["abstract"] == "We introduce a neural network model."  # nested tags + whitespace
    no_abs = df.set_index("paper_id").loc["P18-1002"]  # id rebuilt when the paper has no <url>
    assert no_abs["abstract"] == "" and no_abs["authors"] == ["Mononym"]
    new = df[df["year"] == 2020].iloc[0]
    assert new["paper_id"] == "2020.acl-main.1" and new["venue"] == "acl" and new["volume_id"] == "2020.acl-main"
    ws = df[df["year"] == 2019].iloc[0]
    assert ws["paper_id"] == "W19-0307" and ws["venue"] == "ws"


def test_years_filter_and_errors(tmp_path):
    df = load_acl_xml(FIXTURE, years=[2020], progress=False)
    assert list(df["paper_id"]) == ["2020.acl-main.1"]
    with pytest.raises(ValueError, match="years"):
        load_acl_xml(FIXTURE, years=[1999], progress=False)
    with pytest.raises(FileNotFoundError, match="xml_dir"):
        load_acl_xml(tmp_path / "nope", progress=False)
    with pytest.raises(ValueError, match="no \\*.xml"):
        load_acl_xml(tmp_path, progress=False)
    (tmp_path / "bad.xml").write_text("<collection id='X'><volume")
    with pytest.raises(ValueError, match="bad.xml"):
        load_acl_xml(tmp_path, progress=False)


def test_collection_ids():
    assert parse_collection_id("P18") == ("acl", 2018)
    assert parse_collection_id("J78") == ("cl", 1978)
    assert parse_collection_id("2021.bionlp") == ("bionlp", 2021)


@pytest.mark.realdata
def test_real_snapshot_subset():
    if REAL is None or not REAL.is_dir():
        pytest.skip(f"real ACL Anthology XML not found at {REAL or 'shared/data/acl_anthology_xml/xml'} (absent from the "
                    "shared data folder, or no such folder here: set $TEMPO_ANALYSIS_SHARED_DATA); skipping")
    df = load_acl_xml(REAL, years=[2018], progress=False)
    assert len(df) > 1000
    assert set(df["year"]) == {2018}
    assert {"acl", "emnlp", "naacl", "ws"} <= set(df["venue"])
    assert (df["abstract"] != "").mean() > 0.3
    assert df["authors"].map(len).mean() > 1.5
    assert df["paper_id"].is_unique


PANELS = """<?xml version='1.0' encoding='UTF-8'?>
<collection id="2006.amta">
  <volume id="panel1"><meta><year>2006</year></meta>
    <paper id="1"><title>Meadan global dialogue</title><url hash="a">2006.amta-panels.1</url></paper>
    <paper id="2"><title>The social impact of online MT</title><url hash="b">2006.amta-panels.2</url></paper>
  </volume>
  <volume id="panel2"><meta><year>2006</year></meta>
    <paper id="1"><title>Presentation</title><url hash="c">2006.amta-panels.1</url></paper>
    <paper id="2"><title>Combining interlingua with SMT</title><url hash="d">2006.amta-panels.2</url></paper>
  </volume>
</collection>
"""


def test_volumes_that_reuse_url_ids_keep_every_paper(tmp_path):
    """AMTA 2006: volumes panel1 and panel2 both number their papers 2006.amta-panels.N. Dropping duplicate
    ids lost panel2's distinct papers, silently; they now get the id built from their XML ids."""
    (tmp_path / "2006.amta.xml").write_text(PANELS)
    with pytest.warns(UserWarning, match=r"2 paper\(s\) reuse a url id .*'2006\.amta-panels\.1' -> "
                                         r"'2006\.amta-panel2\.1'.*0 true duplicate"):
        df = load_acl_xml(tmp_path, progress=False)
    assert df["paper_id"].tolist() == ["2006.amta-panel2.1", "2006.amta-panel2.2", "2006.amta-panels.1",
                                       "2006.amta-panels.2"]
    assert df.set_index("paper_id").loc["2006.amta-panel2.2", "title"] == "Combining interlingua with SMT"
    assert df.set_index("paper_id").loc["2006.amta-panels.1", "volume_id"] == "2006.amta-panel1"   # first keeps its id
    assert df.attrs["renamed_ids"] == {"2006.amta-panel2.1": "2006.amta-panels.1",
                                       "2006.amta-panel2.2": "2006.amta-panels.2"}
    assert df.attrs["dropped_duplicates"] == 0
    assert "xml_id" not in parse_acl_xml_file(tmp_path / "2006.amta.xml")[0]       # public rows: COLUMNS only


def test_a_true_duplicate_is_dropped_and_counted_and_a_stray_xml_file_is_named(tmp_path):
    shutil.copy(FIXTURE / "P18.xml", tmp_path / "P18.xml")
    shutil.copy(FIXTURE / "P18.xml", tmp_path / "P18-copy.xml")              # the same papers read twice
    (tmp_path / "notes.xml").write_text("<notes><note>not a collection</note></notes>")
    n = len(load_acl_xml(FIXTURE, years=[2018], progress=False))
    with pytest.warns(UserWarning) as seen:
        df = load_acl_xml(tmp_path, progress=False)
    messages = [str(w.message) for w in seen]
    assert any(f"{n} true duplicate(s)" in m and "first occurrence kept" in m for m in messages), messages
    assert any("skipped 1 XML file(s)" in m and "['notes.xml']" in m and "not <collection>" in m for m in messages)
    assert len(df) == n and df.attrs["dropped_duplicates"] == n and df.attrs["skipped_files"] == ["notes.xml"]
    assert df.attrs["renamed_ids"] == {}
