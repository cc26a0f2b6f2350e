"""whatif.py's parts at their edges, on a tiny LM and a tokenizer trained on the toy corpus (no fitted facade):
the word lookups (``word_token``'s refusal of split and blank words and the pieces it names, ``word_pieces``,
``shown_tokens``' labels, notes and de-duplication), ``copy_rate``, ``occurrence_rate`` and ``occurrences``,
``forecast_bias`` (zeros without a bias and outside S, the alpha scaling, the gated kind's open gate),
``expected_token_probs`` and ``states_token_probs`` against a hand loop over the full model,
``injected_trend`` (the history it installs, the normalisation it keeps, the restore after an error, its
refusals), and ``generated_states`` / ``generated_word_probs`` against a direct softmax sum.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch

from tempo_analysis.data.errors import DataError
from tempo_analysis.future_text.frequency import FrequencyTable
from tempo_analysis.future_text.model import FutureLM
from tempo_analysis.future_text.whatif import (copy_rate, expected_token_probs, forecast_bias, generated_states,
                                               generated_word_probs, injected_trend, occurrence_rate, occurrences,
                                               shown_tokens, states_token_probs, word_pieces, word_token)

from .conftest import tiny_gpt2
from .test_future_lm import FIRST, V, Y, make
from .whatif_world import DEV, TEST, facade, future, hand_mean_probs, pieces_of, texts_of, words_with




# ------------------------------------------------------------------------------------------------
# word lookups
# ------------------------------------------------------------------------------------------------


def test_word_token_is_the_first_piece_of_the_word_after_a_space(world):
    tok = world.tok
    whole, split = words_with(tok, 1)[0], words_with(tok, 3)[0]
    assert word_token(tok, whole) == tok.convert_tokens_to_ids("Ġ" + whole)
    assert word_token(tok, f"  {whole} ") == word_token(tok, whole, whole=True) == word_token(tok, whole)
    first = pieces_of(tok, split)[0]
    assert word_token(tok, split) == tok.convert_tokens_to_ids(first)       # no start token, the first piece
    assert word_pieces(tok, split) == tok.convert_tokens_to_ids(pieces_of(tok, split))
    assert word_pieces(tok, whole) == [word_token(tok, whole)]


@pytest.mark.parametrize("n", [2, 3])
def test_whole_word_refuses_a_split_word_and_names_its_pieces(world, n):
    tok = world.tok
    split = words_with(tok, n)[0]
    pieces = pieces_of(tok, split)
    with pytest.raises(DataError) as err:
        word_token(tok, split, whole=True)
    msg = str(err.value)
    assert f"word={split!r}" in msg and f"splits it into {pieces}" in msg
    assert f"first piece {pieces[0]!r}" in msg and "Fix: choose a word the tokenizer keeps whole" in msg


def test_a_word_without_tokens_is_refused():
    """A tokenizer that reads words from a fixed list gives no token for a blank word."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    tk = Tokenizer(models.WordLevel({"<unk>": 0, "<eos>": 1, "kernel": 2}, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, unk_token="<unk>", eos_token="<eos>")
    assert word_token(tok, "kernel", whole=True) == 2
    with pytest.raises(DataError, match="word='  ': the tokenizer produced no tokens"):
        word_token(tok, "  ")


@pytest.mark.parametrize("blank", ["", "   "])
def test_a_blank_word_is_refused_by_a_byte_level_bpe_too(world, blank):
    """Byte-level BPE turns a bare space into a token ('Ġ'): a blank word must not become that token."""
    with pytest.raises(DataError, match="the tokenizer produced no tokens"):
        word_token(world.tok, blank, whole=True)
    with pytest.raises(DataError, match="the tokenizer produced no tokens"):
        shown_tokens(world.tok, ["kernel", blank])
    with pytest.raises(DataError, match="the tokenizer produced no tokens"):
        word_pieces(world.tok, blank)                    # what a trend injection would raise


