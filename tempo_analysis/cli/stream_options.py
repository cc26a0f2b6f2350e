"""The options and settings that `stream evaluate` and `stream time-effect` share: data, encoder,
training and time options, and the model settings read from them."""

from __future__ import annotations

import argparse
import dataclasses

from tempo_analysis.cli import (add_preset_options, add_progress_option, chosen_preset, from_preset,
                                require_positive, require_range, typed, wants_progress)
from tempo_analysis.stream.config import CLI_EXPERIMENT, StreamConfig   # plain settings: no torch at start-up

# data.timelines.TIME_UNITS and POSITION, spelled here so that parsing imports no pandas
# (tests/cli checks that the two agree)
TIME_UNIT_CHOICES = ("s", "ms", "min", "h", "D", "position")


def add_data_and_model_options(e, *, windows: bool) -> None:
    """The data, encoder, training and time options that `stream evaluate` and `stream time-effect` share."""
    e.add_argument("--data", default=CLI_EXPERIMENT.data,
                   help="world | world:DIR | rumoureval2017[:DIR] | csv:FILE | jsonl:FILE "
                        f"(default: {CLI_EXPERIMENT.data}; "
                        "rumoureval2017 alone reads shared/data/rumoureval2017)")
    e.add_argument("--model", default=None,
                   help="encoder: 'default' (embedded MiniLM, the default), an HF name or a path")
    window = StreamConfig.window
    if windows:
        e.add_argument("--window", type=int, nargs="+", default=[window], help=f"window size(s) w (default {window})")
    else:
        e.add_argument("--window", type=int, default=window, help=f"window size w (default {window})")
    d = StreamConfig
    e.add_argument("--epochs", type=int, default=None,
                   help=f"training epochs (default: the model's own; TempoFormer {d.epochs})")
    e.add_argument("--lr", type=float, default=None,
                   help=f"encoder learning rate (default: the model's own; TempoFormer {d.lr:g})")
    e.add_argument("--head-lr", type=float, default=None,
                   help=f"learning rate of TempoFormer's new modules (default {d.head_lr:g})")
    e.add_argument("--batch-size", type=int, default=None,
                   help=f"windows per optimiser step (default: the model's own; TempoFormer {d.batch_size})")
    e.add_argument("--grad-accum-steps", type=int, default=None,
                   help=f"TempoFormer: batches whose gradients are summed into one optimiser step (default "
                        f"{d.grad_accum_steps}; the paper accumulates, without saying over how many)")
    e.add_argument("--max-length", type=int, default=None, help=f"tokens per post (default {StreamConfig.max_length})")
    e.add_argument("--patience", type=int, default=None, help="early stopping patience on dev macro-F1")
    e.add_argument("--freeze-local", action=argparse.BooleanOptionalAction, default=None,
                   help="freeze and cache TempoFormer's local stack (default: off; the notebook preset: on)")
    e.add_argument("--summary", default=None, choices=["auto", "cls", "mean", "mean_then_cls"],
                   help="post vector TempoFormer's stream reads: [CLS] (paper) or token mean; auto = mean "
                        f"for mean-pooling sentence encoders such as the default MiniLM (default {d.summary})")
    e.add_argument("--max-timelines", type=int, default=None, help="seeded random subset of timelines")
    e.add_argument("--time-unit", default=None, choices=TIME_UNIT_CHOICES,
                   help="unit of numeric timestamps in csv/jsonl (s, ms, min, h, D), or 'position' for order-only "
                        "data (a post's index in its timeline is its time; also the rule when the file has no "
                        "timestamp column; on world and rumoureval2017 it replaces their real timestamps); "
                        "TempoFormer then measures gaps in this unit (default: seconds). Real and date-string "
                        "timestamps are not rescaled by a numeric unit: it only sets TempoFormer's gap unit")
    e.add_argument("--time-transform", default=None, choices=["log1p", "linear"],
                   help="TempoFormer's time transform phi(gap): scale*log(1+gap/unit) (paper) or scale*gap/unit")
    e.add_argument("--time-scale", type=float, default=None,
                   help="TempoFormer: multiplies phi, i.e. every rotary angle (default 1); time_bilstm, swnu, "
                        "seq_sig_net: their own scale, which divides their log-gap features (default 10)")
    e.add_argument("--rope-theta", type=float, default=None,
                   help="TempoFormer: rotary base of the temporal RoPE (default 10; the paper's code: 10000)")
    e.add_argument("--temporal-residual", action="store_true",
                   help="TempoFormer: add a residual to the temporal MHA (the reference has none)")
    e.add_argument("--dev-fraction", type=float, default=CLI_EXPERIMENT.dev_fraction,
                   help="share of each fold's training timelines held out as dev (early stopping; "
                        f"default {CLI_EXPERIMENT.dev_fraction})")
    e.add_argument("--split-seed", type=int, default=CLI_EXPERIMENT.split_seed, help="seed of the fold assignment")
    e.add_argument("--device", default=StreamConfig.device)
    e.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    add_progress_option(e)
    add_preset_options(e)


