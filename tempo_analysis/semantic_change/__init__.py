"""Semantic change ranking (issue 4): temporal attention, baselines, scorers, one pipeline.

    from tempo_analysis.semantic_change import load_change_data, RankConfig, run_rank
"""
from .pipeline import (METHODS, SCORER_CHOICES, ChangeData, ChangeModel, RankConfig, RankResult,
                       add_target_tokens, build_model, evaluate_scores, load_change_data, run_rank,
                       sample_usages, train_model)
from .training import PostTrainConfig, post_train

__all__ = ["METHODS", "SCORER_CHOICES", "ChangeData", "ChangeModel", "RankConfig", "RankResult",
           "PostTrainConfig", "add_target_tokens", "build_model", "evaluate_scores", "load_change_data",
           "post_train", "run_rank", "sample_usages", "train_model"]
