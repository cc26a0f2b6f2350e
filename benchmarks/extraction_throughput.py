"""Usages per second: batched, length-bucketed, inference-mode extraction vs a one-sentence loop.

    python benchmarks/extraction_throughput.py [--encoder default] [--usages 600] [--naive-usages 150]

Both paths embed usages of the planted world's targets with the same model and return the same
vectors (checked here, to 1e-4). The naive path runs one sentence per forward with autograd on
(what a straightforward loop does); ours sorts by length, batches neighbours, pads per batch and runs
under ``torch.inference_mode()``. The naive path is timed on a prefix of the usages (it is slow);
rates are usages per second. A second naive loop pads every sentence to ``--pad-to`` tokens, as
fixed-length pipelines do. The last line is JSON with ``speedup`` (vs the dynamic-length loop; target
>= 10) and ``speedup_vs_padded_loop``.
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch

from tempo_analysis.data.specs import load_change_data
from tempo_analysis.semantic_change.extraction import extract_one_by_one, extract_target_vectors
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
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    data = load_change_data("world")
    usages, _ = sample_usages(data, None, seed=0)
    rng = np.random.default_rng(0)
    usages = [usages[i] for i in rng.permutation(len(usages))[: args.usages]]
    model, tok = TemporalAttentionForMaskedLM.from_pretrained_encoder(args.encoder, time_attention="faithful",
                                                                      num_periods=len(data.periods))
    time_idx = [data.periods.index(u.period) for u in usages]
    extract_target_vectors(model, tok, usages[:32], time=time_idx[:32], progress=False)      # warm-up
    t0 = time.perf_counter()
    fast = extract_target_vectors(model, tok, usages, time=time_idx, batch_size=args.batch_size, progress=False)
    t_fast = time.perf_counter() - t0
    k = min(args.naive_usages, len(usages))
    t0 = time.perf_counter()
    slow = extract_one_by_one(model, tok, usages[:k], time=time_idx[:k])
    t_slow = time.perf_counter() - t0
    t0 = time.perf_counter()
    padded = extract_one_by_one(model, tok, usages[:k], time=time_idx[:k], pad_to=args.pad_to)
    t_pad = time.perf_counter() - t0
    err = max(float(np.abs(fast.vectors[:k] - slow.vectors).max()),
              float(np.abs(fast.vectors[:k] - padded.vectors).max()))
    if err > 1e-4:
        raise SystemExit(f"batched and one-by-one vectors differ by {err}")
    r_fast, r_slow, r_pad = len(usages) / t_fast, k / t_slow, k / t_pad
    print(f"batched+bucketed+inference_mode: {r_fast:8.1f} usages/s ({len(usages)} usages, {t_fast:.2f}s)")
    print(f"one sentence at a time         : {r_slow:8.1f} usages/s ({k} usages, {t_slow:.2f}s)")
    print(f"one at a time, padded to {args.pad_to:<5} : {r_pad:8.1f} usages/s ({k} usages, {t_pad:.2f}s)")
    print(json.dumps({"speedup": round(r_fast / r_slow, 2), "speedup_vs_padded_loop": round(r_fast / r_pad, 2),
                      "batched_usages_per_s": round(r_fast, 1), "naive_usages_per_s": round(r_slow, 1),
                      "padded_naive_usages_per_s": round(r_pad, 1), "max_abs_diff": err, "usages": len(usages),
                      "naive_usages": k, "batch_size": args.batch_size, "encoder": args.encoder,
                      "threads": torch.get_num_threads()}))


if __name__ == "__main__":
    main()
