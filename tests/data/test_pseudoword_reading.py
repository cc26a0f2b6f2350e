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
