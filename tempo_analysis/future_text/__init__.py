"""Future-text generation with a temporal word bias (Li et al., "Future Language Modeling").

- :mod:`.estimator` — :class:`FutureTextModel`, the facade (fit / score / evaluate / generate /
  save / load / visualize_*): split, tokenizer, history tables, base LM, one model per variant.
- :mod:`.config` — the one settings module: ``FutureTextSettings``, the presets ``PRESETS``
  (``"cli"``, ``"notebook"``) and ``preset(name)``, ``GenerationSettings``, the variant names.
- :mod:`.model` — ``FutureLMConfig`` / ``FutureLM`` (any tied causal LM + the temporal bias) and
  ``TemporalBiasProcessor`` for Hugging Face ``generate``.
- :mod:`.bias` — the bias modules: previous-year scale (NoLSTM), window LSTM, Context² gate.
- :mod:`.tokenizer` — small byte-level BPE trained on the corpus; the content-token rule.
- :mod:`.frequency` — per-year token counts and the feature ``log((c+1)/(N+|V|))``.
- :mod:`.context` — per-year averaged contextual embeddings of each LM token (embedded encoder).
- :mod:`.metrics` — per-document perplexity, content perplexity, content METEOR.
- :mod:`.batching` — LM examples with their year, one-year batches, the padding collator.
- :mod:`.splits` — the train / dev / test year split and per-year subsets.
- :mod:`.generation` — seeded beam / top-k / top-p / no-repeat generation for a target year.
- :mod:`.whatif` — forecasts, trend injection and bias-strength helpers behind notebook 04's widgets.

Data: ``tempo_analysis.resolve.load_yearly("world" | "acl[:ABSTRACTS_DIR,XML_DIR]" | "csv:FILE")``
returns ``Resolved(frame, trend_truth or None)``; ``tempo_analysis.data.yearly.yearly_frame`` validates frames.
"""
