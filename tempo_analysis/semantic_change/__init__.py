"""Semantic change ranking: which words changed their meaning between two periods, and how much.

Temporal attention (Rosin & Radinsky 2022, "Temporal Attention for Language Models") conditions a
BERT-like encoder's self-attention on the period a text comes from; after MLM post-training on
period-tagged sentences, a target word's mean usage vector per period is compared across periods
(Algorithm 1: cosine distance) and the targets are ranked by that score.

    from tempo_analysis.data.specs import load_change_data
    from tempo_analysis.semantic_change import SemanticChangeRanker
    ranker = SemanticChangeRanker(method="temporal-attention").fit(load_change_data("world"))
    ranker.scores_, ranker.metrics_

- :mod:`.model` -- ``TemporalAttentionForMaskedLM``: any BERT-like checkpoint converted with its
  pretrained weights, time in every attention layer (faithful, modulated, scaled, none).
- :mod:`.baselines` -- plain encoder, time token (TempoBERT), scaled attention.
- :mod:`.training` -- the two-stage MLM post-training schedule (shared ``Trainer``).
- :mod:`.extraction` -- batched target-vector extraction (every hidden layer, per usage).
- :mod:`.scoring` -- change scorers: cosine (Algorithm 1), PRT, APD, APD-within, JSD.
- :mod:`.pipeline` -- ``RankConfig`` and its defaults, methods by name, usage sampling, evaluation.
- :mod:`.ranker` -- :class:`SemanticChangeRanker` (fit / rescore / save / load / visualize_*) and the
  method comparison.
- :mod:`.explore` -- one word up close: usage maps, nearest words per period, placing a new sentence.

Data: ``tempo_analysis.data.specs.load_change_data("world" | "nltk[:DIR]" | "semeval:DIR" | "dwug:DIR")``.
"""
from .pipeline import (DEFAULT, METHODS, NOTEBOOK_METHODS, SCORER_CHOICES, ChangeModel, RankConfig, cli_config,
                       notebook_config)
from .ranker import SemanticChangeRanker, comparison_table, fit_methods
from .training import PostTrainConfig

__all__ = ["DEFAULT", "METHODS", "NOTEBOOK_METHODS", "SCORER_CHOICES", "ChangeModel", "PostTrainConfig",
           "RankConfig", "SemanticChangeRanker", "cli_config", "comparison_table", "fit_methods", "notebook_config"]
