"""A damaged file in a saved run folder (``run.json`` of a diffusion run; ``future_text.json`` or
``frame.json.gz`` of a future-text run) is one line at the CLI naming the file and the fix, never the
parser's bare ``Expecting value: line 2 ...`` or a ``KeyError``. Each folder here holds the files a
run's loader checks for, with valid settings, so the damaged file is the first thing that fails."""
from __future__ import annotations

import gzip
import json

import pytest

from tempo_analysis.base import CONFIG_FILE, config_to_dict
from tempo_analysis.cli import main


def diffusion_run(folder, run_json: bytes):
    from tempo_analysis.diffusion.config import PRESETS

    (folder / "corpus").mkdir(parents=True)
    (folder / CONFIG_FILE).write_text(json.dumps(config_to_dict(PRESETS["cli"]), default=str))
    (folder / "run.json").write_bytes(run_json)
    (folder / "corpus" / "docs.csv").write_text("doc_id,unit,time,text\n")
    (folder / "corpus" / "edges.csv").write_text("source,target,weight\n")
    return folder


def future_text_run(folder, meta: bytes, frame: bytes):
    from tempo_analysis.future_text.config import preset

    folder.mkdir(parents=True)
    (folder / CONFIG_FILE).write_text(json.dumps(config_to_dict(preset("cli")), default=str))
    (folder / "future_text.json").write_bytes(meta)
    (folder / "frame.json.gz").write_bytes(frame)
    (folder / "frequency_table.safetensors").write_bytes(b"")
    return folder


GOOD_META = json.dumps({"format_version": 4, "models": ["freq"], "dev_year_": 2020, "test_year_": 2021,
                        "train_years_": [2019], "histories": {}}).encode()
GOOD_FRAME = gzip.compress(json.dumps({"doc_id": ["a"], "year": [2019], "text": ["a text"]}).encode())
RESULTS = json.dumps({"tempo_analysis": {"kind": "stream-evaluate"}, "macro_f1": 0.5}).encode()

CASES = {
    "run.json cut short": ("diffusion", b'{\n  "perplexity": {"dcwe": 3.', "run.json", "cannot read diffusion run file"),
    "run.json empty": ("diffusion", b"", "run.json", "cannot read"),
    "run.json of another command": ("diffusion", RESULTS, "run.json", "without 'perplexity'"),
    "run.json a list": ("diffusion", b"[1, 2]", "run.json", "not an object"),
    "future_text.json not JSON": ("future-text", (b"{'models': oops", GOOD_FRAME), "future_text.json",
                                  "cannot read future-text run file"),
    "future_text.json without models": ("future-text", (b'{"format_version": 4}', GOOD_FRAME), "future_text.json",
                                        "without 'models'"),
    "frame.json.gz not gzip": ("future-text", (GOOD_META, b'{"doc_id": []}'), "frame.json.gz", "cannot read"),
    "frame.json.gz truncated": ("future-text", (GOOD_META, GOOD_FRAME[: len(GOOD_FRAME) // 2]), "frame.json.gz",
                                "cannot read"),
    "frame.json.gz not JSON inside": ("future-text", (GOOD_META, gzip.compress(b"\n{oops")), "frame.json.gz",
                                      "cannot read"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_damaged_run_file_is_one_line_naming_the_file(case, tmp_path, capsys):
    kind, content, name, says = CASES[case]
    if kind == "diffusion":
        run = diffusion_run(tmp_path / "run", content)
        line = ["diffusion", "analyze", "--checkpoint", str(run), "--word", "cloud", "--anchor", "server",
                "--out", str(tmp_path / "a.json")]
    else:
        run = future_text_run(tmp_path / "run", *content)
        line = ["future-text", "generate", "--checkpoint", str(run), "--year", "2021"]
    rc = main(line)
    err = capsys.readouterr().err
    assert rc == 2, err
    assert err.startswith("tempo-analysis: error: ") and err.count("\n") == 1, err
    assert str(run / name) in err and says in err and "Fix: restore the file" in err, err
    assert "Traceback" not in err
