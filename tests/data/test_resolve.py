"""The one resolver (tempo_analysis.resolve): the same shape for every wing, the planted truth for the world
and None for real data, and a clear error for a kind it does not know."""
from __future__ import annotations

import dataclasses

import pandas as pd
import pytest

from tempo_analysis import resolve
from tempo_analysis.data import DataError, SocialCorpus, Timelines
from tempo_analysis.data.change import ChangeData
from tempo_analysis.world import load_world


@pytest.fixture(scope="module")
def world():
    return load_world()       # the committed world (data/world), the one `world` reads


def test_every_kind_of_the_world_is_its_data_and_its_planted_truth(world):
    t = resolve.resolve("world", "timelines")
    assert isinstance(t.data, Timelines) and t.truth.equals(world.timeline_truth)
    c = resolve.resolve("world", "change")
    assert isinstance(c.data, ChangeData) and c.truth is c.data.truth and c.truth.equals(world.change_truth)
    s = resolve.resolve("world", "social")
    assert isinstance(s.data, SocialCorpus) and s.truth == world.diffusion_truth
    y = resolve.resolve("world", "yearly")
    assert list(y.data.columns) == ["doc_id", "year", "text"] and y.truth.equals(world.trend_truth)


def test_real_data_has_no_planted_truth(tmp_path):
    posts = tmp_path / "posts.csv"
    pd.DataFrame({"timeline_id": ["a", "a", "b", "b"], "post_id": ["1", "2", "3", "4"], "timestamp": [0, 5, 0, 9],
                  "text": ["x", "y", "z", "w"], "label": ["O", "IS", "O", "O"]}).to_csv(posts, index=False)
    years = tmp_path / "years.csv"
    years.write_text("year,text\n2019,a b\n2020,b c\n")
    docs, edges = tmp_path / "d.csv", tmp_path / "e.csv"
    docs.write_text("unit,time,text\nu,0,a\nv,1,b\n")
    edges.write_text("source,target\nu,v\n")
    for spec, kind, options in ((f"csv:{posts}", "timelines", {"time_unit": "s"}), (f"csv:{years}", "yearly", {}),
                                (f"csv:{docs},{edges}", "social", {})):
        r = resolve.resolve(spec, kind, **options)
        assert isinstance(r, resolve.Resolved) and r.truth is None and r.data is not None


def test_resolve_is_the_per_kind_loader_with_its_options():
    by_kind = resolve.resolve("world", "timelines", max_timelines=3, seed=2)
    direct = resolve.load_timelines("world", max_timelines=3, seed=2)
    assert list(by_kind.data.timeline_ids) == list(direct.data.timeline_ids) and len(by_kind.data.timeline_ids) == 3
    assert set(resolve.KINDS) == {"timelines", "change", "social", "yearly"}
    assert all(callable(getattr(resolve, name)) for name in resolve.KINDS.values())


def test_a_kind_the_resolver_does_not_know_is_one_clear_error_naming_the_fix():
    with pytest.raises(DataError, match=r"kind='stream'.*Fix: use one of \['change', 'social', 'timelines', 'yearly'\]"):
        resolve.resolve("world", "stream")


def test_a_resolved_dataset_cannot_be_changed():
    r = resolve.Resolved("data")
    assert r.truth is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.truth = "planted"


def test_a_world_generated_in_memory_carries_its_truth_too(tmp_path, monkeypatch):
    from tempo_analysis.data import locations
    from tempo_analysis.world import StreamWorldConfig, generate_timelines

    monkeypatch.setenv(locations.ENV_DATA, str(tmp_path))          # no world on disk
    with pytest.warns(UserWarning, match="generating the default world"):
        r = resolve.load_timelines("world")
    assert r.truth.equals(generate_timelines(StreamWorldConfig(), with_truth=True)[1])
