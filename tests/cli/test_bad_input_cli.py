"""Bad values a user types at the CLI: one clear line (exit 2) before any model is loaded or trained.

Each row once started training (``--max-folds 0`` ran every fold, ``--samples 0`` post-trained,
``--window 0`` loaded the LM), failed only after the work (a results file under a file), gave an
internal error (``diffusion train --batch-size 0``: ZeroDivisionError), lost the file name (a
0-byte ``future-text`` CSV), or silently ignored an option (``--dev-year`` given alone). Every
model fit is replaced by one that fails the test; the data loaders too, except for rows that
read a small CSV of their own.
"""

from __future__ import annotations

import pytest

from tempo_analysis.cli import main
from tempo_analysis.data import DataError

# command line -> substrings the one-line error must hold
ROWS = {
    "stream: --max-folds 0 (ran every fold)": ("stream evaluate --max-folds 0 --out {d}/o.json", ["--max-folds 0"]),
    "stream: --out under a file (failed after the first fold)": (
        "stream evaluate --out {d}/afile/o.json", ["afile", "is a file"]),
    "stream: --data csv: without a file ('file None not found')": (
        "stream evaluate --data csv: --out {d}/o.json", ["--data 'csv:'", "names no file"]),
    "future-text: --data csv: without a file": (
        "future-text train --variant freq --data csv: --out {d}/ft", ["--data 'csv:'", "names no file"]),
    "semantic-change: --samples 0 (post-trained first)": (
        "semantic-change rank --samples 0 --out {d}/r.tsv", ["--samples 0", ">= 1"]),
    "semantic-change: --time-lr 0 (time that never learns)": (
        "semantic-change rank --time-lr 0 --out {d}/r.tsv", ["--time-lr 0.0", "positive"]),
    "semantic-change: --body-lr -1": ("semantic-change rank --body-lr -1 --out {d}/r.tsv", ["--body-lr -1.0", ">= 0"]),
    "semantic-change: --head-steps -1": ("semantic-change rank --head-steps -1 --out {d}/r.tsv", ["--head-steps -1", ">= 0"]),
    "semantic-change: --out under a file": ("semantic-change rank --out {d}/afile/r.tsv", ["is a file"]),
    "stream: --patience 0 (failed after the data was read)": (
        "stream evaluate --patience 0 --out {d}/r.json", ["--patience 0", ">= 1"]),
    "stream: --threads -1": ("stream evaluate --threads -1 --out {d}/r.json", ["--threads -1", ">= 1"]),
    "future-text generate: --top-k -1": (
        "future-text generate --checkpoint {d}/ckpt --year 2020 --top-k -1", ["--top-k -1", ">= 1"]),
    "diffusion: --batch-size 0 (ZeroDivisionError)": ("diffusion train --batch-size 0 --out {d}/run", ["--batch-size 0"]),
    "diffusion: --max-steps 0 (after loading the encoder)": (
        "diffusion train --max-steps 0 --out {d}/run", ["--max-steps 0"]),
    "diffusion: --mlm-probability 1 (every token masked)": (
        "diffusion train --mlm-probability 1 --out {d}/run", ["--mlm-probability 1.0", "between 0 and 1"]),
    "diffusion: --mlm-probability 0 (nothing to learn from)": (
        "diffusion train --mlm-probability 0 --out {d}/run", ["--mlm-probability 0.0", "between 0 and 1"]),
    "diffusion: --dynamic-lr 0 (offsets that never learn)": (
        "diffusion train --dynamic-lr 0 --out {d}/run", ["--dynamic-lr 0.0", "positive"]),
    "diffusion: --shared-warmup-steps -1": (
        "diffusion train --shared-warmup-steps -1 --out {d}/run", ["--shared-warmup-steps -1", ">= 0"]),
    "diffusion: --years backwards": ("diffusion train --data acl:{d} --years 2020-2017 --out {d}/run",
                                     ["--years '2020-2017'", "backwards"]),
    "diffusion: --years typo": ("diffusion train --data acl:{d} --years 20171-20200 --out {d}/run",
                                ["--years", "outside 1000-2100"]),
    "future-text: 0-byte CSV (no file name)": ("future-text train --variant freq --data csv:{d}/empty.csv --out {d}/ft",
                                               ["empty.csv", "is empty"]),
    "future-text: typo --dev-year": ("future-text train --variant freq --dev-year 20061 --out {d}/ft",
                                     ["--dev-year 20061", "typo"]),
    "future-text: dev year after the test year": (
        "future-text train --variant freq --dev-year 2021 --test-year 2019 --out {d}/ft", ["must come before"]),
    "future-text: --first-year after every document": (
        "future-text train --variant freq --data csv:{d}/years.csv --first-year 2050 --out {d}/ft",
        ["--first-year 2050", "no documents"]),
    "future-text: --test-year alone with no earlier year": (
        "future-text train --variant freq --data csv:{d}/years.csv --test-year 2019 --out {d}/ft", ["no earlier year"]),
    "future-text: last-n longer than the training years (after loading the LM)": (
        "future-text train --variant last-n --n 5 --data csv:{d}/years.csv --out {d}/ft", ["--n 5", "1 <= n <= 1"]),
    "future-text: --window 0 (loaded the LM first)": ("future-text train --variant freq --window 0 --out {d}/ft",
                                                      ["--window 0"]),
    "future-text: --finetune-steps 0": ("future-text train --variant freq --finetune-steps 0 --out {d}/ft",
                                        ["--finetune-steps 0"]),
    "future-text: --max-docs-per-year 0": ("future-text train --variant freq --max-docs-per-year 0 --out {d}/ft",
                                           ["--max-docs-per-year 0"]),
    "future-text evaluate: --n-generate 0": ("future-text evaluate --checkpoint {d} --year 2020 --n-generate 0",
                                             ["--n-generate 0"]),
    "world: --out is a file": ("world --out {d}/afile", ["afile", "is a file"]),
    "world: --speed 0 (no diffusion)": ("world --out {d}/w --speed 0", ["--speed 0"]),
}


