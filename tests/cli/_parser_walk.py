"""Every option of every `tempo-analysis` subcommand whose value is parsed by one of some types."""
from __future__ import annotations

import argparse

from tempo_analysis.cli import build_parser


def options_of(types) -> list[tuple[tuple, str]]:
    """(command words, option) for every option whose ``type`` is one of ``types``, in every subcommand."""
    out = []

    def walk(parser, words):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, child in action.choices.items():
                    walk(child, [*words, name])
            elif action.option_strings and action.type in types:
                out.append((tuple(words), action.option_strings[-1]))

    walk(build_parser(), [])
    return out
