"""Usages per second: batched, length-bucketed, inference-mode extraction vs a one-sentence loop.

    python benchmarks/extraction_throughput.py [--encoder default] [--usages 600] [--naive-usages 150]
    python benchmarks/extraction_throughput.py --precision bf16          # bfloat16 autocast (CPUs with BF16)
    python benchmarks/extraction_throughput.py --data nltk --per-word 190 --usages 0 --naive-usages 100
        # ~9.1k real usages of sentence length (Gutenberg / Brown), all of them timed

Both paths embed usages of the planted world's targets with the same model and return the same
vectors (checked here, to 1e-4). The naive path runs one sentence per forward with autograd on
(what a straightforward loop does); ours sorts by length, batches neighbours, pads per batch and runs
under ``torch.inference_mode()``. The naive path is timed on a prefix of the usages (it is slow);
rates are usages per second, from the fastest of ``--repeats`` interleaved timings of each path. A second naive loop pads every sentence to ``--pad-to`` tokens, as
fixed-length pipelines do. The naive loop is always float32; with ``--precision bf16`` the check
is a cosine >= 0.99 per vector instead of 1e-4 (the cosine is checked against both naive loops at
every precision; the run exits non-zero naming the loop that differs). The last line is JSON with
``speedup`` (vs the dynamic-length loop; target >= 10) and ``speedup_vs_padded_loop``.
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch

from tempo_analysis.resolve import load_change_data
from tempo_analysis.semantic_change.extraction import extract_one_by_one, extract_target_vectors, resolve_precision
from tempo_analysis.semantic_change.model import TemporalAttentionForMaskedLM
from tempo_analysis.semantic_change.pipeline import sample_usages


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--encoder", default="default")
    ap.add_argument("--usages", type=int, default=600)
    ap.add_argument("--naive-usages", type=int, default=150)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--pad-to", type=int, default=128, help="length of the padded naive loop")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--precision", choices=["fp32", "bf16", "auto"], default="fp32",
                    help="batched path's precision (auto: bf16 where the CPU has it natively)")
    ap.add_argument("--max-length", type=int, default=128, help="tokens per usage (a window centred on the target)")
    ap.add_argument("--data", default="world", help="world | nltk[:DIR] (real sentences) | any change-data spec")
    ap.add_argument("--per-word", type=int, default=None, help="usages per target and period (default: all)")
    ap.add_argument("--repeats", type=int, default=3, help="timings of each path (the fastest is reported)")
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    args.precision = resolve_precision(args.precision)
    data = load_change_data(args.data).data
    usages, _ = sample_usages(data, args.per_word, seed=0)
    rng = np.random.default_rng(0)
    usages = [usages[i] for i in rng.permutation(len(usages))[: args.usages or None]]
    model, tok = TemporalAttentionForMaskedLM.from_pretrained_encoder(args.encoder, time_attention="faithful",
                                                                      num_periods=len(data.periods))
    time_idx = [data.periods.index(u.period) for u in usages]
    kw = dict(max_length=args.max_length)
    extract_target_vectors(model, tok, usages[:32], time=time_idx[:32], progress=False, precision=args.precision,
                           **kw)                                                                 # warm-up
    k = min(args.naive_usages, len(usages))

    def timed(fn):
        t0 = time.perf_counter()
        value = fn()
        return time.perf_counter() - t0, value

    # each path --repeats times, interleaved; the fastest time of each, as timeit reports it (noise
    # from other work on the machine only ever adds time; the one-sentence loop also slows down
    # from one repeat to the next on a quiet machine)
    runs = {"fast": [], "slow": [], "pad": []}
    for _ in range(args.repeats):
        t, fast = timed(lambda: extract_target_vectors(model, tok, usages, time=time_idx, batch_size=args.batch_size,
                                                       progress=False, precision=args.precision, **kw))
        runs["fast"].append(t)
        t, slow = timed(lambda: extract_one_by_one(model, tok, usages[:k], time=time_idx[:k], **kw))
        runs["slow"].append(t)
        t, padded = timed(lambda: extract_one_by_one(model, tok, usages[:k], time=time_idx[:k],
                                                     pad_to=max(args.pad_to, args.max_length), **kw))
        runs["pad"].append(t)
    t_fast, t_slow, t_pad = (min(runs[key]) for key in ("fast", "slow", "pad"))
    print("seconds per repeat:", {key: [round(s, 2) for s in v] for key, v in runs.items()})
    errs, coss = {}, {}
    for name, other in (("one-by-one", slow), ("padded one-by-one", padded)):
        a, b = fast.vectors[:k].reshape(-1, fast.vectors.shape[-1]), other.vectors.reshape(-1, fast.vectors.shape[-1])
        errs[name] = float(np.abs(a - b).max())
        coss[name] = float(((a * b).sum(-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1) + 1e-12)).min())
    err, cos = max(errs.values()), min(coss.values())
    for name in errs:   # written so that NaN fails too
        if (args.precision == "fp32" and not errs[name] <= 1e-4) or not coss[name] >= 0.99:
            raise SystemExit(f"batched ({args.precision}) and {name} vectors differ by {errs[name]} "
                             f"(min cosine {coss[name]})")
    r_fast, r_slow, r_pad = len(usages) / t_fast, k / t_slow, k / t_pad
    print(f"batched+bucketed+inference_mode: {r_fast:8.1f} usages/s ({len(usages)} usages, {t_fast:.2f}s)")
    print(f"one sentence at a time         : {r_slow:8.1f} usages/s ({k} usages, {t_slow:.2f}s)")
    print(f"one at a time, padded to {args.pad_to:<5} : {r_pad:8.1f} usages/s ({k} usages, {t_pad:.2f}s)")
    print(json.dumps({"speedup": round(r_fast / r_slow, 2), "speedup_vs_padded_loop": round(r_fast / r_pad, 2),
                      "batched_usages_per_s": round(r_fast, 1), "naive_usages_per_s": round(r_slow, 1),
                      "padded_naive_usages_per_s": round(r_pad, 1), "max_abs_diff": err, "min_cosine": cos,
                      "usages": len(usages), "batched_seconds": round(t_fast, 2), "precision": args.precision,
                      "max_length": args.max_length, "data": args.data,
                      "naive_usages": k, "batch_size": args.batch_size, "encoder": args.encoder,
                      "threads": torch.get_num_threads(), "repeats": args.repeats}))


if __name__ == "__main__":
    main()
