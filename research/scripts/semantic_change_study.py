"""Scorer defaults and the time ablation on a change data spec (the pseudoword benchmark by default).

    python research/scripts/semantic_change_study.py --data pseudoword --seeds 0 \
        --methods plain,no-time,temporal-attention,time-token,both --samples 40 \
        --out research/results/semantic_change/pseudoword_study.json

    # the planted world at notebook 02's settings, one run per model seed (the world itself is fixed)
    python research/scripts/semantic_change_study.py --data world --config notebook --samples 30 --seeds 0 \
        --model-seeds 0,1,2,3,4 --methods plain,temporal-attention,time-token,both \
        --out research/results/semantic_change/world_seeds.json

For each data seed, model seed (``--model-seeds``: ``RankConfig.seed``, which seeds the new
parameters, the post-training and the usage sample) and method: one ``SemanticChangeRanker`` fit
(every hidden layer kept), then the stored vectors are re-scored over a grid of scorers x layers x
z-scoring (no re-embedding). Writes one JSON with the Spearman of every cell and the timings, plus the frequency baseline;
research/results/semantic_change/ reads from it; what notebook 02 shows of it is curated into
tempo_analysis/assets/recorded/semantic_change_*.json (``semantic_change.study``).
Runs that are already in ``--out`` (same data seed, model seed and method) are kept and skipped, so an
interrupted study resumes; a file written with other settings (data, samples, training, config) is refused, so
that one file never mixes runs of different settings under one header.
"""
from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path

import torch

from tempo_analysis.resolve import load_change_data
from tempo_analysis.semantic_change import SemanticChangeRanker
from tempo_analysis.semantic_change.baselines import frequency_change
from tempo_analysis.semantic_change.config import notebook_config, preset
from tempo_analysis.semantic_change.pipeline import evaluate_scores

LAYER_GRID = [1, 2, 4, 6, "1-6", "2-4", "3-5", "0-6"]
SCORERS = ["cosine", "prt", "apd", "apd-within"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default="pseudoword")
    ap.add_argument("--seeds", default="0", help="data seeds (the pseudoword split; the world is fixed)")
    ap.add_argument("--model-seeds", default="0", help="model seeds (RankConfig.seed), one run per seed")
    ap.add_argument("--methods", default="plain,no-time,temporal-attention")
    ap.add_argument("--samples", type=int, default=40)
    ap.add_argument("--epochs", type=float, default=None, help="post-training epochs (default: the config's)")
    ap.add_argument("--max-sentences", type=int, default=None, help="post-training sentence cap")
    ap.add_argument("--head-steps", type=int, default=None, help="MLM head warm-up steps (default: the config's)")
    ap.add_argument("--time-lr", type=float, default=None, help="learning rate of the time parameters (default: the config's)")
    ap.add_argument("--body-lr", type=float, default=None, help="learning rate of the encoder body (default: the config's)")
    ap.add_argument("--target-mask-prob", type=float, default=None,
                    help="post-training masks the target words' pieces with this probability (default: like any token)")
    ap.add_argument("--form", default=None, choices=["faithful", "modulated"],
                    help="temporal-attention form (default: the config's, the paper's faithful form)")
    ap.add_argument("--config", default="default", choices=["default", "notebook"])
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    torch.set_num_threads(1)
    out = {"args": vars(a), "runs": []}
    if Path(a.out).is_file():
        before = json.loads(Path(a.out).read_text())
        skip = ("seeds", "model_seeds", "methods", "out")
        settings = {k: v for k, v in vars(a).items() if k not in skip}
        theirs = {k: v for k, v in before.get("args", {}).items() if k not in skip}
        # an option a file predates counts as its default (None)
        changed = sorted(k for k in settings.keys() | theirs.keys() if settings.get(k) != theirs.get(k))
        if changed:
            raise SystemExit(f"{a.out} holds runs made with other settings ({', '.join(changed)}); "
                             "give another --out, or the same settings to resume it")
        out["runs"] = before["runs"]
    done = {(r["data_seed"], r.get("model_seed", 0), r["method"]) for r in out["runs"]}
    model_seeds = [int(s) for s in a.model_seeds.split(",")]
    for seed in [int(s) for s in a.seeds.split(",")]:
        data = load_change_data(a.data, seed=seed).data
        if (seed, 0, "frequency") not in done:
            m = evaluate_scores(frequency_change(data), data.truth)
            out["runs"].append({"data_seed": seed, "model_seed": 0, "data": data.name, "method": "frequency",
                                "wall_s": 0.0, "scorer": "|log2 freq ratio|", "layers": "",
                                "metrics": {k: v for k, v in m.items() if k != "dropped"}, "grid": []})
        for model_seed, method in [(ms, m) for ms in model_seeds for m in a.methods.split(",")]:
            if (seed, model_seed, method) in done:
                continue
            cfg = preset("cli") if a.config == "default" else notebook_config(method, data=a.data)
            cfg = replace(cfg, method=method, samples=a.samples, seed=model_seed)
            if a.form is not None:
                cfg = replace(cfg, form=a.form)
            if method == "plain":
                cfg = replace(cfg, train=None)
            elif cfg.train is not None:
                tr = cfg.train
                if a.epochs is not None:
                    tr = replace(tr, epochs=a.epochs)
                if a.max_sentences is not None:
                    tr = replace(tr, max_sentences=a.max_sentences)
                if a.head_steps is not None:
                    tr = replace(tr, head_steps=a.head_steps)
                if a.time_lr is not None:
                    tr = replace(tr, time_lr=a.time_lr)
                if a.body_lr is not None:
                    tr = replace(tr, body_lr=a.body_lr)
                if a.target_mask_prob is not None:
                    tr = replace(tr, target_mask_prob=a.target_mask_prob)
                cfg = replace(cfg, train=tr)
            t0 = time.perf_counter()
            r = SemanticChangeRanker(cfg).fit(data)
            grid = []
            for scorer in SCORERS:
                for layers in LAYER_GRID:
                    for z in (False, True):
                        m = r.evaluate(r.rescore(scorer=scorer, layers=layers if isinstance(layers, int) else
                                                 cfg.__class__(layers=layers).layers, zscore=z))
                        grid.append({"scorer": scorer, "layers": str(layers), "zscore": z,
                                     "spearman": m.get("spearman")})
            run = {"data_seed": seed, "model_seed": model_seed, "data": data.name, "method": method,
                   "wall_s": time.perf_counter() - t0, "scorer": cfg.scorer, "layers": cfg.layers,
                   "zscore": cfg.zscore, "samples": cfg.samples,
                   "train": cfg.train_config().to_dict() if cfg.train is not None else None,
                   "timings": r.timings_, "metrics": {k: v for k, v in r.metrics_.items() if k != "dropped"},
                   "grid": grid}
            out["runs"].append(run)
            print(json.dumps({k: run[k] for k in ("data_seed", "model_seed", "method", "wall_s")} |
                             {"spearman": r.metrics_.get("spearman")}), flush=True)
            Path(a.out).parent.mkdir(parents=True, exist_ok=True)
            Path(a.out).write_text(json.dumps(out, indent=1, default=str))


if __name__ == "__main__":
    main()
