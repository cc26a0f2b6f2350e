"""The diffusion world: communities, walk vs flight shares, companions follow each word's adoption,
and nothing but the unit and the time tells which companion comes."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pandas as pd
import pytest

from tempo_analysis.world import SocialWorldConfig, generate_social, social_frames, walk_share
from tempo_analysis.diffusion.analysis import recover_mode
from tempo_analysis.world.text_social import BARE, COMMUNITY_TOPICS, PAIRED, PAIRS, STABLE, banned_words
from tempo_analysis.world.util import count_word


@pytest.fixture(scope="module")
def walk():
    return social_frames(SocialWorldConfig(mode="walk", paired_layout="all"))


@pytest.fixture(scope="module")
def flight():
    return social_frames(SocialWorldConfig(mode="flight", paired_layout="all"))


def test_graph_units_and_communities(walk):
    docs, units, g, truth = walk
    cfg = SocialWorldConfig(paired_layout="all")
    assert sorted(g.nodes) == [f"u{i:02d}" for i in range(cfg.n_units)]
    assert nx.is_connected(g)
    comm = truth["community"]
    assert sorted(set(comm.values())) == list(range(cfg.n_communities))
    inside = sum(comm[a] == comm[b] for a, b in g.edges)
    assert inside / g.number_of_edges() > 0.7          # communities are dense inside, sparse across
    assert set(docs.time) == set(range(cfg.n_slices))
    per_cell = cfg.docs_per_word + cfg.n_changing * cfg.bare_docs + cfg.chatter_docs
    assert (docs.groupby(["unit", "time"]).size() == per_cell).all()


@pytest.mark.parametrize("seed", range(6))
def test_walk_share_high_and_flight_share_low(seed):
    """The planted modes differ clearly in the share of newly reached units with an adopting neighbour,
    for every changing word."""
    _, _, gw, tw = social_frames(SocialWorldConfig(mode="walk", seed=seed))
    _, _, gf, tf = social_frames(SocialWorldConfig(mode="flight", seed=seed))
    assert walk_share(gw, tw["first_slice"]) >= 0.9
    assert tw["walk_share"] == pytest.approx(walk_share(gw, tw["first_slice"]), abs=1e-6)
    slices = list(range(SocialWorldConfig().n_slices))
    for w in tw["changing_words"]:
        assert walk_share(gw, tw["words"][w]["first_slice"]) >= 0.9
        # flight: pure jumps until the last slice, where (15 of 24 units reached) no unit without an
        # adopting neighbour may be left; always well below what random arrivals would give
        flight = recover_mode(gf, tf["words"][w]["first_slice"], slices)
        assert flight["walk_share"] <= 0.45 and flight["mode"] == "flight"
        assert walk_share(gf, tf["words"][w]["first_slice"], per_slice=True)[1] == 0.0
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
            assert reached.count(t) <= cfg.speed          # a walk adopts its whole frontier when it is smaller
        assert len(reached) > cfg.n_seeds + cfg.speed
        assert truth["changing_words"][0] == "cloud" and len(truth["changing_words"]) == cfg.n_changing
        firsts = [tuple(truth["words"][w]["first_slice"].values()) for w in truth["changing_words"]]
        assert len(set(firsts)) == len(firsts)          # every word spreads from its own seeds
        table = units.set_index("unit")
        for u, v in first.items():
            assert (pd.isna(table.first_slice[u]) if v is None else table.first_slice[u] == v)
            assert table.community[u] == truth["community"][u]


def _phrases(text: str) -> dict:
    """{target word: companion} of a paired document ("Cloud server, river and boat, ...")."""
    out = {}
    for phrase in text.rstrip(".").lower().split(", "):
        words = phrase.split()
        out[words[0]] = words[-1]
    return out


def test_documents_follow_adoption(walk):
    docs, _, _, truth = walk
    targets = set(truth["changing_words"]) | set(truth["stable_words"])
    for r in docs.itertuples():
        if r.kind == "chatter":
            assert r.word == "" and r.sense == "" and not any(count_word(r.text, w) for w in banned_words()), r.text
        elif r.kind == "bare":
            assert r.word in truth["changing_words"] and count_word(r.text, r.word) == 1, r.text
            assert sum(count_word(r.text, w) for w in banned_words()) == 1, r.text     # no companion
        else:
            pairs = _phrases(r.text)
            assert set(pairs) == targets, r.text                                  # every target word once
            for w, companion in pairs.items():
                if w in truth["words"]:
                    info = truth["words"][w]
                    first = info["first_slice"][r.unit]
                    adopted = first is not None and first <= r.time
                    assert companion == (info["anchor"] if adopted else info["old_anchor"]), r.text
                else:
                    assert companion in STABLE[w], r.text
            main = PAIRS[truth["word"]]
            assert r.sense == (main["new_sense"] if pairs[truth["word"]] == main["anchor"] else main["old_sense"])
    # both companions of a stable word occur in every slice (50/50, whatever the unit or time)
    paired = docs[docs.kind == "paired"]
    for w in truth["stable_words"]:
        for c in STABLE[w]:
            has = paired.text.map(lambda t: _phrases(t)[w] == c)
            assert paired[has].time.nunique() == truth["n_slices"]


def test_only_unit_and_time_tell_the_companion(walk):
    """Phrases of adopters and of non-adopters use the same shapes, and the order of the words in a
    document does not depend on adoption: no phrase's shape tells the companion (the other changing
    words' companions in the same document do tell part of it; see paired_layout="one")."""
    docs, _, _, truth = walk
    shapes = {True: set(), False: set()}
    for r in docs[docs.kind == "paired"].itertuples():
        for phrase in r.text.rstrip(".").lower().split(", "):
            w = phrase.split()[0]
            if w in truth["words"]:
                first = truth["words"][w]["first_slice"][r.unit]
                adopted = first is not None and first <= r.time
                shapes[adopted].add(" ".join(["T", *phrase.split()[1:-1], "C"]))
    assert shapes[True] == shapes[False] == {" ".join(["T", *p.split()[1:-1], "C"]) for p in PAIRED}