def _fail(*args, **kwargs):
    raise AssertionError("the command started working before it checked its input")


def _refused_before_any_work(monkeypatch, capsys, line, folder, says, work) -> str:
    """Run the CLI `line` with every function of `work` made to fail: it must be refused in one line
    (exit 2) naming all of `says`, having written nothing into `folder`. Returns the error text."""
    for target in work:
        monkeypatch.setattr(target, _fail)
    before = sorted(p.name for p in folder.iterdir())
    rc = main(line.format(d=folder).split())
    err = capsys.readouterr().err
    assert rc == 2, err
    assert err.startswith("tempo-analysis: error: ") and err.count("\n") == 1, err
    assert all(s in err for s in says), (says, err)
    assert sorted(p.name for p in folder.iterdir()) == before
    return err


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "afile").write_text("a user's file")
    (tmp_path / "empty.csv").write_bytes(b"")
    (tmp_path / "years.csv").write_text("year,text\n" + "".join(f"{y},text of {y}\n" for y in range(2019, 2023)))
    return tmp_path


@pytest.mark.parametrize("case", list(ROWS))
def test_bad_command_line_is_one_clear_error_before_any_work(case, folder, monkeypatch, capsys):
    line, says = ROWS[case]
    work = ["tempo_analysis.evaluation.classification.cross_validate",
            "tempo_analysis.semantic_change.estimator.SemanticChangeRanker.fit",
            "tempo_analysis.diffusion.DiffusionMapper.fit", "tempo_analysis.future_text.estimator.FutureTextModel.fit",
            "tempo_analysis.encoders.load_encoder", "tempo_analysis.causal_lm.load_causal_lm",
            "tempo_analysis.world.generate_world", "tempo_analysis.cli.future_text.load_checkpoint"]
    if "csv:" not in line:  # rows without a CSV of their own must not even read data
        work += [f"tempo_analysis.resolve.{f}" for f in ("load_timelines", "load_change_data", "load_social",
                                                            "load_yearly")]
    _refused_before_any_work(monkeypatch, capsys, line, folder, says, work)
    assert (folder / "afile").read_text() == "a user's file"


@pytest.mark.parametrize("given, split", [(["--dev-year", "2020"], (2020, 2021)), (["--test-year", "2021"], (2020, 2021)),
                                          ([], (None, None)), (["--dev-year", "2019", "--test-year", "2022"], (2019, 2022))])
def test_a_dev_or_test_year_given_alone_is_used_not_replaced_by_the_default_split(given, split, folder, monkeypatch,
                                                                                  capsys):
    """``--dev-year 2020`` alone used to be dropped (the default split took over): now the other
    year is completed from the data (the next / the previous year with documents)."""
    seen = {}

    class Model:
        def __init__(self, config=None, **overrides):
            seen["split"] = (overrides["dev_year"], overrides["test_year"])

        def fit(self, frame, history=None):
            raise DataError("stop here")

    monkeypatch.setattr("tempo_analysis.future_text.estimator.FutureTextModel", Model)
    rc = main(["future-text", "train", "--variant", "freq", "--data", f"csv:{folder}/years.csv", "--out",
               str(folder / "ft"), *given])
    assert rc == 2 and "stop here" in capsys.readouterr().err
    assert seen["split"] == split


def test_an_unknown_time_unit_is_refused_for_every_data_source(monkeypatch, capsys, tmp_path):
    """--time-unit weeks with the world (no CSV to reject it) was dropped silently and training began."""
    from tempo_analysis.cli.stream_options import TIME_UNIT_CHOICES
    from tempo_analysis.data.timelines import POSITION, TIME_UNITS

    assert TIME_UNIT_CHOICES == (*TIME_UNITS, POSITION)
    monkeypatch.setattr("tempo_analysis.evaluation.classification.cross_validate", _fail)
    monkeypatch.setattr("tempo_analysis.resolve.load_timelines", _fail)
    with pytest.raises(SystemExit) as e:
        main(["stream", "evaluate", "--time-unit", "weeks", "--out", str(tmp_path / "r.json")])
    assert e.value.code == 2 and "--time-unit: invalid choice: 'weeks'" in capsys.readouterr().err


