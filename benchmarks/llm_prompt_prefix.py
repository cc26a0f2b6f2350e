"""Few-shot LLM stream baseline: the shared prompt prefix computed once against every prompt run whole.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/llm_prompt_prefix.py                   # 24 LRS posts
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/llm_prompt_prefix.py --data world --posts 12

`FewShotLLMClassifier.label_logprobs` scores every (post, label) after the paper's stream prompt:
task text, `--shots` examples of a `--window`-post window, then the post's own window. The examples
are the same for every post, so with `prefix_cache=True` (the default) their keys and values are
computed once and each sequence runs only its own tokens. Both paths score the same posts in the
same run, one after the other (`--repeats` times, interleaved; the fastest of each is kept), and
the log-probabilities are compared (the run exits non-zero if they differ by more than
``MAX_ABS_DIFF``). The default LM is the embedded SmolLM2-135M-Instruct.
The last line is JSON: ``speedup`` (whole / cached wall time), ``max_abs_diff``, the shared
prefix length and the mean tokens per sequence.
"""
from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np
import torch

MAX_ABS_DIFF = 1e-3   # both paths compute the same log-probabilities up to float rounding (~1e-5)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="rumoureval2017", help="a stream data spec (default: rumoureval2017)")
    ap.add_argument("--llm", default="default")
    ap.add_argument("--posts", type=int, default=24, help="test posts scored by each path")
    ap.add_argument("--shots", type=int, default=5)
    ap.add_argument("--window", type=int, default=5)
    ap.add_argument("--batch-size", type=int, default=4)
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args(argv)
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))

    from tempo_analysis.causal_lm import load_causal_lm
    from tempo_analysis.resolve import load_timelines
    from tempo_analysis.evaluation.classification import timeline_folds
    from tempo_analysis.stream.llm_prompt import FewShotLLMClassifier, shared_prefix_length

    tl = load_timelines(args.data).data
    split = timeline_folds(tl, 5, 0.25, 0)[0]
    train, test = tl.subset(split.train), tl.subset(split.test)
    lm = load_causal_lm(args.llm)
    clf = {k: FewShotLLMClassifier(lm, window=args.window, shots=args.shots, batch_size=args.batch_size,
                                   prefix_cache=k == "cached", seed=0).fit(train) for k in ("cached", "whole")}
    rows = np.random.default_rng(0).choice(len(test.df), size=min(args.posts, len(test.df)), replace=False)
    prompts = [clf["cached"].prompt_for(test, int(r)) for r in sorted(rows)]
    times, scores = {"cached": [], "whole": []}, {}
    for _ in range(args.repeats):
        for k in ("whole", "cached"):
            t0 = time.perf_counter()
            scores[k] = clf[k].label_logprobs(prompts)
            times[k].append(time.perf_counter() - t0)
    seqs = [clf["cached"]._encode(p)[0] for p in prompts]
    res = {"data": args.data, "posts": len(prompts), "shots": args.shots, "window": args.window,
           "threads": torch.get_num_threads(),
           "shared_prefix_tokens": shared_prefix_length(seqs, min(map(len, seqs)) - 1),
           "mean_prompt_tokens": round(float(np.mean([len(s) for s in seqs])), 1),
           "whole_s": round(min(times["whole"]), 2), "cached_s": round(min(times["cached"]), 2),
           "speedup": round(min(times["whole"]) / min(times["cached"]), 2),
           "max_abs_diff": float(np.abs(scores["whole"] - scores["cached"]).max())}
    if not res["max_abs_diff"] <= MAX_ABS_DIFF:
        raise SystemExit(f"cached-prefix and whole-prompt log-probabilities differ by {res['max_abs_diff']:.2e} "
                         f"(more than {MAX_ABS_DIFF:.0e})")
    print(f"whole prompts: {res['whole_s']} s, shared prefix once: {res['cached_s']} s "
          f"for {len(prompts)} posts -> {res['speedup']}x; max |diff| {res['max_abs_diff']:.2e}")
    print(json.dumps(res))
    return res


if __name__ == "__main__":
    main()
