"""Options that do not apply to the chosen model, data or mode are refused, never ignored.

Each row is a command line a user could type whose options cannot all take effect (a tiny-LM
flag with the embedded LM, a world-regeneration flag with ACL data, ...). The command must stop
in one line naming the option and the fix (exit 2) BEFORE any data, checkpoint or model is
loaded: every loader the command could reach is replaced by one that fails the test. The
``ACCEPTED`` rows are the same options where they do apply: the check lets them through.
"""

from __future__ import annotations

import pytest

import tempo_analysis.cli.diffusion as cli_diffusion
import tempo_analysis.cli.future_text as cli_future_text
import tempo_analysis.cli.semantic_change as cli_semantic_change
from tempo_analysis.cli import build_parser, given, main, refuse_options

# command line, the option(s) the message must name, what it must say is the way out
REFUSED = {
    "stream evaluate: TempoFormer's time-encoding options with a baseline": (
        "stream evaluate --baseline random --time-scale 2 --temporal-residual --out {d}/r.json",
        ["--time-scale", "--temporal-residual"], "drop them"),
    "stream evaluate: --tune and --patience without a dev split": (
        "stream evaluate --dev-fraction 0 --tune lr=1e-3,1e-4 --patience 2 --out {d}/r.json", ["--tune", "--patience"],
        "--dev-fraction > 0"),
    "stream evaluate: --tune a setting the model does not take": (
        "stream evaluate --baseline bilstm --tune shots=2,5 --out {d}/r.json", ["shots", "'bilstm'"], "drop them"),
    "stream evaluate: --max-folds above --folds": (
        "stream evaluate --folds 3 --max-folds 5 --out {d}/r.json", ["--max-folds 5", "--folds 3"], "--max-folds 3"),
    "stream evaluate: --only-folds outside the folds": (
        "stream evaluate --folds 3 --only-folds 1 3 --out {d}/r.json", ["--only-folds 3", "--folds 3"], "0 to 2"),
    "stream evaluate: --only-folds with --max-folds": (
        "stream evaluate --max-folds 2 --only-folds 1 --out {d}/r.json", ["--max-folds", "--only-folds"],
        "give one of them"),
    "semantic-change: --form with a method without temporal attention": (
        "semantic-change rank --method plain --form modulated", ["--form"], "choose one of those methods"),
    "semantic-change: --no-time-residual with time-token": (
        "semantic-change rank --method time-token --no-time-residual", ["--no-time-residual"], "--method"),
    "semantic-change: --no-time-residual with the modulated form": (
        "semantic-change rank --form modulated --no-time-residual", ["--no-time-residual"], "--form faithful"),
    "semantic-change: --save-model without post-training": (
        "semantic-change rank --train-epochs 0 --save-model {d}/model", ["--save-model"], "--train-epochs N"),
    "semantic-change: --save-model with plain (never post-trained by default)": (
        "semantic-change rank --method plain --save-model {d}/model", ["--save-model"], "--train-epochs N"),
    "semantic-change: post-training options without post-training": (
        "semantic-change rank --train-epochs 0 --time-lr 1e-2 --head-steps 5 --body-lr 0",
        ["--time-lr", "--head-steps", "--body-lr"], "--train-epochs N"),
    "semantic-change: --time-lr with plain (never post-trained by default)": (
        "semantic-change rank --method plain --time-lr 1e-2", ["--time-lr"], "--train-epochs N"),
    "semantic-change: model options with the frequency baseline": (
        "semantic-change rank --method frequency --scorer cosine --samples 5 --model bert-base-uncased --zscore",
        ["--scorer", "--samples", "--model", "--zscore"], "a method with a model"),
    "semantic-change: --max-sentences with given usages": (
        "semantic-change rank --data dwug:{d} --max-sentences 100", ["--max-sentences"], "semeval"),
    "semantic-change: --targets that names no word": (
        "semantic-change rank --targets ,", ["--targets"], "comma-separated"),
    "diffusion train: world regeneration with ACL data": (
        "diffusion train --data acl --mode flight --speed 3", ["--mode", "--speed"], "--data world"),
    "diffusion train: world regeneration with a world folder": (
        "diffusion train --data world:{d} --world-seed 2", ["--world-seed", "a world folder is read as it is"],
        "tempo-analysis world"),
    "diffusion train: ACL options with the world": (
        "diffusion train --years 2017-2019 --theta 0.1 --min-papers 5 --max-docs 9",
        ["--years", "--theta", "--min-papers", "--max-docs"], "--data acl"),
    "diffusion train: ACL options with csv data": (
        "diffusion train --data csv:{d}/docs.csv,{d}/edges.csv --years 2017-2020", ["--years"], "--data acl"),
    "diffusion train: --lambda-w without a variant with offsets": (
        "diffusion train --variants cwe --lambda-w 10", ["--lambda-w"], "add dcwe"),
    "diffusion train: --dynamic-lr without a variant with offsets": (
        "diffusion train --variants cwe --dynamic-lr 1e-3", ["--dynamic-lr"], "add dcwe"),
    "diffusion train: --shared-warmup-lr without a warm-up": (
        "diffusion train --shared-warmup-lr 1e-3", ["--shared-warmup-lr"], "add --shared-warmup-steps N"),
    "diffusion train: an unknown variant": ("diffusion train --variants dcwe,bert", ["--variants"], "choose from"),
    "diffusion analyze: the word as its own anchor": (
        "diffusion analyze --checkpoint {d} --word cloud --anchor Cloud --out {d}/a.json", ["--word", "--anchor"],
        "ANOTHER word"),
    "diffusion analyze: --n 0": (
        "diffusion analyze --checkpoint {d} --word cloud --anchor server --n 0 --out {d}/a.json", ["--n"],
        "positive integer"),
    "future-text train: tiny-LM flags with the embedded LM": (
        "future-text train --variant freq --vocab-size 300 --n-layer 1", ["--vocab-size", "--n-layer"], "--lm tiny"),
    "future-text train: tiny-LM flags with a named LM": (
        "future-text train --variant freq --lm {d} --pretrain-epochs 2", ["--pretrain-epochs"], "--lm tiny"),
    "future-text train: --n without last-n": ("future-text train --variant freq --n 3", ["--n"], "--variant last-n"),
    "future-text train: --alpha with the baseline (no bias)": (
        "future-text train --variant baseline --alpha 0.5 --alpha-search fixed", ["--alpha", "--alpha-search"],
        "temporal bias"),
    "future-text train: --window with a variant without an LSTM window": (
        "future-text train --variant freq-nolstm --window 2", ["--window"], "freq, context, context2"),
    "future-text train: --alpha with the alpha grid search": (
        "future-text train --variant freq --alpha-search grid --alpha 0.1", ["--alpha"], "searches alpha"),
    "future-text train: --freq-bias with a variant that is not freq": (
        "future-text train --variant context --freq-bias paper", ["--freq-bias"], "--variant freq"),
    "future-text train: --context-encoder with a frequency variant": (
        "future-text train --variant freq --context-encoder default", ["--context-encoder"], "context, context2"),
    "future-text train: a negative --adapter-rank": (
        "future-text train --variant freq --adapter-rank -1", ["--adapter-rank"], ">= 0"),
    "future-text evaluate: sampling options with --greedy": (
        "future-text evaluate --checkpoint {d} --year 2020 --greedy --top-p 0.5", ["--top-p"], "drop --greedy"),
    "future-text generate: sampling options with --greedy": (
        "future-text generate --checkpoint {d} --year 2020 --greedy --top-k 5", ["--top-k"], "drop --greedy"),
    "future-text generate: --n 0": ("future-text generate --checkpoint {d} --year 2020 --n 0", ["--n"], ">= 1"),
    "encoder mlm-eval: --no-adapter with another encoder": (
        "encoder mlm-eval --model bert-base-uncased --no-adapter", ["--no-adapter"], "drop --no-adapter"),
    "world: --overwrite with --check": ("world --out {d} --check --overwrite", ["--overwrite"], "drop --check"),
}
# where a command needs one, a folder of its own for --out (refused options come first anyway)
NEEDS_OUT = {"semantic-change rank": "--out {d}/r.tsv", "diffusion train": "--out {d}/run",
             "future-text train": "--out {d}/run"}

