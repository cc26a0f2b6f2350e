"""Seeded text generation for a target year: beam search, top-k, top-p, no-repeat-n-gram.

``generate_texts`` runs the wrapped LM's Hugging Face ``generate`` with a
``TemporalBiasProcessor`` (model.py) that adds the cached year bias before the
top-k / top-p warpers. Paper defaults (``GenerationSettings()``): beam 5 with sampling, top-k 50,
top-p 0.92, no-repeat-n-gram 2, starting from the end-of-text token (topic-agnostic). A chat LM
(SmolLM2-Instruct) starts instead from ``settings.instruction`` as a user turn (the facade's
default asks for "the abstract of a natural language processing research paper", no topic):
a frozen instruct model continues a bare end-of-text token with unrelated text.
"""

from __future__ import annotations

import re

import torch
from transformers import LogitsProcessorList

from tempo_analysis.future_text.model import FutureLM, TemporalBiasProcessor
from tempo_analysis.future_text.settings import GenerationSettings

__all__ = ["GenerationSettings", "generate_texts"]


@torch.no_grad()
def generate_texts(model, tokenizer, year: int | None = None, n: int = 5, *, alpha: float | None = None,
                   prompt: str | None = None, settings: GenerationSettings | None = None) -> list[str]:
    """``n`` texts for ``year`` (seeded). ``alpha`` overrides the bias strength (0 = plain LM)."""
    s = settings or GenerationSettings()
    if n < 1:
        raise ValueError(f"n={n}: ask for at least one text")
    lm, processors = model, LogitsProcessorList()
    if isinstance(model, FutureLM):
        lm = model.lm
        if model.bias is not None and year is None:
            raise ValueError(f"generate_texts: the {model.config.variant} model needs a target year")
        model.eval()
        # the head adaptation (every variant) and the year's temporal bias (bias variants)
        processors.append(TemporalBiasProcessor(model, None if year is None else int(year), alpha))
    model.eval()
    bos = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    eos = [tokenizer.eos_token_id]
    if s.instruction and getattr(tokenizer, "chat_template", None):
        turn = tokenizer.apply_chat_template([{"role": "user", "content": s.instruction}], tokenize=False,
                                             add_generation_prompt=True)
        start = tokenizer(turn, add_special_tokens=False)["input_ids"]
        end_turn = tokenizer.convert_tokens_to_ids("<|im_end|>")
        eos += [end_turn] if isinstance(end_turn, int) and end_turn != tokenizer.unk_token_id else []
    else:
        start = [bos]
    start = start + (tokenizer(prompt, add_special_tokens=False)["input_ids"] if prompt else [])
    device = next(lm.parameters()).device
    ids = torch.tensor([start] * n, device=device)
    torch.manual_seed(s.seed)
    out = lm.generate(ids, attention_mask=torch.ones_like(ids), logits_processor=processors,
                      num_beams=s.num_beams, do_sample=s.do_sample, top_k=s.top_k, top_p=s.top_p,
                      no_repeat_ngram_size=s.no_repeat_ngram_size, max_new_tokens=s.max_new_tokens,
                      min_new_tokens=s.min_new_tokens, pad_token_id=tokenizer.pad_token_id,
                      eos_token_id=eos, bos_token_id=bos)
    texts = tokenizer.batch_decode(out[:, len(start):], skip_special_tokens=True)
    return [re.sub(r"\s+", " ", t).strip() for t in texts]