def test_community_texts_and_templates_never_hold_a_target_or_companion():
    for text in [t for topic in COMMUNITY_TOPICS.values() for t in topic] + PAIRED + BARE:
        assert not any(count_word(text, w) for w in banned_words()), text
    for t in PAIRED:
        assert t.startswith("{T}") and t.endswith("{C}")
    for t in BARE:
        assert "{T}" in t and "{C}" not in t


def test_knobs():
    _, _, gf, fast = social_frames(SocialWorldConfig(speed=6))
    reached = [t for t in fast["first_slice"].values() if t is not None]
    cfg = SocialWorldConfig()
    assert len(reached) > cfg.n_seeds + cfg.speed * (cfg.n_slices - 1)
    assert all(reached.count(t) <= 6 for t in range(1, cfg.n_slices))
    assert walk_share(gf, fast["first_slice"]) == 1.0
    docs, _, g, t = social_frames(SocialWorldConfig(n_units=12, n_communities=2, n_slices=3, n_changing=2, n_stable=1,
                                                    docs_per_word=1, bare_docs=0, chatter_docs=2, word="stream",
                                                    paired_layout="all"))
    assert len(g) == 12 and sorted(set(docs.time)) == [0, 1, 2] and len(docs) == 12 * 3 * (1 + 0 + 2)
    assert t["anchor"] == "viewers" and t["changing_words"] == ["stream", "mouse"] and t["stable_words"] == ["river"]
    noisy, _, _, tn = social_frames(SocialWorldConfig(noise=0.3, paired_layout="all"))
    first = tn["first_slice"]
    cloud = noisy[noisy.kind == "paired"]
    flipped = [r for r in cloud.itertuples()
               if (r.sense == tn["new_sense"]) != (first[r.unit] is not None and first[r.unit] <= r.time)]
    assert len(flipped) > 0


def test_seeds(walk):
    again = social_frames(SocialWorldConfig(mode="walk", paired_layout="all"))
    pd.testing.assert_frame_equal(again[0], walk[0])
    other = social_frames(SocialWorldConfig(mode="walk", seed=1, paired_layout="all"))
    assert sorted(other[2].edges) != sorted(walk[2].edges)


def test_generate_social_returns_social_corpus():
    corpus, truth = generate_social(SocialWorldConfig(n_units=10, n_communities=2, n_slices=3))
    assert corpus.slices == [0, 1, 2]
    assert corpus.units == sorted(truth["community"])
    assert set(truth) >= {"mode", "word", "anchor", "first_slice", "community"}
    assert np.isfinite(truth["walk_share"])


