"""``tempo-analysis semantic-change rank``: rank target words by semantic change between two periods.

    tempo-analysis semantic-change rank --data world --method temporal-attention --scorer cosine \
        --model default --seed 0 --out ranks.tsv
    tempo-analysis semantic-change rank --data world --method temporal-attention --scorer cosine --samples 30 \
        --no-zscore --head-steps 60 --time-lr 4e-2 --seed 0 --out ranks.tsv      (notebook 02's settings)
    tempo-analysis semantic-change rank --data pseudoword --method frequency --out freq.tsv   (no model)

Writes ``word<TAB>score`` (most changed first; NaN for a word missing from a period; the first line is
a ``# tempo_analysis ...`` comment: skip it, e.g. ``pandas.read_csv(path, sep="\t", skiprows=1, header=None)``) and prints
Spearman and Pearson (with p-values) when the data has graded truth.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tempo_analysis.cli import (add_output_options, add_preset_options, add_progress_option, chosen_preset,
                                print_config, refuse_options, require_positive, require_range,
                                require_separate_outputs, typed, wants_progress)


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows each option's default, except None: those options fall back to the library's defaults
    (``tempo_analysis.semantic_change.config.preset("cli")``), which their help names."""

    def _get_help_string(self, action):
        if action.default is None:
            return action.help
        return super()._get_help_string(action)


def register(subparsers) -> None:
    """Add the ``semantic-change`` group and its ``rank`` command."""
    from tempo_analysis.semantic_change.config import METHODS, SCORER_CHOICES, TIME_NORMS, preset   # no torch

    d, nb = preset("cli"), preset("notebook")   # the documented defaults; notebook 02's, for reference
    t = d.train
    group = subparsers.add_parser("semantic-change", help="rank words by semantic change between periods")
    sub = group.add_subparsers(dest="semantic_change_command", metavar="COMMAND")
    p = sub.add_parser("rank", help="score and rank target words; evaluate against truth when present",
                       formatter_class=_HelpFormatter)
    p.add_argument("--data", default="world",
                   help="world[:DIR] | semeval:DIR | dwug:DIR | nltk[:DIR] | pseudoword[:SHARED_DATA_DIR]")
    p.add_argument("--method", default="temporal-attention",
                   choices=[*METHODS, "frequency"],
                   help="both = time token + temporal attention; no-time = the temporal-attention model post-trained "
                        "and run with its time input held at one period (the time-blind control); frequency = the "
                        "change of each target's relative frequency, no model (the literature's baseline)")
    p.add_argument("--form", default=None, choices=["faithful", "modulated"],
                   help=f"temporal-attention form (default: {d.form}, the paper's; see docs/methods/semantic_change.md)")
    residual = p.add_mutually_exclusive_group()
    residual.add_argument("--no-time-residual", action="store_true",
                          help="faithful form: the paper's pure formula softmax(Q T^T T K^T / (|T| sqrt d)), with no "
                               "gated residual onto the pretrained scores (the paper preset's)")
    residual.add_argument("--time-residual", action="store_true",
                          help="faithful form: the time term through a per-head gate onto the pretrained scores "
                               "(the default; given, it wins over --preset paper)")
    p.add_argument("--time-norm", default=None, choices=list(TIME_NORMS),
                   help=f"faithful form: |T| over every head's T together or each head's own (the paper's; the "
                        f"paper preset's) (default: {d.time_norm})")
    p.add_argument("--scorer", default=None, choices=list(SCORER_CHOICES),
                   help=f"change scorer (default: {d.scorer}, chosen on the pseudoword benchmark; see "
                        "docs/methods/semantic_change.md)")
    p.add_argument("--model", default=d.encoder, help="encoder: 'default' (embedded MiniLM), HF name, or local path")
    p.add_argument("--train-epochs", type=float, default=None,
                   help=f"MLM post-training epochs over the corpus (default {t.epochs:g}; plain: 0; 0 skips post-training)")
    p.add_argument("--head-steps", type=int, default=None,
                   help=f"MLM-head warm-up steps before post-training (default {t.head_steps}; notebook 02: "
                        f"{nb.train.head_steps})")
    p.add_argument("--time-lr", type=float, default=None,
                   help=f"learning rate of the new time parameters (default {t.time_lr:g}; notebook 02: "
                        f"{nb.train.time_lr:g})")
    p.add_argument("--body-lr", type=float, default=None,
                   help=f"learning rate of the pretrained body during post-training (default {t.body_lr:g}; 0 freezes it)")
    p.add_argument("--head-lr", type=float, default=None,
                   help=f"learning rate of the MLM head during its warm-up (default {t.head_lr:g}; skipped when the "
                        "encoder ships an MLM head)")
    p.add_argument("--train-sentences", type=int, default=None,
                   help=f"seeded cap on the sentences post-training reads (default {t.max_sentences}; the paper "
                        "preset: every sentence)")
    p.add_argument("--layers", default=None,
                   help="hidden layers to average: a count H (the last H layers, e.g. 4), a list (8,9,10) or a range "
                        f"(7-12) of hidden-state indices (0 = the embedding output) (default {d.layers}: the last "
                        f"{d.layers})")
    p.add_argument("--samples", type=int, default=None, help=f"usages per word and period (seeded sample; default {d.samples})")
    p.add_argument("--zscore", action=argparse.BooleanOptionalAction, default=None,
                   help="z-score usage vectors (each dimension over all words' usages) before scoring "
                        + ("(default: on; --no-zscore turns it off)" if d.zscore else "(default: off; --zscore turns it on)"))
    p.add_argument("--max-sentences", type=int, default=None,
                   help="seeded cap on corpus sentences per period read from semeval/nltk folders (default: all)")
    p.add_argument("--targets", default=None, help="comma-separated subset of targets (default: all)")
    p.add_argument("--precision", default=None, choices=["fp32", "bf16", "auto"],
                   help=f"extraction arithmetic (default: {d.precision}): auto (bf16 where the CPU/GPU has it natively, "
                        "e.g. AVX512-BF16, else fp32), fp32 (exact, the same on every machine) or bf16 (bfloat16 matrix "
                        "products)")
    p.add_argument("--seed", type=int, default=d.seed,
                   help="seeds the usage sample, the new parameters and post-training (pseudoword: also the split, "
                        "targets, donors and strengths)")
    p.add_argument("--out", required=True, help="output TSV: word<TAB>score")
    p.add_argument("--save-model", default=None, help="folder to save the post-trained model (safetensors)")
    p.add_argument("--json", default=None, help="also write metrics, settings and timings as JSON here")
    add_progress_option(p)
    add_output_options(p)
    add_preset_options(p)
    p.set_defaults(func=run_rank_command)
    group.set_defaults(func=lambda args: (group.print_help(), 2)[1])


