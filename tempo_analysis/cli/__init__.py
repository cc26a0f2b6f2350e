"""The ``tempo-analysis`` console script.

Each command group lives in its own module (``tempo_analysis.cli.<group>``) exposing
``register(subparsers)``, which adds its subparser(s) and sets ``func=callable(args) -> int``.
A group imports its method wing (torch, transformers) only inside the command it runs, so
``--help`` starts at once.

The error boundary (:func:`main`) is the same for every command:

- bad input (the project's :class:`~tempo_analysis.data.errors.DataError`, which includes a refused
  output path, an unknown model name, and the ``ValueError``/``KeyError``/``OSError`` a command
  raises for a bad option) prints one line, ``tempo-analysis: error: ...``, and exits 2;
- any other exception is a bug or an environment failure: one line naming its type, a hint to run
  again with ``--debug`` for the traceback, exit 1;
- ``--debug`` anywhere on the command line re-raises, with the full traceback;
- Ctrl-C exits 130 with one line;
- warnings print as ``tempo-analysis: warning: ...``, one line each.

Presets (``--preset NAME``, ``--print-config``; :func:`add_preset_options`). Every command takes both.
``--preset`` picks the named settings of the method a command runs: ``cli`` (the documented defaults, what
a command runs without ``--preset``), ``notebook`` (the lesson's) or ``paper`` (the paper's, wherever the
library implements them). **An option given on the command line wins over the preset**, whatever the
preset says, and ``--print-config`` shows the value it set; an unknown name is one line naming the
presets (exit 2). A command without method settings (``world``, ``stream compare``, ``encoder mlm-eval``;
``study``, which always runs the lessons' ``notebook`` settings) refuses any other ``--preset`` in one
line, as any option that cannot apply. ``--print-config`` prints the resolved settings as JSON (the
preset, the options given, the settings, and with ``paper`` each paper setting the library does not
reach, with the reason) and exits 0 before any data, checkpoint or model is read; options the command
needs to run (``--out``, ``--checkpoint``, ...) are then not required.
"""

from __future__ import annotations

import argparse
import importlib
import math
import sys
import warnings

from tempo_analysis import __version__

# Module name -> group; the group's own module chooses its command name (e.g. "semantic-change").
GROUPS = ("world", "stream", "semantic_change", "diffusion", "future_text", "encoder", "study")


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser, with every installed command group registered."""
    parser = argparse.ArgumentParser(
        prog="tempo-analysis",
        description="Temporal NLP: stream classification, semantic change, social diffusion, future text.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in GROUPS:
        try:
            module = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as e:  # a group not written yet; any other import error is a real bug
            if e.name != f"{__name__}.{name}":
                raise
            continue
        module.register(sub)
    _finite_numbers(parser)
    return parser


def finite_number(text: str) -> float:
    """A float option's value: ``nan`` and ``inf`` are refused at parse time (argparse names the option)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def _finite_numbers(parser: argparse.ArgumentParser) -> None:
    """Every ``type=float`` option of every command takes finite numbers only: a NaN learning rate or
    threshold would otherwise pass every range check (each comparison with NaN is false) and fail
    late, or silently skip work."""
    for action in parser._actions:
        if action.type is float:
            action.type = finite_number
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                _finite_numbers(child)


def add_output_options(parser: argparse.ArgumentParser) -> None:
    """``--overwrite``: the one switch of the output policy (:mod:`tempo_analysis.outputs`)."""
    parser.add_argument("--overwrite", action="store_true",
                        help="allow replacing an existing output that tempo-analysis did not write "
                             "(by default such a file or non-empty folder is refused)")


def add_progress_option(parser: argparse.ArgumentParser) -> None:
    """``--progress`` / ``--no-progress``, the same in every command (read it with :func:`wants_progress`)."""
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="progress bars on stderr (default: shown when stderr is a terminal, "
                             "left out of logs and pipes)")


def wants_progress(args) -> bool:
    """``--progress`` / ``--no-progress`` as given, else whether stderr is a terminal."""
    return sys.stderr.isatty() if args.progress is None else bool(args.progress)


def _dest(flag: str) -> str:
    return flag.lstrip("-").replace("-", "_")


