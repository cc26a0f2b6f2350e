"""`tempo-analysis diffusion`: train DCWE (+ CWE, SA, TA) on a social corpus, then map a word's diffusion.

    tempo-analysis diffusion train --data world --model default --out runs/world
    tempo-analysis diffusion train --data acl --out runs/acl --years 2017-2020
    tempo-analysis diffusion train --data csv:docs.csv,edges.csv --out runs/mine
    tempo-analysis diffusion train --data world --out runs/notebook03 --epochs 10 --max-steps 40 --lr 1e-4 \
        --dynamic-lr 1e-3 --lambda-w 1 --mlm-probability 0.3 --batches mixed \
        --variants dcwe,cwe     (notebook 03's training: tempo_analysis.diffusion.config.PRESETS["notebook"])
    tempo-analysis diffusion analyze --checkpoint runs/world --word cloud --anchor server --out result.json

Defaults: `tempo_analysis.diffusion.config.PRESETS["cli"]` (the settings of `DiffusionMapper()`).
`--data` is read by `tempo_analysis.resolve.load_social`. `world` is the planted world on
disk (data/world), generated in memory when there is none; `world:DIR` reads DIR;
`--mode/--speed/--world-seed` regenerate the world instead. `acl[:XML_DIR]` builds the ACL venue
network from the Anthology XML (default: shared/data/acl_anthology_xml/xml; units = venue
families, author-Jaccard edges > --theta, slices = years). `csv:DOCS,EDGES` reads a
(unit, time, text) CSV and a (source, target[, weight]) edge CSV.
`analyze` writes r-hat per (unit, time), first-arrival slices, walk/flight shares per slice and
the recovered mode (plus the planted mode when the run was trained on the planted world).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tempo_analysis.cli import (add_output_options, add_preset_options, add_progress_option, chosen_preset, from_preset,
                                print_config, refuse_options, require_positive, require_range, wants_progress)

ACL_DEFAULTS = {"years": "2017-2020", "theta": 0.01, "min_papers": 30, "max_docs": 40}   # acl-only options
WORLD_OPTIONS = ["--mode", "--speed", "--world-seed"]
ACL_OPTIONS = ["--years", "--theta", "--min-papers", "--max-docs"]


def _years(text: str) -> list[int]:
    """'2017-2020' or '2017,2018,2020' -> list of years."""
    try:
        if "-" in text:
            a, b = text.split("-", 1)
            years = list(range(int(a), int(b) + 1))
        else:
            years = [int(y) for y in text.split(",")]
    except ValueError:
        raise ValueError(f"--years {text!r}: use FIRST-LAST (2017-2020) or a comma list (2017,2019).") from None
    if not years:
        raise ValueError(f"--years {text!r}: the range runs backwards. Fix: write FIRST-LAST with FIRST <= LAST "
                         "(e.g. 2017-2020).")
    outside = sorted({y for y in years if not 1000 <= y <= 2100})
    if outside:
        raise ValueError(f"--years {text!r}: years {outside[:3]} lie outside 1000-2100 (a typo?). Fix: correct them.")
    return years


def _load_corpus(args):
    """Resolved(SocialCorpus, truth dict or None): `load_social` with --data and the world and ACL options of `train`."""
    from tempo_analysis.resolve import load_social  # cli: imported when the command runs

    changes = {k: v for k, v in (("mode", getattr(args, "mode", None)), ("speed", getattr(args, "speed", None)),
                                 ("seed", getattr(args, "world_seed", None))) if v is not None}
    acl = {k: ACL_DEFAULTS[k] if getattr(args, k, None) is None else getattr(args, k) for k in ACL_DEFAULTS}
    return load_social(args.data, world=changes or None, years=_years(acl["years"]), theta=acl["theta"],
                       min_papers=acl["min_papers"], max_docs_per_unit_slice=acl["max_docs"], seed=args.seed,
                       progress=wants_progress(args))


def check_train_options(args) -> None:
    """Refuse the options that do not apply to the chosen data or variants (before any work)."""
    spec = str(args.data).strip()
    kind = spec.partition(":")[0].strip().lower()
    refuse_options(args, WORLD_OPTIONS, when=spec.lower() != "world",
                   apply_to="--data world (the planted world, regenerated in memory with them)",
                   here=f"--data {spec}" + (" (a world folder is read as it is)" if kind == "world" else ""),
                   fix="write such a world with `tempo-analysis world --out DIR --mode ...` and pass --data world:DIR/world"
                   if kind == "world" else None)
    refuse_options(args, ACL_OPTIONS, when=kind != "acl", apply_to="--data acl[:XML_DIR] (the ACL venue network)",
                   here=f"--data {spec}")
    variants = {v.strip() for v in str(args.variants).split(",") if v.strip()}
    refuse_options(args, ["--lambda-w", "--dynamic-lr"], when=bool(variants) and not variants & {"dcwe", "sa", "ta"},
                   apply_to="the variants with dynamic offsets (dcwe, sa, ta)", here=f"--variants {args.variants}",
                   fix="add dcwe to --variants")
    refuse_options(args, ["--shared-warmup-lr"], when=not args.shared_warmup_steps,
                   apply_to="a shared warm-up (--shared-warmup-steps N)",
                   here=f"--shared-warmup-steps {args.shared_warmup_steps}", fix="add --shared-warmup-steps N")
    if args.years is not None:
        _years(args.years)
    require_positive(args, "--epochs", "--max-steps", "--batch-size", "--max-length", "--min-papers", "--max-docs")
    require_positive(args, "--shared-warmup-steps", least=0)
    require_positive(args, "--speed")     # 0 new adopters per slice: nothing diffuses
    require_range(args, "--seed", "--world-seed", low=0, use="a seed >= 0")
    require_range(args, "--lambda-w", low=0, use="a prior weight >= 0 (0: no random-walk prior)")
    require_range(args, "--theta", low=0, high=1, high_open=True,
                  use="an author-Jaccard threshold from 0 (any shared author links two venues) to below 1")
    from tempo_analysis.diffusion.config import PRESETS   # light: no torch

    cli, notebook = PRESETS["cli"], PRESETS["notebook"]
    for flag, value, default in (("--lr", args.lr, f"{cli.lr:g}"), ("--dynamic-lr", args.dynamic_lr, f"{cli.dynamic_lr:g}"),
                                 ("--shared-warmup-lr", args.shared_warmup_lr, "--lr")):
        if value is not None and not value > 0:
            raise ValueError(f"{flag} {value}: use a positive learning rate (default {default}).")
    if not 0 < args.mlm_probability < 1:
        raise ValueError(f"--mlm-probability {args.mlm_probability}: use a share between 0 and 1 (default "
                         f"{cli.mlm_probability:g}; notebook 03: {notebook.mlm_probability:g}).")


def train_preset(args) -> str:
    """Apply ``--preset`` to the options of `diffusion train` the user left alone and return its name (the
    rule: an option given wins). Options whose default is None (--dynamic-lr, --lambda-w,
    --shared-warmup-lr) stay unset: :func:`train_config` takes the preset's value for them."""
    from tempo_analysis.diffusion.config import preset

    name = chosen_preset(args)
    c = preset(name)
    from_preset(args, {"model": c.encoder, "variants": ",".join(c.variants), "epochs": c.epochs,
                       "max_steps": c.max_steps, "batch_size": c.batch_size, "lr": c.lr,
                       "shared_warmup_steps": c.shared_warmup_steps, "mlm_probability": c.mlm_probability,
                       "batches": "slice" if c.slice_batches else "mixed", "max_length": c.max_length,
                       "seed": c.seed, "device": c.device})
    return name


