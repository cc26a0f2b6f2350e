"""Tokenizer + content rule, frequency table (smoothing, fill, window, vocab check, trend), context table."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest
import torch

from tempo_analysis.data.errors import DataError
from tempo_analysis.future_text.frequency import FrequencyTable
from tempo_analysis.future_text.tokenizer import (content_mask, content_words, is_content_word, train_bpe_tokenizer,
                                                  vocab_fingerprint)

from .conftest import toy_frame


@pytest.fixture(scope="module")
def frame():
    return toy_frame()


@pytest.fixture(scope="module")
def tok(frame):
    return train_bpe_tokenizer(frame["text"], vocab_size=300)


def test_content_rule():
    assert is_content_word(" transformer") and is_content_word("Parsing")
    assert is_content_word("model") and not is_content_word("mode")   # longer than 4 characters
    assert not is_content_word("about")           # stopword
    assert not is_content_word(" the") and not is_content_word("12345") and not is_content_word("-----")
    assert content_words("The Transformer helps parsing, about 12345 times!") == ["transformer", "helps", "parsing", "times"]


def test_tokenizer_is_small_bpe_with_special_token(tok):
    assert 256 < len(tok) <= 300
    assert tok.eos_token == tok.bos_token == tok.pad_token == "<|endoftext|>"
    text = "a transformer encoder helps."
    assert tok.decode(tok(text)["input_ids"]) == text
    mask = content_mask(tok)
    strings = [tok.decode([i]) for i in range(len(tok))]
    assert all(mask[i] == (is_content_word(s) and i not in tok.all_special_ids) for i, s in enumerate(strings))


def test_frequency_feature_smoothing_and_formula(frame, tok):
    t = FrequencyTable.from_texts(frame["text"].tolist(), frame["year"].tolist(), tok)
    assert t.years == list(range(2010, 2016)) and t.counts.shape == (6, len(tok))
    f = t.features()
    assert np.isfinite(f).all()                                   # zero counts are smoothed
    c, N, Vn = t.counts[2], t.counts[2].sum(), len(tok)
    np.testing.assert_allclose(f[2], np.log((c + 1) / (N + Vn)), rtol=1e-5)
    zero = np.where(c == 0)[0][0]
    assert f[2, zero] == pytest.approx(np.log(1 / (N + Vn)), rel=1e-5)
    # the rising word really rises in the counts
    tr = tok(" transformer", add_special_tokens=False)["input_ids"][0]
    assert t.relative()[-1, tr] > t.relative()[0, tr]


def test_missing_year_is_carried_forward_with_warning(frame, tok):
    part = frame[frame["year"] != 2012]
    with pytest.warns(UserWarning, match=r"2012.*carrying the previous year"):
        t = FrequencyTable.from_texts(part["text"].tolist(), part["year"].tolist(), tok, year_range=(2010, 2015))
    assert t.filled_years == [2012]
    np.testing.assert_array_equal(t.counts[2], t.counts[1])
    with pytest.raises(DataError, match="starts with year"):
        FrequencyTable.from_texts(part["text"].tolist(), part["year"].tolist(), tok, year_range=(2008, 2015))


def test_window_longer_than_years_and_vocab_mismatch(frame, tok):
    t = FrequencyTable.from_texts(frame["text"].tolist(), frame["year"].tolist(), tok)
    t.check_window(5)
    with pytest.raises(DataError, match="window=6 needs 7 years"):
        t.check_window(6)
    t.check_tokenizer(tok)
    other = train_bpe_tokenizer(frame["text"], vocab_size=320)
    assert vocab_fingerprint(other) != t.fingerprint
    with pytest.raises(DataError, match="differs from the frequency table"):
        t.check_tokenizer(other)


def test_window_must_be_a_positive_integer(frame, tok):
    t = FrequencyTable.from_texts(frame["text"].tolist(), frame["year"].tolist(), tok)
    t.check_window(1)                                            # one previous year is a window
    for bad in (0, -1, 2.0, "3"):
        with pytest.raises(DataError, match="positive integer"):
            t.check_window(bad)


def test_a_table_counted_by_another_vocabulary_of_the_same_size_is_refused(frame, tok):
    t = FrequencyTable.from_texts(frame["text"].tolist(), frame["year"].tolist(), tok)
    other = dataclasses.replace(t, fingerprint="0" * 16)         # same size, other token -> id map
    assert other.vocab_size == len(tok)
    with pytest.raises(DataError, match="differs from the frequency table"):
        other.check_tokenizer(tok)


def test_relative_frequencies_are_shares_of_each_years_tokens(frame, tok):
    t = FrequencyTable.from_texts(frame["text"].tolist(), frame["year"].tolist(), tok)
    r = t.relative()
    np.testing.assert_allclose(r.sum(axis=1), 1.0)
    np.testing.assert_allclose(r[3], t.counts[3] / t.counts[3].sum())


class _SpecialsTokenizer:
    """Word ids 1..n, with id 0 added at both ends when special tokens are asked for."""

    vocab = {"[S]": 0, "alpha": 1, "beta": 2, "gamma": 3}

    def __len__(self):
        return len(self.vocab)

    def get_vocab(self):
        return dict(self.vocab)

    def __call__(self, texts, add_special_tokens=True):
        ids = [[self.vocab[w] for w in text.split()] for text in texts]
        return {"input_ids": [[0, *row, 0] if add_special_tokens else row for row in ids]}


def test_counts_are_the_texts_own_tokens_without_special_tokens():
    t = FrequencyTable.from_texts(["alpha beta", "beta gamma gamma", "alpha"], [2001, 2001, 2002], _SpecialsTokenizer())
    np.testing.assert_array_equal(t.counts, [[0, 1, 2, 2], [0, 1, 0, 0]])


def test_trend_injection_and_save_load(frame, tok, tmp_path):
    t = FrequencyTable.from_texts(frame["text"].tolist(), frame["year"].tolist(), tok)
    k = tok(" kernel", add_special_tokens=False)["input_ids"][0]
    up = t.with_trend([k], last=3, factor=8.0)
    assert (up.counts[-3:, k] > t.counts[-3:, k]).all() and (up.counts[:-3] == t.counts[:-3]).all()
    assert up.counts[-1, k] == pytest.approx(max(t.counts[-1, k], 1) * 8.0)
    absent = int(np.flatnonzero(t.counts.sum(0) == 0)[0])       # a token never seen: factor 1 leaves it at 0
    np.testing.assert_array_equal(t.with_trend([k, absent], last=3, factor=1.0).counts, t.counts)
    t.save(tmp_path / "f.safetensors")
    back = FrequencyTable.load(tmp_path / "f.safetensors")
    assert back.years == t.years and back.fingerprint == t.fingerprint
    np.testing.assert_array_equal(back.counts, t.counts)


def test_trend_rises_over_exactly_the_last_years_and_checks_its_inputs(frame, tok):
    t = FrequencyTable.from_texts(frame["text"].tolist(), frame["year"].tolist(), tok)
    Y, V = len(t.years), t.vocab_size
    absent = int(np.flatnonzero(t.counts.sum(0) == 0)[0])       # zero counts: any change is the trend's
    up = t.with_trend([absent], last=2, factor=4.0)
    np.testing.assert_allclose(up.counts[:, absent], [0] * (Y - 2) + [2.0, 4.0])   # 4^(1/2), 4^(2/2)
    assert (up.counts[:, :absent] == t.counts[:, :absent]).all()
    assert t.with_trend([absent], last=Y).counts[0, absent] > 0   # the whole history
    np.testing.assert_allclose(t.with_trend([absent], last=1, factor=5.0).counts[:, absent], [0] * (Y - 1) + [5.0])
    for last in (0, Y + 1):
        with pytest.raises(DataError, match=f"last={last}"):
            t.with_trend([absent], last=last)
    t.with_trend([0, V - 1])                                     # both ends of the vocabulary
    for ids in ([], [-1], [-1, 3], [V], [3, V]):
        with pytest.raises(DataError, match="token_ids"):
            t.with_trend(ids)


def test_truncate_keeps_the_years_up_to_and_including_the_last_one(frame, tok):
    part = frame[frame["year"] != 2012]
    with pytest.warns(UserWarning, match="2012"):
        t = FrequencyTable.from_texts(part["text"].tolist(), part["year"].tolist(), tok, year_range=(2010, 2015))
    cut = t.truncate(2013)
    assert cut.years == [2010, 2011, 2012, 2013] and cut.filled_years == [2012]
    np.testing.assert_array_equal(cut.counts, t.counts[:4])
    assert t.truncate(2011).filled_years == [] and t.truncate(2012).filled_years == [2012]
    assert t.truncate(2015).years == t.years
    cut.counts[0, 0] += 1                                        # a copy: the full table is untouched
    assert cut.counts[0, 0] != t.counts[0, 0]
    with pytest.raises(DataError, match="year 2016 is not in the frequency table"):
        t.truncate(2016)


def test_context_table_alignment_and_fallbacks(tok):
    from tempo_analysis.encoders import tiny_encoder
    from tempo_analysis.future_text.context import _static_embeddings, contextual_table

    enc, etok = tiny_encoder(hidden=16, layers=1, heads=2)
    texts = ["a transformer encoder helps.", "the model learns representations."]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = contextual_table(texts, [2010, 2012], tok, (enc, etok), year_range=(2010, 2012))
    assert table.emb.shape == (3, len(tok), 16) and table.filled_years == [2011]
    helps = tok(" helps", add_special_tokens=False)["input_ids"]
    assert len(helps) == 1 and table.counts[0, helps[0]] == 1
    # value: the LM token " helps" overlaps exactly the encoder piece "helps" in the same sentence
    e = etok(texts[0], return_tensors="pt", return_offsets_mapping=True)
    off = e.pop("offset_mapping")[0].tolist()
    with torch.no_grad():
        h = enc(**e).last_hidden_state[0]
    pieces = [i for i, (s, t_) in enumerate(off) if texts[0][s:t_] == "helps"]
    np.testing.assert_allclose(table.emb[0, helps[0]], h[pieces].mean(0).numpy(), atol=1e-5)
    # unseen in 2011 (no documents) and 2012 -> carried forward from 2010
    np.testing.assert_allclose(table.emb[2, helps[0]], table.emb[0, helps[0]])
    # never seen -> the context-free (static) embedding of the token's text
    never = tok(" kernel", add_special_tokens=False)["input_ids"][0]
    static = _static_embeddings(enc, etok, [tok.decode([never])])[0].numpy()
    np.testing.assert_allclose(table.emb[1, never], static, atol=1e-5)


def test_typo_years_are_rejected_unless_the_range_is_widened(tok):
    import pandas as pd

    from tempo_analysis.data.yearly import yearly_frame

    df = pd.DataFrame({"year": [2005, 20061, 2007], "text": ["a b", "c d", "e f"]})
    with pytest.raises(DataError, match=r"rows \[1\].*20061.*widen"):
        yearly_frame(df)
    assert yearly_frame(df, year_range=(0, 30000))["year"].tolist() == [2005, 2007, 20061]
    with pytest.raises(DataError, match="20061"):
        FrequencyTable.from_texts(["a", "b"], [2005, 20061], tok)
    assert FrequencyTable.from_texts(["a", "b"], [-5, 3], tok, allowed_years=(-10, 10)).years[0] == -5


def test_non_contiguous_years_are_filled_forward_with_a_warning(tok):
    """Years 2001, 2003, 2010: the table covers 2001-2010; each gap year copies the year before it."""
    texts = ["a transformer encoder helps", "a kernel method helps", "the transformer model learns"]
    with pytest.warns(UserWarning, match=r"no documents for year\(s\) \[2002, 2004, 2005"):
        t = FrequencyTable.from_texts(texts, [2001, 2003, 2010], tok)
    assert t.years == list(range(2001, 2011)) and t.filled_years == [2002, 2004, 2005, 2006, 2007, 2008, 2009]
    np.testing.assert_array_equal(t.counts[1], t.counts[0])              # 2002 <- 2001
    np.testing.assert_array_equal(t.counts[8], t.counts[2])              # 2009 <- 2003 (carried through)
    assert not np.array_equal(t.counts[9], t.counts[8])                  # 2010 has its own documents


def test_a_table_restricted_to_some_tokens_saves_and_loads(tmp_path):
    """A table restricted to a token subset holds a strided view of the counts: saving must still work
    (safetensors stores contiguous tensors only)."""
    full = np.arange(12, dtype=np.float64).reshape(2, 6)
    table = FrequencyTable([2000, 2001], full[:, ::2], "fp", [])
    assert not table.counts.flags["C_CONTIGUOUS"]
    table.save(tmp_path / "f.safetensors")
    back = FrequencyTable.load(tmp_path / "f.safetensors")
    np.testing.assert_array_equal(back.counts, full[:, ::2])
    assert back.years == [2000, 2001] and back.fingerprint == "fp"


def test_the_year_range_is_inclusive_and_errors_name_the_first_five_rows():
    from tempo_analysis.data.yearly import YEAR_RANGE, check_year_range

    assert YEAR_RANGE == (1000, 2100)
    check_year_range([1000, 2100])                                # both ends are allowed
    for year in (999, 2101):
        with pytest.raises(DataError, match=rf"rows \[1\]: year\(s\) \[{year}\] are outside 1000-2100"):
            check_year_range([2000, year])
    bad = [1, 2, 3, 4, 5, 6, 7]
    with pytest.raises(DataError, match=r"at rows \[0, 1, 2, 3, 4\]: year\(s\) \[1, 2, 3, 4, 5\] are outside"):
        check_year_range(bad)
    with pytest.raises(DataError, match=r"at rows \[10, 11, 12, 13, 14\]:"):
        check_year_range(bad, rows=list(range(10, 17)))           # the caller's row numbers