TEMPORAL_ATTENTION_METHODS = ("temporal-attention", "no-time", "both")   # the methods with --form
TEXT_CORPORA = ("semeval", "nltk", "pseudoword")                        # --data kinds read from running text


MODEL_OPTIONS = ["--form", "--no-time-residual", "--time-residual", "--time-norm", "--scorer", "--model",
                 "--train-epochs", "--head-steps", "--time-lr", "--body-lr", "--head-lr", "--train-sentences",
                 "--layers", "--samples", "--zscore", "--precision", "--save-model"]
TRAIN_OPTIONS = ["--head-steps", "--time-lr", "--body-lr", "--head-lr", "--train-sentences"]
FAITHFUL_OPTIONS = ["--no-time-residual", "--time-residual", "--time-norm"]   # the faithful form's own


def check_rank_options(args) -> None:
    """Refuse the options that do not apply to the chosen method, data or post-training."""
    refuse_options(args, [f for f in MODEL_OPTIONS if f != "--model" or args.model != "default"],
                   when=args.method == "frequency", apply_to="the methods with a model",
                   here="--method frequency (counts only)", fix="choose a method with a model")
    refuse_options(args, ["--form", *FAITHFUL_OPTIONS], when=args.method not in TEMPORAL_ATTENTION_METHODS,
                   apply_to="the temporal-attention methods (--method temporal-attention, no-time, both)",
                   here=f"--method {args.method}", fix="choose one of those methods")
    refuse_options(args, FAITHFUL_OPTIONS, when=args.form == "modulated",
                   apply_to="the faithful form (--form faithful, the default)", here="--form modulated")
    untrained = args.train_epochs == 0 or (args.method == "plain" and args.train_epochs is None)
    why_untrained = ("--train-epochs 0" if args.train_epochs == 0 else
                     "--method plain without --train-epochs (the pretrained encoder, unchanged)")
    refuse_options(args, ["--save-model"], when=untrained,
                   apply_to="a post-trained model (it saves the post-trained encoder)", here=why_untrained,
                   fix="post-train with --train-epochs N (N > 0)")
    refuse_options(args, TRAIN_OPTIONS, when=untrained, apply_to="a post-trained model", here=why_untrained,
                   fix="post-train with --train-epochs N (N > 0)")
    require_positive(args, "--samples", "--max-sentences", "--train-sentences")
    require_positive(args, "--head-steps", least=0)
    require_range(args, "--seed", low=0, use="a seed >= 0")
    if args.time_lr is not None and not args.time_lr > 0:
        raise ValueError(f"--time-lr {args.time_lr}: use a positive learning rate (see --help for the default).")
    if args.body_lr is not None and not args.body_lr >= 0:
        raise ValueError(f"--body-lr {args.body_lr}: use a learning rate >= 0 (0 freezes the body).")
    require_range(args, "--head-lr", low=0, low_open=True, use="a positive learning rate (see --help for the default)")
    kind = str(args.data).partition(":")[0].strip().lower()
    refuse_options(args, ["--max-sentences"], when=kind not in TEXT_CORPORA,
                   apply_to="data read from running text (--data semeval:DIR, nltk[:DIR], pseudoword[:DIR])",
                   here=f"--data {args.data} (its usages are given)")


