"""TempoFormerClassifier passes the estimator contract (tempo_analysis.testing.check_estimator) with a tiny
random BERT, a window of 3 posts and one epoch on a few timelines."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tempo_analysis.data import Timelines
from tempo_analysis.encoders import tiny_encoder
from tempo_analysis.stream.estimator import TempoFormerClassifier
from tempo_analysis.testing import check_estimator


def tiny_timelines(n_timelines: int = 5, posts: int = 5, seed: int = 3) -> Timelines:
    rng = np.random.default_rng(seed)
    words = ["good", "bad", "news", "today", "really", "not", "happy", "sad", "again", "wow"]
    rows = []
    for k in range(n_timelines):
        t = 1.5e9 + 1e6 * k
        for i in range(posts):
            t += float(rng.choice([5.0, 90.0, 4000.0, 86400.0])) if i else 0.0
            rows.append(dict(timeline_id=f"tl{k}", post_id=f"tl{k}-{i}", timestamp=t,
                             text=" ".join(rng.choice(words, size=4)), label=("O", "IS")[int(rng.integers(2))]))
    return Timelines.from_frame(pd.DataFrame(rows), time_unit="s")


@pytest.fixture(scope="module")
def tiny():
    return tiny_encoder(hidden=32, layers=3, heads=2, seed=0)


def test_tempoformer_classifier_passes_the_estimator_contract(tiny):
    tl = tiny_timelines()
    train, dev = tl.subset(tl.timeline_ids[:4]), tl.subset(tl.timeline_ids[4:])
    post = dev.df["post_id"].iloc[3]

    def make(**overrides):
        return TempoFormerClassifier(**{**dict(encoder=tiny, window=3, epochs=1, batch_size=8, progress=False,
                                               device="cpu"), **overrides})

    est = check_estimator(make, (train, dev), fit=lambda est, d: est.fit(*d),
                          outputs=lambda est: est.predict_proba(dev),
                          figures=lambda est: [est.visualize_attention(dev, post), est.visualize_probabilities(dev),
                                               est.visualize_confusion(dev)],
                          bad_override={"window": 0})
    assert est.config_.window == 3 and est.label_names_ == ["IS", "O"]
    assert est.kind == "tempoformer-classifier"
