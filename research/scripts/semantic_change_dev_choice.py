"""Notebook 02's post-training settings, chosen on the dev world seeds 0-2 only.

For each (epochs, time_lr) of a small grid and each dev seed, temporal attention is post-trained
at notebook 02's other settings on the planted world of that seed (the seed also seeds the model),
then read twice: on the world's usages (Spearman, by each scorer) and on its probes (the
sentences that read the same in both periods, where only time can rank). One JSON row per fit.

    OMP_NUM_THREADS=1 python research/scripts/semantic_change_dev_choice.py --out FILE.json

The rule recorded with the result: the grid cell with the best mean probe Spearman over seeds 0-2
wins, provided its mean usage Spearman is within 0.05 of the grid's best; the scorers are read over
the winning cell's vectors. Seeds 3 and up are never read here.
"""
from __future__ import annotations

import argparse
import itertools
import json
import time
from dataclasses import replace

import torch

from tempo_analysis.resolve import planted_world
from tempo_analysis.semantic_change import SemanticChangeRanker
from tempo_analysis.semantic_change.config import notebook_config

DEV_SEEDS = (0, 1, 2)
SCORERS = ("cosine", "prt", "apd-within")


def one_fit(seed: int, epochs: float, time_lr: float) -> dict:
    data = planted_world("change", seed).data
    cfg = notebook_config("temporal-attention", seed=seed)
    cfg = replace(cfg, train=replace(cfg.train, epochs=epochs, time_lr=time_lr))
    t0 = time.perf_counter()
    ranker = SemanticChangeRanker(cfg).fit(data)
    probes = SemanticChangeRanker(cfg).fit(data.probe_part(), model=ranker.model_)
    row = {"seed": seed, "epochs": epochs, "time_lr": time_lr, "seconds": round(time.perf_counter() - t0, 1)}
    for scorer in SCORERS:
        row[f"usages_{scorer}"] = float(ranker.evaluate(ranker.rescore(scorer=scorer)).get("spearman", float("nan")))
        row[f"probes_{scorer}"] = float(probes.evaluate(probes.rescore(scorer=scorer)).get("spearman", float("nan")))
    return row


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=float, nargs="+", default=[0.5, 1.0])
    p.add_argument("--time-lr", type=float, nargs="+", default=[5e-3, 1e-2, 2e-2])
    p.add_argument("--out", required=True)
    args = p.parse_args()
    torch.set_num_threads(1)
    rows = []
    for epochs, time_lr in itertools.product(args.epochs, args.time_lr):
        for seed in DEV_SEEDS:
            rows.append(one_fit(seed, epochs, time_lr))
            print(json.dumps(rows[-1]), flush=True)
            with open(args.out, "w") as fh:
                json.dump({"dev_seeds": list(DEV_SEEDS), "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
