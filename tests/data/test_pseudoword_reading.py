"""The pseudoword benchmark's readers at their edges (no real data needed): sentences of 4 to 60 words,
upper-case headings skipped, Brown's tagged lines cut the same way, and nouns by majority tag."""
from __future__ import annotations

import dataclasses

import pytest

from tempo_analysis.data.loaders.pseudoword import PseudowordConfig, _read_brown, _split_sentences


def words(n: int, first: str = "Alpha") -> str:
    return " ".join([first] + ["word"] * (n - 1)) + "."


def test_sentences_of_4_to_60_words_are_kept():
    text = " ".join(words(n, f"S{n}") for n in (3, 4, 60, 61))
    assert [s.split()[0] for s in _split_sentences(text)] == ["S4", "S60"]


def test_upper_case_headings_are_skipped():
    text = "CHAPTER ONE THE BEGINNING\n\nThe river ran past the mill."
    assert _split_sentences(text) == ["The river ran past the mill."]


def test_brown_lines_of_4_to_60_tokens_and_nouns_by_majority_tag(tmp_path):
    def line(n):
        return " ".join(["the/at"] + ["river/nn"] * (n - 2) + ["./."])

    tagged = [line(3), line(4), line(60), line(61),
              "a/at table/nn table/nn table/nn table/nn ./.",                       # nn 4 times: too rare
              "we/ppss run/nn run/nn run/nn run/nn run/nn ./.",                   # nn 5 times ...
              "they/ppss run/vb run/vb run/vb run/vb run/vb run/vb ./.",          # ... but vb 6 times
              "a/at lamp/nn lamp/nn lamp/nn lamp/nn lamp/nn ./."]                 # nn 5 times: enough
    (tmp_path / "ca01").write_text("\n".join(tagged) + "\n")
    (tmp_path / "README").write_text("not a Brown file\n")
    docs, nouns = _read_brown(tmp_path)
    assert [name for name, _ in docs] == ["brown-ca01"]
    assert [len(s.split()) for s in docs[0][1][:3]] == [4 - 1, 60 - 1, 6 - 1]   # "." joins its word
    assert {"river", "lamp"} <= nouns and "table" not in nouns and "run" not in nouns


def test_the_benchmarks_defaults_are_fixed_and_frozen():
    cfg = PseudowordConfig()
    assert (cfg.n_targets, cfg.control_share, cfg.p_max, cfg.min_count, cfg.max_count) == (48, 0.25, 0.8, 30, 160)
    assert (cfg.max_sentences_per_period, cfg.acl_year, cfg.seed) == (6000, 2005, 0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.seed = 1


def test_a_gutenberg_book_loses_its_title_line_and_headings_and_keeps_4_to_60_word_sentences(tmp_path):
    from tempo_analysis.data.loaders.pseudoword import read_gutenberg_file

    book = tmp_path / "austen-emma.txt"
    book.write_text("[Emma by Jane Austen 1816]\n\nVOLUME ONE CHAPTER ONE\n\nEmma Woodhouse was handsome. Too short here. "
                    + words(60, "Long") + " " + words(61, "Longer") + "\n")
    got = read_gutenberg_file(book)
    assert [s.split()[0] for s in got] == ["Emma", "Long"] and "[Emma" not in " ".join(got)


def test_the_injected_target_takes_the_donors_capital_at_a_sentence_start():
    from tempo_analysis.data.loaders.pseudoword import _replace

    assert _replace("Importance is key.", (0, 10), "desire") == ("Desire is key.", (0, 6))
    assert _replace("the importance of it", (4, 14), "desire") == ("the desire of it", (4, 10))


# --- which nouns may become targets: a band of sentence counts in *both* periods ---------------------
BAND = dict(min_count=3, max_count=5)
COUNTS = {                      # noun: (early sentences, late sentences)
    "alpha": (3, 3),            # at the lower edge in both periods: in
    "gamma": (5, 5),            # at the upper edge in both periods: in
    "epsilon": (4, 5),          # in
    "cat": (4, 4),              # three letters is long enough: in
    "beta": (2, 4),             # too rare in one period: out
    "delta": (4, 6),            # too common in one period: out
    "ox": (4, 4),               # two letters: out
    "time": (4, 4),             # too general a noun: out
}


def _band_build(monkeypatch, n_targets: int):
    """``build_pseudoword`` over one-sentence documents that give each noun exactly its COUNTS: the documents'
    periods are the benchmark's own seeded draw, replayed here."""
    import numpy as np

    from tempo_analysis.data.loaders import pseudoword as pw

    seed, n_docs = 0, 400
    late = np.random.default_rng(seed).random(n_docs) < 0.5
    free = {False: [i for i in range(n_docs) if not late[i]], True: [i for i in range(n_docs) if late[i]]}
    sentences = ["nothing much happened here"] * n_docs
    for noun, (n_early, n_late) in COUNTS.items():
        for is_late, n in ((False, n_early), (True, n_late)):
            for _ in range(n):
                sentences[free[is_late].pop()] = f"the {noun} stood here"
    docs = [(f"brown-{i}", [s]) for i, s in enumerate(sentences)]

    def read_sources(root, acl_year=None, info=None):
        info.update(sources={"brown": n_docs}, missing=[], replaced={})
        return docs, set(COUNTS)

    monkeypatch.setattr(pw, "read_sources", read_sources)
    return pw.build_pseudoword("unused", PseudowordConfig(n_targets=n_targets, p_max=0.0, seed=seed, **BAND))


def test_a_target_needs_a_count_inside_the_band_in_both_periods(monkeypatch):
    from tempo_analysis.data.errors import DataError

    with pytest.raises(DataError, match=r"only 4 candidate nouns with 3\.\.5 sentences per period; .* needs 100"):
        _band_build(monkeypatch, n_targets=50)
    bench = _band_build(monkeypatch, n_targets=2)        # four in the band: exactly twice the targets is enough
    truth = bench.truth.set_index("word")
    assert set(truth.index) <= {"alpha", "gamma", "epsilon", "cat"} and len(truth) == 2
    for w, row in truth.iterrows():                      # the replayed periods give every noun its counts
        assert (row["n_early"], row["n_late"]) == COUNTS[w]
    with pytest.raises(DataError, match="only 4 candidate nouns .* needs 6"):
        _band_build(monkeypatch, n_targets=3)
