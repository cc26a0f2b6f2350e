"""The planted world can only be ranked through time: temporal attention at the notebook's default settings
and seed (``semantic_change.config.notebook_config``), embedded MiniLM, post-training included, ranks the
words by their planted change, and the same trained model with its time input broken (every probe read
as the first period) cannot. The probes are the same sentences in both periods (data/README.md), so a
model that ignores time scores every word alike.

The bar holds at the notebook's seed. Over model seeds 0-4 temporal attention's Spearman runs from
-0.28 to 0.54 (the recorded seed study, semantic_change.study.seed_spread, shown in notebook 02): this test pins
the notebook's run, not a property of every seed. The broken-time half holds at every seed."""
import math

import pytest

from tempo_analysis.resolve import load_change_data
from tempo_analysis.semantic_change import SemanticChangeRanker, notebook_config
from tempo_analysis.semantic_change import preset

# measured at the notebook defaults: 0.516 for temporal attention (cue usages in the world, time_lr 1e-2, one epoch);
# with time broken the probes read identically in both periods and rank nothing (0)
BAR = 0.2          # temporal attention's Spearman at the notebook defaults must reach this
MARGIN = 0.2       # ... and beat the same model with its time input broken by this much


@pytest.mark.slow
def test_temporal_attention_ranks_the_world_and_broken_time_does_not():
    data = load_change_data("world").data
    assert data.compared == ["old", "new"] and len(data.targets) >= 10
    probes = [u for u in data.usages if u.word == data.targets[0]]
    assert {u.text for u in probes if u.period == "old"} == {u.text for u in probes if u.period == "new"}
    cfg = notebook_config("temporal-attention")
    assert cfg.seed == preset("notebook").seed and cfg.train is not None and cfg.train.epochs > 0
    ranker = SemanticChangeRanker(cfg).fit(data)
    m = ranker.metrics_
    assert m["n"] == len(data.targets) and m["n_dropped"] == 0 and not ranker.missing_
    assert m["spearman"] >= BAR, (m, ranker.scores_.to_string())
    assert math.isfinite(m["pearson"])
    gates = [l.attention.time_gate.abs().max().item() for l in ranker.model_.model.temporal.layers]
    assert max(gates) > 0
    # the same trained model, time input ignored: every probe read as period "old"
    ranker.model_.time_blind = True
    broken = SemanticChangeRanker(cfg).fit(data, model=ranker.model_)
    b = broken.metrics_.get("spearman", float("nan"))
    assert not (b > m["spearman"] - MARGIN), (m["spearman"], b)
