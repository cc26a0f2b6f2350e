"""DCWE training-step time: per-batch GNN (ours) vs per-example GNN (reference design) vs plain MLM.

    .venv/bin/python benchmarks/dcwe_step.py                      # MiniLM, ArXiv-sized graph
    .venv/bin/python benchmarks/dcwe_step.py --tiny --steps 3     # quick smoke run

All three paths train the same encoder on the same batches in one process, interleaved
(A B C A B C ...) so machine load hits them alike; each reports the median step time.
- per-batch: each needed slice's GAT runs once per batch, rows gathered (DCWEForMaskedLM). Batches
  hold one time slice each, as the training pipeline builds them (SliceBatchSampler): 2 GAT passes
  per step (s_t and s_{t-1}); `--mixed-slices` draws every example's slice at random instead.
- per-example: the reference code's design, the full-graph GAT once per example for s_t and once
  for s_{t-1} (2·B passes per step); everything else identical.
- plain: the encoder's MLM alone (CWE), same masked-positions-only output layer.
The last line is JSON: gnn_calls_ratio (GAT passes per step, per-example / per-batch),
speedup_vs_per_example (whole step), gnn_speedup (the dynamic component alone, forward + backward:
social GATs, offset FFNs and priors, per-example / per-batch), extra_cost_ratio (step time above
plain MLM, per-example / per-batch), overhead_vs_plain_mlm (whole step, per-batch / plain), targets.
"""
from __future__ import annotations

import argparse
import copy
import json
import statistics
import sys
import time
import warnings

import networkx as nx
import numpy as np
import torch

from tempo_analysis.diffusion.mlm import MLMCollator, PlainMLM
from tempo_analysis.diffusion.model import DCWEForMaskedLM, DynamicComponent
from tempo_analysis.encoders import load_encoder, tiny_encoder


class PerExampleDynamic(DynamicComponent):
    """Reference design: the full-graph GAT runs for every example (for s_t and again for s_{t-1})."""

    def social_lookup(self, t, units, examples, cache):
        rows = torch.empty(len(units), self.config.social_dim, device=units.device)
        for b in torch.unique(examples).tolist():          # Python loop over examples
            sel = (examples == b).nonzero(as_tuple=True)[0]
            rows[sel] = self.social_table(t)[units[sel]]    # a fresh full-graph pass per example
        return rows


