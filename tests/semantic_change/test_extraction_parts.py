"""Extraction's small parts at their edges: the target's pieces from character offsets, the window that keeps
it, the vectors' subsets, and the fast-tokenizer check."""
import numpy as np
import pytest

from tempo_analysis.data import DataError, TargetUsage
from tempo_analysis.semantic_change.extraction import TargetVectors, prepare, target_piece_span, window


def test_the_target_is_every_piece_its_characters_overlap():
    offsets = [(0, 3), (4, 7), (7, 9), (10, 12)]              # "the", "unb" + "le", "it"
    assert target_piece_span(offsets, 4, 9) == (1, 3)
    assert target_piece_span(offsets, 5, 6) == (1, 2)         # inside one piece
    assert target_piece_span(offsets, 8, 11) == (2, 4)        # partly over two


def test_a_span_that_only_touches_a_piece_or_falls_between_pieces_covers_none():
    offsets = [(0, 3), (4, 7)]
    assert target_piece_span(offsets, 3, 4) is None           # the space between: touches both, overlaps neither
    assert target_piece_span(offsets, 7, 9) is None           # starts where the last piece ends


def test_zero_width_pieces_never_count():
    """Special or normalised-away tokens have empty spans (s == e): they are never the target's."""
    assert target_piece_span([(0, 3), (4, 9), (8, 8)], 4, 9) == (1, 2)
    assert target_piece_span([(0, 0), (0, 3)], 0, 3) == (1, 2)


@pytest.mark.parametrize("n, t0, t1, budget, expected", [
    (10, 3, 5, 10, (0, 10)),        # fits: the whole sentence
    (10, 3, 5, 12, (0, 10)),
    (10, 2, 6, 4, (2, 6)),          # a target exactly the budget long: just the target
    (10, 0, 1, 4, (0, 4)),          # at the start: the window cannot begin before the sentence
    (10, 9, 10, 4, (6, 10)),        # at the end: nor end after it
    (20, 9, 11, 6, (7, 13)),        # in the middle: centred
])
def test_the_window_keeps_the_target_centred_inside_the_sentence(n, t0, t1, budget, expected):
    a, b = window(n, t0, t1, budget)
    assert (a, b) == expected and a <= t0 and t1 <= b and b - a == min(n, budget)


def test_a_target_longer_than_the_budget_is_refused():
    with pytest.raises(DataError, match="spans 5 pieces, more than the 4"):
        window(10, 2, 7, 4)


@pytest.fixture
def vectors():
    usages = [TargetUsage(w, p, f"a {w} here", 2, 2 + len(w)) for w, p in
              (("cell", "old"), ("mouse", "old"), ("cell", "new"), ("mouse", "new"))]
    return TargetVectors(np.arange(4 * 2 * 3, dtype=np.float32).reshape(4, 2, 3), usages, [5, 6],
                         np.array([1, 2, 1, 2]), np.array([False, True, False, False]))


def test_select_takes_integer_indices_or_a_boolean_mask(vectors):
    by_index = vectors.select([2, 0])
    assert [u.period for u in by_index.usages] == ["new", "old"] and by_index.vectors[0, 0, 0] == 12
    by_mask = vectors.select(np.array([False, True, False, True]))
    assert [u.word for u in by_mask.usages] == ["mouse", "mouse"] and by_mask.windowed.tolist() == [True, False]
    assert by_mask.n_pieces.tolist() == [2, 2] and by_mask.layers == [5, 6] and len(by_mask) == 2


def test_for_word_keeps_that_words_usages_only(vectors):
    cell = vectors.for_word("cell")
    assert [u.period for u in cell.usages] == ["old", "new"] and cell.vectors[:, 0, 0].tolist() == [0, 12]
    assert len(vectors.for_word("absent")) == 0


def test_a_bare_result_has_empty_piece_counts_and_flags():
    bare = TargetVectors(np.zeros((0, 1, 3), np.float32), [], [0])
    assert bare.n_pieces.shape == (0,) and bare.windowed.shape == (0,)


def test_a_tokenizer_that_does_not_say_it_is_fast_is_refused():
    class Slow:                                      # no is_fast attribute at all
        cls_token_id = sep_token_id = 0

    with pytest.raises(ValueError, match="needs a fast tokenizer"):
        prepare(Slow(), [TargetUsage("cell", "old", "a cell", 2, 6)])


@pytest.fixture(scope="module")
def tok():
    from tempo_analysis.encoders import tiny_encoder

    return tiny_encoder()[1]


def test_a_span_over_a_character_the_tokenizer_drops_is_refused_by_name(tok):
    """A zero-width space is not whitespace to Python but the tokenizer drops it: no piece, a clear error."""
    with pytest.raises(DataError, match=r"usage 0 \(word 'x', doc None\): offsets 2:3"):
        prepare(tok, [TargetUsage("x", "old", "a \u200b b", 2, 3)])


def test_a_long_target_in_a_long_sentence_keeps_all_its_pieces_in_the_window(tok):
    word = "antidisestablishmentarianism"                          # 8 pieces
    text = " ".join(["filler"] * 30) + f" {word} " + " ".join(["filler"] * 30)
    start = text.index(word)
    rows, spans, windowed = prepare(tok, [TargetUsage(word, "old", text, start, start + len(word))], max_length=12)
    (a, b), row = spans[0], rows[0]
    assert windowed[0] and len(row) == 12 and row[0] == tok.cls_token_id and row[-1] == tok.sep_token_id
    assert tok.convert_ids_to_tokens(row[a:b]) == tok.tokenize(word)


def test_a_sentence_that_fits_is_not_flagged_as_windowed(tok):
    assert prepare(tok, [TargetUsage("cell", "old", "a cell here", 2, 6)], max_length=12)[2].tolist() == [False]


def test_only_cpu_and_cuda_can_run_bfloat16_natively():
    from tempo_analysis.semantic_change.extraction import native_bf16, resolve_precision

    assert native_bf16("meta") is False and resolve_precision("auto", "meta") == "fp32"