def test_shown_tokens_labels_split_words_by_their_first_piece_with_one_note_each(world):
    tok = world.tok
    whole, two, three = words_with(tok, 1)[0], words_with(tok, 2)[0], words_with(tok, 3)[0]
    ids, labels, notes = shown_tokens(tok, [three, f" {whole} ", two, whole, f"{three} "])
    assert ids == [word_token(tok, three), word_token(tok, whole), word_token(tok, two)]    # first-seen order
    p3, p2 = pieces_of(tok, three), pieces_of(tok, two)
    assert labels == [f"{three} → {p3[0]!r} (1 of 3 pieces)", whole, f"{two} → {p2[0]!r} (1 of 2 pieces)"]
    assert len(notes) == 2
    assert notes[0].startswith(f"'{three}' is 3 tokens {p3}; its bar shows the first piece {p3[0]!r}")
    assert notes[1].startswith(f"'{two}' is 2 tokens {p2}; its bar shows the first piece {p2[0]!r}")
    assert all(n.endswith("A trend injection raises every piece.") for n in notes)
    assert shown_tokens(tok, [whole]) == ([word_token(tok, whole)], [whole], [])


# ------------------------------------------------------------------------------------------------
# text counts
# ------------------------------------------------------------------------------------------------


def test_copy_rate_is_the_share_of_generated_ngrams_found_in_the_training_texts():
    gen = ["A b c d e f g h i"]                       # 8-grams: (a..h) and (b..i)
    train = ["a b c d e f g h"]
    assert copy_rate(gen, train) == 0.5              # default n = 8
    assert copy_rate(gen, train, n=9) == 0.0
    assert copy_rate(gen, train, n=7) == pytest.approx(2 / 3)
    assert copy_rate(gen, ["x a b c d e f g h i y"]) == 1.0
    assert copy_rate(gen, ["a b c d", "e f g h i"]) == 0.0      # an n-gram never spans two training texts
    assert copy_rate(["a b c", "d e f g h i j k"], ["a b c d e f g h", "i j k"], n=3) == pytest.approx(5 / 7)


def test_copy_rate_reads_lower_cased_words_with_their_hyphens_and_apostrophes():
    gen = ["State-of-the-art models, isn't it: great!"]
    assert copy_rate(gen, ["state-of-the-art models isn't it great"], n=5) == 1.0
    assert copy_rate(gen, ["state of the art models isn't it great"], n=5) == 0.0
    assert copy_rate(["too short"], ["too short"]) == 0.0 and copy_rate([], ["a b"]) == 0.0


def test_occurrences_count_word_starts_case_blind():
    texts = ["Kernels and a KERNEL.", "a subkernel, kernel-based", ""]
    assert occurrences(texts, " Kernel ") == 3            # "kernels", "kernel", "kernel-based"; not "subkernel"
    assert occurrence_rate(texts, "kernel") == pytest.approx(1.0)
    assert occurrences(texts, "c++") == 0 and occurrences(["we use C++ daily"], "c++") == 1
    assert occurrence_rate([], "kernel") == 0.0 and occurrences([], "kernel") == 0


# ------------------------------------------------------------------------------------------------
# forecast_bias
# ------------------------------------------------------------------------------------------------


def test_forecast_bias_is_alpha_times_the_year_terms_of_a_frequency_model():
    m = make("freq")
    with torch.no_grad():
        m.alpha.fill_(0.4)
        terms = m.year_terms([FIRST + 4])[0].numpy()
    got = forecast_bias(m, FIRST + 4)
    assert got.dtype == np.float32 and got.shape == (V,)
    np.testing.assert_allclose(got, 0.4 * terms, rtol=1e-6)                     # the model's own alpha
    np.testing.assert_allclose(forecast_bias(m, FIRST + 4, alpha=2.5), 2.5 * terms, rtol=1e-6)
    np.testing.assert_allclose(forecast_bias(m, FIRST + 4, alpha=0.0), 0.0)
    assert np.abs(terms).max() > 1e-3 and np.unique(np.round(terms, 5)).size > V // 2


def test_forecast_bias_of_context2_is_the_open_gate_magnitude():
    m = make("context2", 4)
    terms = m.year_terms([FIRST + 3])[0].detach()                               # [V, 2]: (s, m)
    got = forecast_bias(m, FIRST + 3, alpha=1.5)
    np.testing.assert_allclose(got, 1.5 * terms[:, 1].numpy(), rtol=1e-5)
    assert np.abs(got - 1.5 * terms[:, 0].numpy()).max() > 1e-3


