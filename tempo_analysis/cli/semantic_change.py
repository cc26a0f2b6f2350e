"""``tempo-analysis semantic-change rank``: rank target words by semantic change between two periods.

    tempo-analysis semantic-change rank --data world --method temporal-attention --scorer cosine \
        --model default --seed 0 --out ranks.tsv

Writes ``word<TAB>score`` (most changed first; NaN for a word missing from a period; the first line is
a ``# tempo_analysis ...`` comment: skip it, e.g. ``pandas.read_csv(path, sep="\t", skiprows=1, header=None)``) and prints
Spearman and Pearson (with p-values) when the data has graded truth.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tempo_analysis.cli import add_output_options


def register(subparsers) -> None:
    """Add the ``semantic-change`` group and its ``rank`` command."""
    group = subparsers.add_parser("semantic-change", help="rank words by semantic change between periods")
    sub = group.add_subparsers(dest="semantic_change_command", metavar="COMMAND")
    p = sub.add_parser("rank", help="score and rank target words; evaluate against truth when present",
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--data", default="world", help="world[:DIR] | semeval:DIR | dwug:DIR | nltk[:DIR]")
    p.add_argument("--method", default="temporal-attention",
                   choices=["temporal-attention", "time-token", "scaled-linear", "scaled-exp", "scaled-doc", "plain"])
    p.add_argument("--form", default=None, choices=["faithful", "modulated"],
                   help="temporal-attention form (default: the library default, see docs/methods/semantic_change.md)")
    p.add_argument("--scorer", default="cosine", choices=["cosine", "apd", "prt", "apd-within", "jsd"])
    p.add_argument("--model", default="default", help="encoder: 'default' (embedded MiniLM), HF name, or local path")
    p.add_argument("--train-epochs", type=float, default=None,
                   help="MLM post-training epochs over the corpus (0 skips post-training)")
    p.add_argument("--layers", type=int, default=None, help="average the last H hidden layers")
    p.add_argument("--samples", type=int, default=None, help="usages per word and period (seeded sample)")
    p.add_argument("--zscore", action="store_true", help="z-score usage vectors before scoring")
    p.add_argument("--max-sentences", type=int, default=None,
                   help="seeded cap on corpus sentences per period read from semeval/nltk folders")
    p.add_argument("--targets", default=None, help="comma-separated subset of targets")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True, help="output TSV: word<TAB>score")
    p.add_argument("--save-model", default=None, help="folder to save the post-trained model (safetensors)")
    p.add_argument("--json", default=None, help="also write metrics, settings and timings as JSON here")
    p.add_argument("--progress", action="store_true", help="show progress bars")
    add_output_options(p)
    p.set_defaults(func=run_rank_command)
    group.set_defaults(func=lambda args: (group.print_help(), 2)[1])


def run_rank_command(args) -> int:
    """The ``rank`` command: load data, fit the ranker, write the TSV, print the correlations."""
    # local: the CLI imports a method wing (torch, transformers) only when its command runs
    from ..data.specs import load_change_data
    from ..outputs import atomic_output_dir, prepare_output_dir, prepare_output_file, stamp, text_header, write_file_atomic
    from ..semantic_change import SemanticChangeRanker, cli_config

    # every output is checked before any work: a refused path fails at once, not after training
    prepare_output_file(args.out, overwrite=args.overwrite)
    if args.json:
        prepare_output_file(args.json, overwrite=args.overwrite)
    if args.save_model:
        prepare_output_dir(args.save_model, overwrite=args.overwrite)
    targets = [t.strip() for t in args.targets.split(",")] if args.targets else None
    data = load_change_data(args.data, seed=args.seed, max_sentences_per_period=args.max_sentences,
                            targets=targets)
    cfg = cli_config(method=args.method, form=args.form, scorer=args.scorer, encoder=args.model,
                     train_epochs=args.train_epochs, layers=args.layers, samples=args.samples,
                     zscore=args.zscore, seed=args.seed, progress=args.progress)
    ranker = SemanticChangeRanker(cfg).fit(data)
    out = Path(args.out)
    lines = [text_header("semantic-change rank: word<TAB>score, most changed first")]
    lines += [f"{w}\t{s:.6f}\n" if s == s else f"{w}\tnan\n"
              for w, s in zip(ranker.scores_["word"], ranker.scores_["score"])]
    write_file_atomic(out, "".join(lines))
    for m in ranker.missing_:
        print(f"warning: {m} (scored NaN, left out of the correlation)", file=sys.stderr)
    print(f"{args.method} / {args.scorer} / layers={cfg.layers} / n={cfg.samples} / seed={args.seed}: "
          f"{len(ranker.scores_)} words -> {out}")
    m = ranker.metrics_
    if "spearman" in m:
        print(f"Spearman {m['spearman']:.3f} (p={m['spearman_p']:.2g})  Pearson {m['pearson']:.3f} "
              f"(p={m['pearson_p']:.2g})  n={m['n']}" + (f"  dropped={m['n_dropped']}" if m["n_dropped"] else ""))
    if "binary_accuracy" in m:
        print(f"binary accuracy {m['binary_accuracy']:.3f} at threshold {m['binary_threshold']:.4f}")
    if not m:
        print("no truth for this data: ranking only")
    if args.save_model:
        with atomic_output_dir(args.save_model, overwrite=args.overwrite, kind="semantic-change-model") as tmp:
            ranker.model_.model.save_pretrained(tmp)
            ranker.model_.tokenizer.save_pretrained(tmp)
    if args.json:
        payload = {"metrics": m, "config": cfg.to_dict(), "timings": ranker.timings_, "missing": ranker.missing_,
                   "data": args.data}
        write_file_atomic(args.json, json.dumps(stamp(payload, "semantic-change-rank"), indent=2, default=str))
    return 0
