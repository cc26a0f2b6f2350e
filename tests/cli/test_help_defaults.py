"""`--help` tells the defaults that apply: an option left unset falls back to the library's
defaults, so its help must name those values, never "(default: None)"."""
import re

import pytest

from tempo_analysis.cli import build_parser
from tempo_analysis.semantic_change.config import preset


def _help(*command) -> str:
    parser = build_parser()
    with pytest.raises(SystemExit):
        parser.parse_args([*command, "--help"])


def test_semantic_change_rank_help_names_the_library_defaults(capsys):
    _help("semantic-change", "rank")
    text = " ".join(capsys.readouterr().out.split())
    assert "default: None" not in text
    d = preset("cli")
    t = d.train
    assert f"(default: {d.scorer}," in text
    assert f"(default {d.layers}: the last {d.layers})" in text
    assert f"default {d.samples})" in text
    assert ("(default: on;" if d.zscore else "(default: off;") in text
    assert f"(default: {d.form}," in text
    assert f"(default {t.epochs:g};" in text
    assert f"(default {t.head_steps};" in text
    for option, value in (("--time-lr TIME_LR", t.time_lr), ("--body-lr BODY_LR", t.body_lr)):
        said = re.search(re.escape(option) + r"[^(]*\(default ([0-9.e-]+)[;)]", text)
        assert said and float(said.group(1)) == value, option
    assert "(default: 0)" in text     # a default that is a value is still shown
