"""Decoding with prepacked oneDNN linear layers (``cpu_linears.packed_linears``) vs PyTorch's default CPU path.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/cpu_packed_linears.py   # embedded SmolLM2, ~1 min

One click of notebook 04's generation explorer: two FutureLMs over the same frozen LM, ``--n`` texts each,
in one batched ``generate_together`` (sampling, no beams, ``--new-tokens`` tokens). The naive path, timed
in the same run and interleaved with the packed one, is the same call with the packing switched off
(``TEMPO_ANALYSIS_PACKED_LINEARS=0``). The packed path's time includes packing the weights (done on
every call, nothing is kept: about 0.25 s, so it pays off from about 10 new tokens on). Also printed, and
enforced before timing (the run exits non-zero otherwise): that the packed path packed the LM's layers, the
largest logit difference of one forward pass between the two paths (float rounding only: about 1e-4; at most
``MAX_LOGIT_DIFF``) and that greedy decoding (``do_sample=False``, the same click otherwise) gives the same texts.
The last line is JSON: seconds per click for both paths (median of ``--repeats``) and their ratio.
"""

from __future__ import annotations

import dataclasses
import json
import os
import platform
import statistics
import time

import torch

from future_generation_together import click_setup   # the same click (benchmarks/ is the script's folder)
from tempo_analysis.cpu_linears import packed_linears, packed_linears_available
from tempo_analysis.future_text.generation import generate_together

ENV = "TEMPO_ANALYSIS_PACKED_LINEARS"
MAX_LOGIT_DIFF = 1e-3   # float rounding of the packed product is ~1e-4 on SmolLM2 (research/results/future_text)


def click(models, tok, n, s, packed: bool):
    os.environ[ENV] = "1" if packed else "0"
    t0 = time.perf_counter()
    texts = generate_together(models, tok, None, n, settings=s)
    return time.perf_counter() - t0, texts


def main() -> None:
    if not packed_linears_available():
        raise SystemExit("this torch build lacks the oneDNN linear ops: nothing to compare")
    args, lm, tok, (a, b), s = click_setup(__doc__.split("\n")[0])
    ids = torch.randint(0, len(tok), (2 * args.n, 32))
    with torch.no_grad():
        want = lm(ids).logits
        with packed_linears(lm, rows=ids.shape[0]) as was_packed:
            got = lm(ids).logits
    if not was_packed:
        raise SystemExit("packed_linears did not pack the LM's layers: the 'packed' path would time the default one")
    diff = float((got - want).abs().max())
    if not diff <= MAX_LOGIT_DIFF:
        raise SystemExit(f"packed and default logits differ by {diff:.2e} (more than {MAX_LOGIT_DIFF:.0e})")
    greedy = dataclasses.replace(s, do_sample=False)
    _, plain_texts = click([a, b], tok, args.n, greedy, False)
    _, packed_texts = click([a, b], tok, args.n, greedy, True)
    same = plain_texts == packed_texts
    if not same:
        raise SystemExit(f"greedy texts differ between the paths: default {plain_texts!r} vs packed {packed_texts!r}")
    click([a, b], tok, args.n, s, True)                                          # warm-up, both paths
    click([a, b], tok, args.n, s, False)
    default, packed = [], []
    for _ in range(args.repeats):
        t, _ = click([a, b], tok, args.n, s, False)
        default.append(t)
        t, _ = click([a, b], tok, args.n, s, True)
        packed.append(t)
    os.environ.pop(ENV, None)
    d, p = statistics.median(default), statistics.median(packed)
    print(f"default linears: {d:.2f} s; packed oneDNN linears: {p:.2f} s; ratio {d / p:.2f}x; "
          f"largest logit difference {diff:.2e}; same greedy texts: {same}")
    print(json.dumps({"lm": args.lm, "n": args.n, "new_tokens": args.new_tokens, "threads": args.threads,
                      "default_s": round(d, 3), "packed_s": round(p, 3), "speedup": round(d / p, 2),
                      "max_logit_diff": diff, "same_greedy_texts": same,
                      "machine": platform.processor() or platform.machine(), "torch": torch.__version__}))


if __name__ == "__main__":
    main()
