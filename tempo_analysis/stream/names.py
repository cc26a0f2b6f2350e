"""Names of the stream models, TempoFormer's ablations and its post summaries.

Plain Python (no torch), so the CLI can offer them as choices without loading a model.
"""

from __future__ import annotations

# name -> what the ablation removes or changes (paper Tables 3 and 4)
ABLATIONS: dict[str, str] = {
    "none": "full TempoFormer",
    "sequential_rope": "RoPE over post order (slot distance) instead of time gaps",
    "vanilla_mha": "plain multi-head attention over [CLS] (no rotary embedding)",
    "no_s11": "no stream position embedding before the last layer",
    "no_s10_s11": "no stream position embeddings at all",
    "no_gate_norm": "fused [CLS] is the temporal MHA output (no Gate&Norm)",
    "rotempoformer": "LSTM over every post's pooled fused [CLS] (RoTempoFormer)",
}

# the post vector TempoFormer's stream reads (TempoFormerConfig.summary)
SUMMARIES = ("cls", "mean", "mean_then_cls")

# the baselines of paper section 4.2 and Table 4, by the names the CLI takes (modules: baselines,
# time_bilstm, robert, signature, llm_prompt)
BASELINES = ("random", "post_encoder", "ffn_history", "bilstm", "time_bilstm", "robert", "swnu", "seq_sig_net",
             "llm_few_shot")
# TempoFormer's temporal attention over frozen sentence vectors (module vector_tempoformer): not a
# paper model; a cheap variant that isolates the stream component, evaluated like a baseline
VARIANTS = ("tempoformer_vectors",)
MODELS = ("tempoformer",) + VARIANTS + BASELINES


def check_ablation(name: str | None) -> str:
    """Return a valid ablation name or raise ValueError listing the valid ones."""
    name = "none" if name in (None, "") else str(name)
    if name not in ABLATIONS:
        raise ValueError(
            f"ablation={name!r} is not known; valid names: {', '.join(ABLATIONS)}"
        )
    return name


__all__ = ["ABLATIONS", "BASELINES", "MODELS", "SUMMARIES", "VARIANTS", "check_ablation"]
