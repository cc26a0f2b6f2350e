"""Stream classification: TempoFormer (Tseriotou et al., 2024) and its baselines over Timelines.

- :mod:`.model` — TempoFormerConfig / TempoFormerModel (temporal rotary attention, Gate&Norm,
  focal loss) and the ablations.
- :mod:`.baselines` — random, post-level encoder, FFN-History and BiLSTM baselines.
- :mod:`.vector_tempoformer` — TempoFormer's temporal attention over frozen sentence vectors
  (``tempoformer_vectors``), a fast form whose time-blind control is as cheap.
- :mod:`.config` — the settings: ``StreamConfig`` and its presets (``"cli"``, ``"notebook"``), and
  the experiment protocol's (``ExperimentConfig``); the one place the wing's defaults live.
- :mod:`.estimator` — :class:`TempoFormerClassifier`, the estimator (fit / predict_proba /
  temporal_attention / save / load / visualize_*).
- :mod:`.time_effect` — the time-blind control and the what-ifs (``what_if``, ``gap_what_if``).
- :mod:`.experiment` — models by name, timeline-level splits, ``fit_and_score`` and the recorded
  ablation runs notebook 01 shows.
- :mod:`.batching` — windows -> batches with shared post encoding (each unique post once).
- :mod:`.embeddings` — cached encoders and frozen sentence vectors.

Data: ``tempo_analysis.resolve.load_timelines("world" | "rumoureval2017[:DIR]" | "csv:FILE")``.
"""
