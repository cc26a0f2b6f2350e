"""load_social: the one --data resolver of the diffusion wing (world rule, ACL, CSV, bad specs)."""
import shutil
import warnings
from pathlib import Path

import pandas as pd
import pytest

from tempo_analysis.data.errors import DataError
from tempo_analysis.data.locations import ENV_DATA, ENV_SHARED_DATA
from tempo_analysis.resolve import load_social
from tempo_analysis.world import SocialWorldConfig, WorldConfig, generate_social, generate_world

FIXTURE = Path(__file__).parent / "fixtures" / "acl_xml"


@pytest.fixture(scope="module")
def saved_world(tmp_path_factory):
    folder = tmp_path_factory.mktemp("data")
    world = generate_world(WorldConfig())
    world.save(folder / "world")
    return folder, world


def test_world_on_disk_is_read(saved_world, monkeypatch):
    folder, world = saved_world
    monkeypatch.setenv(ENV_DATA, str(folder))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a world on disk: no generation warning
        loaded = load_social("world")
        corpus, truth = loaded.data, loaded.truth
    assert truth == world.diffusion_truth
    pd.testing.assert_frame_equal(corpus.df, world.social.df)
    again = load_social(f"world:{folder / 'world'}").data
    assert again.units == corpus.units and len(again) == len(corpus)


def test_no_world_on_disk_generates_the_default_with_a_warning(tmp_path, monkeypatch):
    monkeypatch.setenv(ENV_DATA, str(tmp_path))
    with pytest.warns(UserWarning, match="generating the default world in memory"):
        loaded = load_social("world")
        corpus, truth = loaded.data, loaded.truth
    ref, ref_truth = generate_social(SocialWorldConfig())
    assert truth == ref_truth and corpus.df["doc_id"].tolist() == ref.df["doc_id"].tolist()


def test_broken_world_folder_raises(tmp_path, saved_world, monkeypatch):
    folder, _ = saved_world
    shutil.copytree(folder / "world", tmp_path / "world")
    (tmp_path / "world" / "social_docs.csv").unlink()
    monkeypatch.setenv(ENV_DATA, str(tmp_path))
    with pytest.raises(FileNotFoundError, match="social_docs.csv"):
        load_social("world")
    with pytest.raises(FileNotFoundError, match="social_docs.csv"):
        load_social(f"world:{tmp_path / 'world'}")
    with pytest.raises(FileNotFoundError, match="no planted world"):
        load_social(f"world:{tmp_path / 'nothing'}")


def test_world_regenerated_with_other_knobs():
    loaded = load_social("world", world={"mode": "flight", "speed": 3, "seed": 1})
    corpus, truth = loaded.data, loaded.truth
    ref, ref_truth = generate_social(SocialWorldConfig(mode="flight", speed=3, seed=1))
    assert truth == ref_truth and truth["mode"] == "flight" and len(corpus) == len(ref)
    small = SocialWorldConfig(n_units=12, n_communities=2, n_slices=3)
    loaded = load_social("world", world=small)
    corpus, truth = loaded.data, loaded.truth
    assert len(corpus.units) == 12 and corpus.slices == [0, 1, 2]
    with pytest.raises(DataError, match="never regenerated"):
        load_social("world:some/dir", world={"mode": "flight"})
    with pytest.raises(DataError, match="not a SocialWorldConfig field"):
        load_social("world", world={"tempo": 2})
    with pytest.raises(DataError, match="applies to 'world' only"):
        load_social("csv:a.csv,b.csv", world={"mode": "flight"})


def test_acl_from_a_folder_and_from_shared_data(tmp_path, monkeypatch):
    kw = dict(years=[2018, 2019, 2020], min_papers=1, progress=False)
    loaded = load_social(f"acl:{FIXTURE}", **kw)
    corpus, truth = loaded.data, loaded.truth
    assert truth is None and corpus.units == ["acl", "ws"] and corpus.slices == [2018, 2019, 2020]
    shared = tmp_path / "shared"
    shutil.copytree(FIXTURE, shared / "acl_anthology_xml" / "xml")
    monkeypatch.setenv(ENV_SHARED_DATA, str(shared))
    again = load_social("acl", **kw).data  # no folder: shared/data/acl_anthology_xml/xml
    assert again.df["doc_id"].tolist() == corpus.df["doc_id"].tolist()
    with pytest.raises(DataError, match="does not exist"):
        load_social(f"acl:{tmp_path / 'nope'}", **kw)
    with pytest.raises(DataError, match="one Anthology XML folder"):
        load_social(f"acl:{FIXTURE},{FIXTURE}", **kw)


def test_csv_and_bad_specs(tmp_path):
    pd.DataFrame({"unit": ["a", "b"], "time": [1, 2], "text": ["x y", "y z"]}).to_csv(tmp_path / "d.csv", index=False)
    pd.DataFrame({"source": ["a"], "target": ["b"]}).to_csv(tmp_path / "e.csv", index=False)
    loaded = load_social(f"csv:{tmp_path / 'd.csv'},{tmp_path / 'e.csv'}")
    corpus, truth = loaded.data, loaded.truth
    assert truth is None and corpus.units == ["a", "b"] and corpus.graph.has_edge("a", "b")
    with pytest.raises(DataError, match="csv:DOCS.csv,EDGES.csv"):
        load_social(f"csv:{tmp_path / 'd.csv'}")
    with pytest.raises(DataError, match="use one of world"):
        load_social("parquet:x")


def test_csv_reads_na_and_null_as_written_and_only_a_blank_cell_as_missing(tmp_path):
    """A unit called "NA" (a venue, a region) and a text "null" are data, not missing values."""
    (tmp_path / "d.csv").write_text("unit,time,text\nNA,2020,a cloud server\nb,2020,null\nb,2021,None\n")
    (tmp_path / "e.csv").write_text("source,target\nNA,b\n")
    corpus = load_social(f"csv:{tmp_path / 'd.csv'},{tmp_path / 'e.csv'}").data
    assert corpus.units == ["NA", "b"] and corpus.graph.has_edge("NA", "b")
    assert corpus.df["text"].tolist() == ["a cloud server", "null", "None"] and corpus.df["time"].tolist() == [2020] * 2 + [2021]
    (tmp_path / "d.csv").write_text("unit,time,text\nNA,2020,a cloud\n,2020,rain\n")
    with pytest.raises(DataError, match=r"column 'unit' at rows \[1\]: documents without a social unit"):
        load_social(f"csv:{tmp_path / 'd.csv'},{tmp_path / 'e.csv'}")
