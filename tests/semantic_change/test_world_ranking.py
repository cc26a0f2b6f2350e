"""Temporal attention ranks the planted world's words by their planted change: Spearman >= 0.8 at the
notebook's default settings and seed (``semantic_change.defaults.notebook_config``), with the embedded
MiniLM, post-training included."""
import math

import pytest

from tempo_analysis.semantic_change import load_change_data, run_rank
from tempo_analysis.semantic_change.defaults import NOTEBOOK_SEED, notebook_config


@pytest.mark.slow
def test_temporal_attention_spearman_on_planted_world():
    data = load_change_data("world")
    assert data.compared == ["old", "new"] and len(data.targets) >= 10
    cfg = notebook_config("temporal-attention")
    assert cfg.seed == NOTEBOOK_SEED and cfg.train is not None and cfg.train.epochs > 0
    result = run_rank(data, cfg)
    m = result.metrics
    assert m["n"] == len(data.targets) and m["n_dropped"] == 0 and not result.missing
    assert m["spearman"] >= 0.8, (m, result.scores.to_string())
    assert m["spearman_p"] < 1e-3 and math.isfinite(m["pearson"])
    # post-training really ran and the time gates opened
    assert result.model.train_report["loss"]
    gates = [l.attention.time_gate.abs().max().item() for l in result.model.model.temporal.layers]
    assert max(gates) > 0