def check_numbers(args) -> None:
    """The number options that `stream evaluate` and `stream time-effect` share, checked before any work."""
    require_positive(args, "--window", "--epochs", "--batch-size", "--max-length", "--patience", "--max-timelines",
                     "--threads", "--grad-accum-steps")
    require_range(args, "--lr", "--head-lr", low=0, low_open=True, use="a positive learning rate")
    require_range(args, "--time-scale", low=0, low_open=True,
                  use="a positive scale (TempoFormer multiplies its rotary angles by it; --ablation vanilla_mha "
                      "is the model without time)")
    require_range(args, "--rope-theta", low=1, low_open=True,
                  use="a rotary base above 1 (default 10; the paper's code: 10000)")
    require_range(args, "--dev-fraction", low=0, high=1, high_open=True,
                  use="a share from 0 (no dev split) to below 1")
    require_range(args, "--split-seed", low=0, use="a seed >= 0")


def settings_from_args(args) -> tuple[dict, dict]:
    """(explicit, ambient) model settings for make_classifier.

    explicit: the options the user gave; a model that does not take one refuses it
    (check_settings). ambient: the encoder default, device and progress, passed where taken.
    """
    s = {}
    for key in ("epochs", "lr", "head_lr", "batch_size", "grad_accum_steps", "max_length", "patience", "summary",
                "dropout", "llm", "shots", "calibrate"):
        if getattr(args, key, None) is not None:
            s[key] = getattr(args, key)
    if args.model is not None:
        s["encoder"] = args.model
    if args.ablation != "none":
        s["ablation"] = args.ablation
    if args.freeze_local is not None:
        s["freeze_local"] = bool(args.freeze_local)
    if getattr(args, "hidden", None) is not None:
        s["hidden"] = args.hidden[0] if len(args.hidden) == 1 else tuple(args.hidden)
    # --time-unit is also the loader's unit: TempoFormer measures its gaps in it where it applies
    # (ambient), while the time-encoding options are TempoFormer's own (explicit: refused elsewhere)
    unit = {}
    if args.time_unit is not None:
        from tempo_analysis.data.timelines import TIME_UNITS

        if args.time_unit in TIME_UNITS:        # "position" counts posts: no unit conversion
            unit["time_unit"] = float(TIME_UNITS[args.time_unit])
    mk = {}
    for key in ("time_transform", "time_scale", "rope_theta"):
        if getattr(args, key) is not None:
            mk[key] = getattr(args, key)
    if args.temporal_residual:
        mk["temporal_residual"] = True
    if mk:
        s["model_kwargs"] = {**unit, **mk}
    ambient = {"encoder": StreamConfig.encoder, "device": args.device, "progress": wants_progress(args)}
    if unit:
        ambient["model_kwargs"] = unit
    return s, ambient


def check_model_names(args, encoder=None) -> None:
    """``--model`` (an encoder) and ``--llm`` (a causal LM) checked by name, loading no weights: an offline hub
    name, a missing path or a folder without weights is one error naming the option, before any data is read.
    ``encoder``: the encoder a ``--preset`` chose (checked the same way when ``--model`` is not given)."""
    from tempo_analysis.encoders import check_encoder

    if args.model is not None and args.model != "default":
        check_encoder(args.model, what="--model")
    elif encoder is not None and encoder != "default":
        check_encoder(encoder, what=f"--preset {args.preset}'s encoder (give --model to use another)")
    if args.llm is not None and args.llm != "default":
        from tempo_analysis.causal_lm import check_causal_lm

        check_causal_lm(args.llm, what="--llm")


