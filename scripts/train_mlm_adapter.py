"""Train the MLM adapter of the embedded encoder (tempo_analysis/assets/minilm_mlm_adapter.safetensors).

Reproducible on the same CPU type and thread count: fixed seeds, deterministic algorithms, a
fixed data order and a fixed number of steps. The shipped asset (held-out Brown top-5 0.347) is one
run of 3,000 steps (3,324 s on two threads of a 2-core CPU without AVX512-BF16;
research/results/semantic_change/encoder.md):

    export OMP_NUM_THREADS=2 MKL_NUM_THREADS=2 TOKENIZERS_PARALLELISM=false
    python scripts/train_mlm_adapter.py --data ../shared/data --steps 3000 --warmup 100 --eval-every 1000 \
        --threads 2 --autocast off --out tempo_analysis/assets/minilm_mlm_adapter.safetensors

``--option head --layers K`` measures the cheaper alternative: the body frozen and cut after layer
K, only the MLM head trained (no asset is written unless --out is given).
Training text: ``encoder_mlm.ADAPTER_TEXT`` (ACL abstracts 2010-2014 and Switchboard), which no evaluation
the project reports reads (``--acl-years``/``--nltk`` choose other text). Brown is never read here except
for the held-out evaluation.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tempo_analysis.encoder_mlm import (ADAPTER_TEXT, AdapterConfig, adapter_state, add_lora,  # noqa: E402
                                        adapter_text_rule, brown_sentences, general_text, mlm_eval,
                                        save_adapter)
from tempo_analysis.encoders import load_tokenizer, quiet_transformers, resolve_encoder  # noqa: E402


def pack(token_lists, seq_len: int, cls_id: int, sep_id: int) -> list[list[int]]:
    """Greedy packing of whole sentences into sequences of at most ``seq_len`` tokens with [CLS] .. [SEP]."""
    out, cur = [], []
    room = seq_len - 2
    for ids in token_lists:
        ids = ids[:room]
        if cur and len(cur) + len(ids) > room:
            out.append([cls_id] + cur + [sep_id])
            cur = []
        cur = cur + ids
    if cur:
        out.append([cls_id] + cur + [sep_id])
    return out


def mask_batch(ids: torch.Tensor, special: torch.Tensor, mask_id: int, vocab: int, gen: torch.Generator,
               prob: float = 0.15):
    """BERT masking: ``prob`` of the non-special tokens, 80% [MASK] / 10% random / 10% kept."""
    cand = ~torch.isin(ids, special)
    chosen = (torch.rand(ids.shape, generator=gen) < prob) & cand
    r = torch.rand(ids.shape, generator=gen)
    rand_tok = torch.randint(999, vocab, ids.shape, generator=gen)   # 999+: past [unused] and specials
    inp = ids.clone()
    inp[chosen & (r < 0.8)] = mask_id
    swap = chosen & (r >= 0.8) & (r < 0.9)
    inp[swap] = rand_tok[swap]
    return inp, chosen


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True, help="shared data folder (holding nltk_data/, acl_abstracts_by_year/)")
    ap.add_argument("--out", default=None, help="where to write the adapter .safetensors")
    ap.add_argument("--option", choices=["lora", "head"], default="lora")
    ap.add_argument("--layers", type=int, default=6, help="keep the first K layers of the body (option head)")
    ap.add_argument("--rank", type=int, default=16)
    ap.add_argument("--alpha", type=float, default=32.0)
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seq-len", type=int, default=64)
    ap.add_argument("--lr", type=float, default=1.5e-3)
    ap.add_argument("--warmup", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--eval-sentences", type=int, default=500)
    ap.add_argument("--eval-every", type=int, default=0)
    ap.add_argument("--autocast", choices=["bf16", "off"], default="bf16",
                    help="bfloat16 autocast of the matmuls (about 2x faster on CPUs with AVX512-BF16); weights stay fp32")
    ap.add_argument("--resume", default=None,
                    help="start from this adapter file (a second stage; its data follows the first stage's)")
    ap.add_argument("--data-offset", type=int, default=0,
                    help="skip this many training sequences (a second stage: first stage's steps x batch)")
    ap.add_argument("--report", default=None, help="write the final metrics here as JSON")
    ap.add_argument("--acl-years", type=int, nargs="*", default=list(ADAPTER_TEXT["acl_years"]),
                    help="ACL abstract years to train on (default: those no evaluation reads)")
    ap.add_argument("--nltk", nargs="*", default=list(ADAPTER_TEXT["nltk"]),
                    help="NLTK corpora to train on (default: switchboard; never brown)")
    args = ap.parse_args(argv)

    torch.set_num_threads(args.threads)
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(args.seed)
    t0 = time.time()
    tok = load_tokenizer("default")
    from transformers import BertForMaskedLM

    with quiet_transformers():
        model = BertForMaskedLM.from_pretrained(resolve_encoder("default"))
    if args.option == "head":
        model.bert.encoder.layer = model.bert.encoder.layer[: args.layers]
        model.config.num_hidden_layers = args.layers
    for p in model.parameters():
        p.requires_grad_(False)
    # fresh, seeded head transform (the checkpoint has none)
    torch.manual_seed(args.seed)
    head = model.cls.predictions
    head.transform.dense.reset_parameters()
    head.transform.LayerNorm.reset_parameters()

    # ---- data: general text in a seeded order, packed
    rng = np.random.default_rng(args.seed)
    pairs = general_text(args.data, acl_years=tuple(args.acl_years), nltk=tuple(args.nltk))
    src = Counter(s for s, _ in pairs)
    order = rng.permutation(len(pairs))
    sents = [pairs[i][1] for i in order]
    ids = tok(sents, add_special_tokens=False)["input_ids"]
    seqs = pack(ids, args.seq_len, tok.cls_token_id, tok.sep_token_id)
    need = args.steps * args.batch
    print(f"data: {len(pairs)} sentences {dict(src)}, {len(seqs)} sequences of <= {args.seq_len} tokens; "
          f"{need} needed ({need / len(seqs):.2f} epochs); {time.time() - t0:.0f}s", flush=True)
    special = torch.tensor(sorted(tok.all_special_ids))
    counts = Counter(t for s in seqs for t in s)
    # output bias starts at the log unigram prior: the head predicts frequent words before it learns anything
    freq = torch.full((model.config.vocab_size,), 0.5)
    for t, c in counts.items():
        freq[t] += c
    with torch.no_grad():
        head.bias.copy_(torch.log(freq / freq.sum()))

    trainable = [head.transform.dense.weight, head.transform.dense.bias, head.transform.LayerNorm.weight,
                 head.transform.LayerNorm.bias, head.bias]
    loras = {}
    emb = model.bert.embeddings.word_embeddings.weight
    if args.option == "lora":
        torch.manual_seed(args.seed + 1)
        loras = add_lora(model, AdapterConfig(args.rank, args.alpha))
        trainable += [p for lo in loras.values() for p in (lo.lora_A, lo.lora_B)]
        emb.requires_grad_(True)     # only the [MASK] row is updated (the others' gradients are zeroed)
        keep = torch.zeros(emb.shape[0], 1)
        keep[tok.mask_token_id] = 1.0
        emb.register_hook(lambda g: g * keep)
    if args.resume:
        from tempo_analysis.encoder_mlm import load_adapter

        state, _, _ = load_adapter(args.resume, sha256=None)
        with torch.no_grad():
            for name, lo in loras.items():
                lo.lora_A.copy_(state[f"lora.{name}.A"])
                lo.lora_B.copy_(state[f"lora.{name}.B"])
            head.transform.load_state_dict({k[len("head.transform."):]: v for k, v in state.items()
                                            if k.startswith("head.transform.")})
            head.bias.copy_(state["head.bias"])
            emb[tok.mask_token_id] = state["mask_embedding"]
    for p in trainable:
        p.requires_grad_(True)
    groups = [{"params": trainable, "weight_decay": 0.01}]
    if args.option == "lora":
        groups.append({"params": [emb], "weight_decay": 0.0})
    opt = torch.optim.AdamW(groups, lr=args.lr)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / args.warmup) * max(0.0, 0.5 * (1 + math.cos(math.pi * s / args.steps))))
    gen = torch.Generator().manual_seed(args.seed + 2)
    brown = brown_sentences(args.data, args.eval_sentences, seed=args.seed)

    def evaluate():
        model.eval()
        r = mlm_eval(model, tok, brown, seed=args.seed)
        model.train()
        return r

    model.train()
    t1 = time.time()
    ntok = 0
    for step in range(args.steps):
        rows = [seqs[(args.data_offset + step * args.batch + j) % len(seqs)] for j in range(args.batch)]
        width = max(len(r) for r in rows)
        x = torch.zeros((len(rows), width), dtype=torch.long)
        att = torch.zeros_like(x)
        for i, r in enumerate(rows):
            x[i, :len(r)] = torch.tensor(r)
            att[i, :len(r)] = 1
        inp, chosen = mask_batch(x, special, tok.mask_token_id, model.config.vocab_size, gen)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=args.autocast == "bf16"):
            with torch.set_grad_enabled(args.option != "head"):
                h = model.bert(input_ids=inp, attention_mask=att).last_hidden_state
            logits = model.cls(h[chosen])
        loss = torch.nn.functional.cross_entropy(logits.float(), x[chosen])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_([p for g in groups for p in g["params"]], 1.0)
        opt.step()
        sched.step()
        ntok += int(att.sum())
        if step % 20 == 0 or step == args.steps - 1:
            el = time.time() - t1
            print(f"step {step} loss {loss.item():.3f} {ntok / max(el, 1e-9):.0f} tok/s {el:.0f}s", flush=True)
        if args.eval_every and step and step % args.eval_every == 0:
            print("eval", step, json.dumps(evaluate()), flush=True)

    model.eval()
    res = evaluate()
    res.update(option=args.option, layers=args.layers, steps=args.steps, train_seconds=round(time.time() - t1),
               rank=args.rank if args.option == "lora" else None)
    print("final", json.dumps(res), flush=True)
    if args.report:
        Path(args.report).write_text(json.dumps(res, indent=1))
    if args.out:
        if args.option != "lora":
            raise SystemExit("--out needs --option lora")
        state = adapter_state(model, loras, tok.mask_token_id)
        digest = save_adapter(args.out, state, AdapterConfig(args.rank, args.alpha), base="all-MiniLM-L6-v2",
                              steps=args.steps, batch=args.batch, seq_len=args.seq_len, lr=args.lr, seed=args.seed,
                              resume=Path(args.resume).name if args.resume else "", data_offset=args.data_offset,
                              text=adapter_text_rule(args.acl_years, args.nltk), n_sentences=len(pairs),
                              held_out="brown (evaluation)")
        print(f"wrote {args.out} sha256 {digest} ({Path(args.out).stat().st_size / 1e6:.2f} MB)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
