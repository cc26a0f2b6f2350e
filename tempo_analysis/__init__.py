"""tempo_analysis: temporal NLP — models that know when a text was written, and how language changes over time.

Four methods on one data model (:mod:`tempo_analysis.data`), one encoder loader
(:mod:`tempo_analysis.encoders`) and one training loop (:mod:`tempo_analysis.training`):
TempoFormer stream classification, temporal-attention semantic change, dynamic contextualized
word embeddings for social diffusion, and temporal word bias for future text.
"""

__version__ = "0.1.0"
