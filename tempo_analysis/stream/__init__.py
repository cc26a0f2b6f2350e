"""Stream classification pipeline (TempoFormer and baselines): batching, training, evaluation.

- :mod:`.batching` — windows -> batches with shared post encoding (each unique post once).
- :mod:`.pipeline` — sklearn-style classifiers over Timelines, cross-validation, notebook defaults.
"""
