"""TempoFormer's forward against a plain re-reading of the paper's equations, one window and one
post at a time: the local stack per post, then in every upper layer the stream position, the BERT
layer over each post's tokens, the temporal attention over the posts' summaries with rotary time,
the stream-aware [CLS] written back into each post for the next layer, and finally Gate&Norm and
the head over [local vector ; stream vector]. The batched model (shared posts, gathered windows,
[CLS]-only last layer) must give the same logits."""
import pytest
import torch

from tempo_analysis.stream.model import time_positions

from .test_tempoformer import batch_for, tiny_model


def reference_logits(model, batch) -> torch.Tensor:
    cfg = model.config
    ids, am = batch["input_ids"], batch["attention_mask"]
    out = []
    for b in range(batch["window_index"].shape[0]):
        rows = [int(r) for r, real in zip(batch["window_index"][b], batch["window_mask"][b]) if real]
        n = len(rows)
        times = batch["post_times"].double()
        gaps = times[rows[-1]] - times[rows]                           # to the current post, the last one
        dist = torch.arange(n - 1, -1, -1)                             # slots from the current post
        positions = dist.float() if cfg.ablation == "sequential_rope" else time_positions(gaps, cfg)
        posts = [ids[r][am[r].bool()][None] for r in rows]             # each post alone, no padding
        xs = [model.local_encode(p, torch.ones_like(p))[0] for p in posts]
        cur = xs[-1]
        local = model.pool_local(cur[:1])[0] if cfg.summary == "cls" else cur.mean(0)
        for u, layer in enumerate(model.upper_layers):
            if model._use_s[u]:
                xs = [model.stream_norm[u](x + model.stream_pos[u](dist[i])) for i, x in enumerate(xs)]
            xs = [layer(x[None], None)[0] for x in xs]
            mean = cfg.summary == "mean" or (cfg.summary == "mean_then_cls" and u == 0)
            tops = torch.stack([x.mean(0) if mean else x[0] for x in xs])
            fused, _ = model.temporal[u](tops[None], positions[None], torch.ones(1, n, dtype=torch.bool))
            fused = fused[0]
            if u < model.num_upper - 1:                                # the stream's [CLS] goes back in
                xs = [torch.cat([fused[i][None], x[1:]]) for i, x in enumerate(xs)]
        h_loc, h_glob = tops[-1], fused[-1]
        stream = model.gate_norm(h_loc[None], h_glob[None])[0] if model.gate_norm is not None else h_glob
        out.append(model.head(torch.cat([local, stream])[None])[0])
    return torch.stack(out)


@pytest.mark.parametrize("ablation,summary,layers", [
    ("none", "cls", 3), ("none", "cls", 4), ("none", "mean", 4), ("none", "mean_then_cls", 4),
    ("no_gate_norm", "cls", 4), ("vanilla_mha", "cls", 4), ("sequential_rope", "cls", 4), ("no_s11", "cls", 4),
    ("no_s10_s11", "mean", 4),
])
@torch.no_grad()
def test_batched_forward_equals_the_equations_window_by_window(timelines, tokenizer, ablation, summary, layers):
    model = tiny_model(ablation, layers=layers, summary=summary, num_local_layers=1)
    assert model.num_upper == layers - 1 >= 2
    batch = batch_for(timelines, tokenizer, window=4)
    assert not batch["window_mask"].all()                            # short windows are in the batch
    got = model(**{k: batch[k] for k in ("input_ids", "attention_mask", "window_index", "window_mask",
                                        "post_times")}).logits
    torch.testing.assert_close(got, reference_logits(model, batch), atol=2e-5, rtol=1e-4)

