"""SemanticChangeRanker passes the estimator contract (tempo_analysis.testing.check_estimator) with a tiny
random BERT saved as a local encoder, a few sentences in two periods and one short post-training epoch."""
from __future__ import annotations

import pandas as pd
import pytest

from tempo_analysis.data import PeriodCorpus
from tempo_analysis.data.change import ChangeData
from tempo_analysis.encoders import tiny_encoder
from tempo_analysis.semantic_change.config import PostTrainConfig, RankConfig
from tempo_analysis.semantic_change.estimator import SemanticChangeRanker
from tempo_analysis.testing import check_estimator

OLD = ["the cell was small and dark", "a plane of the wall", "the tip of the pen", "a cell in the body",
       "she drew a plane figure", "the tip of the hill"]
NEW = ["my cell phone rang", "the plane landed late", "leave a tip for the waiter", "call my cell now",
       "a plane took off", "the tip was generous"]


def tiny_change_data() -> ChangeData:
    corpus = PeriodCorpus.from_frame(pd.DataFrame({"period": ["old"] * len(OLD) + ["new"] * len(NEW),
                                                   "text": OLD + NEW}), order=["old", "new"])
    truth = pd.DataFrame({"word": ["cell", "plane", "tip"], "graded": [0.8, 0.5, 0.2]})
    return ChangeData("tiny", corpus, ["cell", "plane", "tip"], truth)


@pytest.fixture(scope="module")
def tiny_path(tmp_path_factory):
    model, tok = tiny_encoder(hidden=32, layers=2, heads=2, seed=0)
    d = tmp_path_factory.mktemp("tiny_bert")
    model.save_pretrained(d)
    tok.save_pretrained(d)
    return str(d)


def test_semantic_change_ranker_passes_the_estimator_contract(tiny_path):
    data = tiny_change_data()
    tiny = RankConfig(encoder=tiny_path, layers=2, samples=3, max_length=32, precision="fp32",
                      train=PostTrainConfig(head_steps=1, epochs=1, batch_size=8, general_sentences=0))

    def make(**overrides):
        return SemanticChangeRanker(tiny, **overrides)

    est = check_estimator(make, data,
                          outputs=lambda est: {"scores": est.rescore(), "prt": est.rescore(scorer="prt", layers=[1]),
                                               "metrics": est.evaluate()},
                          figures=lambda est: [est.visualize_ranking(), est.visualize_scores(highlight="cell"),
                                               est.visualize_usage_map("cell", method="pca"),
                                               est.visualize_neighbours("cell", k=3)],
                          bad_override={"samples": 0})
    assert est.config_.samples == 3 and est.config_.encoder == tiny_path
    assert est.kind == "semantic-change-ranker" and est.model_.train_report
    assert sorted(est.ranking_) == ["cell", "plane", "tip"] and "spearman" in est.metrics_
