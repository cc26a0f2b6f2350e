"""Forward+backward time of temporal attention vs vanilla attention, same encoder, same batch.

    python benchmarks/temporal_attention_overhead.py [--encoder default] [--batch 16] [--length 64]

All three models are converted from the same checkpoint by the same code; they differ only in the
attention form (``none`` = vanilla QKᵀ through the same fused kernel, ``faithful`` = the paper's
Q·Tᵀ·T·Kᵀ computed in O(n·d²) per head, ``modulated`` = time-rescaled QKᵀ). Timings are interleaved
round-robin (v, f, m, v, f, m, ...) so load drift on a shared machine hits all three alike; the
median per form is reported.
The last line is JSON with ``overhead_faithful`` and ``overhead_modulated`` (target <= 1.10).
"""
from __future__ import annotations

import argparse
import json
import statistics
import time

import torch

from tempo_analysis.semantic_change.model import TemporalAttentionForMaskedLM


def step(model, batch):
    model.zero_grad(set_to_none=True)
    loss = model(**batch).loss
    loss.backward()
    return loss


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--encoder", default="default")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--length", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=12)
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's choice)")
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    models = {}
    for form in ("none", "faithful", "modulated"):
        m, tok = TemporalAttentionForMaskedLM.from_pretrained_encoder(args.encoder, time_attention=form)
        with torch.no_grad():                        # as after training: time actually used
            for n, p in m.named_parameters():
                if "time" in n:
                    p.normal_(0, 0.02)
        models[form] = m.train()
    V = models["none"].config.vocab_size
    ids = torch.randint(1000, V, (args.batch, args.length))
    am = torch.ones_like(ids)
    am[: args.batch // 2, args.length * 3 // 4:] = 0          # some padding, as in real batches
    labels = torch.where(torch.rand(ids.shape) < 0.15, ids, torch.full_like(ids, -100))
    batch = {"input_ids": ids, "attention_mask": am, "labels": labels,
             "time": torch.arange(args.batch) % models["none"].config.num_periods}
    times = {f: [] for f in models}
    for f, m in models.items():                      # warm-up
        step(m, batch)
    for _ in range(args.repeats):
        for f, m in models.items():
            t0 = time.perf_counter()
            step(m, batch)
            times[f].append(time.perf_counter() - t0)
    med = {f: statistics.median(v) for f, v in times.items()}
    for f, v in med.items():
        print(f"{f:>10}: {v * 1000:8.1f} ms per fwd+bwd  (batch {args.batch} x {args.length}, "
              f"threads {torch.get_num_threads()})")
    out = {"overhead_faithful": round(med["faithful"] / med["none"], 4),
           "overhead_modulated": round(med["modulated"] / med["none"], 4),
           "vanilla_ms": round(med["none"] * 1000, 2), "faithful_ms": round(med["faithful"] * 1000, 2),
           "modulated_ms": round(med["modulated"] * 1000, 2), "batch": args.batch, "length": args.length,
           "encoder": args.encoder, "repeats": args.repeats, "threads": torch.get_num_threads()}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
