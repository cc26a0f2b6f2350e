"""The options and settings that `stream evaluate` and `stream time-effect` share: data, encoder,
training and time options, and the model settings read from them."""

from __future__ import annotations

from tempo_analysis.cli import add_progress_option, require_positive, require_range, wants_progress
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
    e.add_argument("--max-length", type=int, default=None, help=f"tokens per post (default {StreamConfig.max_length})")
    e.add_argument("--patience", type=int, default=None, help="early stopping patience on dev macro-F1")
    e.add_argument("--freeze-local", action="store_true", help="freeze and cache TempoFormer's local stack")
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


def check_numbers(args) -> None:
    """The number options that `stream evaluate` and `stream time-effect` share, checked before any work."""
    require_positive(args, "--window", "--epochs", "--batch-size", "--max-length", "--patience", "--max-timelines",
                     "--threads")
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
    for key in ("epochs", "lr", "head_lr", "batch_size", "max_length", "patience", "summary", "dropout", "llm",
                "shots", "calibrate"):
        if getattr(args, key, None) is not None:
            s[key] = getattr(args, key)
    if args.model is not None:
        s["encoder"] = args.model
    if args.ablation != "none":
        s["ablation"] = args.ablation
    if args.freeze_local:
        s["freeze_local"] = True
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


def check_model_names(args) -> None:
    """``--model`` (an encoder) and ``--llm`` (a causal LM) checked by name, loading no weights: an offline hub
    name, a missing path or a folder without weights is one error naming the option, before any data is read."""
    if args.model is not None and args.model != "default":
        from tempo_analysis.encoders import check_encoder

        check_encoder(args.model, what="--model")
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
