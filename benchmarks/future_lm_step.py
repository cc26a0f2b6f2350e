"""Training-step time of the temporal word-bias LM: bias per distinct year vs per example vs plain LM.

    .venv/bin/python benchmarks/future_lm_step.py            # defaults below; last line is JSON

Setups (same GPT-2, same batch, same optimiser; forward + backward + AdamW step):
1. ``plain``: the LM alone;
2. ``freq`` / ``context2`` per distinct year (our path: the LSTM runs once per distinct year in
   the batch, over the whole vocabulary; the input projection once per distinct history year);
3. ``freq`` / ``context2`` per example (the reference design: a window gathered and an LSTM run
   for every example x vocabulary, ``FutureLM.bias_per_example = True``).
Years are drawn from ``--train-years`` years, so a batch has fewer distinct years than examples,
as in the ACL setting (17 training years, batch 8 -> ~6 distinct).
Two batch kinds: ``one_year`` (every example from one year: the pipeline's default
``year_batches`` fine-tuning) and ``random`` (years drawn at random: ~6-7 distinct of 8).
The last line is JSON: ``overhead_vs_plain`` (freq per distinct year / plain, one-year batches;
target <= 1.2), ``speedup_vs_per_example`` (reference per-example / ours, same batches), the
same for random-year batches (``*_random_years``) and for context2 (``context2_*``).
"""

from __future__ import annotations

import argparse
import json
import platform
import time

import numpy as np
import torch
from transformers import GPT2Config, GPT2LMHeadModel

from tempo_analysis.future_text.model import FutureLM


def step_time(model, batch, steps: int, warmup: int = 2) -> float:
    """Median seconds per optimiser step."""
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    model.train()
    times = []
    for i in range(warmup + steps):
        t0 = time.perf_counter()
        loss = model(**batch).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if i >= warmup:
            times.append(time.perf_counter() - t0)
    return float(np.median(times))


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--dim", type=int, default=256)
    p.add_argument("--vocab", type=int, default=4000)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=128)
    p.add_argument("--window", type=int, default=3)
    p.add_argument("--train-years", type=int, default=17)
    p.add_argument("--context-dim", type=int, default=384, help="contextual feature width (MiniLM: 384)")
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    rng = np.random.default_rng(a.seed)
    cfg = GPT2Config(vocab_size=a.vocab, n_layer=a.layers, n_embd=a.dim, n_head=max(1, a.dim // 64),
                     n_positions=a.seq, bos_token_id=0, eos_token_id=0, tie_word_embeddings=True)
    ids = torch.randint(1, a.vocab, (a.batch, a.seq))
    first = 2000
    years = torch.tensor(rng.integers(first + 1, first + a.train_years + 1, a.batch))
    batch = {"input_ids": ids, "labels": ids, "years": years}
    plain_batch = {"input_ids": ids, "labels": ids}

    def build(variant, fdim):
        torch.manual_seed(a.seed)
        m = FutureLM.from_lm(GPT2LMHeadModel(cfg), variant=variant, window=a.window, feature_dim=fdim)
        m.set_history(rng.standard_normal((a.train_years + 1, a.vocab, fdim)).astype("float32"), first)
        return m

    torch.manual_seed(a.seed)
    res = {"plain": step_time(GPT2LMHeadModel(cfg), plain_batch, a.steps)}
    print(f"plain LM                                   {res['plain'] * 1e3:8.1f} ms/step", flush=True)
    one_year = dict(batch, years=torch.full_like(years, int(years[0])))    # the pipeline's year_batches
    for variant, fdim in (("freq", 1), ("context2", a.context_dim)):
        m = build(variant, fdim)
        for label, b in (("one_year", one_year), ("random", batch)):
            m.bias_per_example = False
            res[f"{variant}_per_year_{label}"] = step_time(m, b, a.steps)
            m.bias_per_example = True
            res[f"{variant}_per_example_{label}"] = step_time(m, b, a.steps)
            for how in ("per_year", "per_example"):
                print(f"{variant:9s} {label:8s} batch, bias {how.replace('_', ' '):12s} "
                      f"{res[f'{variant}_{how}_{label}'] * 1e3:8.1f} ms/step", flush=True)
    r = lambda x: round(x, 3)  # noqa: E731
    out = {
        "overhead_vs_plain": r(res["freq_per_year_one_year"] / res["plain"]),
        "speedup_vs_per_example": r(res["freq_per_example_one_year"] / res["freq_per_year_one_year"]),
        "overhead_vs_plain_random_years": r(res["freq_per_year_random"] / res["plain"]),
        "speedup_vs_per_example_random_years": r(res["freq_per_example_random"] / res["freq_per_year_random"]),
        "context2_overhead_vs_plain": r(res["context2_per_year_one_year"] / res["plain"]),
        "context2_speedup_vs_per_example": r(res["context2_per_example_one_year"] / res["context2_per_year_one_year"]),
        "context2_overhead_vs_plain_random_years": r(res["context2_per_year_random"] / res["plain"]),
        "distinct_years_in_random_batch": int(years.unique().numel()),
        "ms_per_step": {k: round(v * 1e3, 1) for k, v in res.items()},
        "config": {k: v for k, v in vars(a).items()}, "torch": torch.__version__, "machine": platform.machine(),
    }
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
