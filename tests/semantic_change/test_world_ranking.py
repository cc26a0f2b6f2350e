"""Lesson 02's headline at the notebook's settings and seed, on the committed world (world seed 0).

The usages carry their sense in their own words, so temporal attention ranks the planted change
(measured 0.812), and so does its time-blind control (0.810): on these usages the period adds little.
The probes read the same in both periods: there the same trained model ranks the change only through
its time input (measured 0.078, a weak signal), and with the time input broken it ranks nothing."""
import pytest

from tempo_analysis.resolve import load_change_data
from tempo_analysis.semantic_change import SemanticChangeRanker, notebook_config
from tempo_analysis.semantic_change.compare import headline_numbers, score_probes

BAR = 0.7            # temporal attention's Spearman on the usages (measured 0.879)
PROBE_BAR = 0.04     # its Spearman on the probes (measured 0.211); a time-blind reading gives 0


@pytest.mark.slow
def test_temporal_attention_ranks_the_world_and_reads_the_probes_only_through_time():
    data = load_change_data("world").data
    assert data.compared == ["old", "new"] and len(data.targets) >= 10
    probes = [u for u in data.probe_part().usages if u.word == data.targets[0]]
    assert {u.text for u in probes if u.period == "old"} == {u.text for u in probes if u.period == "new"}
    ranker = SemanticChangeRanker(notebook_config("temporal-attention")).fit(data)
    m = ranker.metrics_
    assert m["n"] == len(data.targets) and m["n_dropped"] == 0 and not ranker.missing_
    assert m["spearman"] >= BAR, (m, ranker.scores_.to_string())
    on_probes = score_probes({"temporal-attention": ranker}, data)
    numbers = headline_numbers({"temporal-attention": ranker}, on_probes)
    assert numbers["probe_spearman"] >= PROBE_BAR, numbers
    # the same trained model with its time input removed: every probe read as period "old"
    ranker.model_.time_blind = True
    broken = score_probes({"temporal-attention": ranker}, data)["temporal-attention"]
    b = broken.metrics_.get("spearman", float("nan"))
    assert not (b > 0.02), (numbers["probe_spearman"], b)