def run_rank_command(args) -> int:
    """The ``rank`` command: load data, fit the ranker, write the TSV, print the correlations."""
    check_rank_options(args)  # before any import of the wing: a meaningless combination fails at once
    # local: the CLI imports a method wing (torch, transformers) only when its command runs
    from ..resolve import load_change_data
    from ..data import DataError
    from ..outputs import atomic_output_dir, prepare_output_dir, prepare_output_file, stamp, text_header, write_file_atomic
    from ..semantic_change import SemanticChangeRanker

    # every output is checked before any work: a refused path fails at once, not after training
    cfg = rank_config(args) if args.method != "frequency" else None
    if args.print_config:
        from ..semantic_change.config import PAPER_DIFFERENCES

        settings = {"data": args.data, "targets": args.targets, "max_sentences": args.max_sentences,
                    "ranker": cfg.to_dict() if cfg is not None else {"method": "frequency"}}
        notes = {"data": "the paper's data is SemEval-2020 Task 1 English: --data semeval:DIR"}
        return print_config(args, settings, preset=chosen_preset(args), not_as_in_paper=PAPER_DIFFERENCES,
                            notes=notes)
    require_separate_outputs(args, "--out", "--json", "--save-model")
    prepare_output_file(args.out, overwrite=args.overwrite)
    if args.json:
        prepare_output_file(args.json, overwrite=args.overwrite, kind="semantic-change-rank")
    if args.save_model:
        prepare_output_dir(args.save_model, overwrite=args.overwrite)
    targets = [t.strip() for t in args.targets.split(",") if t.strip()] if args.targets else None
    if args.targets is not None and not targets:
        raise DataError(f"--targets {args.targets!r} names no word. Fix: give comma-separated words, "
                        "e.g. --targets plane,graft, or drop --targets to rank every target.")
    if cfg is not None and cfg.encoder != "default":   # offline hub name, missing path, no weights: fails at once
        from ..encoders import check_encoder

        check_encoder(cfg.encoder, what="--model" if typed(args, "model") else
                      f"--preset {args.preset}'s encoder (give --model to use another)")
    data = load_change_data(args.data, seed=args.seed, max_sentences_per_period=args.max_sentences,
                            targets=targets).data
    if cfg is None:
        return _write_frequency(args, data)
    ranker = SemanticChangeRanker(cfg).fit(data)
    out = Path(args.out)
    lines = [text_header("semantic-change rank: word<TAB>score, most changed first")]
    lines += [f"{w}\t{s:.6f}\n" if s == s else f"{w}\tnan\n"
              for w, s in zip(ranker.scores_["word"], ranker.scores_["score"])]
    write_file_atomic(out, "".join(lines))
    for m in ranker.missing_:
        print(f"warning: {m} (scored NaN, left out of the correlation)", file=sys.stderr)
    print(f"{args.method} / {cfg.scorer}{' (z-scored)' if cfg.zscore else ''} / layers={cfg.layers} / "
          f"n={cfg.samples} / seed={args.seed}: "
          f"{len(ranker.scores_)} words -> {out}")
    m = ranker.metrics_
    _print_metrics(m)
    if args.save_model:
        with atomic_output_dir(args.save_model, overwrite=args.overwrite, kind="semantic-change-model") as tmp:
            ranker.model_.model.save_pretrained(tmp)
            ranker.model_.tokenizer.save_pretrained(tmp)
    if args.json:
        payload = {"metrics": m, "config": cfg.to_dict(), "timings": ranker.timings_, "missing": ranker.missing_,
                   "data": args.data}
        write_file_atomic(args.json, json.dumps(stamp(payload, "semantic-change-rank"), indent=2, default=str))
    return 0


