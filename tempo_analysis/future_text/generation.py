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
from transformers import LogitsProcessor, LogitsProcessorList

from tempo_analysis.cpu_linears import packed_linears
from tempo_analysis.future_text.model import FutureLM, TemporalBiasProcessor
from tempo_analysis.future_text.config import GenerationSettings

__all__ = ["GenerationSettings", "generate_texts", "generate_together"]


@torch.no_grad()
def generate_texts(model, tokenizer, year: int | None = None, n: int = 5, *, alpha: float | None = None,
                   prompt: str | None = None, settings: GenerationSettings | None = None) -> list[str]:
    """``n`` texts for ``year`` (seeded). ``alpha`` overrides the bias strength (0 = plain LM)."""
    return generate_together([model], tokenizer, year, n, alphas=[alpha], prompt=prompt, settings=settings)[0]


@torch.no_grad()
def generate_together(models, tokenizer, year: int | None = None, n: int = 5, *, alphas=None,
                      prompt: str | None = None, settings: GenerationSettings | None = None) -> list[list[str]]:
    """``n`` texts from each of ``models`` (FutureLMs that wrap the *same* LM), in one batched ``generate``.

    On a CPU a small LM's decoding step is bound by reading its weights, so k models' texts in one
    batch of k*n rows cost about what one model's n do (``benchmarks/future_generation_together.py``).
    Each model adds its own bias to its own rows. ``alphas``: one bias strength per model (None = the
    model's own). Returns one list of n texts per model, in order. Each row is sampled with its own
    draws: a model's texts depend on the seed, its place in the list and the number of models, not on
    the other models (so they differ from ``generate_texts`` of that model alone, at the same seed).

    An entry of ``models`` may also be a ``TemporalBiasProcessor``: that model's bias as it was when the
    processor was made (the trend what-if makes one before and one inside ``injected_trend``, then
    generates both in one batch). Its year and alpha are the processor's own: give None for it in
    ``alphas``.
    """
    s = settings or GenerationSettings()
    models = list(models)
    alphas = [None] * len(models) if alphas is None else list(alphas)
    if n < 1:
        raise ValueError(f"n={n}: ask for at least one text")
    if not models or len(alphas) != len(models):
        raise ValueError(f"generate_together: give one or more models and one alpha per model "
                         f"(got {len(models)} models, {len(alphas)} alphas)")
    bound = [m if isinstance(m, TemporalBiasProcessor) else None for m in models]
    for p, a in zip(bound, alphas):
        if p is not None and a is not None:
            raise ValueError("generate_together: a TemporalBiasProcessor entry has its own alpha; give None "
                             "for it in alphas (or pass the FutureLM itself with an alpha)")
    models = [m.model if p is not None else m for m, p in zip(models, bound)]
    wrapped = [isinstance(m, FutureLM) for m in models]
    lm = models[0].lm if wrapped[0] else models[0]
    if len(models) > 1 and not all(w and m.lm is lm for w, m in zip(wrapped, models)):
        raise ValueError("generate_together: every model must be a FutureLM wrapping the same LM object "
                         "(FutureTextModel's variants share theirs); generate the others with generate_texts")
    processors = LogitsProcessorList()
    parts = []
    for m, w, a, p in zip(models, wrapped, alphas, bound):
        if not w:
            continue
        if p is not None:
            parts.append(p)
            continue
        if m.bias is not None and year is None:
            raise ValueError(f"generate_texts: the {m.config.variant} model needs a target year")
        m.eval()
        # the head adaptation (every variant) and the year's temporal bias (bias variants)
        parts.append(TemporalBiasProcessor(m, None if year is None else int(year), a))
    if parts:
        processors.append(parts[0] if len(parts) == 1 else _RowBlocks(parts))
    lm.eval()
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
    ids = torch.tensor([start] * (n * len(models)), device=device)
    torch.manual_seed(s.seed)
    with packed_linears(lm, rows=ids.shape[0] * max(1, s.num_beams)):   # CPU: oneDNN prepacked weights
        out = lm.generate(ids, attention_mask=torch.ones_like(ids), logits_processor=processors,
                          num_beams=s.num_beams, do_sample=s.do_sample, top_k=s.top_k, top_p=s.top_p,
                          no_repeat_ngram_size=s.no_repeat_ngram_size, max_new_tokens=s.max_new_tokens,
                          min_new_tokens=s.min_new_tokens, pad_token_id=tokenizer.pad_token_id,
                          eos_token_id=eos, bos_token_id=bos)
    texts = [re.sub(r"\s+", " ", t).strip() for t in tokenizer.batch_decode(out[:, len(start):], skip_special_tokens=True)]
    return [texts[k * n:(k + 1) * n] for k in range(len(models))]


class _RowBlocks(LogitsProcessor):
    """Applies the k-th processor to the k-th of equal blocks of rows: one block per model, its n texts
    (times the beams: beam search keeps each text's beams next to each other)."""

    def __init__(self, parts):
        self.parts = parts

    def __call__(self, input_ids, scores):
        b = scores.shape[0] // len(self.parts)
        out = []
        for k, part in enumerate(self.parts):
            part.rows = slice(k * b, (k + 1) * b)
            out.append(part(input_ids[part.rows], scores[part.rows]))
        return torch.cat(out)
