"""Fixtures shared by the semantic change tests."""

import pytest

from tempo_analysis.encoders import tiny_encoder


@pytest.fixture(scope="session")
def tiny_path(tmp_path_factory):
    """A tiny random BERT (default tokenizer) saved as a local encoder folder."""
    model, tok = tiny_encoder(hidden=32, layers=2, heads=2, seed=0)
    d = tmp_path_factory.mktemp("tiny_bert")
    model.save_pretrained(d)
    tok.save_pretrained(d)
    return str(d)
