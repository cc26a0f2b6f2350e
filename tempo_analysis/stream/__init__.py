"""Stream classification: TempoFormer (Tseriotou et al., 2024) and its baselines over Timelines.

- :mod:`.model` — TempoFormerConfig / TempoFormerModel (temporal rotary attention, Gate&Norm,
  focal loss) and the ablations.
- :mod:`.baselines` — random, post-level encoder, FFN-History and BiLSTM baselines.
- :mod:`.vector_tempoformer` — TempoFormer's temporal attention over frozen sentence vectors
  (``tempoformer_vectors``), a fast form whose time-blind control is as cheap.
- :mod:`.classifier` — :class:`TempoFormerClassifier`, the estimator (fit / predict_proba /
  temporal_attention / save / load / visualize_*), and ``what_if``.
- :mod:`.experiment` — models by name, timeline-level splits, ``fit_and_score``, notebook 01's
  defaults and its recorded ablation runs.
- :mod:`.batching` — windows -> batches with shared post encoding (each unique post once).
- :mod:`.embeddings` — cached encoders and frozen sentence vectors.

Data: ``tempo_analysis.data.specs.load_timelines("world" | "rumoureval2017[:DIR]" | "csv:FILE")``.
"""
