"""The ``tempo-analysis`` console script.

Each command group lives in its own module (``tempo_analysis.cli.<group>``) exposing
``register(subparsers)``, which adds its subparser(s) and sets ``func=callable(args) -> int``.
"""

from __future__ import annotations

import argparse
import importlib
import sys

# Module name -> group; the group's own module chooses its command name (e.g. "semantic-change").
GROUPS = ("world", "stream", "semantic_change", "diffusion", "future_text", "encoder")


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser, with every installed command group registered."""
    parser = argparse.ArgumentParser(
        prog="tempo-analysis",
        description="Temporal NLP: stream classification, semantic change, social diffusion, future text.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in GROUPS:
        try:
            module = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as e:  # a group not written yet; any other import error is a real bug
            if e.name != f"{__name__}.{name}":
                raise
            continue
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Parse arguments and run the chosen command; bad input prints one clear line, not a traceback."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except (ValueError, OSError, KeyError) as e:
        if getattr(args, "debug", False) or "--debug" in (argv or sys.argv):
            raise
        print(f"tempo-analysis: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
