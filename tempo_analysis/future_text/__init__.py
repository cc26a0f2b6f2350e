"""Future-text generation with a temporal word bias (Li et al., "Future Language Modeling").

- ``tokenizer``: small byte-level BPE trained on the corpus; the content-token rule.
- ``frequency``: per-year token counts and the feature ``log((c+1)/(N+|V|))``.
- ``context``: per-year averaged contextual embeddings of each LM token (embedded encoder).
- ``data``: (year, text) rows from the planted world, ACL abstracts, or a CSV; the year split.
- ``pipeline``: ``FutureTextExperiment`` -- tokenizer, tables, base LM, variants, metrics.
- ``generation``: seeded beam / top-k / top-p / no-repeat generation for a target year.
- ``whatif``: forecasts, trend injection and bias-strength helpers behind notebook 04's widgets.

The model itself lives in ``tempo_analysis.models.future_lm``; metrics in
``tempo_analysis.evaluation.future_text``.
"""