def train_config(args):
    """The DiffusionTrainConfig that `diffusion train` runs with these (checked) arguments: the ``--preset``
    (``cli`` when none is given) with every option given winning over it."""
    import dataclasses

    from tempo_analysis.diffusion.config import preset

    variants = tuple(v.strip() for v in args.variants.split(",") if v.strip())
    optional = {k: v for k, v in (("lambda_w", args.lambda_w), ("dynamic_lr", args.dynamic_lr),
                                  ("shared_warmup_lr", args.shared_warmup_lr)) if v is not None}
    try:  # the settings are checked before the corpus is loaded
        return dataclasses.replace(preset(chosen_preset(args)), encoder=args.model, variants=variants,
                                   epochs=args.epochs, max_steps=args.max_steps, batch_size=args.batch_size,
                                   lr=args.lr, shared_warmup_steps=args.shared_warmup_steps,
                                   mlm_probability=args.mlm_probability, slice_batches=args.batches == "slice",
                                   seed=args.seed, device=args.device, progress=wants_progress(args),
                                   max_length=args.max_length, **optional)
    except ValueError as e:
        raise ValueError(str(e).replace("DiffusionTrainConfig.", "--").replace("variants=", "variants ")) from None


def run_train(args) -> int:
    from tempo_analysis.diffusion import DiffusionMapper  # cli: imported when run
    from tempo_analysis.outputs import prepare_output_dir

    name = train_preset(args)
    check_train_options(args)
    cfg = train_config(args)
    if args.print_config:
        import dataclasses

        from tempo_analysis.diffusion.config import PAPER_DIFFERENCES

        settings = {"data": args.data, "train": {k: v for k, v in dataclasses.asdict(cfg).items() if k != "progress"}}
        return print_config(args, settings, preset=name, not_as_in_paper=PAPER_DIFFERENCES,
                            notes={"lambda_a": "None: 1e-3 * lambda_w (the paper's rule)"})
    prepare_output_dir(args.out, overwrite=args.overwrite)  # before any work: a refused --out fails at once
    if args.model != "default":   # offline hub name, missing path, no weights: fails before the corpus is read
        from tempo_analysis.encoders import check_encoder

        check_encoder(args.model, what="--model")
    resolved = _load_corpus(args)
    corpus, truth = resolved.data, resolved.truth
    print(f"training {', '.join(cfg.variants)} on {corpus}", file=sys.stderr)
    mapper = DiffusionMapper(cfg).fit(corpus, truth)     # the planted truth is saved with the run
    out = mapper.save(args.out, overwrite=args.overwrite)
    ppl = ", ".join(f"{k}={v:.3f}" for k, v in mapper.perplexity_.items())
    print(f"saved to {out}; held-out MLM perplexity: {ppl}")
    return 0