@pytest.mark.parametrize("kw,field", [({"mode": "jump"}, "mode"), ({"word": "banana"}, "word"),
                                      ({"n_communities": 99}, "n_communities"), ({"p_in": 2.0}, "p_in"),
                                      ({"n_changing": 9}, "n_changing"), ({"n_stable": 9}, "n_stable"),
                                      ({"docs_per_word": 0}, "docs_per_word")])
def test_bad_config_names_the_field(kw, field):
    with pytest.raises(ValueError, match=field):
        social_frames(SocialWorldConfig(**kw))


def test_one_changing_word_per_paired_document():
    """paired_layout="one": each paired document holds one changing word and the stable words, so
    its other phrases say nothing about the unit's adoptions; its companion still follows them."""
    cfg = SocialWorldConfig(paired_layout="one")
    docs, _, _, truth = social_frames(cfg)
    paired = docs[docs.kind == "paired"]
    assert len(paired) == cfg.n_units * cfg.n_slices * cfg.n_changing * cfg.docs_per_word
    seen = []
    for r in paired.itertuples():
        pairs = _phrases(r.text)
        changing = [w for w in pairs if w in truth["words"]]
        assert len(changing) == 1 and set(pairs) - set(changing) == set(truth["stable_words"]), r.text
        w = changing[0]
        first = truth["words"][w]["first_slice"][r.unit]
        adopted = first is not None and first <= r.time
        assert pairs[w] == (truth["words"][w]["anchor"] if adopted else truth["words"][w]["old_anchor"]), r.text
        main = PAIRS[truth["word"]]
        assert r.sense == ("" if w != truth["word"] else main["new_sense"] if adopted else main["old_sense"])
        seen.append(w)
    assert sorted(set(seen)) == sorted(truth["changing_words"])
    with pytest.raises(ValueError, match="paired_layout"):
        social_frames(SocialWorldConfig(paired_layout="some"))


# --- the default layout, "senses": each usage writes the word in a sentence of its sense -------------------
def test_sense_usages_follow_adoption_with_varied_context_words():
    from tempo_analysis.world.text_senses import TEMPLATES
    from tempo_analysis.world.text_social import SENSE_OF

    cfg = SocialWorldConfig()
    assert cfg.paired_layout == "senses"
    docs, _, _, truth = social_frames(cfg)
    usages = docs[(docs.kind == "usage") & docs.word.isin(truth["changing_words"])]
    contexts = {}
    for r in usages.itertuples():
        info, pair = truth["words"][r.word], PAIRS[r.word]
        first = info["first_slice"][r.unit]
        adopted = first is not None and first <= r.time
        assert r.sense == (pair["new_sense"] if adopted else pair["old_sense"]), r
        assert r.text.endswith(f"{r.word.capitalize()} {info['anchor'] if adopted else info['old_anchor']}."), r.text
        sentence = r.text[: r.text.rindex(r.word.capitalize() + " ")].strip()
        contexts.setdefault((r.word, r.sense), set()).add(sentence)
        shapes = [t for t in TEMPLATES[r.word][SENSE_OF[r.word][r.sense]]]
        assert any(sentence.split()[0].lower() in t.lower() or "{" in t for t in shapes), sentence
    assert all(len(v) >= 8 for v in contexts.values()), {k: len(v) for k, v in contexts.items()}   # varied contexts
    bare = docs[docs.kind == "bare"]
    assert set(bare.word) == set(truth["changing_words"])
    assert all(sum(count_word(t, w) for w in banned_words()) == 1 for t in bare.text)             # ambiguous


def test_held_out_cells_never_write_the_word():
    cfg = SocialWorldConfig()
    docs, _, _, truth = social_frames(cfg)
    cells = cfg.n_units * cfg.n_slices
    for w in truth["changing_words"]:
        held = {tuple(c) for c in truth["held_out_cells"][w]}
        assert len(held) == round(cfg.held_out_cells * cells)
        written = set(zip(docs.loc[docs.word == w, "unit"], docs.loc[docs.word == w, "time"]))
        assert not held & written and len(written) == cells - len(held)
    none, _, _, t0 = social_frames(SocialWorldConfig(held_out_cells=0.0))
    assert all(not v for v in t0["held_out_cells"].values())
    with pytest.raises(ValueError, match="held_out_cells"):
        SocialWorldConfig(held_out_cells=1.5).validate()
