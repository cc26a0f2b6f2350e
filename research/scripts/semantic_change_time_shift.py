"""Does temporal attention learn a word-specific period shift? The time-only route on a change data spec.

    OMP_NUM_THREADS=1 python research/scripts/semantic_change_time_shift.py --data pseudoword --seed 0 \
        --time-lr 1e-2 --max-sentences 6000 --out research/results/semantic_change/pseudoword_time_shift_seed0.json

Post-trains temporal attention at the library defaults (changes as given), ranks as the CLI does,
then embeds the *same* sampled usages twice, once run under the first compared period and once under
the last, and scores each word by how far its mean vector (the config's layers) moves with the
period alone. The context is identical in both runs, so that shift is all the model learned about the
word from time. Its Spearman with the truth says whether time carries word-specific information: a
shift that is the same for every word (`mean_norm` with a small `mean_resid`) ranks nothing.
"""
from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace

import numpy as np
import torch
from scipy.stats import spearmanr

from tempo_analysis.resolve import load_change_data
from tempo_analysis.semantic_change import SemanticChangeRanker
from tempo_analysis.semantic_change.config import preset
from tempo_analysis.semantic_change.pipeline import sample_usages


def layer_mean(vectors, layers: int) -> np.ndarray:
    return np.asarray(vectors.vectors)[:, -layers:, :].mean(1)


def time_only_shift(ranker, usages, periods, layers: int) -> dict:
    """Per word: cosine distance and the word-specific part of the mean-vector move between periods."""
    runs = [layer_mean(ranker.model_.embed([replace(u, period=p) for u in usages],
                                           max_length=ranker.config.max_length), layers) for p in periods]
    words = np.array([u.word for u in usages])
    names = sorted(set(words))
    means = [np.stack([v[words == w].mean(0) for w in names]) for v in runs]
    d = means[1] - means[0]
    cos = 1 - (means[0] * means[1]).sum(1) / np.linalg.norm(means[0], axis=1) / np.linalg.norm(means[1], axis=1)
    resid = np.linalg.norm(d - d.mean(0), axis=1)
    return {"words": names, "cos_shift": cos.tolist(), "word_specific_shift": resid.tolist(),
            "mean_norm": float(np.linalg.norm(d, axis=1).mean()), "mean_resid": float(resid.mean())}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default="pseudoword")
    ap.add_argument("--seed", type=int, default=0, help="benchmark seed (0 and 1 choose, 2 reports)")
    ap.add_argument("--samples", type=int, default=100)
    ap.add_argument("--time-lr", type=float, default=None)
    ap.add_argument("--body-lr", type=float, default=None)
    ap.add_argument("--max-sentences", type=int, default=None)
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    torch.set_num_threads(1)
    data = load_change_data(a.data, seed=a.seed).data
    cli = preset("cli")
    tr = cli.train
    for field, value in (("time_lr", a.time_lr), ("body_lr", a.body_lr), ("max_sentences", a.max_sentences)):
        if value is not None:
            tr = replace(tr, **{field: value})
    cfg = replace(cli, method="temporal-attention", samples=a.samples, seed=0, progress=False,
                  train=replace(tr, progress=False))
    t0 = time.time()
    ranker = SemanticChangeRanker(cfg).fit(data)
    fit_s = time.time() - t0
    usages, _ = sample_usages(data, a.samples, 0)
    truth = data.truth.set_index("word")["graded"]
    out = {"args": vars(a), "rank_spearman": ranker.metrics_["spearman"], "fit_s": round(fit_s, 1)}
    first, last = data.compared
    for name, subset in (("first_period_usages", [u for u in usages if u.period == first]), ("all_usages", usages)):
        s = time_only_shift(ranker, subset, (first, last), cfg.layers)
        t = truth.reindex(s["words"]).values
        s["spearman_cos_shift"] = float(spearmanr(s["cos_shift"], t).correlation)
        s["spearman_word_specific_shift"] = float(spearmanr(s["word_specific_shift"], t).correlation)
        out[name] = s
        print(name, {k: v for k, v in s.items() if not isinstance(v, list)}, flush=True)
    out["wall_s"] = round(time.time() - t0, 1)
    with open(a.out, "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
