"""`tempo-analysis stream {evaluate,compare}`: timeline-level cross-validation of TempoFormer or a baseline.

    tempo-analysis stream evaluate --data rumoureval2017 \\
        --model default --window 20 --folds 5 --seeds 0 1 12 123 --out results.json

Writes per-class and macro F1 (mean and std over folds x seeds), the summed confusion matrix and
every run to the JSON file (rewritten after each run, so a long job leaves partial results), and
prints a short table. Several --window values give the window analysis (e.g. --window 5 10 20).
`stream time-effect` (cli/stream_time_effect.py) trains TempoFormer and its time-blind control on one
split and moves the posts' gaps.
"""

from __future__ import annotations

import argparse
import json
import time

from tempo_analysis.cli import (add_output_options, add_preset_options, refuse_options, require_distinct, require_positive,
                                require_range, require_separate_outputs, wants_progress)
from tempo_analysis.cli.stream_options import (add_data_and_model_options, check_model_names, check_numbers,
                                               merged_settings, preset_model_settings, print_stream_config,
                                               refuse_untaken_settings, settings_from_args, stream_preset)
from tempo_analysis.cli.stream_time_effect import register_time_effect
from tempo_analysis.outputs import prepare_output_file, stamp, text_header, write_file_atomic
from tempo_analysis.stream.config import CLI_EXPERIMENT   # plain names and settings: no torch at start-up
from tempo_analysis.stream.names import ABLATIONS, BASELINES, VARIANTS