def test_forecast_bias_is_zero_outside_s_and_for_models_without_a_bias():
    S = torch.tensor([1, 4, 9, 20, 33])
    m = FutureLM.from_lm(tiny_gpt2(V), variant="freq-nolstm", token_ids=S, window=3, lstm_hidden=8)
    m.set_history(np.random.default_rng(0).standard_normal((Y, len(S))).astype("float32"), FIRST)
    for p in m.bias.parameters():
        torch.nn.init.normal_(p, std=0.3)
    got = forecast_bias(m, FIRST + 2)
    out = np.setdiff1d(np.arange(V), S.numpy())
    assert got.shape == (V,) and not got[out].any()
    np.testing.assert_allclose(got[S.numpy()], m.year_terms([FIRST + 2])[0].detach().numpy(), rtol=1e-6)
    assert np.abs(got[S.numpy()]).min() > 0
    base = make("baseline")
    for plain in (base, tiny_gpt2(V)):                # a FutureLM without a bias, and a plain LM (n_embd 16 != V)
        z = forecast_bias(plain, FIRST + 2)
        assert z.shape == (V,) and z.dtype == np.float32 and not z.any()


# ------------------------------------------------------------------------------------------------
# injected_trend
# ------------------------------------------------------------------------------------------------


def _freq_model_on_a_table(variant="freq"):
    """A frequency model whose history is a count table's features; its normalisation was fitted on an
    earlier history (as after training), so it is not the current history's."""
    rng = np.random.default_rng(3)
    table = FrequencyTable(list(range(FIRST, FIRST + Y)), rng.integers(0, 40, (Y, V)).astype(float), "fp")
    m = make(variant)
    m.set_history(table.features() * 0.5 + 1.0, FIRST)
    m.set_history(table.features(), FIRST, refit_norm=False)
    return m, table


@pytest.mark.parametrize("variant", ["freq", "freq-nolstm"])
def test_injected_trend_installs_the_rising_history_and_restores_everything(variant):
    m, table = _freq_model_on_a_table(variant)
    ids = [3, 7]
    hist, mean, std = m.history.clone(), m.feature_mean.clone(), m.feature_std.clone()
    before = forecast_bias(m, FIRST + Y)
    with injected_trend(m, table, ids) as inside:                       # defaults: last=3, factor=3
        assert inside is m
        want = torch.as_tensor(table.with_trend(ids, last=3, factor=3.0).features())[..., None]
        torch.testing.assert_close(m.history, want)
        torch.testing.assert_close(m.feature_mean, mean)               # the learned scale is kept
        torch.testing.assert_close(m.feature_std, std)
        during = forecast_bias(m, FIRST + Y)
    assert np.abs(during[ids] - before[ids]).min() > 1e-4
    torch.testing.assert_close(m.history, hist)
    torch.testing.assert_close(m.feature_mean, mean)
    torch.testing.assert_close(m.feature_std, std)
    np.testing.assert_array_equal(forecast_bias(m, FIRST + Y), before)
    with injected_trend(m, table, ids, last=2, factor=5.0):
        want = torch.as_tensor(table.with_trend(ids, last=2, factor=5.0).features())[..., None]
        torch.testing.assert_close(m.history, want)


def test_injected_trend_restores_the_history_when_the_block_raises():
    m, table = _freq_model_on_a_table()
    hist, mean = m.history.clone(), m.feature_mean.clone()
    before = forecast_bias(m, FIRST + Y)
    with pytest.raises(RuntimeError, match="inside"):
        with injected_trend(m, table, [5], factor=10.0):
            assert not torch.equal(m.history, hist)
            raise RuntimeError("inside")
    torch.testing.assert_close(m.history, hist)
    torch.testing.assert_close(m.feature_mean, mean)
    np.testing.assert_array_equal(forecast_bias(m, FIRST + Y), before)


