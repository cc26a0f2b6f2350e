"""A small byte-level BPE tokenizer trained on the corpus, and the content-token rule.

The default causal LM is a small GPT-2 trained from scratch, so its vocabulary is ours to choose:
the output layer (vocab x hidden) dominates CPU cost, so a few thousand tokens is the sweet spot.
The tokenizer is GPT-2's recipe (byte-level BPE, one special token ``<|endoftext|>`` used as BOS,
EOS and padding) trained by the ``tokenizers`` library; any HF tokenizer works in its place.

Content-token rule (content perplexity, content METEOR): a token is *content* when its decoded
text, stripped of whitespace and lower-cased, is longer than 4 characters, contains a letter, and
is not an English stopword (scikit-learn's 318-word ``ENGLISH_STOP_WORDS``). Word pieces count on
their own, as in the paper ("word pieces longer than 4 characters that are not stopwords").
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Iterable

import numpy as np
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast

SPECIAL = "<|endoftext|>"
MIN_CONTENT_CHARS = 5  # "longer than 4 characters"


def _stopwords() -> frozenset[str]:
    """English stopwords that need no download (scikit-learn ships them)."""
    return frozenset(ENGLISH_STOP_WORDS)


STOPWORDS = _stopwords()
_HAS_LETTER = re.compile(r"[^\W\d_]")


def is_content_word(piece: str) -> bool:
    """The content rule on one decoded piece or word (see the module docstring)."""
    w = piece.strip().lower()
    return len(w) >= MIN_CONTENT_CHARS and bool(_HAS_LETTER.search(w)) and w not in STOPWORDS


def content_words(text: str) -> list[str]:
    """Lower-cased content words of a text (whitespace/punctuation split), for content METEOR."""
    return [w for w in re.findall(r"[^\W_]+(?:[-'][^\W_]+)*", text.lower()) if is_content_word(w)]


def train_bpe_tokenizer(texts: Iterable[str], vocab_size: int = 2000, min_frequency: int = 2):
    """Train a GPT-2-style byte-level BPE on ``texts``; returns a ``PreTrainedTokenizerFast``.

    Deterministic for a given corpus (BPE merges break ties by pair order, no sampling).
    """
    if not isinstance(vocab_size, int) or vocab_size < 300:
        raise ValueError(f"vocab_size={vocab_size!r} is too small: byte-level BPE needs the 256 byte "
                         "symbols plus merges; use vocab_size >= 300 (a few thousand is typical)")
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=min_frequency, special_tokens=[SPECIAL],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    texts = [t for t in texts if isinstance(t, str) and t.strip()]
    if not texts:
        raise ValueError("train_bpe_tokenizer: texts is empty; give at least one non-empty document")
    tok.train_from_iterator(texts, trainer=trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token=SPECIAL, eos_token=SPECIAL,
                                   pad_token=SPECIAL, unk_token=None, model_max_length=1024)


def ensure_special_tokens(tokenizer):
    """Give a GPT-2-like tokenizer a pad token (= EOS) and a BOS (= EOS) when it lacks them."""
    if tokenizer.eos_token is None:
        raise ValueError("the tokenizer has no eos_token; causal-LM generation needs one. Fix: pass a "
                         "tokenizer with an end-of-text token (GPT-2 style) or train one with train_bpe_tokenizer")
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    if tokenizer.bos_token is None:
        tokenizer.bos_token = tokenizer.eos_token
    return tokenizer


def vocab_fingerprint(tokenizer) -> str:
    """sha256 of the token->id map: two tokenizers agree on ids iff their fingerprints match."""
    vocab = tokenizer.get_vocab()
    blob = json.dumps(sorted(vocab.items(), key=lambda kv: kv[1]), ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


def token_strings(tokenizer) -> list[str]:
    """Decoded text of every token id (byte-level pieces become readable, e.g. 'Ġneural' -> ' neural')."""
    n = len(tokenizer)
    return [tokenizer.decode([i], clean_up_tokenization_spaces=False) for i in range(n)]


def content_mask(tokenizer) -> np.ndarray:
    """Boolean [len(tokenizer)]: which token ids are content tokens (module docstring)."""
    special = set(tokenizer.all_special_ids)
    return np.array([(i not in special) and is_content_word(s) for i, s in enumerate(token_strings(tokenizer))])


def word_token_ids(tokenizer, word: str) -> list[int]:
    """Token ids that spell ``word`` in running text (with and without a leading space), first pieces."""
    ids = []
    for variant in (" " + word, word, " " + word.capitalize(), word.capitalize()):
        pieces = tokenizer(variant, add_special_tokens=False)["input_ids"]
        if pieces and pieces[0] not in ids:
            ids.append(pieces[0])
    return ids