def rank_config(args):
    """The RankConfig that ``rank`` runs with these (checked) arguments: the ``--preset`` (``"cli"`` when none
    is given), with the flags given winning over it."""
    from ..data import DataError
    from ..semantic_change.config import cli_config, parse_layers

    try:
        layers = parse_layers(args.layers) if args.layers is not None else None
    except ValueError as e:
        raise DataError(f"--layers: {e}") from None
    residual = False if args.no_time_residual else True if args.time_residual else None
    return cli_config(method=args.method, form=args.form, scorer=args.scorer,
                      encoder=args.model if typed(args, "model") else None,
                      train_epochs=args.train_epochs, layers=layers, samples=args.samples, zscore=args.zscore,
                      seed=args.seed if typed(args, "seed") else None, progress=wants_progress(args),
                      time_residual=residual, time_norm=args.time_norm, precision=args.precision,
                      head_steps=args.head_steps, time_lr=args.time_lr, body_lr=args.body_lr, head_lr=args.head_lr,
                      train_sentences=args.train_sentences, preset_name=chosen_preset(args), data=args.data)


def _write_frequency(args, data) -> int:
    """``--method frequency``: each target's relative-frequency change, no model (the TSV, JSON and metrics
    as for the other methods)."""
    from ..outputs import stamp, text_header, write_file_atomic
    from ..semantic_change.baselines import frequency_change
    from ..semantic_change.pipeline import evaluate_scores

    scores = frequency_change(data)
    lines = [text_header("semantic-change rank: word<TAB>score, most changed first")]
    lines += [f"{w}\t{s:.6f}\n" for w, s in zip(scores["word"], scores["score"])]
    write_file_atomic(args.out, "".join(lines))
    print(f"frequency / |log2 f_late / f_early| / {len(scores)} words -> {args.out}")
    m = evaluate_scores(scores, data.truth)
    _print_metrics(m)
    if args.json:
        payload = {"metrics": m, "config": {"method": "frequency"},
                   "counts": scores.drop(columns=["rank"]).to_dict(orient="records"), "data": args.data}
        write_file_atomic(args.json, json.dumps(stamp(payload, "semantic-change-rank"), indent=2, default=str))
    return 0


def _print_metrics(m: dict) -> None:
    """Spearman (with its interval), Pearson and the binary accuracies, as far as the truth allows."""
    if "spearman" in m:
        ci = (f" [95% CI {m['spearman_ci_low']:.3f}, {m['spearman_ci_high']:.3f}]"
              if m.get("spearman_ci_low") == m.get("spearman_ci_low") and "spearman_ci_low" in m else "")
        print(f"Spearman {m['spearman']:.3f}{ci} (p={m['spearman_p']:.2g})  Pearson {m['pearson']:.3f} "
              f"(p={m['pearson_p']:.2g})  n={m['n']}" + (f"  dropped={m['n_dropped']}" if m["n_dropped"] else ""))
    if "binary_accuracy" in m:
        print(f"binary accuracy {m['binary_accuracy']:.3f} at threshold mean+1std = {m['binary_threshold']:.4f}; "
              f"oracle (top-k with k from the truth) {m['binary_accuracy_oracle']:.3f}")
    if not m:
        print("no truth for this data: ranking only")
