"""Every number option of every command refuses NaN and infinity at parse time, naming the option,
before any data or model is touched (argparse stops, exit 2)."""
from __future__ import annotations

import argparse

import pytest

from _parser_walk import options_of

from tempo_analysis.cli import finite_number, main


def float_options():
    """(command words, option) for every option parsed as a number, in every subcommand."""
    return options_of((finite_number,))


OPTIONS = float_options()


def test_every_float_option_is_checked():
    assert len(OPTIONS) >= 20, OPTIONS
    names = {opt for _, opt in OPTIONS}
    assert {"--lr", "--alpha", "--threshold", "--dropout", "--lambda-w", "--train-epochs"} <= names


@pytest.mark.parametrize("words, option", OPTIONS, ids=[" ".join([*w, o]) for w, o in OPTIONS])
@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "NaN"])
def test_nan_and_inf_are_refused_naming_the_option(words, option, value, capsys):
    with pytest.raises(SystemExit) as exc:
        main([*words, f"{option}={value}"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert option in err and "finite number" in err and value in err


def test_finite_values_and_scientific_notation_pass():
    assert finite_number("1e-4") == 1e-4 and finite_number("-2.5") == -2.5
    with pytest.raises(argparse.ArgumentTypeError, match="expected a number, got 'abc'"):
        finite_number("abc")