# every loader a command could reach before the work: each one fails the test if it is called
WORK = [("tempo_analysis.resolve", name) for name in ("load_change_data", "load_social", "load_yearly",
                                                          "load_timelines")]
WORK += [("tempo_analysis.encoders", "load_encoder"), ("tempo_analysis.world", "generate_world"),
         ("tempo_analysis.encoder_mlm", "brown_sentences"), ("tempo_analysis.cli.future_text", "load_checkpoint"),
         ("tempo_analysis.diffusion.DiffusionMapper", "load"),
         ("tempo_analysis.semantic_change.estimator.SemanticChangeRanker", "fit")]


def _argv(line: str, d) -> list[str]:
    argv = line.format(d=d).split()
    for cmd, out in NEEDS_OUT.items():
        if line.startswith(cmd) and "--out" not in argv:
            argv += out.format(d=d).split()
    return argv


@pytest.fixture
def no_work(monkeypatch):
    def work(*args, **kwargs):
        raise AssertionError("the command started working before it checked its options")

    for module, attr in WORK:
        monkeypatch.setattr(f"{module}.{attr}", work)


@pytest.mark.parametrize("case", list(REFUSED))
def test_an_option_that_does_not_apply_is_refused_before_any_work(case, tmp_path, no_work, capsys):
    line, flags, fix = REFUSED[case]
    before = sorted(p.name for p in tmp_path.iterdir())
    rc = main(_argv(line, tmp_path))
    err = capsys.readouterr().err
    assert rc == 2, err
    assert err.startswith("tempo-analysis: error: ") and err.count("\n") == 1, err
    assert all(f in err for f in flags), (flags, err)
    assert fix in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == before, "a refused command writes nothing"


