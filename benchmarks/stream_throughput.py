"""Training throughput of TempoFormer (streams/s) for three ways of encoding a batch's posts.

1. shared      : each unique post of the batch goes through the local stack once (our design);
2. per_window  : every window carries its own copy of each of its posts, dynamic padding;
3. reference   : per-window copies padded to 512 tokens (the public reference code's design).

Same model, same windows, one training step = forward + backward + AdamW step; the paths are
interleaved batch by batch so that load on a shared machine hits them alike. Batches are whole
timelines' runs of consecutive windows (as in training, see stream.batching.window_chunks).
The reference path is timed on a few windows of each batch only (it is ~50x slower).
Before timing, for each W, the three paths' logits on the first batch are checked to agree (eval mode,
no gradients; the layouts compute the same thing up to float rounding): the run exits non-zero
otherwise, naming the path that differed.

The theoretical speed-up of (1) over (2) for full windows, with every post encoded once, is
bound = L*W / (L_local + L_upper*W). Our last layer computes only [CLS] rows (exact), which
makes both paths cheaper and the measured ratio can exceed that bound.

    python benchmarks/stream_throughput.py                  # LRS posts if shared/data is found
    python benchmarks/stream_throughput.py --encoder tiny --windows 2 --max-windows 8   # smoke run
The last printed line is one JSON object (W = the largest window).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import numpy as np
import pandas as pd
import torch

from tempo_analysis.data import Timelines
from tempo_analysis.data.locations import shared_data_dir
from tempo_analysis.resolve import load_timelines
from tempo_analysis.encoders import load_encoder, tiny_encoder
from tempo_analysis.stream.batching import WindowDataset, build_stream_data, collate_windows, model_inputs
from tempo_analysis.stream.batching import per_window_batch
from tempo_analysis.stream.model import TempoFormerModel

SHARED = shared_data_dir()
HAS_LRS = SHARED is not None and (SHARED / "rumoureval2017").is_dir()


def lrs_shaped_timelines(n: int = 40, seed: int = 0) -> Timelines:
    """Real RumourEval threads when the shared data is present, else synthetic tweets of LRS shape
    (timeline length ~ LRS: mean 17, median 13; 10-30 words per post)."""
    if HAS_LRS:
        return load_timelines("rumoureval2017", max_timelines=n, seed=seed).data
    rng = np.random.default_rng(seed)
    vocab = "claim police report breaking news source confirmed false true hostages cafe plane crash " \
            "video photo witnesses says reports unconfirmed rt via http amazing sad wow".split()
    rows = []
    for k in range(n):
        t = 1.4e9 + k * 1e5
        for i in range(int(np.clip(rng.lognormal(2.6, 0.6), 2, 60))):
            t += float(rng.lognormal(4.6, 2.0)) if i else 0.0
            rows.append(dict(timeline_id=f"t{k}", post_id=f"t{k}-{i}", timestamp=t, label="no_switch",
                             text=" ".join(rng.choice(vocab, size=int(rng.integers(10, 31))))))
    return Timelines.from_frame(pd.DataFrame(rows), time_unit="s", min_posts=1)


def build_model(encoder: str, num_local: int | None):
    if encoder == "tiny":
        enc, tok = tiny_encoder(hidden=64, layers=4, heads=2, max_position=512)
    else:
        enc, tok = load_encoder(encoder)
    kw = {} if num_local is None else {"num_local_layers": num_local}
    return TempoFormerModel.from_encoder(enc, num_labels=2, **kw), tok


def step(model, opt, batch) -> None:
    out = model(**model_inputs(batch))
    out.loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)


def check_agreement(model, shared, per, ref, ref_rows, W: int) -> None:
    """Exit naming the path whose logits differ from the shared path's (eval mode, no gradients)."""
    model.eval()
    with torch.no_grad():
        want = model(**model_inputs(shared)).logits
        got = {"per_window": (model(**model_inputs(per)).logits, want),
               "reference": (model(**model_inputs(ref)).logits, want[ref_rows])}
    model.train()
    for name, (g, w) in got.items():
        try:
            torch.testing.assert_close(g, w, atol=1e-4, rtol=1e-4)
        except AssertionError as e:
            raise SystemExit(f"W={W}: {name} logits differ from the shared path's: {e}") from None


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--encoder", default="default", help="'default' (MiniLM), HF name/path, or 'tiny'")
    ap.add_argument("--windows", type=int, nargs="+", default=[5, 10, 20])
    ap.add_argument("--timelines", type=int, default=40, help="timelines sampled (LRS or synthetic)")
    ap.add_argument("--max-windows", type=int, default=48, help="windows timed per path and W")
    ap.add_argument("--batch", type=int, default=16, help="windows per training batch")
    ap.add_argument("--ref-windows", type=int, default=1, help="windows of each batch timed on the 512 path")
    ap.add_argument("--max-length", type=int, default=64)
    ap.add_argument("--num-local", type=int, default=None)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    model, tok = build_model(args.encoder, args.num_local)
    model.train()
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-5)
    L, L_loc = model.num_local + model.num_upper, model.num_local
    tl = lrs_shaped_timelines(args.timelines, args.seed)
    tokens = None
    report = {"encoder": args.encoder, "layers": L, "local_layers": L_loc, "upper_layers": L - L_loc,
              "timelines": len(tl.timeline_ids), "source": "rumoureval2017" if HAS_LRS else "synthetic",
              "threads": torch.get_num_threads(), "per_W": {}}
    print(f"# {report['source']} posts, encoder {args.encoder} ({L_loc} local + {L - L_loc} upper layers), "
          f"{torch.get_num_threads()} threads")
    print(f"{'W':>3} {'shared/s':>9} {'per_win/s':>10} {'ref512/s':>9} {'sh/pw':>6} {'bound':>6} {'sh/ref':>7} "
          f"{'posts/win sh':>12} {'pw':>5}")
    rng = np.random.default_rng(args.seed)
    for W in args.windows:
        data = build_stream_data(tl, W, tok, args.max_length, tokens=tokens)
        tokens = data.tokens
        data.labels = np.zeros(len(data), dtype=np.int64)
        ds = WindowDataset(data, chunk=args.batch)
        order = rng.permutation(len(ds))
        batches, n = [], 0
        for i in order:  # runs of consecutive windows, packed into batches of ~args.batch windows
            pos = ds.chunks[i]
            if batches and len(batches[-1]) + len(pos) <= args.batch:
                batches[-1] = np.concatenate([batches[-1], pos])
            else:
                batches.append(pos)
            n += len(pos)
            if n >= args.max_windows:
                break
        t = {"shared": 0.0, "per_window": 0.0, "reference": 0.0}
        count = {"shared": 0, "per_window": 0, "reference": 0}
        slots = {"shared": 0, "per_window": 0}
        first = True
        for pos in batches:
            shared = collate_windows(data, pos)
            per = per_window_batch(shared)
            ref_pos = rng.choice(pos, size=min(args.ref_windows, len(pos)), replace=False)
            ref = per_window_batch(collate_windows(data, ref_pos), pad_to=512)
            if first:  # agreement of the paths, then warm-up (allocator, kernels) on every path
                check_agreement(model, shared, per, ref, [list(pos).index(p) for p in ref_pos], W)
                for b in (shared, per, ref):
                    step(model, opt, b)
                first = False
            for name, b, k in (("shared", shared, len(pos)), ("per_window", per, len(pos)),
                               ("reference", ref, len(ref_pos))):
                t0 = time.perf_counter()
                step(model, opt, b)
                t[name] += time.perf_counter() - t0
                count[name] += k
            slots["shared"] += shared["input_ids"].shape[0]
            slots["per_window"] += per["input_ids"].shape[0]
        rate = {k: count[k] / t[k] for k in t}
        bound = L * W / (L_loc + (L - L_loc) * W)
        row = {"streams_per_s": {k: round(v, 3) for k, v in rate.items()},
               "shared_vs_per_window": round(rate["shared"] / rate["per_window"], 3), "bound": round(bound, 3),
               "shared_vs_reference": round(rate["shared"] / rate["reference"], 2),
               "posts_encoded_per_window": {"shared": round(slots["shared"] / count["shared"], 2),
                                            "per_window": round(slots["per_window"] / count["per_window"], 2)},
               "windows_timed": count}
        report["per_W"][str(W)] = row
        print(f"{W:>3} {rate['shared']:>9.2f} {rate['per_window']:>10.2f} {rate['reference']:>9.3f} "
              f"{row['shared_vs_per_window']:>6.2f} {bound:>6.2f} {row['shared_vs_reference']:>7.1f} "
              f"{row['posts_encoded_per_window']['shared']:>12.2f} {row['posts_encoded_per_window']['per_window']:>5.2f}")
        sys.stdout.flush()
    top = report["per_W"][str(max(args.windows))]
    final = {"W": max(args.windows), "shared_vs_per_window": top["shared_vs_per_window"], "bound": top["bound"],
             "shared_vs_reference": top["shared_vs_reference"],
             "target_shared_vs_per_window": round(0.9 * top["bound"], 3), "target_shared_vs_reference": 20,
             "details": report}
    print(json.dumps(final))
    return final


if __name__ == "__main__":
    main()
