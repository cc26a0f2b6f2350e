"""Lesson 01's headline at fewer training epochs, on the dev world seeds 0-2 only.

For each dev seed, TempoFormer and its time-blind control are trained at notebook 01's settings
with ``--epochs`` instead of the preset's, on that seed's planted world and split, exactly as
``tempo-analysis study 01`` does; one JSON row per seed with the headline numbers and the seconds.

    OMP_NUM_THREADS=1 python research/scripts/stream_epochs_dev.py --epochs 3 --out FILE.json
"""
from __future__ import annotations

import argparse
import json
import time

import torch

from tempo_analysis.resolve import planted_world
from tempo_analysis.stream.config import NOTEBOOK_EXPERIMENT, preset
from tempo_analysis.stream.experiment import split_timelines
from tempo_analysis.stream.time_effect import headline_numbers, time_effect, world_change_kinds

DEV_SEEDS = (0, 1, 2)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, required=True)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    rows = []
    for seed in DEV_SEEDS:
        world = planted_world("timelines", seed)
        settings = dict(preset("notebook").to_dict(), seed=seed, epochs=args.epochs, progress=False)
        train, dev, test = split_timelines(world.data, NOTEBOOK_EXPERIMENT.folds, NOTEBOOK_EXPERIMENT.fold, seed)
        t0 = time.perf_counter()
        te = time_effect(train, dev, test, settings, kinds=world_change_kinds(world.truth))
        rows.append(dict(seed=seed, epochs=args.epochs, threads=args.threads,
                         seconds=round(time.perf_counter() - t0, 1), **headline_numbers(te)))
        print(json.dumps(rows[-1]), flush=True)
        with open(args.out, "w") as fh:
            json.dump({"dev_seeds": list(DEV_SEEDS), "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