# the same options where they apply: the option checks let them through
ACCEPTED = {
    "semantic-change: --form and --no-time-residual with temporal attention":
        (cli_semantic_change.check_rank_options,
         "semantic-change rank --method no-time --form faithful --no-time-residual --save-model {d}/m"),
    "semantic-change: --save-model with plain when post-training is asked for":
        (cli_semantic_change.check_rank_options, "semantic-change rank --method plain --train-epochs 1 --save-model {d}/m"),
    "semantic-change: --max-sentences with a corpus read from text":
        (cli_semantic_change.check_rank_options, "semantic-change rank --data nltk --max-sentences 100"),
    "semantic-change: post-training options with plain when post-training is asked for":
        (cli_semantic_change.check_rank_options,
         "semantic-change rank --method plain --train-epochs 1 --time-lr 1e-2 --head-steps 0 --body-lr 0"),
    "semantic-change: --method frequency with data and output options":
        (cli_semantic_change.check_rank_options, "semantic-change rank --method frequency --data nltk --max-sentences 9 "
                                                 "--targets cell --seed 3 --json {d}/f.json"),
    "diffusion train: world regeneration with the world":
        (cli_diffusion.check_train_options, "diffusion train --data world --mode flight --speed 3 --world-seed 1"),
    "diffusion train: ACL options with ACL data":
        (cli_diffusion.check_train_options, "diffusion train --data acl:{d} --years 2017-2019 --theta 0.1 --max-docs 5"),
    "diffusion train: --lambda-w with a variant with offsets":
        (cli_diffusion.check_train_options, "diffusion train --variants cwe,sa --lambda-w 10"),
    "diffusion train: --dynamic-lr with a variant with offsets, --shared-warmup-lr with a warm-up":
        (cli_diffusion.check_train_options,
         "diffusion train --variants cwe,ta --dynamic-lr 1e-3 --shared-warmup-steps 5 --shared-warmup-lr 1e-3"),
    "future-text train: tiny-LM flags with --lm tiny, --n with last-n":
        (cli_future_text.check_train_options, "future-text train --lm tiny --vocab-size 300 --variant last-n --n 3"),
    "future-text train: --alpha, --alpha-search, --window with freq":
        (cli_future_text.check_train_options, "future-text train --variant freq --alpha 0.5 --alpha-search fixed --window 2"),
    "future-text generate: sampling options when sampling":
        (cli_future_text.check_gen_options, "future-text generate --checkpoint {d} --year 2020 --top-k 5 --top-p 0.5"),
}