def given(args, *flags: str) -> list[str]:
    """The ``flags`` (``"--vocab-size"``) set on the command line.

    An option counts as set when its value is not None and not False: options that apply only
    in some combinations take ``default=None`` (or ``store_true``) and fill in their documented
    default in the command, so that an option typed at its default value is still seen as given.
    """
    return [f for f in flags if getattr(args, _dest(f), None) is not None and getattr(args, _dest(f)) is not False]


def refuse_options(args, flags, *, when: bool, apply_to: str, here: str, fix: str | None = None) -> None:
    """Refuse the ``flags`` the user gave ``when`` they do not apply: one clear error, exit 2.

    ``apply_to``: what the options apply to (``"--lm tiny"``); ``here``: what the command line
    chose instead (``"--lm default"``); ``fix``: the other way out besides dropping them. Called
    before any data or model is loaded, so a meaningless combination fails at once and is never
    silently ignored (nor recorded in a results file as if it had been used).
    """
    from tempo_analysis.data.errors import DataError  # no pandas/torch: --help stays fast

    bad = given(args, *flags) if when else []
    if bad:
        verb = "applies" if len(bad) == 1 else "apply"
        way = f"drop {', '.join(bad)}" + (f", or {fix}" if fix else "")
        raise DataError(f"{', '.join(bad)} {verb} only to {apply_to}, not to {here}. Fix: {way}.")


def require_positive(args, *flags: str, least: int = 1) -> None:
    """Refuse a count or size below ``least`` among ``flags`` (unset = None is fine), naming the option.

    0 would otherwise mean "all" somewhere (``--max-folds``), crash deep inside (a batch size), or
    fail only after a model was loaded; a list value (``nargs="+"``) is checked item by item.
    """
    for flag in flags:
        value = getattr(args, _dest(flag), None)
        for v in value if isinstance(value, (list, tuple)) else [value]:
            if v is not None and not isinstance(v, bool) and v < least:
                raise ValueError(f"{flag} {v}: use a number >= {least}.")


def require_range(args, *flags: str, low: float, high: float | None = None, low_open: bool = False,
                  high_open: bool = False, use: str) -> None:
    """Refuse a number outside ``low``..``high`` among ``flags`` (unset = None is fine; an open end is
    excluded), naming the option; ``use`` says what to give (``"a positive learning rate"``). A list value
    (``nargs="+"``) is checked item by item."""
    for flag in flags:
        value = getattr(args, _dest(flag), None)
        for v in value if isinstance(value, (list, tuple)) else [value]:
            if v is None or isinstance(v, bool):
                continue
            above = v > low if low_open else v >= low
            below = high is None or (v < high if high_open else v <= high)
            if not (above and below):
                raise ValueError(f"{flag} {v}: use {use}.")


def require_distinct(args, flag: str) -> None:
    """Refuse a list option that names one value twice (``--seeds 0 0`` would count one run twice)."""
    values = getattr(args, _dest(flag), None) or []
    twice = sorted({v for v in values if list(values).count(v) > 1}, key=str)
    if twice:
        raise ValueError(f"{flag} names {', '.join(map(str, twice))} more than once. Fix: give each value once.")


def require_separate_outputs(args, *flags: str) -> None:
    """Refuse two output options that name the same path, or one inside the other (a file inside a model
    folder that is then replaced as a whole), before any work."""
    from pathlib import Path

    given_paths = [(f, Path(getattr(args, _dest(f))).expanduser().absolute()) for f in flags
                   if getattr(args, _dest(f), None)]
    for i, (fa, a) in enumerate(given_paths):
        for fb, b in given_paths[i + 1:]:
            if a == b or a in b.parents or b in a.parents:
                how = "the same path" if a == b else "paths one inside the other"
                raise ValueError(f"{fa} {getattr(args, _dest(fa))} and {fb} {getattr(args, _dest(fb))} are {how}: "
                                 "one output would overwrite or delete the other. Fix: give them separate paths.")


# ---------------------------------------------------------------------------------------------
# presets and --print-config
PRESET_NAMES = ("notebook", "cli", "paper")
PRESET_HELP = ("named settings: cli (the documented defaults; the default), notebook (the lesson's) or paper "
               "(the paper's, wherever the library implements them; --print-config names the rest). An option "
               "given on the command line wins over the preset")


