"""``tempo-analysis future-text {train,evaluate,generate,what-if}``: temporal word-bias LMs from the shell.

    tempo-analysis future-text train --data world --variant freq --out runs/freq
    tempo-analysis future-text train --data acl --first-year 2003 --variant freq --out runs/acl-freq --max-docs-per-year 60
    tempo-analysis future-text train --data csv:texts.csv --variant last-n --n 2 --out runs/last2 --lm gpt2
    tempo-analysis future-text evaluate --checkpoint runs/freq --year 2021 --out metrics.json
    tempo-analysis future-text generate --checkpoint runs/freq --year 2021 --n 5
    tempo-analysis future-text what-if --checkpoint runs/freq --words kernel,lexicon --factor 8 --out whatif.json

``train`` fits a :class:`~tempo_analysis.future_text.estimator.FutureTextModel` with one variant
on the frozen causal LM ``--lm`` (default: the embedded SmolLM2-135M; ``tiny``: a small GPT-2
trained here; or any HF name/folder, checked at once: offline, a hub name fails before any work)
and saves it (``FutureTextModel.save``) under the output policy of ``tempo_analysis.outputs``:
a non-empty folder the project did not write is refused without ``--overwrite``, and the folder
is written to a temporary sibling and renamed into place. It holds ``models/<name>/`` (the
variant without the frozen LM), the tokenizer, the frequency table, the yearly frame,
``base_lm/`` (for ``--lm tiny``), ``config.json`` (the settings), ``future_text.json`` (the split
and training logs) and ``train_info.json`` (the data spec and dev/test metrics). A local ``--lm`` folder is recorded by its absolute path (the
checkpoint does not hold that LM); ``evaluate``/``generate --lm DIR`` load a checkpoint around the
same LM moved elsewhere. ``what-if`` makes --words rise in a frequency model's history (nothing is
retrained) and reports how the forecast bias, the forecast probability and the word's use in texts
generated with and without the trend (same seeds, sampling without beams) respond, as notebook 04's
trend what-if.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

# plain dataclasses and names (no torch): the wing's heavy modules load only when a command runs
from tempo_analysis.cli import (add_preset_options, add_progress_option, chosen_preset, from_preset, print_config,
                                refuse_options, require_positive, require_range, typed, wants_progress)
from tempo_analysis.future_text.config import FREQ_MODELS, VARIANTS, WINDOW_VARIANTS, GenerationSettings, preset


LM_OVERRIDE_HELP = ("the causal LM to load the checkpoint around (default: the one it was trained on, which it "
                    "records by name or absolute path): the same LM's folder when that has moved, or its hub name "
                    "(online); not for checkpoints trained with --lm tiny (they hold their own)")
TINY_OPTIONS = ["--vocab-size", "--n-layer", "--n-embd", "--n-head", "--block-size", "--pretrain-epochs"]
BIAS_OPTIONS = ["--alpha", "--alpha-search"]     # the temporal bias: not in baseline and last-n
# the options above default to None on the command line (so that a given one is seen); these fill them
TRAIN_INFO = "train_info.json"   # what `future-text train` adds to the saved folder: data spec, metrics
SETTING_FLAGS = ("vocab_size", "n_layer", "n_embd", "n_head", "block_size", "pretrain_epochs", "finetune_steps",
                 "batch_size", "window", "alpha", "alpha_search", "seed", "freq_bias", "adapter_rank",
                 "context_encoder")


def _settings_args(p: argparse.ArgumentParser) -> None:
    d = preset("cli")
    g = p.add_argument_group("model and training (defaults: tempo_analysis.future_text.config.preset('cli'))")
    g.add_argument("--lm", default=d.lm, help="causal LM: 'default' (embedded SmolLM2-135M), 'tiny' (small GPT-2 "
                                              "trained here; the --vocab-size .. --pretrain-epochs flags), an HF "
                                              "name (online) or a local folder")
    g.add_argument("--device", default=None, help="cpu, cuda, mps (default: cuda, then mps, then cpu)")
    g.add_argument("--alpha-search", default=None, choices=("learn", "grid", "fixed"),
                   help=f"bias variants: alpha learned from --alpha, searched on dev perplexity over 1, 1e-1, ..., "
                        f"1e-5, or fixed (default {d.alpha_search})")
    g.add_argument("--vocab-size", type=int, default=None, help=f"--lm tiny: BPE vocabulary size (default {d.vocab_size})")
    g.add_argument("--n-layer", type=int, default=None, help=f"--lm tiny (default {d.n_layer})")
    g.add_argument("--n-embd", type=int, default=None, help=f"--lm tiny (default {d.n_embd})")
    g.add_argument("--n-head", type=int, default=None, help=f"--lm tiny (default {d.n_head})")
    g.add_argument("--block-size", type=int, default=None, help=f"--lm tiny: pretraining window (default {d.block_size})")
    g.add_argument("--pretrain-epochs", type=int, default=None, help=f"--lm tiny (default {d.pretrain_epochs})")
    g.add_argument("--finetune-steps", type=int, default=None, help=f"default {d.finetune_steps}")
    g.add_argument("--batch-size", type=int, default=None, help=f"default {d.batch_size}")
    g.add_argument("--window", type=int, default=None,
                   help=f"history years the LSTM of freq, context, context2 reads (default {d.window})")
    g.add_argument("--alpha", type=float, default=None,
                   help=f"bias variants: initial (learn) or fixed alpha (default {d.alpha})")
    g.add_argument("--freq-bias", default=None, choices=FREQ_MODELS,
                   help="--variant freq: 'monotone' (the library's trend model: centred log-frequencies, a "
                        "non-negative skip and a monotone LSTM), 'lstm' (the same, unconstrained) or 'paper' "
                        f"(eq. 6 of the paper: an LSTM over the raw log-frequencies) (default {d.freq_bias})")
    g.add_argument("--adapter-rank", type=int, default=None,
                   help=f"rank of the context adapter every model shares; 0: the per-token offset only "
                        f"(default {d.adapter_rank})")
    g.add_argument("--context-encoder", default=None,
                   help="--variant context, context2: 'lm' (the causal LM's own states, eq. 7), 'default' "
                        f"(the embedded MiniLM), or an encoder name or folder (default {d.context_encoder})")
    g.add_argument("--seed", type=int, default=d.seed)


def check_train_options(args) -> None:
    """Refuse the options that do not apply to the chosen LM or variant (before any work)."""
    refuse_options(args, TINY_OPTIONS, when=args.lm != "tiny", apply_to="--lm tiny (the small GPT-2 trained here)",
                   here=f"--lm {args.lm}", fix="use --lm tiny")
    refuse_options(args, ["--n"], when=args.variant != "last-n", apply_to="--variant last-n",
                   here=f"--variant {args.variant}")
    refuse_options(args, BIAS_OPTIONS, when=args.variant in ("baseline", "last-n"),
                   apply_to="the variants with a temporal bias (freq-nolstm, freq, context, context2)",
                   here=f"--variant {args.variant} (no bias)")
    refuse_options(args, ["--window"], when=args.variant not in WINDOW_VARIANTS,
                   apply_to="the variants whose LSTM reads a window of years (freq, context, context2)",
                   here=f"--variant {args.variant}")
    refuse_options(args, ["--freq-bias"], when=args.variant != "freq", apply_to="--variant freq",
                   here=f"--variant {args.variant}")
    refuse_options(args, ["--context-encoder"], when=args.variant not in ("context", "context2"),
                   apply_to="the context variants (context, context2)", here=f"--variant {args.variant}")
    refuse_options(args, ["--alpha"], when=args.alpha_search == "grid",
                   apply_to="--alpha-search learn or fixed", here="--alpha-search grid (it searches alpha itself)")
    require_positive(args, "--n", "--vocab-size", "--n-layer", "--n-embd", "--n-head", "--block-size",
                     "--finetune-steps", "--batch-size", "--window")
    require_positive(args, "--pretrain-epochs", "--seed", "--adapter-rank", least=0)


def _gen_args(p: argparse.ArgumentParser) -> None:
    d = GenerationSettings()
    g = p.add_argument_group("generation (paper defaults)")
    g.add_argument("--num-beams", type=int, default=d.num_beams)
    g.add_argument("--greedy", action="store_true", help="no sampling (plain beam search)")
    g.add_argument("--top-k", type=int, default=None, help=f"sampling only (default {d.top_k})")
    g.add_argument("--top-p", type=float, default=None, help=f"sampling only (default {d.top_p})")
    g.add_argument("--no-repeat-ngram", type=int, default=d.no_repeat_ngram_size)
    g.add_argument("--max-new-tokens", type=int, default=None, help="default: the median training abstract's length")
    g.add_argument("--gen-seed", type=int, default=d.seed)


def check_gen_options(args) -> None:
    """Refuse sampling options without sampling, and sizes that generate nothing."""
    refuse_options(args, ["--top-k", "--top-p"], when=args.greedy, apply_to="sampling (the default)",
                   here="--greedy (plain beam search)", fix="drop --greedy")
    require_positive(args, "--num-beams", "--max-new-tokens", "--n", "--n-generate", "--top-k", "--max-references")
    require_positive(args, "--no-repeat-ngram", least=0)
    require_range(args, "--gen-seed", low=0, use="a seed >= 0")
    if args.year is not None and not 1000 <= args.year <= 2100:
        raise ValueError(f"--year {args.year}: outside 1000-2100 (a typo?). Fix: give a year such as 2021.")
    if args.top_p is not None and not 0 < args.top_p <= 1:
        raise ValueError(f"--top-p {args.top_p}: use a probability in (0, 1], e.g. 0.92.")


def _gen_settings(args, fitted=None):
    d = GenerationSettings()
    kw = dict(num_beams=args.num_beams, do_sample=not args.greedy,
              top_k=d.top_k if args.top_k is None else args.top_k, top_p=d.top_p if args.top_p is None else args.top_p,
              no_repeat_ngram_size=args.no_repeat_ngram, seed=args.gen_seed)
    if args.max_new_tokens is not None:
        kw.update(max_new_tokens=args.max_new_tokens, min_new_tokens=min(args.max_new_tokens, 10))
    return fitted.generation_settings(**kw) if fitted is not None else GenerationSettings(**kw)


def register(subparsers) -> None:
    """Add the ``future-text`` group with its three commands."""
    top = subparsers.add_parser("future-text", help="future-text generation with a temporal word bias",
                                description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = top.add_subparsers(dest="future_text_command", metavar="{train,evaluate,generate,what-if}")
    top.set_defaults(func=lambda args: (top.print_help(), 2)[1])

    t = sub.add_parser("train", help="train one variant and save a checkpoint folder")
    t.add_argument("--data", default="world", help="world | world:DIR | acl[:ABSTRACTS_DIR,XML_DIR] | csv:FILE "
                                                  "(acl alone reads shared/data)")
    t.add_argument("--variant", required=True, choices=VARIANTS)
    t.add_argument("--n", type=int, default=None, help="n for --variant last-n (last n training years; default 2)")
    t.add_argument("--out", required=True, help="checkpoint folder to write (a new, empty or earlier run's folder)")
    t.add_argument("--overwrite", action="store_true", help="replace --out even if it holds other files")
    t.add_argument("--dev-year", type=int, default=None, help="default: 2020 for ACL, else the second-last year; "
                                                             "given alone, the test year is the next year with documents")
    t.add_argument("--test-year", type=int, default=None, help="default: 2021 for ACL, else the last year; given alone, "
                                                              "the dev year is the last year with documents before it")
    t.add_argument("--first-year", type=int, default=None, help="first training year (ACL paper: 2003)")
    t.add_argument("--max-docs-per-year", type=int, default=None, help="seeded subset per year (CPU budgets)")
    t.add_argument("--history", choices=("all", "subset"), default="all",
                   help="what the word-frequency history counts when --max-docs-per-year cuts what the LM reads: "
                        "every document of the corpus from the first year on (all, the default, as notebook 04: "
                        "counting needs no LM and fuller counts are less noisy) or the subset only")
    add_progress_option(t)
    _settings_args(t)
    add_preset_options(t)
    t.set_defaults(func=cmd_train)

    e = sub.add_parser("evaluate", help="perplexity, content perplexity and content METEOR for one year")
    e.add_argument("--checkpoint", required=True)
    e.add_argument("--year", type=int, required=True)
    e.add_argument("--out", default=None, help="write metrics JSON here (default: print)")
    e.add_argument("--overwrite", action="store_true", help="replace --out even if tempo-analysis did not write it")
    e.add_argument("--data", default=None, help="score this data spec's texts (default: the checkpoint's frame)")
    e.add_argument("--model", default=None, help="model name in the checkpoint (default: its only model)")
    e.add_argument("--lm", default=None, help=LM_OVERRIDE_HELP)
    e.add_argument("--n-generate", type=int, default=5, help="texts generated for content METEOR")
    e.add_argument("--max-references", type=int, default=None, help="seeded sample of gold texts for METEOR")
    _gen_args(e)
    add_progress_option(e)
    add_preset_options(e)
    e.set_defaults(func=cmd_evaluate)

    g = sub.add_parser("generate", help="write texts for a target year")
    g.add_argument("--checkpoint", required=True)
    g.add_argument("--year", type=int, required=True)
    g.add_argument("--n", type=int, default=5)
    g.add_argument("--alpha", type=float, default=None, help="bias strength (default: the trained value)")
    g.add_argument("--prompt", default=None)
    g.add_argument("--model", default=None, help="model name in the checkpoint (default: its only model)")
    g.add_argument("--lm", default=None, help=LM_OVERRIDE_HELP)
    _gen_args(g)
    add_preset_options(g)
    g.set_defaults(func=cmd_generate)

    w = sub.add_parser("what-if", help="inject a rising trend into words' frequency history: how do the bias, "
                                       "the forecast and the generated texts respond?")
    w.add_argument("--checkpoint", required=True)
    w.add_argument("--words", required=True, help="comma-separated words whose history rises, e.g. kernel,lexicon")
    w.add_argument("--factor", type=float, default=8.0,
                   help="how many times more frequent each word becomes over the last years (default 8, notebook 04)")
    w.add_argument("--last", type=int, default=3, help="over how many of the last history years (default 3)")
    w.add_argument("--n", type=int, default=96, help="texts generated with and without the trend, at the same seeds "
                                                     "(default 96, notebook 04)")
    w.add_argument("--year", type=int, default=None, help="target year (default: the checkpoint's test year)")
    w.add_argument("--model", default=None, help="a frequency model in the checkpoint: freq or freq-nolstm "
                                                 "(default: its only model)")
    w.add_argument("--lm", default=None, help=LM_OVERRIDE_HELP)
    w.add_argument("--out", default=None, help="write the result JSON here (default: print only)")
    w.add_argument("--overwrite", action="store_true", help="replace --out even if tempo-analysis did not write it")
    _gen_args(w)
    add_preset_options(w)
    # counts follow the model's distribution only when sampling without beams (beams keep the likeliest
    # texts, so a rare word's count hardly moves): no beams, and half the usual length, as notebook 04
    w.set_defaults(func=cmd_whatif, num_beams=1)


# ------------------------------------------------------------------------------------------------
# the commands import the wing (torch, transformers) only when they run
def _load_frame(spec: str, first_year=None, max_docs=None, seed=0, progress=False, whole: bool = False):
    """The yearly frame the LM reads (the seeded subset); with ``whole``, ``(subset, every document
    from the first year on)``."""
    from tempo_analysis.resolve import load_yearly
    from tempo_analysis.future_text.splits import select_years

    frame = load_yearly(spec, progress=progress).data
    if first_year is not None and not (frame["year"] >= first_year).any():
        years = sorted(set(frame["year"]))
        raise ValueError(f"--first-year {first_year}: {spec} has no documents from that year on (years present: "
                         f"{years[0]}-{years[-1]}). Fix: give an earlier first year.")
    subset = select_years(frame, first_year, max_docs, seed)
    if not whole:
        return subset
    return subset, frame if first_year is None else frame[frame["year"] >= first_year]


def check_years(args) -> None:
    """Typo years and a dev year after the test year fail at once, before the data is read."""
    for flag in ("--dev-year", "--test-year", "--first-year"):
        v = getattr(args, flag[2:].replace("-", "_"))
        if v is not None and not 1000 <= v <= 2100:
            raise ValueError(f"{flag} {v}: outside 1000-2100 (a typo?). Fix: give a year such as 2020.")
    if args.dev_year is not None and args.test_year is not None and not args.dev_year < args.test_year:
        raise ValueError(f"--dev-year {args.dev_year} must come before --test-year {args.test_year}.")
    require_positive(args, "--max-docs-per-year")


def split_of(frame, dev_year, test_year) -> tuple:
    """(dev year, test year) with a year given alone completed from the data (``complete_split``;
    neither given: the model's default split, chosen when it is fitted)."""
    from tempo_analysis.future_text.splits import complete_split

    if dev_year is None and test_year is None:
        return dev_year, test_year
    return complete_split(frame, dev_year, test_year, names=("--dev-year", "--test-year"))


def train_preset(args) -> str:
    """Apply ``--preset`` to the options of `future-text train` the user left alone (the data, the LM and the
    year split; the rule: an option given wins) and return its name; :func:`train_settings` takes its
    other settings."""
    from tempo_analysis.future_text.config import PRESET_DATA

    name = chosen_preset(args)
    p = preset(name)
    from_preset(args, {"data": PRESET_DATA[name], "lm": p.lm, "seed": p.seed, "dev_year": p.dev_year,
                       "test_year": p.test_year,
                       "first_year": p.train_years[0] if p.train_years is not None else None})
    return name


def train_settings(args, name: str, variant_name: str | None) -> dict:
    """The FutureTextSettings `future-text train` fits: the preset ``name`` with the options given."""
    given_settings = {k: getattr(args, k) for k in SETTING_FLAGS if getattr(args, k) is not None and typed(args, k)}
    over = dict(given_settings, device=args.device, progress=wants_progress(args), lm=args.lm,
                dev_year=args.dev_year, test_year=args.test_year)
    if variant_name is not None:
        over["variants"] = (variant_name,)
    over.update(_train_years(args, name))
    return preset(name, **over).to_dict()


def _train_years(args, name: str) -> dict:
    """The preset's training years hold unless a year option was given: then --first-year and the dev year
    bound them (``train_years=None``)."""
    if preset(name).train_years is not None and any(typed(args, k) for k in ("first_year", "dev_year", "test_year")):
        return {"train_years": None}
    return {}


def cmd_train(args) -> int:
    from tempo_analysis.outputs import prepare_output_dir

    preset_name = train_preset(args)
    check_train_options(args)
    check_years(args)
    if args.print_config:
        from tempo_analysis.future_text.config import PAPER_DIFFERENCES

        variant = None if args.variant is None else f"last-{args.n or 2}" if args.variant == "last-n" else args.variant
        settings = {"data": args.data, "first_year": args.first_year, "max_docs_per_year": args.max_docs_per_year,
                    "history": args.history, "model": train_settings(args, preset_name, variant),
                    "generation": GenerationSettings().to_dict()}
        notes = {"variants": "`future-text train` fits the one --variant it is given; without it, the preset's "
                             "variants are shown"}
        return print_config(args, settings, preset=preset_name, not_as_in_paper=PAPER_DIFFERENCES, notes=notes)
    prepare_output_dir(args.out, overwrite=args.overwrite)          # before any work: fails at once
    lm = args.lm
    if lm not in ("default", "tiny"):
        from tempo_analysis.causal_lm import check_causal_lm

        # offline hub name, missing path, a folder without weights: fails at once, naming --lm. A local
        # folder is recorded by its absolute path, so the checkpoint loads from any working directory
        lm = check_causal_lm(lm, what="--lm")
    from tempo_analysis.future_text.estimator import FutureTextModel

    given_settings = {k: getattr(args, k) for k in SETTING_FLAGS if getattr(args, k) is not None and typed(args, k)}
    frame, everything = _load_frame(args.data, args.first_year, args.max_docs_per_year, args.seed, wants_progress(args),
                                    whole=True)
    history = everything if args.history == "all" and args.max_docs_per_year is not None else None
    name = f"last-{args.n or 2}" if args.variant == "last-n" else args.variant
    dev_year, test_year = split_of(frame, args.dev_year, args.test_year)
    if args.variant == "last-n":                                    # checked before the LM is loaded
        from tempo_analysis.future_text.splits import default_split

        dev = dev_year if dev_year is not None else default_split(frame)[0]
        n_train = len({int(y) for y in frame["year"] if y < dev})
        if not 1 <= (args.n or 2) <= n_train - 1:
            raise ValueError(f"--n {args.n or 2}: the data has {n_train} training years before the dev year {dev}, "
                             f"so last-n takes 1 <= n <= {n_train - 1}. Fix: give a smaller --n.")
    fitted = FutureTextModel(preset_name, lm=lm, device=args.device, progress=wants_progress(args), variants=(name,),
                             dev_year=dev_year, test_year=test_year, **_train_years(args, preset_name),
                             **given_settings).fit(frame, history=history)
    metrics = {split: fitted.evaluate(name, y) for split, y in (("dev", fitted.dev_year_), ("test", fitted.test_year_))}
    info = {"data": args.data, "variant": args.variant, "model": name, "first_year": args.first_year,
            "max_docs_per_year": args.max_docs_per_year, "history": "subset" if history is None else "all",
            "metrics": metrics,
            "alpha": float(fitted.models_[name].alpha.detach())}
    fitted.save(args.out, overwrite=args.overwrite)                 # output policy: temp sibling, renamed
    from tempo_analysis.outputs import write_file_atomic

    write_file_atomic(Path(args.out) / TRAIN_INFO, json.dumps(info, indent=2))   # inside our own folder
    print(json.dumps({"model": name, "out": str(args.out), "alpha": info["alpha"],
                      **{f"{k}_{m}": v[m] for k, v in metrics.items() for m in ("ppl", "content_ppl")}}, indent=2))
    return 0


def load_checkpoint(folder, model: str | None = None, lm: str | None = None):
    """(fitted FutureTextModel, model name, info dict) from a ``future-text train`` folder; ``lm`` (``--lm``):
    the LM to load it around instead of the one it was trained on (that folder moved)."""
    from tempo_analysis.future_text.estimator import META, FutureTextModel
    from tempo_analysis.future_text.whatif import model_of

    folder = Path(folder)
    if not (folder / META).is_file():
        raise FileNotFoundError(f"--checkpoint {str(folder)!r} has no {META}; pass a folder written by "
                                "`tempo-analysis future-text train --out DIR`")
    if lm is not None:
        if (folder / "base_lm" / "config.json").is_file():
            raise ValueError(f"--lm applies only to checkpoints trained on a named LM; --checkpoint {str(folder)!r} "
                             "holds its own LM (base_lm/: trained with --lm tiny). Fix: drop --lm.")
        from tempo_analysis.causal_lm import check_causal_lm

        lm = check_causal_lm(lm, what="--lm")       # before the checkpoint is read: fails at once
    fitted = FutureTextModel.load(folder, lm=lm) if lm is not None else FutureTextModel.load(folder)
    names = list(fitted.models_)
    if model is None:
        if len(names) != 1:
            raise ValueError(f"--checkpoint {str(folder)!r} holds the models {names}; pick one with --model")
        model = names[0]
    model_of(fitted, model)                       # a clear error for an unknown name
    info = folder / TRAIN_INFO
    if not info.is_file():
        return fitted, model, {}
    from tempo_analysis.data.errors import read_json_file

    return fitted, model, read_json_file(info, what="future-text train's run summary", fix="restore the file, or "
                                         "train the run again (tempo-analysis future-text train --out DIR)")


def cmd_evaluate(args) -> int:
    from tempo_analysis.future_text.metrics import content_meteor, perplexity
    from tempo_analysis.future_text.whatif import copy_rate
    from tempo_analysis.outputs import prepare_output_file, stamp, write_file_atomic

    check_gen_options(args)
    if args.print_config:
        return _print_generation_config(args, ("year", "data", "model", "lm", "n_generate", "max_references"))
    if args.out:
        prepare_output_file(args.out, overwrite=args.overwrite, kind="future-text-evaluate")   # before any work
    fitted, name, info = load_checkpoint(args.checkpoint, args.model, args.lm)
    if args.data:
        frame = _load_frame(args.data, info.get("first_year"), info.get("max_docs_per_year"), fitted.config_.seed,
                            wants_progress(args))
        texts, spec = frame.loc[frame["year"] == args.year, "text"].tolist(), args.data
    else:
        frame, texts, spec = fitted.frame_, fitted.frame_.loc[fitted.frame_["year"] == args.year, "text"].tolist(), info.get("data", "the checkpoint's frame")
    if not texts:
        raise ValueError(f"--year {args.year}: no documents in {spec}; years present: "
                         f"{sorted(set(frame['year']))[0]}-{sorted(set(frame['year']))[-1]}")
    if args.data:
        m = perplexity(fitted.models_[name], fitted.tokenizer_, texts, args.year, block_size=None,
                       progress=wants_progress(args))
    else:
        m = fitted.evaluate(name, args.year)
    gen = fitted.generate(name, args.n_generate, year=args.year, settings=_gen_settings(args, fitted))
    m["content_meteor"] = content_meteor(gen, texts, max_references=args.max_references, seed=args.gen_seed)
    m["copy_rate"] = copy_rate(gen, fitted.train_df_["text"].tolist())
    m.update({"year": args.year, "model": info.get("model", name), "n_generated": len(gen),
              "meteor_stages": "exact+stem", "generation": _gen_settings(args, fitted).to_dict()})
    text = json.dumps(m, indent=2)
    if args.out:                                                     # output policy: stamped, written atomically
        write_file_atomic(args.out, json.dumps(stamp(m, "future-text-evaluate"), indent=2))
    print(text)
    return 0


def cmd_generate(args) -> int:
    check_gen_options(args)
    if args.print_config:
        return _print_generation_config(args, ("year", "n", "alpha", "prompt", "model", "lm"))
    fitted, name, _ = load_checkpoint(args.checkpoint, args.model, args.lm)
    refuse_options(args, ["--alpha"], when=fitted.models_[name].bias is None,
                   apply_to="models with a temporal bias (freq-nolstm, freq, context, context2)",
                   here=f"the model {name!r} (no bias)")
    texts = fitted.generate(name, args.n, year=args.year, alpha=args.alpha, prompt=args.prompt,
                            settings=_gen_settings(args, fitted))
    for i, t in enumerate(texts, 1):
        print(f"[{i}] {t}\n")
    return 0


def cmd_whatif(args) -> int:
    """`future-text what-if`: a rising trend injected into the history of --words (nothing retrained)."""
    from tempo_analysis.outputs import prepare_output_file, stamp, write_file_atomic

    check_gen_options(args)
    if args.print_config:
        return _print_generation_config(args, ("words", "factor", "last", "n", "year", "model", "lm"))
    require_positive(args, "--last")
    if not args.factor > 0:
        raise ValueError(f"--factor {args.factor}: use a positive number (8: eight times more frequent; 1: no trend).")
    words = [w.strip() for w in args.words.split(",") if w.strip()]
    if not words:
        raise ValueError(f"--words {args.words!r} names no word. Fix: give comma-separated words, e.g. kernel,lexicon.")
    out = prepare_output_file(args.out, overwrite=args.overwrite, kind="future-text-what-if") if args.out else None
    import dataclasses

    from tempo_analysis.future_text.model import FEATURE_KIND
    from tempo_analysis.future_text.whatif import bias_by_factor, trend_response

    fitted, name, _ = load_checkpoint(args.checkpoint, args.model, args.lm)
    variant = getattr(getattr(fitted.models_[name], "config", None), "variant", None)
    if FEATURE_KIND.get(variant) != "freq":
        raise ValueError(f"--model {name!r} ({variant or 'no temporal bias'}) does not read word frequencies, so a "
                         "trend in them changes nothing. Fix: pass a freq or freq-nolstm model (train one with "
                         "`future-text train --variant freq`).")
    settings = _gen_settings(args, fitted)
    if args.max_new_tokens is None:
        settings = dataclasses.replace(settings, max_new_tokens=settings.max_new_tokens // 2,
                                       min_new_tokens=settings.min_new_tokens // 2)
    year = fitted.test_year_ if args.year is None else args.year
    by_factor = bias_by_factor(fitted, name, words, factors=(1.0, args.factor), last=args.last, year=year)
    res = trend_response(fitted, name, words, factor=args.factor, last=args.last, n=args.n, settings=settings,
                         year=year)
    table = res["table"]
    shown = ["word", "bias_before", "bias_after", "prob_ratio", "expected_ratio", "count_before", "count_after",
             "ratio"]
    print(table[shown].round(3).to_string(index=False))
    print(f"{name}, {year}, trend x{args.factor:g} over the last {args.last} years: forecast probability ratio "
          f"{res['prob_response']:.2f} in the real dev texts, {res['expected_response']:.2f} in the generated ones; "
          f"occurrences per generated token x{res['trend_response']:.2f} over {res['evidence']} of {len(words)} "
          f"words ({res['occurrences']} counted in {args.n} + {args.n} texts)")
    if out is not None:
        payload = {"checkpoint": str(args.checkpoint), "model": name, "year": year, "words": words,
                   "factor": args.factor, "last": args.last, "n": args.n, "generation": settings.to_dict(),
                   **{k: res[k] for k in ("trend_response", "evidence", "occurrences", "prob_response",
                                          "expected_response")},
                   "bias_rise": float((table["bias_after"] - table["bias_before"]).mean()),
                   "bias_by_factor": by_factor.to_dict(orient="index"), "table": table.to_dict(orient="records")}
        write_file_atomic(out, json.dumps(stamp(payload, "future-text-what-if"), indent=2, default=str))
        print(f"-> {out}")
    return 0


def _print_generation_config(args, keys) -> int:
    """``--print-config`` of the commands that read a checkpoint: its model's settings are the checkpoint's;
    the decoding is the paper's in every preset (beam 5 with sampling, top-k 50, top-p 0.92, no repeated 2-gram)."""
    settings = {"checkpoint": args.checkpoint, **{k: getattr(args, k) for k in keys},
                "generation": _gen_settings(args).to_dict()}
    notes = {"model": "the checkpoint's own settings (its config.json); a preset chooses none of them",
             "generation": "the paper's decoding in every preset; max_new_tokens: the median training text's length "
                           "unless --max-new-tokens is given"}
    return print_config(args, settings, preset=chosen_preset(args), notes=notes)