def register(subparsers) -> None:
    """Add the `stream` command group."""
    p = subparsers.add_parser("stream", help="stream classification (TempoFormer, baselines)",
                              description="Stream classification: TempoFormer and its baselines on timelines.")
    sub = p.add_subparsers(dest="stream_command", metavar="SUBCOMMAND")
    e = sub.add_parser("evaluate", help="timeline-level k-fold CV; per-class and macro F1 to JSON",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_data_and_model_options(e, windows=True)
    e.add_argument("--folds", type=int, default=CLI_EXPERIMENT.folds,
                   help=f"k of the timeline-level k-fold split (default {CLI_EXPERIMENT.folds})")
    e.add_argument("--max-folds", type=int, default=None, help="run only the first N folds (CPU budget)")
    e.add_argument("--only-folds", type=int, nargs="+", default=None, metavar="K",
                   help="run only these folds (numbered 0..folds-1), e.g. to share one evaluation between "
                        "processes; `stream compare` joins the files of one model")
    e.add_argument("--seeds", type=int, nargs="+", default=list(CLI_EXPERIMENT.seeds),
                   help="model seeds (paper: 0 1 12 123)")
    e.add_argument("--ablation", default="none", choices=list(ABLATIONS), help="TempoFormer ablation/variant")
    e.add_argument("--baseline", default=None, choices=list(BASELINES + VARIANTS),
                   help="evaluate a baseline instead of TempoFormer (options it does not take are refused); "
                        "tempoformer_vectors: TempoFormer's temporal attention over frozen sentence vectors "
                        "(takes --ablation none, vanilla_mha, sequential_rope or no_gate_norm, and the time options)")
    e.add_argument("--hidden", type=int, nargs="+", default=None,
                   help="baseline hidden size(s): BiLSTM/time_bilstm one LSTM size; ffn_history, swnu, "
                        "seq_sig_net two FFN sizes")
    e.add_argument("--tune", nargs="+", default=None, metavar="KEY=V1,V2",
                   help="choose these settings on DEV inside every fold (grid search, best dev macro-F1), e.g. "
                        "--tune hidden=200,300,400 lr=1e-3,5e-4,1e-4 (two-layer FFN sizes as 32x32,128x128; TempoFormer's "
                        "time_scale, rope_theta and time_transform too); "
                        "the chosen point is recorded per run")
    e.add_argument("--dropout", type=float, default=None, help="baseline dropout")
    e.add_argument("--llm", default=None, help="llm_few_shot: causal LM ('default' = embedded SmolLM2-135M-Instruct, "
                                                "an HF name, or a folder)")
    e.add_argument("--shots", type=int, default=None, help="llm_few_shot: examples in the prompt (paper: 5, 10)")
    e.add_argument("--calibrate", default=None, choices=["none", "content-free", "dev-mean"],
                   help="llm_few_shot: subtract a per-label bias from the label log-probabilities: the "
                        "content-free prompt's (post 'N/A'; Zhao et al. 2021) or the mean over the dev posts' "
                        "prompts (no dev label is read); default none, as in the paper")
    e.add_argument("--out", required=True, help="results JSON path")
    add_output_options(e)
    e.set_defaults(func=evaluate)
    register_time_effect(sub)
    c = sub.add_parser("compare", help="paired per-fold comparison of `stream evaluate` results files",
                       description=COMPARE_DOC, formatter_class=argparse.RawDescriptionHelpFormatter)
    c.add_argument("results", nargs="+", metavar="FILE[=NAME]",
                   help="`stream evaluate` --out files; =NAME renames the file's model in the table")
    c.add_argument("--against", default=None,
                   help="the reference row ('NAME' or 'NAME w=W'; default: the best baseline with every fold)")
    c.add_argument("--window-on-dev", default=None, metavar="W1,W2",
                   help="also add, for each model run (with --tune) at all of these windows, a row whose window is "
                        "chosen per fold and seed on dev (the best dev macro-F1), e.g. --window-on-dev 20,40")
    c.add_argument("--seeds", default=None, metavar="S1,S2",
                   help="keep only the runs of these seeds in every row, so that rows are paired seed for seed "
                        "(e.g. --seeds 0,12,123); rows without them are named in a warning")
    c.add_argument("--out", default=None, help="write the Markdown table here too")
    c.add_argument("--json", default=None, help="write the comparison (every number in the table) as JSON")
    add_output_options(c)
    add_preset_options(c, presets=())
    c.set_defaults(func=compare)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


COMPARE_DOC = """`tempo-analysis stream compare`: paired per-fold comparison of `stream evaluate` results.

    tempo-analysis stream compare tempoformer.json bilstm_tuned.json="BiLSTM (tuned)" \\
        time_bilstm.json --out comparison.md --json comparison.json

Every file must come from the same --data, --folds, --dev-fraction and --split-seed, so that fold
k holds the same test timelines in each; windows and seeds may differ. One row per model and
window: macro-F1 mean ± std over its runs (folds x seeds), per-class F1, the per-fold macro-F1
(mean over seeds) and the per-fold differences against the reference row, with a 95% t interval
for their mean over the folds (the folds share training data, so it is if anything too narrow)
and wins and losses.
With --window-on-dev 20,40, each model run with --tune at both windows gets one more row, "w=dev:20,40",
whose window is chosen per fold and seed by the dev macro-F1 (the test folds play no part).
With --seeds 0,12,123, every row keeps only those seeds' runs, so rows are paired seed for seed.
"""


def compare(args) -> int:
    """Print (and optionally write) the paired comparison table."""
    from tempo_analysis.stream.comparison import (choose_window_on_dev, format_markdown, load_evaluation,
                                                  paired_comparison, select_seeds)

    require_separate_outputs(args, "--out", "--json")
    outs = [prepare_output_file(f, overwrite=args.overwrite) for f in (args.out, args.json) if f]
    rows = []
    for item in args.results:
        path, sep, name = item.partition("=")
        rows += load_evaluation(path, name=name if sep else None)
    if args.seeds:
        try:
            seeds = [int(s) for s in args.seeds.split(",")]
        except ValueError:
            raise ValueError(f"--seeds {args.seeds!r}: give seeds as integers joined by commas, e.g. 0,12,123") from None
        rows = select_seeds(rows, seeds)
    if args.window_on_dev:
        try:
            windows = [int(w) for w in args.window_on_dev.split(",")]
        except ValueError:
            raise ValueError(f"--window-on-dev {args.window_on_dev!r}: give windows as integers joined by commas, "
                             f"e.g. 20,40") from None
        rows += choose_window_on_dev(rows, windows)
    result = paired_comparison(rows, against=args.against)
    if args.seeds:
        result["selected_seeds"] = sorted(set(seeds))
    table = format_markdown(result)
    print(table)
    if args.out:
        seeds_note = f" (seeds {', '.join(map(str, result['selected_seeds']))} only)" if args.seeds else ""
        head = text_header(f"stream compare: paired per-fold macro-F1 against {result['reference']}{seeds_note}")
        write_file_atomic(outs[0], head + "\n" + table + "\n")
    if args.json:
        write_file_atomic(outs[-1], json.dumps(stamp(result, "stream-compare"), indent=2))
    return 0


def evaluate(args) -> int:
    """Run the CV for every window; write JSON; print the table."""
    preset_name = stream_preset(args, windows=True)   # the preset's protocol for the options not given
    if not args.print_config:
        out = prepare_output_file(args.out, overwrite=args.overwrite, kind="stream-evaluate")  # before any work
    require_distinct(args, "--seeds")
    check_numbers(args)
    require_positive(args, "--max-folds", "--shots", "--hidden")
    require_positive(args, "--folds", least=2)
    require_range(args, "--seeds", low=0, use="seeds >= 0")
    require_range(args, "--dropout", low=0, high=1, high_open=True, use="a dropout rate from 0 to below 1")
    refuse_options(args, ["--tune", "--patience"], when=args.dev_fraction == 0,
                   apply_to="runs with a dev split (settings are chosen and early stopping is decided on dev)",
                   here="--dev-fraction 0", fix="give --dev-fraction > 0 (default 0.25)")
    if args.max_folds is not None and args.max_folds > args.folds:
        raise ValueError(f"--max-folds {args.max_folds} is more than the --folds {args.folds} there are. "
                         f"Fix: use --max-folds {args.folds} or fewer, or drop it.")
    if args.only_folds is not None:
        if args.max_folds is not None:
            raise ValueError("--max-folds and --only-folds both choose folds; give one of them")
        bad = [k for k in args.only_folds if not 0 <= k < args.folds]
        if bad:
            raise ValueError(f"--only-folds {' '.join(map(str, bad))}: folds are numbered 0 to {args.folds - 1} "
                             f"with --folds {args.folds}")
    # the command's heavy imports (torch, transformers) load only when it runs, not for `--help`
    import torch

    from tempo_analysis.resolve import load_timelines
    from tempo_analysis.evaluation.classification import aggregate, check_classes, cross_validate, format_table
    from tempo_analysis.stream.experiment import check_settings, make_classifier, model_settings

    if args.threads:
        torch.set_num_threads(args.threads)
    name = args.baseline or "tempoformer"
    explicit, ambient = settings_from_args(args)
    takes = set(model_settings(name))
    if "model_kwargs" not in takes and "model_kwargs" in explicit:
        # a time-aware baseline (time_bilstm, swnu, seq_sig_net) takes its own time_scale as a plain setting
        mk = dict(explicit["model_kwargs"])
        for key in [k for k in mk if k in takes]:
            explicit[key] = mk.pop(key)
        explicit.pop("model_kwargs")
        if set(mk) - {"time_unit"}:
            explicit["model_kwargs"] = mk
    refuse_untaken_settings(name, explicit)
    grid = None
    if args.tune:
        from tempo_analysis.stream.tuning import TIME_SETTINGS, DevTunedClassifier, grid_point_settings, parse_grid

        grid = parse_grid(args.tune)
        fixed = sorted(set(grid) & {"seed", "window", "device", "progress"})
        if fixed:
            raise ValueError(f"--tune {', '.join(fixed)}: not a hyper-parameter to choose on dev (seed: the run's "
                             "seeds are --seeds; window: give --window A B and choose per fold with `stream compare "
                             "--window-on-dev`; device, progress: how it runs); drop them")
        timed = [k for k in grid if k in TIME_SETTINGS and k not in takes]
        if timed and "model_kwargs" not in takes:
            raise ValueError(f"--tune {', '.join(timed)}: time settings apply to tempoformer and tempoformer_vectors, "
                             f"not {name!r}; drop them")
        check_settings(name, {k: v for k, v in grid.items() if k not in TIME_SETTINGS or k in takes})
        both = sorted(set(grid) & (set(explicit) | set(explicit.get("model_kwargs", {}))))
        if both:
            raise ValueError(f"{both} are both fixed and tuned; give each setting once")
    params = set(model_settings(name))
    from_preset = preset_model_settings(preset_name, name, explicit, tuned=set(grid or ()))
    settings = merged_settings(ambient, from_preset, explicit, params)  # only what the model takes
    if args.print_config:
        protocol = {k: getattr(args, k) for k in ("data", "window", "folds", "max_folds", "only_folds", "seeds",
                                                 "dev_fraction", "split_seed", "max_timelines", "time_unit")}
        return print_stream_config(args, preset_name, name, dict(settings, tune=grid) if grid else settings,
                                   protocol)
    check_model_names(args, encoder=from_preset.get("encoder"))  # offline hub names, missing paths: before the data
    tl = load_timelines(args.data, time_unit=args.time_unit, max_timelines=args.max_timelines,
                        seed=args.split_seed).data
    if not tl.label_names:
        raise ValueError(f"--data {args.data!r} has no labels; evaluation needs a 'label' column")
    check_classes(tl, what=f"--data {args.data!r}")
    report = {"data": args.data, "model": name, "encoder": settings.get("encoder"), "ablation": args.ablation,
              "timelines": len(tl.timeline_ids), "posts": len(tl), "label_names": tl.label_names,
              "folds": args.folds, "max_folds": args.max_folds, "only_folds": args.only_folds, "seeds": args.seeds,
              "dev_fraction": args.dev_fraction, "split_seed": args.split_seed,
              "settings": {k: v for k, v in settings.items() if k != "progress"}, "tune": grid, "by_window": {}}
    t0 = time.perf_counter()

    # progress goes to a sibling NAME.partial.json after each run; OUT itself is replaced only when the job is
    # complete, so a killed rerun never puts a partial report where a complete one was
    partial_out = out.with_name(f"{out.stem}.partial{out.suffix or '.json'}")
    prepare_output_file(partial_out, overwrite=args.overwrite, kind="stream-evaluate")

    def write(final: bool = False):
        report["seconds"] = round(time.perf_counter() - t0, 1)
        report["complete"] = final
        write_file_atomic(out if final else partial_out, json.dumps(stamp(report, "stream-evaluate"), indent=2))
        if final:
            partial_out.unlink(missing_ok=True)

    for w in args.window:
        partial = report["by_window"].setdefault(str(w), {"runs": []})

        made = []

        def make(seed, w=w):
            if grid is None:
                return make_classifier(name, window=w, seed=seed, **settings)
            def point_settings(point):   # time settings go into model_kwargs only for the models that have them
                return grid_point_settings(point, settings.get("model_kwargs")) if "model_kwargs" in takes else point
            made.append(DevTunedClassifier(lambda **point: make_classifier(
                name, window=w, seed=seed, strict=point_settings(point), **settings), grid))
            return made[-1]

        def on_run(run, partial=partial, made=made):
            if made:  # the point chosen on dev, and every point's dev score
                run["tuned"] = {"chosen": made[-1].best_params_, "grid": made[-1].tuning_}
            partial["runs"].append(run)
            partial["summary"] = aggregate(partial["runs"], tl.label_names)
            write()

        res = cross_validate(make, tl,
                             folds=args.folds, seeds=args.seeds, max_folds=args.max_folds, fold_ids=args.only_folds,
                             dev_fraction=args.dev_fraction, split_seed=args.split_seed,
                             progress=wants_progress(args), on_run=on_run)
        report["by_window"][str(w)] = res
    first = report["by_window"][str(args.window[0])]["summary"]
    report["macro_f1"], report["f1"] = first["macro_f1"], first["f1"]
    write(final=True)
    rows = {f"{name} w={w}": r for w, r in report["by_window"].items()}
    print(format_table(rows, tl.label_names))
    print(f"({len(tl.timeline_ids)} timelines, {len(tl)} posts; {report['by_window'][str(args.window[0])]['folds_run']}"
          f" of {args.folds} folds x {len(args.seeds)} seed(s); {report['seconds']} s) -> {out}")
    return 0