def add_preset_options(parser: argparse.ArgumentParser, *, presets=PRESET_NAMES, fixed: str | None = None) -> None:
    """``--preset NAME`` and ``--print-config`` (see the module doc). ``presets``: the names the command
    takes; ``fixed``: the one settings a command without method presets always runs, named in its help
    (None: no method settings at all)."""
    if presets:
        helptext = PRESET_HELP
    elif fixed:
        helptext = f"this command always runs the {fixed} settings; another preset is refused"
    else:
        helptext = "this command has no method settings, so no preset applies (any --preset is refused)"
    parser.add_argument("--preset", default=None, metavar="{" + ",".join(PRESET_NAMES) + "}", help=helptext)
    parser.add_argument("--print-config", action="store_true",
                        help="print the resolved settings as JSON and exit, before any data or model is read")
    parser.set_defaults(preset_names=tuple(presets), fixed_preset=fixed)


def chosen_preset(args) -> str:
    """The ``--preset`` name (``cli`` when none is given), checked: an unknown name is one line naming the
    presets; a command without method presets refuses every preset but its own (see the module doc)."""
    name = getattr(args, "preset", None)
    fixed = getattr(args, "fixed_preset", None)
    taken = getattr(args, "preset_names", PRESET_NAMES)
    if name is None:
        return fixed or "cli"
    key = str(name).strip().lower()
    if key not in PRESET_NAMES:
        raise ValueError(f"--preset {name!r} is not a preset. Fix: use one of {', '.join(PRESET_NAMES)}.")
    if key not in taken and key != fixed:
        command = getattr(args, "command_words", None) or "this command"
        what = (f"it always runs the {fixed} settings" if fixed else "it has no method settings")
        raise ValueError(f"--preset {key} does not apply to `{command}`: {what}. Fix: drop --preset"
                         + (f" (or give --preset {fixed})." if fixed else "."))
    return key


def typed(args, dest: str) -> bool:
    """Whether the option with this ``dest`` was given on the command line (:func:`main` records them;
    parsed elsewhere, an option counts as given when its value is not None and not False, as :func:`given`)."""
    seen = getattr(args, "given_dests", None)
    if seen is None:
        value = getattr(args, dest, None)
        return value is not None and value is not False
    return dest in seen


def from_preset(args, values: dict) -> None:
    """Set each ``dest`` of ``values`` on ``args`` unless its option was given: the preset's value for an
    option the user left alone (the rule: an explicit option wins)."""
    for dest, value in values.items():
        if not typed(args, dest):
            setattr(args, dest, value)


def given_flags(args) -> list[str]:
    """The options given on the command line, as flags (for ``--print-config``)."""
    seen = getattr(args, "given_dests", None) or set()
    flags = getattr(args, "dest_flags", {})
    return sorted(flags.get(d, "--" + d.replace("_", "-")) for d in seen
                  if d not in ("preset", "print_config", "debug"))


def print_config(args, settings: dict, *, preset: str, not_as_in_paper: dict | None = None,
                 notes: dict | None = None) -> int:
    """``--print-config``: the resolved settings as JSON on stdout; returns 0 (the command then exits).

    ``not_as_in_paper``: setting -> why it differs from the paper (printed with ``--preset paper``);
    ``notes``: anything else the reader needs (e.g. which model a preset's model settings apply to)."""
    import json

    out = {"command": getattr(args, "command_words", None), "preset": preset, "explicit": given_flags(args),
           "rule": "an option given on the command line wins over the preset", "settings": settings}
    if notes:
        out["notes"] = notes
    if preset == "paper" and not_as_in_paper:
        out["not_as_in_paper"] = not_as_in_paper
    print(json.dumps(out, indent=2, default=str))
    return 0


def _options_of(args) -> dict:
    """The parsed options of a command without method settings, for ``--print-config``."""
    skip = {"func", "debug", "print_config", "preset", "preset_names", "fixed_preset", "given_dests", "dest_flags",
            "command_words", "command"}
    return {k: v for k, v in sorted(vars(args).items()) if k not in skip and not k.endswith("_command")
            and not callable(v)}


def _leaf_parser(parser: argparse.ArgumentParser, argv: list[str]):
    """(the subparser that parses the command in ``argv``, its command words)."""
    words, current = [], parser
    rest = list(argv)
    while True:
        sub = next((a for a in current._actions if isinstance(a, argparse._SubParsersAction)), None)
        if sub is None:
            return current, words
        nxt = next((w for w in rest if not w.startswith("-")), None)
        if nxt is None or nxt not in sub.choices:
            return current, words
        words.append(nxt)
        rest = rest[rest.index(nxt) + 1:]
        current = sub.choices[nxt]


