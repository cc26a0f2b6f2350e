"""Temporal attention ranks the planted world's words by their planted change: Spearman >= 0.8 at the
notebook's default settings and seed (``semantic_change.pipeline.notebook_config``), with the embedded
MiniLM, post-training included."""
import math

import pytest

from tempo_analysis.data.specs import load_change_data
from tempo_analysis.semantic_change import SemanticChangeRanker, notebook_config
from tempo_analysis.semantic_change.pipeline import NOTEBOOK_SEED


@pytest.mark.slow
def test_temporal_attention_spearman_on_planted_world():
    data = load_change_data("world")
    assert data.compared == ["old", "new"] and len(data.targets) >= 10
    cfg = notebook_config("temporal-attention")
    assert cfg.seed == NOTEBOOK_SEED and cfg.train is not None and cfg.train.epochs > 0
    ranker = SemanticChangeRanker(cfg).fit(data)
    m = ranker.metrics_
    assert m["n"] == len(data.targets) and m["n_dropped"] == 0 and not ranker.missing_
    assert m["spearman"] >= 0.8, (m, ranker.scores_.to_string())
    assert m["spearman_p"] < 1e-3 and math.isfinite(m["pearson"])
    # post-training really ran and the time gates opened
    assert ranker.model_.train_report["loss"]
    gates = [l.attention.time_gate.abs().max().item() for l in ranker.model_.model.temporal.layers]
    assert max(gates) > 0