def test_injected_trend_refuses_what_it_cannot_inject():
    m, table = _freq_model_on_a_table()
    for other in (make("baseline"), make("context2", 4), tiny_gpt2(V)):
        with pytest.raises(DataError, match="only frequency models"):
            with injected_trend(other, table, [3]):
                pass
    shifted = FrequencyTable(list(range(FIRST + 1, FIRST + Y + 1)), table.counts, "fp")
    with pytest.raises(DataError, match=f"table years {FIRST + 1}-{FIRST + Y} differ from the model's history "
                                        f"{FIRST}-{FIRST + Y - 1}"):
        with injected_trend(m, shifted, [3]):
            pass
    S = torch.tensor([1, 4, 9])
    sub = FutureLM.from_lm(tiny_gpt2(V), variant="freq", token_ids=S, window=3, lstm_hidden=8)
    sub.set_history(table.features()[:, S.numpy()], FIRST)
    with pytest.raises(DataError, match=r"token_ids=\[2, 5\]: none of these tokens occurs in the history"):
        with injected_trend(sub, table, [2, 5]):
            pass
    with injected_trend(sub, table, [2, 4]):                           # one of them is in S: accepted
        want = table.with_trend([2, 4], last=3, factor=3.0).features()[:, S.numpy()]
        np.testing.assert_allclose(sub.history[..., 0].numpy(), want, rtol=1e-6)


# ------------------------------------------------------------------------------------------------
# expected_token_probs and states_token_probs
# ------------------------------------------------------------------------------------------------


def test_expected_token_probs_is_the_mean_next_token_distribution(world):
    tok = world.tok
    texts = texts_of(world, DEV)[:5] + ["helps"]          # different lengths in one batch, and a one-token text
    for variant in ("context2", "freq"):
        m = future(world, variant)
        p = expected_token_probs(m, tok, texts, TEST)
        assert p.shape == (len(tok),) and p.sum() == pytest.approx(1.0, abs=1e-5)
        np.testing.assert_allclose(p, hand_mean_probs(m, tok, texts, TEST, 128), rtol=1e-4, atol=1e-7)
        np.testing.assert_allclose(expected_token_probs(m, tok, texts, TEST, batch_size=2), p, rtol=1e-4, atol=1e-7)
    half = expected_token_probs(m, tok, texts, TEST, alpha=0.5)                      # the freq model's bias halved
    np.testing.assert_allclose(half, hand_mean_probs(m, tok, texts, TEST, 128, alpha=0.5), rtol=1e-4, atol=1e-7)
    assert np.abs(half - p).max() > 1e-5


def test_expected_token_probs_without_texts_is_a_clear_error(world):
    with pytest.raises(DataError, match="texts: nothing to condition on"):
        expected_token_probs(future(world, "freq"), world.tok, [], TEST)
    with pytest.raises(DataError, match="texts: nothing to condition on"):
        expected_token_probs(future(world, "freq"), world.tok, iter(()), TEST)


def test_expected_token_probs_cuts_long_texts_into_windows_of_128_tokens(world):
    tok = world.tok
    long = " ".join(texts_of(world, 2012))
    assert len(tok.tokenize(long)) > 200
    m = future(world, "freq")
    p = expected_token_probs(m, tok, [long, "we study parsing"], TEST)
    np.testing.assert_allclose(p, hand_mean_probs(m, tok, [long, "we study parsing"], TEST, 128), rtol=1e-4, atol=1e-7)
    other = hand_mean_probs(m, tok, [long, "we study parsing"], TEST, 129)
    assert np.abs(p - other).max() > 1e-5                  # the window length shows in the result


def test_expected_token_probs_of_models_without_a_bias_needs_no_year(world):
    tok = world.tok
    texts = texts_of(world, DEV)[:3]
    plain = expected_token_probs(world.lm, tok, texts, None)
    np.testing.assert_allclose(plain, hand_mean_probs(world.lm, tok, texts, None, 128), rtol=1e-4, atol=1e-7)
    untrained = future(world, "baseline", offset=False)
    np.testing.assert_allclose(expected_token_probs(untrained, tok, texts, None), plain, rtol=1e-5, atol=1e-8)
    base = future(world, "baseline")
    np.testing.assert_allclose(expected_token_probs(base, tok, texts, None),
                               hand_mean_probs(base, tok, texts, None, 128), rtol=1e-4, atol=1e-7)


