"""Generating two models' texts in one batch (``generate_together``) vs one ``generate`` per model.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/future_generation_together.py   # embedded SmolLM2, ~1 min

Notebook 04's generation explorer shows the time-blind baseline's texts next to a temporal model's.
Both wrap the same frozen LM, so their rows can share one ``generate`` call: on a CPU a 135M-parameter
LM's decoding step is bound by reading its weights, and a batch of 2n rows costs about what n do.
The naive path, timed in the same run, is one ``generate_texts`` call per model (what the widget
did before). Both use the widget's decoding (sampling without beams, ``--new-tokens`` tokens,
``--n`` texts per model); the two models are a ``baseline`` and a context-adapter ``baseline``
with random head offsets (the speed does not depend on what the offsets learned). Before timing, with
greedy decoding (``do_sample=False``, the same click otherwise), the batched texts must equal each model's
own ``generate_texts`` texts: the run exits non-zero otherwise. Both paths are warmed up before timing.
The last line is JSON: seconds per click for both paths (median of ``--repeats``) and their ratio.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import platform
import statistics
import time

import torch

from tempo_analysis.causal_lm import load_causal_lm
from tempo_analysis.future_text.generation import GenerationSettings, generate_texts, generate_together
from tempo_analysis.future_text.model import FutureLM


def click_setup(description: str):
    """Parse the click options; return (args, lm, tokenizer, [two FutureLMs over the LM], settings): the
    widget's click, shared with ``cpu_packed_linears.py``."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--lm", default="default", help='"default" (embedded SmolLM2-135M), or an HF name/folder')
    ap.add_argument("--n", type=int, default=2, help="texts per model (notebook 04's N_TEXTS)")
    ap.add_argument("--new-tokens", type=int, default=28, help="tokens per text (the widget's half length)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(args.threads)
    lm, tok = load_causal_lm(args.lm, device="cpu")
    a = FutureLM.from_lm(lm, variant="baseline")
    b = FutureLM.from_lm(lm, variant="baseline", adapter_rank=8)
    with torch.no_grad():
        for m in (a, b):
            m.offset.normal_(0, 0.5)
    s = GenerationSettings(num_beams=1, max_new_tokens=args.new_tokens, min_new_tokens=args.new_tokens)
    return args, lm, tok, [a, b], s


def main() -> None:
    args, lm, tok, (a, b), s = click_setup(__doc__.split("\n")[0])
    greedy = dataclasses.replace(s, do_sample=False)
    together = generate_together([a, b], tok, None, args.n, settings=greedy)
    separate = [generate_texts(m, tok, None, args.n, settings=greedy) for m in (a, b)]
    for name, t, sep in zip(("baseline", "adapter baseline"), together, separate):
        if t != sep:
            raise SystemExit(f"greedy texts of the {name} model differ: generate_together {t!r} "
                             f"vs generate_texts {sep!r}")
    generate_together([a, b], tok, None, args.n, settings=s)                       # warm-up, both paths
    generate_texts(a, tok, None, args.n, settings=s)
    generate_texts(b, tok, None, args.n, settings=s)
    separate, together = [], []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        generate_texts(a, tok, None, args.n, settings=s)
        generate_texts(b, tok, None, args.n, settings=s)
        separate.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        generate_together([a, b], tok, None, args.n, settings=s)
        together.append(time.perf_counter() - t0)
    sep, tog = statistics.median(separate), statistics.median(together)
    print(f"one generate per model: {sep:.2f} s; both in one batch: {tog:.2f} s; ratio {sep / tog:.2f}x")
    print(json.dumps({"lm": args.lm, "n": args.n, "new_tokens": args.new_tokens, "threads": args.threads,
                      "separate_s": round(sep, 3), "together_s": round(tog, 3), "speedup": round(sep / tog, 2),
                      "machine": platform.processor() or platform.machine(), "torch": torch.__version__}))


if __name__ == "__main__":
    main()