def run_analyze(args) -> int:
    from tempo_analysis.diffusion.config import ANALYSIS_PRESETS   # light: no torch

    name = chosen_preset(args)
    from_preset(args, ANALYSIS_PRESETS[name])     # the rule: an option given wins over the preset
    if args.n != "auto" and not (str(args.n).isdigit() and int(args.n) > 0):
        raise ValueError(f"--n {args.n!r}: use a positive integer (paper: 100) or 'auto'.")
    require_range(args, "--threshold", low=0, use="a threshold >= 0 (r-hat is never negative; default 0)")
    require_positive(args, "--max-docs")
    refuse_options(args, ["--max-docs"], when=args.read == "predictions",
                   apply_to="--read neighbours (the corpus's contexts are encoded)",
                   here="--read predictions (probes only, no corpus pass)")
    if args.print_config:
        settings = {k: getattr(args, k) for k in ("checkpoint", "word", "anchor", "variant", "read", "n", "threshold",
                                                 "max_docs")}
        notes = {"n": "auto: 100 (the paper's N), or 5% of the candidate words when that is smaller"}
        if args.read == "predictions":
            notes["read"] = "predictions is the library's own map (masked probes); the paper reads neighbours"
        return print_config(args, settings, preset=name, notes=notes)
    from tempo_analysis.diffusion import DiffusionMapper  # cli: imported when the command runs
    from tempo_analysis.outputs import prepare_output_file, stamp, write_file_atomic

    if args.word.strip().lower() == args.anchor.strip().lower():
        raise ValueError(f"--word and --anchor are the same ({args.word!r}): r-hat measures how close a word's "
                         "neighbours come to ANOTHER word. Fix: give the planted anchor, e.g. --anchor server.")
    prepare_output_file(args.out, overwrite=args.overwrite, kind="diffusion-analysis")
    ckpt = Path(args.checkpoint)
    # reading predictions, every model is read on DCWE's dynamic vocabulary: load DCWE too where there is one
    extra = ["dcwe"] if args.read == "predictions" and args.variant != "dcwe" else []
    mapper = DiffusionMapper.load(ckpt, variants=[args.variant, *extra])
    if args.variant not in mapper.models_:
        raise ValueError(f"--variant {args.variant!r} is not in {ckpt} (it has {sorted(mapper.config.variants)}).")
    n = args.n if args.n == "auto" else int(args.n)
    if args.read == "predictions":
        result = mapper.analyze_predictions(args.word, args.anchor, variant=args.variant,
                                            n_neighbors=1 if n == "auto" else n, threshold=args.threshold)
    else:
        index = mapper.context_index(args.variant, max_docs_per_unit_slice=args.max_docs,
                                     progress=wants_progress(args))
        result = mapper.analyze(args.word, args.anchor, index=index, n_neighbors=n, threshold=args.threshold)
    payload = {"checkpoint": str(ckpt), "variant": args.variant, "read": args.read, **result.to_dict()}
    truth = mapper.truth_
    if truth is not None:
        payload["planted"] = {"mode": truth["mode"], "word": truth["word"], "anchor": truth["anchor"],
                              "first_slice": truth["first_slice"], "walk_share": truth.get("walk_share")}
    write_file_atomic(args.out, json.dumps(stamp(payload, "diffusion-analysis"), indent=1))
    print(f"{mode_line(args.word, args.anchor, result.mode)}; wrote {args.out}")
    return 0


