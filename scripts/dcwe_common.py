"""Shared set-up of the DCWE dev-split scripts (dcwe_dev_compare.py, dcwe_readout_check.py): notebook 03's
training defaults for the DCWE / CWE pair on the planted world, and their dev perplexities."""
import torch

from tempo_analysis.data.specs import load_social
from tempo_analysis.diffusion.mlm import SocialMLMDataset, fixed_mlm_batches, mlm_perplexity
from tempo_analysis.diffusion.pipeline import DiffusionMapper, DiffusionTrainConfig

NOTEBOOK03 = dict(variants=("dcwe", "cwe"), epochs=100, max_steps=40, lr=1e-4, dynamic_lr=1e-3, lambda_w=1.0,
                  shared_warmup_steps=80, shared_warmup_lr=1e-3, mlm_probability=0.3, slice_batches=False, seed=0,
                  progress=False)


def fit_pair(args: dict):
    """(mapper, corpus, truth, cfg): DCWE and CWE fitted on the world; `args` = config changes, plus
    "world" (SocialWorldConfig changes) and "threads" (default 1)."""
    args = dict(args)
    world = args.pop("world", {})
    torch.set_num_threads(int(args.pop("threads", 1)))
    corpus, truth = load_social("world", world=world)
    cfg = DiffusionTrainConfig(**{**NOTEBOOK03, **args})
    return DiffusionMapper(cfg).fit(corpus), corpus, truth, cfg


def dev_perplexities(m, corpus, truth, cfg) -> dict:
    """{variant: (all masked tokens, the changing words' companions only)} on the dev split's fixed masks."""
    tok = m.tokenizer_
    ds = SocialMLMDataset(m.splits_["dev"], tok, corpus.unit_index, corpus.slice_index, cfg.max_length)
    b = fixed_mlm_batches(ds, tok, seed=cfg.seed + 2, repeats=3)
    comp = [truth["words"][w][k] for w in truth["changing_words"] for k in ("anchor", "old_anchor")]
    only = [tok(w, add_special_tokens=False)["input_ids"][0] for w in comp]
    return {v: (round(mlm_perplexity(m.models_[v], b), 4), round(mlm_perplexity(m.models_[v], b, only=only), 4))
            for v in ("dcwe", "cwe")}
