"""Social diffusion with DCWE: corpora (ACL venues, CSV, planted world), training, perplexity, runs.

The analyses themselves (sim, sigma_sim, r-hat, diffusion maps, walk vs flight) live in
``tempo_analysis.analysis.diffusion``; the model in ``tempo_analysis.models.dcwe``.
"""
from .classify import DCWEClassifier, train_dcwe_classifier
from .corpora import (acl_social_corpus, author_jaccard_graph, csv_social_corpus, graph_tensors, split_corpus,
                      world_social_corpus)
from .mlm import MLMCollator, PlainMLM, SliceBatchSampler, SocialMLMDataset, fixed_mlm_batches, mlm_perplexity
from .pipeline import VARIANTS, DiffusionRun, DiffusionTrainConfig, build_dcwe, train_diffusion_models

__all__ = ["VARIANTS", "DCWEClassifier", "DiffusionRun", "DiffusionTrainConfig", "MLMCollator", "PlainMLM", "SliceBatchSampler", "SocialMLMDataset",
           "acl_social_corpus", "author_jaccard_graph", "build_dcwe", "csv_social_corpus", "fixed_mlm_batches",
           "graph_tensors", "mlm_perplexity", "split_corpus", "train_dcwe_classifier", "train_diffusion_models", "world_social_corpus"]
