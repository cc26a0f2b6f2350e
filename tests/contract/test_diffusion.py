"""DiffusionMapper passes the estimator contract (``tempo_analysis.testing.check_estimator``) on a
tiny configuration: a two-layer random BERT with an MLM head, a small planted world, two training
steps per variant and two variants (DCWE and its time-blind control, CWE)."""
from __future__ import annotations

import pytest
import torch

from tempo_analysis.diffusion.config import DiffusionTrainConfig
from tempo_analysis.diffusion.estimator import DiffusionMapper
from tempo_analysis.encoders import tiny_encoder
from tempo_analysis.testing import check_estimator
from tempo_analysis.world import SocialWorldConfig, generate_social

SMALL = SocialWorldConfig(n_units=12, n_communities=2, n_slices=3, n_changing=2, n_stable=1, docs_per_word=2,
                          speed=2, n_seeds=1, seed=0, paired_layout="all")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> DiffusionTrainConfig:
    d = tmp_path_factory.mktemp("tiny_mlm")
    enc, tok = tiny_encoder(head="mlm", seed=0)
    enc.save_pretrained(d)
    tok.save_pretrained(d)
    return DiffusionTrainConfig(encoder=str(d), variants=("dcwe", "cwe"), epochs=1, max_steps=2, head_warmup_steps=1,
                                node2vec=dict(dim=8, num_walks=2, walk_length=10), social_dim=8, gat_heads=2,
                                batch_size=8, device="cpu", progress=False)


def outputs(est: DiffusionMapper) -> dict:
    """What the fitted mapper predicts: held-out perplexities and the map read from its predictions."""
    return {"perplexity": est.held_out_perplexity(),
            "map": est.analyze_predictions("cloud", "server").rhat[["rank", "anchor_prob"]]}


def test_diffusion_mapper_passes_the_estimator_contract(tiny):
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        corpus, truth = generate_social(SMALL)
        # networkx keeps its `nodes` and `edges` views in the graph's __dict__ from their first use
        # (functools.cached_property): made here, so that the input snapshot compares data only
        corpus.graph.nodes, corpus.graph.edges
        est = check_estimator(lambda **kw: DiffusionMapper(tiny, **kw), corpus, outputs=outputs,
                              fit=lambda e, data: e.fit(data, truth),
                              figures=lambda e: [e.visualize_perplexity(),
                                                 e.visualize_walk_flight(e.analyze_predictions("cloud", "server"))],
                              bad_override={"epochs": 0})
    finally:
        torch.set_num_threads(n)
    assert est.model_ is est.models_["dcwe"] and est.history_ is est.histories_["dcwe"]
    assert set(est.models_) == set(est.histories_) == {"dcwe", "cwe"} and est.truth_ == truth


def test_load_reads_only_the_variants_asked_for(tiny, tmp_path):
    corpus, _ = generate_social(SMALL)
    DiffusionMapper(tiny, variants=("cwe",)).fit(corpus).save(tmp_path / "run")
    back = DiffusionMapper.load(tmp_path / "run", variants=["cwe", "dcwe"])
    assert back.config_.variants == ("cwe",) and back.model_ is back.models_["cwe"]
    with pytest.raises(FileNotFoundError, match="holds none of the models"):
        DiffusionMapper.load(tmp_path / "run", variants=["dcwe"])
