"""The tiny world shared by the what-if tests: a tokenizer trained on the toy corpus, its frequency table, one
frozen tiny LM and its cached states, FutureLM models around it, and a stand-in for a fitted facade.

The tokenizer has no BOS token (the end-of-text token starts every document) and, like many LM
tokenizers, adds a start token ``<s>`` when asked for special tokens: every function under test must encode
running text without it.
"""

from __future__ import annotations

import re
from types import SimpleNamespace

import numpy as np
import torch

from tempo_analysis.future_text.adapt import PositionTerms
from tempo_analysis.future_text.frequency import FrequencyTable
from tempo_analysis.future_text.metrics import document_windows
from tempo_analysis.future_text.model import FutureLM
from tempo_analysis.future_text.states import StateCache
from tempo_analysis.future_text.tokenizer import SPECIAL, train_bpe_tokenizer

from .conftest import tiny_gpt2, toy_frame

HISTORY = (2010, 2014)          # the toy corpus's history years; 2014 is the dev year, 2015 the test year
DEV, TEST = 2014, 2015


# ------------------------------------------------------------------------------------------------
# shared tiny world: tokenizer, frequency table, one frozen LM and its cached states
# ------------------------------------------------------------------------------------------------


def _tokenizer(texts):
    """Byte-level BPE on ``texts``; no BOS; ``<s>`` is prepended only when special tokens are asked for."""
    from tokenizers import processors
    from transformers import PreTrainedTokenizerFast

    backend = train_bpe_tokenizer(texts, 360).backend_tokenizer
    backend.add_special_tokens(["<s>"])
    start = backend.token_to_id("<s>")
    backend.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", start)])
    tok = PreTrainedTokenizerFast(tokenizer_object=backend, eos_token=SPECIAL, pad_token=SPECIAL, unk_token=None)
    tok.start_id = start
    return tok


def build_world() -> SimpleNamespace:
    """Tokenizer, frequency table, frozen LM and cached states (the ``world`` fixture in conftest.py)."""
    torch.set_num_threads(1)
    frame = toy_frame()
    tok = _tokenizer(frame["text"])
    assert tok.bos_token_id is None and tok(" a")["input_ids"][0] == tok.start_id   # the set-up the tests rely on
    past = frame[frame["year"] <= HISTORY[1]]
    table = FrequencyTable.from_texts(past["text"].tolist(), past["year"].tolist(), tok)
    S = np.union1d(np.flatnonzero(table.counts.sum(0) > 0), [tok.eos_token_id]).astype(np.int64)
    assert len(S) < len(tok)                               # some tokens lie outside S
    lm = tiny_gpt2(len(tok), seed=0, n_positions=256).eval()
    eos = tok.eos_token_id
    states = StateCache.build(lm, tok, frame["text"].tolist(), frame["year"].tolist(), bos=eos, eos=eos, cache=False)
    rows = {y: np.flatnonzero(frame["year"].to_numpy() == y) for y in sorted(set(frame["year"]))}
    return SimpleNamespace(frame=frame, tok=tok, table=table, S=S, lm=lm, states=states, rows=rows)


def future(w, variant="freq", seed=0, offset=True, **kw):
    """A FutureLM around the world's frozen LM, with non-zero bias weights (and offset) and a history."""
    fdim = 4 if variant.startswith("context") else 1
    torch.manual_seed(seed)
    m = FutureLM.from_lm(w.lm, variant=variant, token_ids=w.S, window=3, feature_dim=fdim, lstm_hidden=8, **kw)
    if m.bias is not None:
        if fdim == 1:
            m.set_history(w.table.features()[:, w.S], HISTORY[0])
        else:
            rng = np.random.default_rng(seed)
            m.set_history(rng.standard_normal((len(w.table.years), len(w.S), fdim)).astype("float32"), HISTORY[0])
        for p in m.bias.parameters():
            torch.nn.init.normal_(p, std=0.3)
    if m.adapter is not None:
        torch.nn.init.normal_(m.adapter.up.weight, std=0.5)
    if offset:
        with torch.no_grad():
            m.offset.normal_(std=0.5)
    return m.eval()


def facade(w, models=None, gen=None):
    """A stand-in for a fitted FutureTextModel with exactly what whatif.py reads from one."""
    models = models or {}
    return SimpleNamespace(tokenizer_=w.tok, freq_table_=w.table, frame_=w.frame, test_year_=TEST, dev_year_=DEV,
                           _frame_rows=w.rows, terms_=PositionTerms(w.states, None, None),
                           models_=models, _check_fitted=lambda: None,
                           generation_settings=lambda: gen)


def texts_of(w, year):
    return w.frame.loc[w.frame["year"] == year, "text"].tolist()


def pieces_of(tok, word):
    """The tokens of ``" word"`` from the tokenizer's own ``tokenize`` (no special tokens)."""
    return tok.tokenize(" " + word)


def words_with(tok, n_pieces):
    """Words of the toy corpus the tokenizer cuts into exactly ``n_pieces`` tokens."""
    vocab = sorted({x for t in toy_frame()["text"] for x in re.findall(r"[a-z]+", t)})
    return [x for x in vocab if len(pieces_of(tok, x)) == n_pieces]


def hand_mean_probs(model, tok, texts, year, block_size, alpha=None):
    """The mean next-token distribution, one window at a time through the full forward (no batching)."""
    eos = tok.eos_token_id
    total, count = torch.zeros(len(tok), dtype=torch.float64), 0
    for t in texts:
        for win in document_windows(tok.convert_tokens_to_ids(tok.tokenize(t)), eos, eos, block_size):
            biased = isinstance(model, FutureLM) and model.bias is not None
            kw = {"years": [year], "alpha": alpha} if biased else {}
            with torch.no_grad():
                logits = model(input_ids=torch.tensor([win]), **kw).logits[0, :-1]
            total += torch.softmax(logits.double(), -1).sum(0)
            count += len(win) - 1
    return (total / count).numpy()