@pytest.mark.parametrize("case", list(ACCEPTED))
def test_the_same_options_are_accepted_where_they_apply(case, tmp_path):
    check, line = ACCEPTED[case]
    check(build_parser().parse_args(_argv(line, tmp_path)))


def test_options_typed_at_their_default_value_still_count_as_given(tmp_path, no_work, capsys):
    """An option left unset is None on the command line, so one typed at its documented default
    is still seen and refused where it does not apply (not mistaken for "not given")."""
    args = build_parser().parse_args(["diffusion", "train", "--out", str(tmp_path / "r"), "--years", "2017-2020"])
    assert given(args, "--years", "--theta") == ["--years"]
    assert main(["future-text", "train", "--variant", "baseline", "--window", "3", "--out", str(tmp_path / "r")]) == 2
    assert "--window" in capsys.readouterr().err


def test_an_option_typed_as_zero_counts_as_given():
    """0 and 0.0 equal False in Python: a check by equality took `--body-lr 0` or `--time-scale 0` for
    "not given", so the option was dropped silently where it does not apply."""
    args = build_parser().parse_args(["semantic-change", "rank", "--out", "r.tsv", "--train-epochs", "0",
                                      "--body-lr", "0", "--head-steps", "0"])
    assert given(args, "--body-lr", "--head-steps", "--time-lr", "--no-time-residual") == ["--body-lr", "--head-steps"]
    args = build_parser().parse_args(["stream", "evaluate", "--baseline", "random", "--time-scale", "0", "--out", "r.json"])
    assert given(args, "--time-scale") == ["--time-scale"]


def test_generate_refuses_alpha_for_a_model_without_a_bias(tmp_path, monkeypatch, capsys):
    class Model:
        bias = None

    class Fitted:
        models_ = {"baseline": Model()}

        def generate(self, *args, **kwargs):
            raise AssertionError("generated with an --alpha that does not apply")

    monkeypatch.setattr(cli_future_text, "load_checkpoint", lambda folder, model=None, lm=None: (Fitted(), "baseline", {}))
    rc = main(["future-text", "generate", "--checkpoint", str(tmp_path), "--year", "2020", "--alpha", "2"])
    err = capsys.readouterr().err
    assert rc == 2 and "--alpha applies only to models with a temporal bias" in err and "'baseline'" in err, err


def test_refuse_options_names_every_given_flag_once_and_nothing_when_it_applies():
    args = build_parser().parse_args(["future-text", "train", "--variant", "freq", "--out", "x", "--n-layer", "1",
                                      "--n-head", "1"])
    refuse_options(args, ["--n-layer", "--n-head", "--vocab-size"], when=False, apply_to="a", here="b")
    with pytest.raises(ValueError, match=r"^--n-layer, --n-head apply only to a, not to b\. Fix: drop --n-layer, "
                                         r"--n-head, or c\.$"):
        refuse_options(args, ["--n-layer", "--n-head", "--vocab-size"], when=True, apply_to="a", here="b", fix="c")


@pytest.mark.parametrize("line", ["stream evaluate --folds 3 --max-folds 3", "stream evaluate --folds 3 --only-folds 0 2"])
def test_fold_choices_at_their_bounds_are_accepted(line, tmp_path, monkeypatch, capsys):
    """Every fold (--max-folds equal to --folds) and the first and last fold by number are valid choices:
    the command gets past its checks to the data."""
    def data(*args, **kwargs):
        raise ValueError("reached the data")

    monkeypatch.setattr("tempo_analysis.resolve.load_timelines", data)
    assert main([*line.split(), "--out", str(tmp_path / "r.json")]) == 2
    assert "reached the data" in capsys.readouterr().err


@pytest.mark.parametrize("given, hidden", [(["--hidden", "200"], 200), (["--hidden", "32", "64"], (32, 64))])
def test_one_hidden_size_is_a_number_and_two_are_a_pair(given, hidden):
    """BiLSTM takes one LSTM size (an int); the FFN baselines two layer sizes (a tuple)."""
    from tempo_analysis.cli.stream_options import settings_from_args

    args = build_parser().parse_args(["stream", "evaluate", "--baseline", "bilstm", "--out", "r.json", *given])
    assert settings_from_args(args)[0]["hidden"] == hidden