def make_graph(n_units: int, n_edges: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    g = nx.gnm_random_graph(n_units, n_edges, seed=seed)
    e = np.array(list(g.edges), dtype=np.int64).T
    return np.random.default_rng(seed).normal(size=(n_units, 50)).astype(np.float32), np.concatenate([e, e[::-1]], 1)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--encoder", default="default")
    ap.add_argument("--tiny", action="store_true", help="a 2-layer hidden-32 random BERT (smoke test)")
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--seq-len", type=int, default=64)
    ap.add_argument("--units", type=int, default=535, help="graph nodes (paper ArXiv: 535)")
    ap.add_argument("--edges", type=int, default=5165, help="graph edges (paper ArXiv: 5,165)")
    ap.add_argument("--slices", type=int, default=10)
    ap.add_argument("--mixed-slices", action="store_true",
                    help="batches mix slices (default: one slice per batch, as the pipeline trains)")
    ap.add_argument("--steps", type=int, default=8, help="timed steps per path (after 1 warm-up step)")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    warnings.filterwarnings("ignore")
    enc, tok = tiny_encoder(head="mlm", seed=args.seed) if args.tiny else load_encoder(args.encoder, head="mlm")
    x, ei = make_graph(args.units, args.edges, args.seed)
    vocab_ids = [i for i, t in enumerate(tok.convert_ids_to_tokens(list(range(2000, 12000)))) if t.isalpha()]
    vocab_ids = [2000 + i for i in vocab_ids]

    def dcwe(per_example: bool):
        m = DCWEForMaskedLM.from_encoder(_copy(enc), node_features=x, edge_index=ei, dynamic_token_ids=vocab_ids,
                                         num_slices=args.slices, offset_dropout=0.0)
        if per_example:
            m.dynamic.__class__ = PerExampleDynamic
        return m

    models = {"per_batch": dcwe(False), "per_example": dcwe(True), "plain": PlainMLM(_copy(enc))}
    models["per_example"].load_state_dict(models["per_batch"].state_dict())
    gen = torch.Generator().manual_seed(args.seed)
    collate = MLMCollator(tok, generator=gen)
    rng = np.random.default_rng(args.seed)

    def batch():
        ids = rng.choice(vocab_ids + list(range(1000, 2000)), size=(args.batch_size, args.seq_len - 2))
        one = int(rng.integers(1, args.slices))  # training batches hold one slice (SliceBatchSampler)
        items = [{"input_ids": [tok.cls_token_id, *row.tolist(), tok.sep_token_id],
                  "unit_ids": int(rng.integers(args.units)),
                  "slice_ids": int(rng.integers(args.slices)) if args.mixed_slices else one}
                 for row in ids]
        return collate(items)

    batches = [batch() for _ in range(args.steps + 1)]
    # the per-example path must compute exactly what ours computes (on a mixed-slice batch, with
    # non-zero offsets: at the zero-initialised start every offset is 0 and any lookup would agree)
    check_same_computation(models["per_batch"], models["per_example"], mixed_batch(tok, vocab_ids, args, collate))
    opts = {k: torch.optim.AdamW(m.parameters(), lr=1e-5) for k, m in models.items()}
    times = {k: [] for k in models}
    calls = {}
    for step, bt in enumerate(batches):
        for name, m in models.items():
            m.train()
            if hasattr(m, "dynamic"):
                m.dynamic.gnn_calls = 0
            t0 = time.perf_counter()
            loss = m(**bt).loss
            loss.backward()
            opts[name].step()
            opts[name].zero_grad(set_to_none=True)
            dt = time.perf_counter() - t0
            if step:  # step 0 is warm-up
                times[name].append(dt)
                if hasattr(m, "dynamic"):
                    calls.setdefault(name, []).append(m.dynamic.gnn_calls)
        print(f"step {step}: " + ", ".join(f"{k} {times[k][-1]:.3f}s" for k in models if step), file=sys.stderr)
    # the dynamic component alone (social GATs + offset FFNs + priors), forward + backward
    dyn_times = {"per_batch": [], "per_example": []}
    for bt in batches[1:]:
        for name in dyn_times:
            m = models[name]
            e = m.encoder.get_input_embeddings()(bt["input_ids"]).detach()
            t0 = time.perf_counter()
            _, o_p, pa, pw, _ = m.dynamic(e, bt["input_ids"], bt["attention_mask"], bt["unit_ids"], bt["slice_ids"])
            (o_p.sum() + pa + pw).backward()
            dyn_times[name].append(time.perf_counter() - t0)
            m.zero_grad(set_to_none=True)
    dyn = {k: statistics.median(v) for k, v in dyn_times.items()}
    med = {k: statistics.median(v) for k, v in times.items()}
    mean_calls = {k: float(np.mean(v)) for k, v in calls.items()}
    extra = {k: max(med[k] - med["plain"], 1e-9) for k in ("per_batch", "per_example")}
    B = args.batch_size
    result = {
        "encoder": "tiny" if args.tiny else args.encoder, "batch_size": B, "seq_len": args.seq_len,
        "units": args.units, "edges": args.edges, "slices": args.slices, "steps": args.steps,
        "batches": "mixed slices" if args.mixed_slices else "one slice per batch",
        "threads": torch.get_num_threads(),
        "step_s": {k: round(v, 4) for k, v in med.items()},
        "gnn_calls_per_step": mean_calls,
        "gnn_calls_ratio": round(mean_calls["per_example"] / mean_calls["per_batch"], 3),
        "speedup_vs_per_example": round(med["per_example"] / med["per_batch"], 3),
        "dynamic_component_s": {k: round(v, 4) for k, v in dyn.items()},
        "gnn_speedup": round(dyn["per_example"] / dyn["per_batch"], 3),
        "extra_cost_ratio": round(extra["per_example"] / extra["per_batch"], 3),
        "overhead_vs_plain_mlm": round(med["per_batch"] / med["plain"], 3),
        "targets": {"speedup_vs_per_example": f">= {B / 2}", "overhead_vs_plain_mlm": "<= 1.3"},
    }
    print(f"per-batch {med['per_batch']:.3f}s  per-example {med['per_example']:.3f}s  plain {med['plain']:.3f}s")
    print(json.dumps(result))
    return 0


def _copy(model):
    return copy.deepcopy(model)


def mixed_batch(tok, vocab_ids, args, collate, n: int = 8) -> dict:
    """A batch whose examples come from different units AND slices (>= 1, so o_{t-1} is used)."""
    rng = np.random.default_rng(args.seed + 1)
    items = [{"input_ids": [tok.cls_token_id, *rng.choice(vocab_ids, size=12).tolist(), tok.sep_token_id],
              "unit_ids": int(rng.integers(args.units)), "slice_ids": 1 + i % max(args.slices - 1, 1)}
             for i in range(n)]
    return collate(items)


@torch.no_grad()
def check_same_computation(ours, reference, batch: dict, seed: int = 0) -> float:
    """Give both models the same random (non-zero) offset weights; their losses, offsets and walk
    priors must agree. Raises AssertionError naming what differs; returns the mean |offset|."""
    gen = torch.Generator().manual_seed(seed)
    for ffn in ours.dynamic.ffns:
        ffn.fc2.weight.copy_(torch.randn(ffn.fc2.weight.shape, generator=gen) * 0.05)
        ffn.fc2.bias.copy_(torch.randn(ffn.fc2.bias.shape, generator=gen) * 0.05)
    reference.load_state_dict(ours.state_dict())
    ours.eval(), reference.eval()
    a, b = ours(**batch), reference(**batch)
    size = float(a.offsets.abs().mean())
    assert size > 1e-4, "the check's offsets are zero: it could not tell two lookups apart"
    assert torch.allclose(a.offsets, b.offsets, atol=1e-5), "per-example path computes other offsets"
    assert torch.allclose(a.prior_w, b.prior_w, atol=1e-5), "per-example path computes another walk prior"
    assert torch.allclose(a.loss, b.loss, atol=1e-5), "per-example path computes another loss"
    for ffn in list(ours.dynamic.ffns) + list(reference.dynamic.ffns):   # back to the zero start
        ffn.fc2.weight.zero_(), ffn.fc2.bias.zero_()
    return size


if __name__ == "__main__":
    sys.exit(main())
