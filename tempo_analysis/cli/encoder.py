"""`tempo-analysis encoder mlm-eval`: masked-LM accuracy of an encoder on held-out Brown text.

    tempo-analysis encoder mlm-eval                              # the default encoder (with its MLM adapter)
    tempo-analysis encoder mlm-eval --sentences 2000 --json
    tempo-analysis encoder mlm-eval --model bert-base-uncased    # any local path or hub name with an MLM head
    tempo-analysis encoder mlm-eval --no-adapter                 # the bare default checkpoint (fresh head)

Masks 15% of the tokens of a seeded sample of Brown sentences (never used in training) and prints
top-1 / top-5 next to the unigram prior (the most frequent tokens of the sample).
"""

from __future__ import annotations

import argparse
import json

from tempo_analysis.cli import add_preset_options, add_progress_option, wants_progress


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", default="default", help="encoder: 'default', a local folder or a hub name")
    p.add_argument("--data", default=None,
                   help="shared data folder holding nltk_data/ (default: the shared/data found beside the project)")
    p.add_argument("--sentences", type=int, default=1000, help="Brown sentences to evaluate on (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="seed of the sample and of the masks (default 0)")
    p.add_argument("--mask-prob", type=float, default=0.15, help="share of tokens masked (default 0.15)")
    p.add_argument("--no-adapter", action="store_true", help="the default checkpoint without its MLM adapter")
    p.add_argument("--json", action="store_true", help="print one JSON line instead of a table")
    add_progress_option(p)
    add_preset_options(p, presets=())


def run(args: argparse.Namespace) -> int:
    import warnings

    from tempo_analysis.data.locations import shared_data_dir
    from tempo_analysis.encoder_mlm import brown_sentences, mlm_eval
    from tempo_analysis.encoders import check_encoder, load_encoder

    from tempo_analysis.cli import refuse_options

    refuse_options(args, ["--no-adapter"], when=args.model != "default",
                   apply_to="--model default (the MLM adapter belongs to the embedded encoder)",
                   here=f"--model {args.model}")
    if args.sentences < 1:
        raise ValueError(f"--sentences must be >= 1, got {args.sentences}.")
    if not 0 < args.mask_prob < 1:
        raise ValueError(f"--mask-prob must be in (0, 1), got {args.mask_prob}.")
    if args.seed < 0:
        raise ValueError(f"--seed {args.seed}: use a seed >= 0.")
    if args.model != "default":   # offline hub name, missing path, no weights: fails before Brown is read
        check_encoder(args.model, what="--model")
    root = args.data or shared_data_dir(required=True)
    sents = brown_sentences(root, args.sentences, seed=args.seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model, tok = load_encoder(args.model, head="mlm", adapter=not args.no_adapter, what="--model")
    res = mlm_eval(model, tok, sents, mask_prob=args.mask_prob, seed=args.seed, progress=wants_progress(args))
    res["model"] = args.model + (" (no adapter)" if args.no_adapter else "")
    if args.json:
        print(json.dumps(res))
    else:
        print(f"held-out Brown: {res['n_sentences']} sentences, {res['n_masked']} masked tokens ({res['model']})")
        print(f"{'':14}{'top-1':>8}{'top-5':>8}")
        print(f"{'model':14}{res['top1']:8.3f}{res['top5']:8.3f}")
        print(f"{'unigram prior':14}{res['unigram_top1']:8.3f}{res['unigram_top5']:8.3f}")
    return 0


def register(subparsers) -> argparse.ArgumentParser:
    """Add the `encoder` command group (`encoder mlm-eval`) to the `tempo-analysis` parser."""
    p = subparsers.add_parser("encoder", help="diagnostics of the embedded encoder",
                              description="Diagnostics of the embedded encoder.")
    sub = p.add_subparsers(dest="encoder_command", metavar="SUBCOMMAND")
    e = sub.add_parser("mlm-eval", help="masked-LM top-1/top-5 on held-out Brown vs the unigram prior",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(e)
    e.set_defaults(func=run)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])   # `tempo-analysis encoder` alone: its own help
    return p
