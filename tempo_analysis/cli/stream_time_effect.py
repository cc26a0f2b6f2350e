"""`tempo-analysis stream time-effect`: does the model use time? TempoFormer against its time-blind control.

    tempo-analysis stream time-effect --data csv:posts.csv --out time_effect.json
    tempo-analysis stream time-effect --data world --time-unit s --window 3 --epochs 4 --lr 1e-4 --head-lr 2e-3 \\
        --batch-size 8 --freeze-local --out time_effect.json          (notebook 01's section 3)

Trains TempoFormer (or `--variant tempoformer_vectors`) and the same model with its rotary time
embedding removed (ablation vanilla_mha: the gaps enter nowhere) on ONE timeline-level split (fold
`--fold` of `--folds`), with the same seed and budget, then reports on the test timelines:
- both models' macro-F1, and `time_effect`, their difference;
- `gap_sensitivity`: the mean |change in p(change)| on the test change posts when a post's gap to
  the previous post moves from 10 s to 1 day (nothing retrained; 0 for a model that ignores time);
- `gap_sweep`: the mean p(change) of the test change posts at gaps from 1 s to 4 days, both models;
- on the planted world, recall on the switches that only the gap reveals, with the chance level.
p(change) is 1 - p(no-change label): "O", "no_switch" or "N-Sw", or the label named by
`--no-change-label`. One split is one draw: `stream evaluate` with and without
`--ablation vanilla_mha`, then `stream compare`, gives the cross-validated difference.
"""
from __future__ import annotations

import argparse
import json
import time

from tempo_analysis.cli import add_output_options, chosen_preset, refuse_options, require_range
from tempo_analysis.outputs import prepare_output_file, stamp, write_file_atomic

SWEEP_GAPS = (1.0, 4 * 86400.0, 25)   # geomspace: 1 s to 4 days, 25 gaps


