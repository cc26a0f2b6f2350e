"""Training-step time of the temporal word bias on cached LM states: bias step vs plain step.

    .venv/bin/python benchmarks/future_lm_step.py            # defaults below; last line is JSON

Every future-text variant trains on the frozen LM's cached final states (``future_text/adapt.py``):
a step computes the head logits of ``--positions`` positions, adds the per-token offset (every
variant) and, for a bias variant, the temporal bias, then backward + Adam. Setups, each for two
vocabularies -- SmolLM2's (49,152 tokens, hidden 576; the worst case: S = the whole vocabulary)
and the test-sized "tiny" GPT-2 (1,000 tokens, hidden 64):

1. ``plain``: the baseline step (per-token offset only; what all-years and last-n train);
2. ``freq`` bias per distinct year (ours: one-year batches, the LSTM runs once per step over
   the vocabulary) and, for the tiny config only, ``freq`` per example (the reference design: an
   LSTM over every example x vocabulary, ``FutureLM.bias_per_example = True``; at 49k tokens it
   does not fit in memory). Before timing, the two ``freq`` paths must give the same per-position loss
   on one mixed-year batch (the run exits non-zero otherwise).

The last line is JSON: ``overhead_vs_plain`` (freq per distinct year / plain, SmolLM2 vocabulary;
target <= 1.2), ``tiny_overhead_vs_plain`` (the same for the tiny config) and the tiny config's
per-example speed-up.
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
    """Median CPU seconds of this process per optimiser step on cached states (``time.process_time``:
    with one thread, other jobs on a shared machine barely move it, unlike wall time)."""
    opt = torch.optim.Adam([p for n, p in model.named_parameters() if not n.startswith("lm.") and p.requires_grad])
    model.train()
    times = []
    for i in range(warmup + steps):
        t0 = time.process_time()
        loss = model.state_nll(**batch).mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if i >= warmup:
            times.append(time.process_time() - t0)
    return float(np.median(times))


def check_bias_paths(model, batch) -> None:
    """Exit if the per-example bias (reference design) and the per-distinct-year bias give different losses."""
    model.train()
    with torch.no_grad():
        model.bias_per_example = False
        per_year = model.state_nll(**batch)
        model.bias_per_example = True
        per_example = model.state_nll(**batch)
        model.bias_per_example = False
    try:
        torch.testing.assert_close(per_example, per_year, rtol=1e-5, atol=1e-5)
    except AssertionError as e:
        raise SystemExit(f"the per-example and per-year freq bias give different losses "
                         f"({len(batch['years'].unique())} years in the batch): {e}") from None


def run(vocab: int, dim: int, a, rng) -> dict:
    torch.manual_seed(a.seed)
    cfg = GPT2Config(vocab_size=vocab, n_layer=1, n_embd=dim, n_head=max(1, dim // 64), n_positions=64,
                     bos_token_id=0, eos_token_id=0, tie_word_embeddings=True)
    lm = GPT2LMHeadModel(cfg)
    for p in lm.parameters():
        p.requires_grad_(False)
    first = 2000
    P = a.positions
    year = first + a.train_years
    batch = {"hidden": torch.randn(P, dim), "targets": torch.randint(1, vocab, (P,)), "lse_rest": torch.full((P,), -1e9),
             "z_target": torch.zeros(P), "years": torch.full((P,), year)}
    per_example = dict(batch, years=torch.tensor(rng.integers(first + 1, year + 1, P)))

    def build(variant):
        torch.manual_seed(a.seed)
        m = FutureLM.from_lm(lm, variant=variant, window=a.window, feature_dim=1, center_tokens=variant == "freq")
        if m.bias is not None:
            m.set_history(rng.standard_normal((a.train_years + 1, vocab)).astype("float32"), first)
        return m

    res = {"plain": step_time(build("baseline"), batch, a.steps)}
    m = build("freq")
    if vocab <= a.per_example_max_vocab:
        check_bias_paths(m, per_example)
    res["freq_per_year"] = step_time(m, batch, a.steps)
    if vocab <= a.per_example_max_vocab:
        # the reference design: a window + LSTM per example (every position here) over the vocabulary;
        # at 49k tokens x 512 positions that is 25M LSTM sequences (tens of GB): tiny config only
        m.bias_per_example = True
        res["freq_per_example"] = step_time(m, per_example, max(2, a.steps // 2), warmup=1)
    for k, v in res.items():
        print(f"vocab {vocab:6d} dim {dim:4d}  {k:18s} {v * 1e3:9.1f} ms/step", flush=True)
    return res


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--positions", type=int, default=512, help="positions per step (settings.batch_size)")
    p.add_argument("--window", type=int, default=3)
    p.add_argument("--train-years", type=int, default=17)
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--per-example-max-vocab", type=int, default=1000, help="time the reference design up to this vocab")
    a = p.parse_args(argv)
    torch.set_num_threads(a.threads)
    rng = np.random.default_rng(a.seed)
    big = run(49152, 576, a, rng)
    tiny = run(1000, 64, a, rng)
    r = lambda x: round(x, 3)  # noqa: E731
    out = {
        "overhead_vs_plain": r(big["freq_per_year"] / big["plain"]),
        "tiny_overhead_vs_plain": r(tiny["freq_per_year"] / tiny["plain"]),
        "tiny_speedup_vs_per_example": r(tiny["freq_per_example"] / tiny["freq_per_year"]),
        "ms_per_step": {"smollm2_vocab": {k: round(v * 1e3, 1) for k, v in big.items()},
                        "tiny": {k: round(v * 1e3, 1) for k, v in tiny.items()}},
        "config": {k: v for k, v in vars(a).items()}, "torch": torch.__version__, "machine": platform.machine(),
    }
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
