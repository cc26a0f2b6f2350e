"""Social diffusion with dynamic contextualized word embeddings (DCWE; Hofmann, Pierrehumbert &
Schütze, ACL 2021): does a new sense of a word spread through a social network by walk or by flight?

    from tempo_analysis.data.specs import load_social
    from tempo_analysis.diffusion import DiffusionMapper

    corpus, truth = load_social("world")                   # or "acl", "csv:DOCS,EDGES"
    mapper = DiffusionMapper(epochs=1, max_steps=20).fit(corpus)
    result = mapper.analyze("cloud", "server")             # r-hat map, walk vs flight, mode

Modules: ``model`` (DCWEConfig, DCWEForMaskedLM, DCWEForSequenceClassification), ``node2vec``
(the social input), ``corpora`` (graph tensors, slice-stratified splits), ``mlm`` (MLM batches,
the plain-encoder baseline, perplexity), ``pipeline`` (DiffusionMapper, the facade),
``analysis`` (sim / sigma_sim, r-hat, diffusion maps, walk vs flight), ``report`` (model to
analyses in one call, JSON, world regeneration), ``classify`` (DCWE as a text classifier).
"""
from .classify import DCWEClassifier, train_dcwe_classifier
from .corpora import graph_tensors, split_corpus
from .mlm import MLMCollator, PlainMLM, SliceBatchSampler, SocialMLMDataset, fixed_mlm_batches, mlm_perplexity
from .model import DCWEConfig, DCWEForMaskedLM, DCWEForSequenceClassification, content_vocabulary
from .node2vec import Node2Vec
from .pipeline import VARIANTS, DiffusionMapper, DiffusionTrainConfig, build_dcwe
from .report import DiffusionAnalysis

__all__ = ["VARIANTS", "DCWEClassifier", "DCWEConfig", "DCWEForMaskedLM", "DCWEForSequenceClassification",
           "DiffusionAnalysis", "DiffusionMapper", "DiffusionTrainConfig", "MLMCollator", "Node2Vec", "PlainMLM",
           "SliceBatchSampler", "SocialMLMDataset", "build_dcwe", "content_vocabulary", "fixed_mlm_batches",
           "graph_tensors", "mlm_perplexity", "split_corpus", "train_dcwe_classifier"]