def register_time_effect(sub) -> None:
    """Add `stream time-effect` to the `stream` group's subparsers."""
    from tempo_analysis.cli.stream_options import add_data_and_model_options
    from tempo_analysis.stream.config import CLI_EXPERIMENT, StreamConfig

    t = sub.add_parser("time-effect", help="TempoFormer against its time-blind control on one split; gap what-ifs",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_data_and_model_options(t, windows=False)
    t.add_argument("--variant", default="tempoformer", choices=["tempoformer", "tempoformer_vectors"],
                   help="tempoformer (the default), or tempoformer_vectors: its temporal attention over frozen "
                        "sentence vectors")
    t.add_argument("--folds", type=int, default=CLI_EXPERIMENT.folds,
                   help=f"k of the timeline-level k-fold split (default {CLI_EXPERIMENT.folds})")
    t.add_argument("--fold", type=int, default=CLI_EXPERIMENT.fold,
                   help=f"which fold is the test split (default {CLI_EXPERIMENT.fold})")
    t.add_argument("--seed", type=int, default=StreamConfig.seed,
                   help=f"model seed, the same for both models (default {StreamConfig.seed})")
    t.add_argument("--no-change-label", default=None,
                   help="the label meaning 'no change' (default: O, no_switch or N-Sw, whichever the data has)")
    t.add_argument("--out", required=True, help="results JSON path")
    add_output_options(t)
    t.set_defaults(func=run_time_effect, ablation="none", llm=None)   # read by the shared helpers


def check_time_effect_options(args) -> None:
    """Refuse bad values and options that cannot apply, before any data is read."""
    from tempo_analysis.cli.stream_options import check_numbers

    check_numbers(args)
    require_range(args, "--seed", low=0, use="a seed >= 0")
    if args.folds < 2:
        raise ValueError(f"--folds {args.folds}: use 2 or more (one fold is the test split).")
    if not 0 <= args.fold < args.folds:
        raise ValueError(f"--fold {args.fold}: folds are numbered 0 to {args.folds - 1} with --folds {args.folds}.")
    refuse_options(args, ["--patience"], when=args.dev_fraction == 0,
                   apply_to="runs with a dev split (early stopping is decided on dev)", here="--dev-fraction 0",
                   fix="give --dev-fraction > 0 (default 0.25)")


def run_time_effect(args) -> int:
    """Train both models on one split, score them, move the gaps; write the JSON, print the summary."""
    from tempo_analysis.cli.stream_options import stream_preset

    stream_preset(args, windows=False)       # the preset's protocol for the options not given
    check_time_effect_options(args)
    if args.print_config:
        from tempo_analysis.cli.stream_options import print_stream_config

        name, settings = time_effect_settings(args)
        protocol = {k: getattr(args, k) for k in ("data", "window", "folds", "fold", "seed", "dev_fraction",
                                                 "split_seed", "max_timelines", "time_unit")}
        return print_stream_config(args, chosen_preset(args), name, settings, protocol)
    out = prepare_output_file(args.out, overwrite=args.overwrite, kind="stream-time-effect")  # before any work
    import numpy as np  # the command's heavy imports load only when it runs
    import torch

    from tempo_analysis.cli.stream_options import check_model_names
    from tempo_analysis.data.timelines import check_labels_seen
    from tempo_analysis.resolve import load_timelines
    from tempo_analysis.stream.experiment import make_classifier, split_timelines
    from tempo_analysis.stream.time_effect import (change_posts, describe_time_effect, gap_what_if, no_change_index,
                                                   time_blind, time_effect, world_change_kinds)

    if args.threads:
        torch.set_num_threads(args.threads)
    name, settings = time_effect_settings(args)
    check_model_names(args, encoder=settings.get("encoder") if args.model is None else None)
    resolved = load_timelines(args.data, time_unit=args.time_unit, max_timelines=args.max_timelines,
                              seed=args.split_seed)
    tl = resolved.data
    if not tl.label_names:
        raise ValueError(f"--data {args.data!r} has no labels; the time effect needs a 'label' column")
    try:
        no_change_index(tl.label_names, args.no_change_label)
    except ValueError as e:
        raise ValueError(f"--no-change-label: {e}") from None
    train, dev, test = split_timelines(tl, args.folds, args.fold, args.split_seed, args.dev_fraction)
    check_labels_seen(train, test)
    ids = change_posts(test, tl.label_names, args.no_change_label)
    if not ids:
        raise ValueError(f"the test split (--fold {args.fold} of {args.folds}) holds no labelled change post, so no "
                         "gap can be moved. Fix: choose another --fold, fewer --folds or more timelines.")
    kinds = world_change_kinds(resolved.truth) if resolved.truth is not None else None   # the world's planted kinds
    t0 = time.perf_counter()

    def fit(_, s):
        return make_classifier(name, **s).fit(train, dev if len(dev) else None)

    res = time_effect(train, dev, test, settings, kinds=kinds, fit=fit, no_change=args.no_change_label)
    gaps = np.geomspace(*SWEEP_GAPS)
    sweep = {"gap_s": gaps.tolist()}
    for m in ("tempoformer", "control"):
        sweep[m] = gap_what_if(res["models"][m], test, ids, gaps, args.no_change_label).mean(axis=0).tolist()
    report = {"data": args.data, "timelines": len(tl.timeline_ids), "posts": len(tl), "variant": name,
              "control": time_blind({})["ablation"],
              "settings": {k: v for k, v in settings.items() if k != "progress"},
              "split": {"folds": args.folds, "fold": args.fold, "split_seed": args.split_seed,
                        "dev_fraction": args.dev_fraction, "train_timelines": len(train.timeline_ids),
                        "dev_timelines": len(dev.timeline_ids), "test_timelines": len(test.timeline_ids),
                        "test_posts": len(test), "test_change_posts": len(ids)},
              "label_names": tl.label_names, "time_effect": res["time_effect"],
              "gap_sensitivity": res["gap_sensitivity"], "time_only_recall": res["time_only_recall"],
              "gap_sweep": sweep, "seconds": round(time.perf_counter() - t0, 1)}
    for m in ("tempoformer", "control"):
        report[m] = {k: v for k, v in res[m].items() if k != "proba"}
    write_file_atomic(out, json.dumps(stamp(report, "stream-time-effect"), indent=2))
    print(f"{name} macro-F1 {res['tempoformer']['macro_f1']:.3f} · time-blind control "
          f"{res['control']['macro_f1']:.3f} ({len(test.timeline_ids)} test timelines, {len(test)} posts)")
    print(describe_time_effect(res, names=(name, "control")))
    print(f"-> {out}")
    return 0


def time_effect_settings(args) -> tuple[str, dict]:
    """(model name, its settings) from the command line; the control gets the same with time removed."""
    from tempo_analysis.cli.stream_options import (merged_settings, preset_model_settings, refuse_untaken_settings,
                                                   settings_from_args)
    from tempo_analysis.stream.experiment import model_settings

    name = args.variant
    explicit, ambient = settings_from_args(args)
    refuse_untaken_settings(name, explicit)
    params = set(model_settings(name))
    from_preset = preset_model_settings(chosen_preset(args), name, explicit)
    return name, {**merged_settings(ambient, from_preset, explicit, params), "window": args.window,
                  "seed": args.seed}


def world_kinds(spec: str):
    """post_id -> change kind ("none" / "text" / "time") for the planted world's timelines; None for other data."""
    import warnings

    from tempo_analysis.data.specs import parse_spec
    from tempo_analysis.resolve import TIMELINE_SPECS, load_timelines
    from tempo_analysis.stream.time_effect import world_change_kinds

    s = parse_spec(spec, TIMELINE_SPECS)
    if s.kind != "world":
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # load_timelines already said that the world is generated in memory
        truth = load_timelines(spec).truth
    return world_change_kinds(truth)
