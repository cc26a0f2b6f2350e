"""Semantic change ranking: which words changed their meaning between two periods, and how much.

Temporal attention (Rosin & Radinsky 2022, "Temporal Attention for Language Models") conditions a
BERT-like encoder's self-attention on the period a text comes from; after MLM post-training on
period-tagged sentences, a target word's mean usage vector per period is compared across periods
(Algorithm 1: cosine distance) and the targets are ranked by that score.

    from tempo_analysis.resolve import load_change_data
    from tempo_analysis.semantic_change import SemanticChangeRanker
    ranker = SemanticChangeRanker("notebook").fit(load_change_data("world").data)
    ranker.scores_, ranker.metrics_

- :mod:`.model` -- ``TemporalAttentionForMaskedLM``: any BERT-like checkpoint converted with its
  pretrained weights, time in every attention layer (faithful, modulated, scaled, none).
- :mod:`.baselines` -- plain encoder, time token (TempoBERT), scaled attention.
- :mod:`.training` -- the two-stage MLM post-training schedule (shared ``Trainer``).
- :mod:`.extraction` -- batched target-vector extraction (every hidden layer, per usage).
- :mod:`.scoring` -- change scorers: cosine (Algorithm 1), PRT, APD, APD-within, JSD.
- :mod:`.config` -- ``RankConfig``, ``PostTrainConfig`` and the presets (``"cli"``, ``"notebook"``):
  the only place the defaults live.
- :mod:`.pipeline` -- methods by name, usage sampling, evaluation.
- :mod:`.estimator` -- :class:`SemanticChangeRanker` (fit / rescore / save / load / visualize_*).
- :mod:`.compare` -- several methods on one dataset: fit each, the time ablation, the scorer table.
- :mod:`.study` -- the recorded studies notebook 02 shows (pseudoword benchmark, model seeds).
- :mod:`.explore` -- one word up close: usage maps, nearest words per period, placing a new sentence.

Data: ``tempo_analysis.resolve.load_change_data("world" | "nltk[:DIR]" | "semeval:DIR" | "dwug:DIR")``.
"""
from .config import (METHODS, NOTEBOOK_METHODS, PRESETS, SCORER_CHOICES, PostTrainConfig, RankConfig, cli_config,
                     notebook_config, preset)

# the rest is read on first use: ``tempo_analysis.semantic_change.config`` (what the CLI's --help reads)
# imports no torch, and neither does this package until a ranker is asked for
_LAZY = {"SemanticChangeRanker": "estimator", "ChangeModel": "pipeline", "comparison_table": "compare",
         "fit_methods": "compare", "time_ablation": "compare", "time_effect": "compare",
         "recorded_study": "study", "seed_spread": "study"}

__all__ = ["METHODS", "NOTEBOOK_METHODS", "PRESETS", "SCORER_CHOICES", "ChangeModel", "PostTrainConfig", "RankConfig",
           "SemanticChangeRanker", "cli_config", "comparison_table", "fit_methods", "notebook_config", "preset",
           "recorded_study", "seed_spread", "time_ablation", "time_effect"]


def __getattr__(name):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