@pytest.mark.parametrize("variant", ["freq", "context2", "baseline"])
def test_states_token_probs_equals_the_full_forward_over_the_same_documents(world, variant):
    m = future(world, variant)
    fitted = facade(world)
    got = states_token_probs(fitted, m, world.rows[DEV][:4], TEST)
    want = hand_mean_probs(m, world.tok, texts_of(world, DEV)[:4], TEST, 512)
    assert got.shape == (len(world.tok),) and got.sum() == pytest.approx(1.0, abs=1e-5)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-7)
    np.testing.assert_allclose(states_token_probs(fitted, m, world.rows[DEV][:4], TEST, chunk=7), got,
                               rtol=1e-5, atol=1e-8)


def test_states_token_probs_edges_one_position_none_and_no_year_without_a_bias(world):
    h = world.states.hidden[:5]
    fitted = SimpleNamespace(terms_=SimpleNamespace(positions_of_docs=lambda docs: np.asarray(docs, dtype=np.int64),
                                                    states=SimpleNamespace(hidden=h)))
    m = future(world, "freq")
    head = world.lm.get_output_embeddings()
    with torch.no_grad():
        one = torch.softmax(head(h[2:3]) + m.full_offset(torch.tensor([TEST]), h[2:3, None])[:, 0], -1)[0]
    np.testing.assert_allclose(states_token_probs(fitted, m, [2], TEST), one.numpy(), rtol=1e-5, atol=1e-8)
    none = states_token_probs(fitted, m, [], TEST)
    assert none.shape == (len(world.tok),) and not none.any()
    base = future(world, "baseline")                                   # no bias: no year needed
    with torch.no_grad():
        want = torch.softmax(head(h) + base.full_offset(), -1).mean(0)
    np.testing.assert_allclose(states_token_probs(fitted, base, [0, 1, 2, 3, 4], None), want.numpy(),
                               rtol=1e-5, atol=1e-8)


# ------------------------------------------------------------------------------------------------
# generated_states and generated_word_probs
# ------------------------------------------------------------------------------------------------


def _direct_sums(model, tok, texts, year, cols):
    """Sum over every predicting position of each text (from the end-of-text start) of the full forward's
    next-token probability of ``cols``."""
    total = torch.zeros(len(cols), dtype=torch.float64)
    for t in texts:
        ids = [tok.eos_token_id] + tok.convert_tokens_to_ids(tok.tokenize(t))
        if len(ids) < 2:
            continue
        kw = {"years": [year]} if model.bias is not None else {}
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([ids]), **kw).logits[0, :-1]
        total += torch.softmax(logits.double(), -1)[:, cols].sum(0)
    return total.numpy()


@pytest.mark.parametrize("variant,kw", [("freq", {}), ("context2", {}), ("freq", {"adapter_rank": 2}),
                                        ("baseline", {})])
def test_generated_word_probs_equals_a_direct_softmax_sum(world, variant, kw):
    tok = world.tok
    m = future(world, variant, **kw)
    one = words_with(tok, 1)[0]
    texts = [texts_of(world, 2013)[0], " " + one, "", "we study", texts_of(world, 2013)[1][:40]]
    assert len(tok.tokenize(" " + one)) == 1
    hidden = generated_states(m, tok, texts, batch_size=2)
    n_pos = sum(len(tok.tokenize(t)) for t in texts)                       # one position per token (BOS first)
    assert hidden.shape == (n_pos, world.lm.config.n_embd)
    torch.testing.assert_close(generated_states(m, tok, texts), hidden, rtol=1e-5, atol=1e-6)
    cols = [int(world.S[3]), int(world.S[-2]), word_token(tok, one), tok.eos_token_id]
    year = None if m.bias is None else TEST
    got = generated_word_probs(m, hidden, year, cols)
    assert list(got) == cols
    np.testing.assert_allclose([got[c] for c in cols], _direct_sums(m, tok, texts, year, cols), rtol=1e-4)
    chunked = generated_word_probs(m, hidden, year, cols, chunk=3)
    np.testing.assert_allclose([chunked[c] for c in cols], [got[c] for c in cols], rtol=1e-5)


def test_generated_states_of_empty_texts_is_an_empty_table(world):
    m = future(world, "freq")
    h = generated_states(m, world.tok, ["", ""])
    assert h.shape == (0, world.lm.config.n_embd)
    assert generated_word_probs(m, h, TEST, [5, 6]) == {5: 0.0, 6: 0.0}


