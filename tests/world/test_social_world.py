"""The diffusion world: communities, walk vs flight shares, sense/anchor usage follows adoption."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pandas as pd
import pytest

from tempo_analysis.world import SocialWorldConfig, generate_social, social_frames, walk_share
from tempo_analysis.world.text_social import COMMUNITY_TOPICS, PAIRS
from tempo_analysis.world.util import count_word


@pytest.fixture(scope="module")
def walk():
    return social_frames(SocialWorldConfig(mode="walk"))


@pytest.fixture(scope="module")
def flight():
    return social_frames(SocialWorldConfig(mode="flight"))


def test_graph_units_and_communities(walk):
    docs, units, g, truth = walk
    cfg = SocialWorldConfig()
    assert sorted(g.nodes) == [f"u{i:02d}" for i in range(cfg.n_units)]
    assert nx.is_connected(g)
    comm = truth["community"]
    assert sorted(set(comm.values())) == list(range(cfg.n_communities))
    inside = sum(comm[a] == comm[b] for a, b in g.edges)
    assert inside / g.number_of_edges() > 0.7          # communities are dense inside, sparse across
    assert set(docs.time) == set(range(cfg.n_slices))
    assert (docs.groupby(["unit", "time"]).size() == cfg.docs_per_unit_slice).all()


@pytest.mark.parametrize("seed", range(6))
def test_walk_share_high_and_flight_share_low(seed):
    """The planted modes differ clearly in the share of newly reached units with an adopting neighbour."""
    _, _, gw, tw = social_frames(SocialWorldConfig(mode="walk", seed=seed))
    _, _, gf, tf = social_frames(SocialWorldConfig(mode="flight", seed=seed))
    assert walk_share(gw, tw["first_slice"]) >= 0.9
    assert walk_share(gf, tf["first_slice"]) <= 0.1
    assert tw["walk_share"] == pytest.approx(walk_share(gw, tw["first_slice"]), abs=1e-6)
    per = walk_share(gw, tw["first_slice"], per_slice=True)
    assert set(per) <= set(range(1, SocialWorldConfig().n_slices))


def test_truth_records_mode_word_anchor_and_first_slices(walk, flight):
    for mode, (docs, units, g, truth) in (("walk", walk), ("flight", flight)):
        cfg = SocialWorldConfig()
        assert truth["mode"] == mode and truth["word"] == "cloud" and truth["anchor"] == "server"
        first = truth["first_slice"]
        assert set(first) == set(g.nodes)
        reached = [t for t in first.values() if t is not None]
        assert reached.count(0) == cfg.n_seeds
        for t in range(1, cfg.n_slices):
            assert reached.count(t) == cfg.speed
        table = units.set_index("unit")
        for u, v in first.items():
            assert (pd.isna(table.first_slice[u]) if v is None else table.first_slice[u] == v)
            assert table.community[u] == truth["community"][u]


def test_documents_follow_adoption(walk):
    docs, _, _, truth = walk
    word, anchor = truth["word"], truth["anchor"]
    first = truth["first_slice"]
    for r in docs.itertuples():
        adopted = first[r.unit] is not None and first[r.unit] <= r.time
        has_word = count_word(r.text, word) == 1
        has_anchor = count_word(r.text, anchor) == 1
        if r.sense == truth["new_sense"]:
            assert adopted and has_word and has_anchor, r.text
        elif r.sense == truth["old_sense"]:
            assert not adopted and has_word and not has_anchor, r.text
        else:
            assert r.sense == "" and not has_word and not has_anchor, r.text
    # every (unit, slice) uses the word at least once
    assert (docs[docs.sense != ""].groupby(["unit", "time"]).size() >= 1).all()
    assert docs[docs.sense != ""].groupby(["unit", "time"]).ngroups == docs.groupby(["unit", "time"]).ngroups


def test_community_texts_never_hold_a_pair_word_or_anchor():
    banned = set(PAIRS) | {p["anchor"] for p in PAIRS.values()}
    for topic in COMMUNITY_TOPICS.values():
        for t in topic:
            assert not any(count_word(t, w) for w in banned), t
    for word, p in PAIRS.items():
        for t in p["old"]:
            assert count_word(t, word) == 1 and count_word(t, p["anchor"]) == 0, t
        for t in p["new"]:
            assert count_word(t, word) == 1 and count_word(t, p["anchor"]) == 1, t


def test_knobs():
    _, _, gf, fast = social_frames(SocialWorldConfig(speed=4))
    reached = [t for t in fast["first_slice"].values() if t is not None]
    # at most `speed` per slice (a walk adopts its whole frontier when it is smaller)
    assert 2 + 2 * 6 < len(reached) <= 2 + 4 * 6
    assert all(reached.count(t) <= 4 for t in range(1, 7))
    assert walk_share(gf, fast["first_slice"]) == 1.0
    docs, _, g, t = social_frames(SocialWorldConfig(n_units=12, n_communities=2, n_slices=3,
                                                    docs_per_unit_slice=2, word="stream"))
    assert len(g) == 12 and sorted(set(docs.time)) == [0, 1, 2] and len(docs) == 12 * 3 * 2
    assert t["anchor"] == "viewers"
    noisy, _, _, tn = social_frames(SocialWorldConfig(noise=0.3))
    first = tn["first_slice"]
    flipped = [r for r in noisy[noisy.sense != ""].itertuples()
               if (r.sense == tn["new_sense"]) != (first[r.unit] is not None and first[r.unit] <= r.time)]
    assert len(flipped) > 0


def test_seeds(walk):
    again = social_frames(SocialWorldConfig(mode="walk"))
    pd.testing.assert_frame_equal(again[0], walk[0])
    other = social_frames(SocialWorldConfig(mode="walk", seed=1))
    assert sorted(other[2].edges) != sorted(walk[2].edges)


def test_generate_social_returns_social_corpus():
    corpus, truth = generate_social(SocialWorldConfig(n_units=10, n_communities=2, n_slices=3))
    assert corpus.slices == [0, 1, 2]
    assert corpus.units == sorted(truth["community"])
    assert set(truth) >= {"mode", "word", "anchor", "first_slice", "community"}
    assert np.isfinite(truth["walk_share"])


@pytest.mark.parametrize("kw,field", [({"mode": "jump"}, "mode"), ({"word": "banana"}, "word"),
                                      ({"n_communities": 99}, "n_communities"), ({"p_in": 2.0}, "p_in")])
def test_bad_config_names_the_field(kw, field):
    with pytest.raises(ValueError, match=field):
        social_frames(SocialWorldConfig(**kw))