def refuse_untaken_settings(name: str, explicit: dict) -> None:
    """Refuse the settings model `name` does not take, naming the options as the user typed them."""
    from tempo_analysis.stream.experiment import check_settings, model_settings  # cli: the wing loads when run

    try:
        check_settings(name, explicit)
    except ValueError:
        flag = {"encoder": "model"}  # settings whose option has another name
        bad = sorted(set(explicit) - set(model_settings(name)))
        # model_kwargs holds TempoFormer's time-encoding options: name the flags the user typed
        bad = [k for b in bad for k in ([m for m in explicit[b] if m != "time_unit"] if b == "model_kwargs" else [b])]
        flags = ", ".join("--" + flag.get(k, k).replace("_", "-") for k in bad)
        takes = ", ".join(model_settings(name))
        raise ValueError(f"{flags} do(es) not apply to {name!r}; drop them (it takes the settings: {takes})") from None


# ---------------------------------------------------------------------------------------------
# --preset and --print-config (the rule: an option given on the command line wins over the preset)
RUN_SETTINGS = ("window", "seed", "device", "progress")   # set by the command itself, never by the model preset


def stream_preset(args, *, windows: bool) -> str:
    """Apply ``--preset`` to the protocol options the user left alone (data, folds, seeds or seed, window;
    time-effect: also its fold) and return the preset's name. The model settings are merged by
    :func:`preset_model_settings`, for TempoFormer only."""
    from tempo_analysis.stream.config import EXPERIMENTS, preset

    name = chosen_preset(args)
    model, exp = preset(name), EXPERIMENTS[name]
    values = {"data": exp.data, "folds": exp.folds, "window": [model.window] if windows else model.window}
    values.update({"seeds": list(exp.seeds)} if windows else {"seed": model.seed, "fold": exp.fold})
    from_preset(args, {k: v for k, v in values.items() if hasattr(args, k)})
    return name


def preset_model_settings(name: str, model: str, explicit: dict, tuned=()) -> dict:
    """The preset's TempoFormer settings that differ from the documented defaults, less those the user set
    (``explicit``) or tunes on dev (``tuned``); {} for another model or for the cli preset. Its time
    settings (``model_kwargs``) are merged under the ones given."""
    from tempo_analysis.stream.config import preset

    if model != "tempoformer":
        return {}
    chosen, default = preset(name).to_dict(), StreamConfig().to_dict()
    out = {k: v for k, v in chosen.items() if k not in RUN_SETTINGS and v != default[k] and k not in tuned}
    mk = {k: v for k, v in out.pop("model_kwargs", {}).items() if k not in tuned}
    out = {k: v for k, v in out.items() if k not in explicit}
    mk.update(explicit.get("model_kwargs", {}))
    if mk:
        out["model_kwargs"] = mk
    return out


def merged_settings(ambient: dict, from_preset_: dict, explicit: dict, params) -> dict:
    """ambient < preset < explicit, for the settings model takes; ``model_kwargs`` merged key by key."""
    out = {**{k: v for k, v in ambient.items() if k in params}, **from_preset_, **explicit}
    mk = {**ambient.get("model_kwargs", {}), **from_preset_.get("model_kwargs", {}), **explicit.get("model_kwargs", {})}
    if mk and "model_kwargs" in params:
        out["model_kwargs"] = mk
    return out


def print_stream_config(args, name: str, model: str, settings: dict, protocol: dict) -> int:
    """``--print-config`` of `stream evaluate` and `stream time-effect`."""
    from tempo_analysis.cli import print_config
    from tempo_analysis.stream.config import PAPER_DIFFERENCES

    shown = dict(settings)
    if model == "tempoformer":   # every setting TempoFormer runs with, the ones not given at their defaults
        fields = {f.name for f in dataclasses.fields(StreamConfig)}
        shown = StreamConfig(**{k: v for k, v in settings.items() if k in fields}).to_dict()
        shown.pop("progress", None)
        for k in ("window", "seed"):   # per run: the protocol's windows and seeds
            if k not in settings:
                shown.pop(k)
    notes = {"model": model}
    if model != "tempoformer" and name != "cli":
        notes["preset"] = (f"the {name} preset's model settings are TempoFormer's; {model} runs its own defaults "
                           "(the protocol options still follow the preset)")
    return print_config(args, {"protocol": protocol, "model": shown}, preset=name,
                        not_as_in_paper=PAPER_DIFFERENCES, notes=notes)