def mode_line(word: str, anchor: str, m: dict) -> str:
    """One line on the recovered mode, with the reason when there is none."""
    def number(v):   # None (a JSON-cleaned NaN) and NaN alike: nothing to report
        return "n/a" if v is None or v != v else f"{v:.2f}"

    line = (f"{word} -> {anchor}: recovered mode {m.get('mode') or 'none'} (walk share {number(m.get('walk_share'))}, "
            f"expected under random arrival {number(m.get('expected_walk_share'))})")
    return f"{line}: {m['note']}" if m.get("note") else line


def register(subparsers) -> None:
    """Add the `diffusion` group with `train` and `analyze`; the defaults are ``PRESETS["cli"]``'s."""
    from tempo_analysis.diffusion.config import PRESETS, VARIANTS   # light: no torch

    cli = PRESETS["cli"]
    p = subparsers.add_parser("diffusion", help="social diffusion maps with dynamic contextualized word embeddings",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="diffusion_command", metavar="{train,analyze}")
    p.set_defaults(func=lambda a: (p.print_help(), 2)[1])

    t = sub.add_parser("train", help="train DCWE, CWE, SA, TA; save them with the corpus")
    t.add_argument("--data", default="world", help="world | world:DIR | acl[:XML_DIR] | csv:DOCS.csv,EDGES.csv")
    t.add_argument("--model", default=cli.encoder, help="encoder: 'default' (MiniLM), an HF name or a local path")
    t.add_argument("--out", required=True, help="run folder to write")
    add_output_options(t)
    t.add_argument("--variants", default=",".join(cli.variants), help=f"comma list of {','.join(VARIANTS)}")
    t.add_argument("--epochs", type=int, default=cli.epochs)
    t.add_argument("--max-steps", type=int, default=cli.max_steps, help="cap on optimiser steps per model")
    t.add_argument("--batch-size", type=int, default=cli.batch_size)
    t.add_argument("--lr", type=float, default=cli.lr, help="encoder body and MLM head")
    t.add_argument("--dynamic-lr", type=float, default=None,
                   help=f"GATs and offset FFNs (default {cli.dynamic_lr:g}; notebook 03: 1e-3)")
    t.add_argument("--shared-warmup-steps", type=int, default=cli.shared_warmup_steps,
                   help="plain-MLM steps on the training text that every variant starts from (notebook 03: 80)")
    t.add_argument("--shared-warmup-lr", type=float, default=None, help="its learning rate (default: --lr)")
    t.add_argument("--mlm-probability", type=float, default=cli.mlm_probability,
                   help=f"share of training tokens masked (default {cli.mlm_probability:g}; held-out masks stay "
                        "at 0.15; notebook 03: 0.3)")
    t.add_argument("--batches", choices=("slice", "mixed"), default="slice" if cli.slice_batches else "mixed",
                   help="slice: one time slice per batch; mixed: every slice's offset network learns at every "
                        "step (notebook 03)")
    t.add_argument("--lambda-w", type=float, default=None,
                   help=f"random-walk prior of dcwe, sa, ta (default {cli.lambda_w:g}; lambda_a = 1e-3 * lambda_w)")
    t.add_argument("--max-length", type=int, default=cli.max_length, help="tokens per document")
    t.add_argument("--seed", type=int, default=cli.seed)
    t.add_argument("--device", default=cli.device)
    t.add_argument("--mode", choices=("walk", "flight"), default=None,
                   help="world only: regenerate it in memory with this mode")
    t.add_argument("--speed", type=int, default=None, help="world only: regenerate with this many adopters per slice")
    t.add_argument("--world-seed", type=int, default=None, help="world only: regenerate with this seed")
    t.add_argument("--years", default=None, help="acl only: years (slices; default 2017-2020)")
    t.add_argument("--theta", type=float, default=None, help="acl only: author-Jaccard edge threshold (default 0.01)")
    t.add_argument("--min-papers", type=int, default=None,
                   help="acl only: keep venues with this many abstracts (default 30)")
    t.add_argument("--max-docs", type=int, default=None, help="acl only: abstracts sampled per (venue, year) "
                                                               "(default 40)")
    add_progress_option(t)
    add_preset_options(t)
    t.set_defaults(func=run_train)

    a = sub.add_parser("analyze", help="r-hat map, first arrivals, walk vs flight for a word and an anchor")
    a.add_argument("--checkpoint", required=True, help="a folder written by `diffusion train`")
    a.add_argument("--word", required=True)
    a.add_argument("--anchor", required=True)
    a.add_argument("--out", required=True, help="JSON file to write")
    add_output_options(a)
    a.add_argument("--n", default="auto", help="N nearest neighbours: an integer (paper: 100) or 'auto' "
                                                "(100, or 5%% of the candidate words when smaller)")
    a.add_argument("--threshold", type=float, default=0.0, help="a unit holds the association when r-hat > this")
    a.add_argument("--variant", default="dcwe", choices=("dcwe", "cwe", "sa", "ta"))
    a.add_argument("--max-docs", type=int, default=None, help="documents sampled per (unit, slice) to encode")
    a.add_argument("--read", default="neighbours", choices=("neighbours", "predictions"),
                   help="neighbours: the paper's r-hat, the anchor among the word's nearest neighbours in the "
                        "corpus's contexts; predictions: the map notebook 03's exercises read, is the anchor among "
                        "the model's first N choices in probes such as 'cloud [MASK].' for each unit and slice "
                        "('auto': N = 1)")
    add_progress_option(a)
    add_preset_options(a)
    a.set_defaults(func=run_analyze)
