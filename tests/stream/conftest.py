"""Tiny fixtures for the stream-classification tests (random 2-layer BERTs, a few timelines)."""

import numpy as np
import pandas as pd
import pytest
import torch
from transformers import BertConfig

from tempo_analysis.data import Timelines
from tempo_analysis.encoders import load_tokenizer


def tiny_bert_dict(layers: int = 3, hidden: int = 32, heads: int = 2, vocab: int = 30522) -> dict:
    """A random BERT config small enough for unit tests (dropout 0 so outputs are deterministic)."""
    return BertConfig(vocab_size=vocab, hidden_size=hidden, num_hidden_layers=layers,
                      num_attention_heads=heads, intermediate_size=2 * hidden,
                      max_position_embeddings=64, hidden_dropout_prob=0.0,
                      attention_probs_dropout_prob=0.0).to_dict()


@pytest.fixture(scope="session")
def tokenizer():
    return load_tokenizer("default")


def make_timelines(n_timelines: int = 3, n_posts=(4, 2, 6), seed: int = 0, start: float = 1.5e9,
                   labels=("no", "yes"), equal_times: bool = False) -> Timelines:
    """Small labelled timelines with irregular gaps; the first timeline starts at epoch 0."""
    rng = np.random.default_rng(seed)
    words = ["good", "bad", "news", "today", "really", "not", "happy", "sad", "again", "wow"]
    rows = []
    for k in range(n_timelines):
        t = 0.0 if k == 0 else start + 1e5 * k
        for i in range(n_posts[k % len(n_posts)]):
            if i and not equal_times:
                t += float(rng.choice([0.0, 5.0, 90.0, 4000.0, 86400.0]))
            text = " ".join(rng.choice(words, size=int(rng.integers(2, 9))))
            rows.append(dict(timeline_id=f"tl{k}", post_id=f"tl{k}-{i}", timestamp=t, text=text,
                             label=labels[int(rng.integers(len(labels)))]))
    return Timelines.from_frame(pd.DataFrame(rows), time_unit="s", min_posts=1)


@pytest.fixture()
def timelines():
    return make_timelines()


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


def timelines_csv(folder, n_timelines: int = 6, n_posts=(5, 4), labels=("no", "yes"), seed: int = 4):
    """`make_timelines` written as a posts CSV a user would give (`timestamp` in seconds); its path."""
    tl = make_timelines(n_timelines=n_timelines, n_posts=n_posts, labels=labels, seed=seed)
    df = tl.df.drop(columns=["seconds"]).copy()
    df["timestamp"] = tl.df["seconds"]
    csv = folder / "posts.csv"
    df.to_csv(csv, index=False)
    return csv