# model names (--model, --lm, --llm), with the hub unreachable: each is checked by name (no weights read)
# before any data is read, and the one line names the option. Before, --model was resolved only inside
# fit, after the data was loaded (`diffusion train` printed "training ..." first); a local folder that
# transformers could not read printed its raw text ("Error no file named model.safetensors ..."); and
# the messages said "Encoder 'x'" / "Causal LM 'x'", never the option.
MODEL_ROWS = {
    "semantic-change: --model offline hub name": (
        "semantic-change rank --model tempo-test/no-such-encoder --out {d}/r.tsv",
        ["--model 'tempo-test/no-such-encoder' is not a local folder", "offline", "Or use 'default'"]),
    "semantic-change: --model a saved temporal-attention model": (
        "semantic-change rank --model {d}/saved_ta --out {d}/r.tsv",
        ["--model folder", "temporal-attention model", "TemporalAttentionForMaskedLM.from_pretrained"]),
    "stream: --model offline hub name": ("stream evaluate --model tempo-test/no-such-encoder --out {d}/o.json",
                                         ["--model 'tempo-test/no-such-encoder'", "offline"]),
    "stream: --llm offline hub name": (
        "stream evaluate --baseline llm_few_shot --llm tempo-test/no-such-lm --out {d}/o.json",
        ["--llm 'tempo-test/no-such-lm'", "offline"]),
    "stream: --llm folder without weights": (
        "stream evaluate --baseline llm_few_shot --llm {d}/noweights --out {d}/o.json",
        ["--llm folder", "no weights", "save_pretrained"]),
    "diffusion: --model offline hub name (printed 'training ...' first)": (
        "diffusion train --model tempo-test/no-such-encoder --out {d}/run", ["--model 'tempo-test/no-such-encoder'"]),
    "diffusion: --model missing path": ("diffusion train --model {d}/nope/ --out {d}/run",
                                        ["--model path", "does not exist"]),
    "encoder mlm-eval: --model folder without weights": (
        "encoder mlm-eval --model {d}/noweights",
        ["--model folder", "no weights", "Fix: pass a folder written by save_pretrained, holding config.json and "
                                         "model.safetensors"]),
    "encoder mlm-eval: --model config.json not JSON": ("encoder mlm-eval --model {d}/badjson",
                                                      ["--model folder", "config.json is not valid JSON"]),
    "future-text train: --lm folder without weights": (
        "future-text train --variant freq --lm {d}/noweights --out {d}/ft", ["--lm folder", "no weights"]),
    "future-text train: --lm offline hub name": ("future-text train --variant freq --lm tempo-test/no-such-lm "
                                                 "--out {d}/ft", ["--lm 'tempo-test/no-such-lm'", "offline"]),
    "future-text generate: --lm offline hub name": (
        "future-text generate --checkpoint {d}/ckpt --year 2020 --lm tempo-test/no-such-lm",
        ["--lm 'tempo-test/no-such-lm'", "offline"]),
}


@pytest.mark.parametrize("case", list(MODEL_ROWS))
def test_a_bad_model_name_is_one_error_naming_the_option_before_any_data(case, folder, monkeypatch, capsys):
    import json

    from tempo_analysis import hub

    line, says = MODEL_ROWS[case]
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setattr(hub, "_connect", lambda host, port, timeout: False)      # the hub does not answer
    monkeypatch.setattr(hub, "hub_cached", lambda name, filename="config.json": False)
    (folder / "noweights").mkdir()
    (folder / "noweights" / "config.json").write_text(json.dumps({"model_type": "gpt2", "vocab_size": 10}))
    (folder / "badjson").mkdir()
    (folder / "badjson" / "config.json").write_text("{not json")
    (folder / "saved_ta").mkdir()           # what `semantic-change rank --save-model` writes (config + weights)
    (folder / "saved_ta" / "config.json").write_text(json.dumps({"model_type": "tempo_temporal_attention"}))
    (folder / "saved_ta" / "model.safetensors").write_bytes(b"")
    (folder / "ckpt").mkdir()
    (folder / "ckpt" / "future_text.json").write_text("{}")
    work = ["tempo_analysis.evaluation.classification.cross_validate",
            "tempo_analysis.semantic_change.estimator.SemanticChangeRanker.fit",
            "tempo_analysis.diffusion.DiffusionMapper.fit", "tempo_analysis.future_text.estimator.FutureTextModel.fit",
            "tempo_analysis.future_text.estimator.FutureTextModel.load", "tempo_analysis.encoders.load_encoder",
            "tempo_analysis.causal_lm.load_causal_lm", "tempo_analysis.encoder_mlm.brown_sentences",
            "tempo_analysis.encoder_mlm.mlm_eval"]
    work += [f"tempo_analysis.resolve.{f}" for f in ("load_timelines", "load_change_data", "load_social",
                                                        "load_yearly")]
    err = _refused_before_any_work(monkeypatch, capsys, line, folder, says, work)
    assert "training" not in err
