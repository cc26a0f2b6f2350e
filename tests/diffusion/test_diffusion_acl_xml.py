"""ACL Anthology XML loader: a tiny fixture (always) and the real snapshot (when present)."""
from pathlib import Path

import pytest

from tempo_analysis.data.loaders.acl_xml import COLUMNS, load_acl_xml, parse_collection_id

FIXTURE = Path(__file__).parent / "fixtures" / "acl_xml"
REAL = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "acl_anthology_xml" / "xml"


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
    if not REAL.is_dir():
        pytest.skip(f"real ACL Anthology XML not found at {REAL} (../shared/data is absent); skipping")
    df = load_acl_xml(REAL, years=[2018], progress=False)
    assert len(df) > 1000
    assert set(df["year"]) == {2018}
    assert {"acl", "emnlp", "naacl", "ws"} <= set(df["venue"])
    assert (df["abstract"] != "").mean() > 0.3
    assert df["authors"].map(len).mean() > 1.5
    assert df["paper_id"].is_unique
