"""Social diffusion with dynamic contextualized word embeddings (DCWE; Hofmann, Pierrehumbert &
Schütze, ACL 2021): does a new sense of a word spread through a social network by walk or by flight?

    from tempo_analysis.resolve import load_social
    from tempo_analysis.diffusion import DiffusionMapper

    r = load_social("world")                               # or "acl", "csv:DOCS,EDGES"
    corpus, truth = r.data, r.truth                        # truth: the planted diffusion (None for real data)
    mapper = DiffusionMapper(epochs=1, max_steps=20).fit(corpus)
    result = mapper.analyze("cloud", "server")             # r-hat map, walk vs flight, mode

Modules: ``config`` (DiffusionTrainConfig and its presets: the wing's one settings module),
``estimator`` (DiffusionMapper, the facade), ``training`` (the facade's training helpers),
``model`` (DCWEConfig, DCWEForMaskedLM, DCWEForSequenceClassification), ``node2vec`` (the
social input), ``corpora`` (graph tensors, slice-stratified splits), ``mlm`` (MLM batches, the
plain-encoder baseline, perplexity), ``analysis`` (sim / sigma_sim, r-hat, diffusion maps, walk
vs flight), ``report`` (model to analyses in one call, JSON, world regeneration), ``classify``
(DCWE as a text classifier).

The names below are imported on first use (PEP 562): ``tempo_analysis.diffusion.config`` reads
without torch.
"""
from __future__ import annotations

import importlib

_NAMES = {
    "VARIANTS": "config", "DiffusionTrainConfig": "config", "PRESETS": "config", "preset": "config",
    "DiffusionMapper": "estimator",
    "build_dcwe": "training",
    "DCWEClassifier": "classify", "train_dcwe_classifier": "classify",
    "graph_tensors": "corpora", "split_corpus": "corpora",
    "MLMCollator": "mlm", "PlainMLM": "mlm", "SliceBatchSampler": "mlm", "SocialMLMDataset": "mlm",
    "fixed_mlm_batches": "mlm", "mlm_perplexity": "mlm",
    "DCWEConfig": "model", "DCWEForMaskedLM": "model", "DCWEForSequenceClassification": "model",
    "content_vocabulary": "model",
    "Node2Vec": "node2vec",
    "DiffusionAnalysis": "report",
}

__all__ = sorted(_NAMES)


def __getattr__(name: str):
    if name in _NAMES:
        value = getattr(importlib.import_module(f"{__name__}.{_NAMES[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