def _given_dests(parser: argparse.ArgumentParser, argv: list[str]) -> tuple[set, dict]:
    """The dests of the options typed in ``argv`` (abbreviations and ``--opt=value`` included), found by
    parsing again with every option's default replaced by a marker; and dest -> flag."""
    marker = object()
    leaf, _ = _leaf_parser(parser, argv)
    saved = [(a, a.default) for a in leaf._actions if a.option_strings]
    saved_defaults = dict(leaf._defaults)
    try:
        for a, _ in saved:
            a.default = marker
        for k in list(leaf._defaults):
            if any(a.dest == k for a, _ in saved):
                leaf._defaults.pop(k)
        again = parser.parse_args(argv)
    finally:
        for a, d in saved:
            a.default = d
        leaf._defaults.clear()
        leaf._defaults.update(saved_defaults)
    flags = {a.dest: next((o for o in a.option_strings if o.startswith("--")), a.option_strings[-1]) for a, _ in saved}
    return {d for d in flags if getattr(again, d, marker) is not marker}, flags


def _relax_required(parser: argparse.ArgumentParser, argv: list[str]) -> None:
    """With ``--print-config``, the options a command needs only to run are not required."""
    leaf, _ = _leaf_parser(parser, argv)
    for a in leaf._actions:
        if a.option_strings and a.required:
            a.required = False


# exception types that mean "the user's input or options are wrong": one line, exit 2
USER_ERRORS = (ValueError, KeyError, OSError)

# library arguments that an option sets: a fix raised under a command that has the option names the option
# (``tempo_analysis.data.errors.in_cli_terms``), e.g. "pass --time-unit s" rather than "pass time_unit='s'"
LIBRARY_OPTIONS = {"time_unit": "--time-unit"}


def cli_settings(args) -> dict[str, str]:
    """The ``LIBRARY_OPTIONS`` the running command has (its parsed ``args`` hold the option)."""
    return {name: flag for name, flag in LIBRARY_OPTIONS.items() if hasattr(args, _dest(flag))}


def _one_line_warning(message, category, filename, lineno, line=None) -> str:
    return f"tempo-analysis: warning: {message}\n"


def main(argv: list[str] | None = None) -> int:
    """Parse arguments and run the chosen command behind the error boundary (see the module doc)."""
    from tempo_analysis.data.errors import cli_options   # light: no pandas or torch

    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    argv = [a for a in argv if a != "--debug"]
    parser = build_parser()
    parser.add_argument("--debug", action="store_true",
                        help="show full tracebacks (also accepted after the command)")
    if "--print-config" in argv:
        _relax_required(parser, argv)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    args.debug = debug
    if hasattr(args, "print_config"):   # a command with --preset / --print-config: what was typed, and its name
        args.given_dests, args.dest_flags = _given_dests(parser, argv)
        args.command_words = " ".join(_leaf_parser(parser, argv)[1])
    formatwarning = warnings.formatwarning
    with warnings.catch_warnings():
        if not debug:  # the format only: code that records warnings (tests, callers) still gets them
            warnings.formatwarning = _one_line_warning
        try:
            with cli_options(cli_settings(args)):   # fixes name this command's options, not library arguments
                if hasattr(args, "print_config") and not args.preset_names:
                    preset = chosen_preset(args)     # a command without method presets: only its own
                    if args.print_config:
                        return print_config(args, _options_of(args), preset=preset)
                return int(args.func(args) or 0)
        except KeyboardInterrupt:
            if debug:
                raise
            print("tempo-analysis: interrupted", file=sys.stderr)
            return 130
        except USER_ERRORS as e:
            if debug:
                raise
            msg = str(e.args[0]) if isinstance(e, KeyError) and e.args else str(e)
            print(f"tempo-analysis: error: {msg}", file=sys.stderr)
            return 2
        except Exception as e:  # a bug or an environment failure: short, with the way to the details
            if debug:
                raise
            print(f"tempo-analysis: internal error ({type(e).__name__}): {e}\n"
                  f"  run the same command again with --debug for the full traceback", file=sys.stderr)
            return 1
        finally:
            warnings.formatwarning = formatwarning


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
