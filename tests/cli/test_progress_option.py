"""`--progress` / `--no-progress` mean the same in every long-running command.

Without either, progress bars show when stderr is a terminal and stay out of logs and pipes.
"""

from __future__ import annotations

import argparse
import io

import pytest

from tempo_analysis.cli import build_parser, wants_progress

LONG_COMMANDS = ["stream evaluate", "stream time-effect", "semantic-change rank", "diffusion train", "diffusion analyze", "future-text train",
                 "future-text evaluate", "encoder mlm-eval"]


def _subparser(parser: argparse.ArgumentParser, words: list[str]) -> argparse.ArgumentParser:
    for word in words:
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = action.choices[word]
    return parser


class _Stderr(io.StringIO):
    def __init__(self, tty: bool):
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize("command", LONG_COMMANDS)
def test_both_forms_are_accepted_and_the_default_follows_the_terminal(command, monkeypatch):
    sub = _subparser(build_parser(), command.split())
    required = [x for a in sub._actions if a.required and a.option_strings for x in (a.option_strings[0], a.choices[0] if a.choices else "1")]
    given = {flags: sub.parse_args([*required, *flags]) for flags in (("--progress",), ("--no-progress",), ())}
    monkeypatch.setattr("sys.stderr", _Stderr(tty=False))
    assert [wants_progress(given[f]) for f in (("--progress",), ("--no-progress",), ())] == [True, False, False]
    monkeypatch.setattr("sys.stderr", _Stderr(tty=True))
    assert [wants_progress(given[f]) for f in (("--progress",), ("--no-progress",), ())] == [True, False, True]
