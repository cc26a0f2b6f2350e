"""The pseudoword change benchmark (``--data pseudoword``): built from the real corpora in shared/data;
skipped when that folder is absent."""
import re
from collections import Counter

import pytest

from tempo_analysis.data.locations import shared_data_dir
from tempo_analysis.resolve import load_change_data

SOURCES = ("nltk_data/corpora/brown", "nltk_data/corpora/gutenberg", "nltk_data/corpora/state_union",
           "nltk_data/corpora/inaugural", "acl_abstracts_by_year/papers_2005.txt")


def _missing_sources() -> list[str]:
    """The sources the default benchmark reads that are not here: the counts below hold only with every one
    (a missing one changes the documents, so the targets and the truth)."""
    shared = shared_data_dir()
    if shared is None:
        return ["the shared data folder itself"]
    return [s for s in SOURCES if not (shared / s).exists()]


pytestmark = pytest.mark.skipif(
    bool(_missing_sources()),
    reason=f"real-data pseudoword tests skipped: {', '.join(_missing_sources())} not found under "
           f"{shared_data_dir() or 'shared/data'} (set $TEMPO_ANALYSIS_SHARED_DATA to the real-data folder)")


@pytest.fixture(scope="module")
def bench():
    return load_change_data("pseudoword", seed=0).data


def test_truth_is_the_injected_share_and_frequency_does_not_move(bench):
    t = bench.truth.set_index("word")
    assert len(t) == 48 and (t["graded"] == 0).sum() == 12 and t["graded"].max() == pytest.approx(0.8, abs=0.02)
    assert ((t["graded"] > 0) == (t["donor"] != "")).all() and not set(t["donor"]) & set(t.index)
    n = Counter((u.word, u.period) for u in bench.usages)
    for w, r in t.iterrows():   # every target keeps exactly its usages: dropping one never costs another
        assert (n[(w, "early")], n[(w, "late")]) == (r["n_early"], r["n_late"]), w
    for u in bench.usages:                      # every given usage points at its target
        assert u.surface.lower() == u.word


def test_the_truth_is_the_share_of_later_usages_taken_from_the_donor(bench):
    """Each later usage is traced back to its source sentence: the target's own, or the donor's with the
    donor swapped for the target. The injected count over the later usages is the graded truth."""
    from tempo_analysis.data.loaders.pseudoword import read_sources
    source = {f"{d}-{i}": text for d, sents in read_sources(shared_data_dir())[0] for i, text in enumerate(sents)}
    t = bench.truth.set_index("word")
    injected = Counter()
    for u in bench.usages:
        original = source[u.doc_id]
        own = re.search(rf"(?<![A-Za-z]){u.word}(?![A-Za-z])", original, re.IGNORECASE)
        if own is None:                          # not the target's own sentence: the donor's, in the later period
            donor = t.loc[u.word, "donor"]
            assert u.period == "late" and donor and original[u.start:].lower().startswith(donor), (u.word, u.doc_id)
            injected[u.word] += 1
        # no surface cue: an article before the target agrees with it, as in the source sentences
        article = re.search(r"(?:^|\s)(an?)\s+$", u.text[:u.start], re.IGNORECASE)
        if article:
            assert (article.group(1).lower() == "an") == (u.word[0] in "aeiou"), (u.word, u.text)
    for w, r in t.iterrows():
        assert injected[w] == r["n_injected"], w
        assert r["graded"] == pytest.approx(r["n_injected"] / r["n_late"], abs=1e-6)
        assert r["binary"] == int(r["n_injected"] > 0) and (r["donor"] != "") == (r["n_injected"] > 0)


def test_a_strength_too_small_to_inject_anything_is_a_control():
    from tempo_analysis.data.loaders.pseudoword import PseudowordConfig, build_pseudoword
    t = build_pseudoword(shared_data_dir(), PseudowordConfig(p_max=0.1)).truth
    assert (t["n_injected"] == 0).sum() > 12          # the quarter of controls and the p that round to no usage
    assert (t["binary"] == (t["n_injected"] > 0)).all() and (t.loc[t["n_injected"] == 0, "graded"] == 0).all()


def test_frequency_cannot_see_p_and_targets_subset(bench):
    from tempo_analysis.semantic_change.baselines import frequency_change
    from tempo_analysis.semantic_change.pipeline import evaluate_scores
    m = evaluate_scores(frequency_change(bench), bench.truth)
    assert abs(m["spearman"]) < 0.4
    from tempo_analysis.resolve import _subset
    sub = _subset(bench, list(bench.targets[:2]))
    assert sub.targets == bench.targets[:2] and {u.word for u in sub.usages} == set(bench.targets[:2])


def test_the_notes_name_every_source_read_and_the_bytes_that_are_not_utf8(bench):
    """Two machines with the same seed build the same benchmark only from the same sources: the notes say
    which were read (documents per source) and which files held bytes that are not UTF-8."""
    sources = next(n for n in bench.notes if n.startswith("sources (documents): "))
    assert [part.split(" ")[0] for part in sources.split(": ", 1)[1].split(", ")] == \
        ["brown", "gutenberg", "state_union", "inaugural", "acl2005"]
    assert not any(n.startswith("missing sources") for n in bench.notes)
    replaced = next(n for n in bench.notes if n.startswith("bytes that are not UTF-8"))
    assert "gutenberg/chesterton-ball.txt: 5" in replaced and "inaugural/2005-Bush.txt: 55" in replaced
