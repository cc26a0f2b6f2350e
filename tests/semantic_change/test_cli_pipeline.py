"""`tempo-analysis semantic-change rank` end to end on tiny encoders: every method, the DWUG fixture and a
SemEval folder, TSV output, printed correlations, missing targets reported, bad input messages."""
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from tempo_analysis.cli import main
from tempo_analysis.encoders import tiny_encoder
from tempo_analysis.resolve import load_change_data
from tempo_analysis.semantic_change import PostTrainConfig, RankConfig, SemanticChangeRanker, cli_config
from tempo_analysis.semantic_change.pipeline import add_target_tokens, build_model, sample_usages

from .test_loaders import write_semeval

FIX = Path(__file__).parent / "fixtures"


def read_tsv(p):
    assert Path(p).read_text().startswith("# tempo_analysis "), "the ranking TSV starts with our header line"
    return pd.read_csv(p, sep="\t", header=None, names=["word", "score"], keep_default_na=False,
                       na_values=["nan"], skiprows=1)


@pytest.mark.parametrize("method", ["temporal-attention", "time-token", "scaled-linear", "scaled-exp",
                                    "scaled-doc", "plain"])
def test_rank_every_method_on_dwug_fixture(method, tiny_path, tmp_path, capsys):
    out = tmp_path / "ranks.tsv"
    rc = main(["semantic-change", "rank", "--data", f"dwug:{FIX / 'dwug'}", "--method", method,
               "--scorer", "cosine", "--model", tiny_path, "--layers", "2",
               "--train-epochs", "1" if method in ("temporal-attention", "time-token", "scaled-doc") else "0",
               "--samples", "3", "--seed", "0", "--out", str(out), "--json", str(tmp_path / "m.json")])
    assert rc == 0
    df = read_tsv(out)
    assert sorted(df["word"]) == ["plane", "risk", "tip"] and df["score"].notna().all()
    assert (np.diff(df["score"].to_numpy()) <= 0).all()          # most changed first
    printed = capsys.readouterr().out
    assert "Spearman" in printed and "Pearson" in printed and "binary accuracy" in printed


def test_train_epochs_zero_skips_post_training_and_is_deterministic(tiny_path, tmp_path):
    args = ["semantic-change", "rank", "--data", f"dwug:{FIX / 'dwug'}", "--method", "temporal-attention",
            "--model", tiny_path, "--train-epochs", "0", "--layers", "1", "--seed", "3"]
    main(args + ["--out", str(tmp_path / "a.tsv")])
    main(args + ["--out", str(tmp_path / "b.tsv")])
    pd.testing.assert_frame_equal(read_tsv(tmp_path / "a.tsv"), read_tsv(tmp_path / "b.tsv"))
    cfg = cli_config(train_epochs=0)
    assert cfg.train is None


def test_semeval_folder_with_a_target_missing_from_a_period(tiny_path, tmp_path, capsys):
    root = write_semeval(tmp_path / "semeval")
    out = tmp_path / "r.tsv"
    rc = main(["semantic-change", "rank", "--data", f"semeval:{root}", "--method", "plain", "--model", tiny_path,
               "--layers", "1", "--scorer", "apd", "--seed", "0", "--out", str(out)])
    assert rc == 0
    df = read_tsv(out).set_index("word")
    assert np.isnan(df.loc["risk", "score"]) and df.loc["plane", "score"] == df.loc["plane", "score"]
    cap = capsys.readouterr()
    assert "'risk' has no usage in period 'corpus2'" in cap.err
    assert "dropped=1" in cap.out
    assert "plain / apd (z-scored) / layers=1 / n=200 / seed=0" in cap.out          # the settings it ran with
    rc = main(["semantic-change", "rank", "--data", f"semeval:{root}", "--method", "plain", "--model", tiny_path,
               "--layers", "1", "--scorer", "apd", "--no-zscore", "--seed", "0", "--out", str(out), "--overwrite"])
    assert rc == 0 and "plain / apd / layers=1 /" in capsys.readouterr().out


def test_bad_input_gives_one_clear_line(tiny_path, tmp_path, capsys):
    rc = main(["semantic-change", "rank", "--data", f"dwug:{tmp_path / 'nothing'}", "--model", tiny_path,
               "--out", str(tmp_path / "x.tsv")])
    assert rc == 2 and "data/<lemma>/uses.csv" in capsys.readouterr().err
    rc = main(["semantic-change", "rank", "--data", "bogus:x", "--out", str(tmp_path / "x.tsv")])
    assert rc == 2 and "semeval:DIR, dwug:DIR" in capsys.readouterr().err
    rc = main(["semantic-change", "rank", "--data", f"dwug:{FIX / 'dwug'}", "--targets", "plane_nn,zebra",
               "--model", tiny_path, "--out", str(tmp_path / "x.tsv")])
    assert rc == 2 and "zebra" in capsys.readouterr().err


def test_pos_suffixed_target_maps_to_surface_form(tiny_path):
    data = load_change_data(f"dwug:{FIX / 'dwug'}", targets=["plane_nn"]).data
    assert data.targets == ["plane"]
    usages, missing = sample_usages(data, None)
    assert len(usages) == 8 and not missing
    # the truth and the given usages follow the chosen targets: the others are not counted as dropped
    assert data.truth["word"].tolist() == ["plane"] and {u.word for u in data.usages} == {"plane"}


def test_add_targets_as_whole_tokens_and_time_token_prefix(tiny_path):
    data = load_change_data(f"dwug:{FIX / 'dwug'}").data
    data.targets = ["plane", "unbelievableness"]
    cm = build_model("time-token", data.periods, encoder=tiny_path)
    before = cm.model.config.vocab_size
    added = add_target_tokens(cm, data.targets)
    assert added == ["unbelievableness"] and cm.model.config.vocab_size == before + 1
    assert cm.tokenizer.tokenize("The unbelievableness of it") == ["the", "unbelievableness", "of", "it"]
    assert cm.prefix(["2", "1"]) == [[cm.time_token_ids[1]], [cm.time_token_ids[0]]]
    assert cm.tokenizer.convert_ids_to_tokens(cm.time_token_ids) == ["<1>", "<2>"]


def test_ranker_reuses_a_trained_model(tiny_path):
    data = load_change_data(f"dwug:{FIX / 'dwug'}").data
    cfg = RankConfig(method="temporal-attention", layers=2, samples=4, encoder=tiny_path,
                     train=PostTrainConfig(head_steps=3, epochs=1, batch_size=8, progress=False))
    r1 = SemanticChangeRanker(cfg).fit(data)
    assert r1.model_.train_report["n_sentences"] == 24 and len(r1.model_.train_report["head_loss"]) == 3
    assert r1.model_.model.config.head_from_checkpoint                 # the head was trained in stage 0
    r2 = SemanticChangeRanker(scorer="prt", layers=1, samples=4, encoder=tiny_path).fit(data, model=r1.model_)
    assert r2.vectors_.vectors.shape[0] == 24 and r2.scores_["score"].notna().all()
    assert r2.ranking_ == r2.scores_["word"].tolist() and "spearman" in r2.metrics_
    # the body stays close to pretrained under the gentle schedule; time parameters moved
    hf, _ = tiny_encoder(hidden=32, layers=2, heads=2, seed=0)
    q0 = hf.encoder.layer[0].attention.self.query.weight
    q1 = r1.model_.model.temporal.layers[0].attention.query.weight
    assert (q1 - q0).abs().max() < 1e-3
    assert r1.model_.model.temporal.layers[0].attention.time_gate.abs().max() > 0
    assert torch.isfinite(q1).all()


def test_the_ranking_seed_reseeds_post_training(tiny_path, monkeypatch):
    """RankConfig.seed (the notebook's SEED) seeds the post-training too. Before, it stayed at
    PostTrainConfig's default: on the planted world the time-token method (no random parameters of its
    own, a head from the checkpoint) gave the same losses and ranking for every seed."""
    from tempo_analysis.semantic_change import notebook_config, pipeline

    train = PostTrainConfig(head_steps=2, epochs=1, batch_size=8, progress=False)
    assert RankConfig(seed=3, train=train).train.seed == 3
    assert notebook_config("both", seed=2).train_config().seed == 2
    assert RankConfig.from_dict(RankConfig(seed=5, train=train).to_dict()).train.seed == 5
    assert RankConfig(seed=1, train=None).train is None
    seen, real = [], pipeline.post_train

    def spy(model, tokenizer, texts, times, cfg, **kw):
        seen.append(cfg.seed)
        return real(model, tokenizer, texts, times, cfg, **kw)

    monkeypatch.setattr(pipeline, "post_train", spy)
    data = load_change_data(f"dwug:{FIX / 'dwug'}").data
    for seed in (0, 1):
        SemanticChangeRanker(RankConfig(method="time-token", layers=2, samples=4, encoder=tiny_path, seed=seed,
                                        train=train)).fit(data)
    assert seen == [0, 1]


def test_precision_reaches_the_config_from_the_cli_and_bad_values_are_refused(tiny_path, tmp_path, monkeypatch):
    from tempo_analysis.semantic_change import pipeline, preset

    assert cli_config(precision="auto").precision == "auto"
    assert cli_config().precision == preset("cli").precision == "auto"
    with pytest.raises(ValueError, match="precision"):
        RankConfig(precision="fp16")
    seen = {}
    real = pipeline.ChangeModel.embed

    def spy(self, usages, **kw):
        seen["precision"] = kw.get("precision")
        return real(self, usages, **kw)

    monkeypatch.setattr(pipeline.ChangeModel, "embed", spy)
    out = tmp_path / "scores.tsv"
    assert main(["semantic-change", "rank", "--data", f"dwug:{FIX / 'dwug'}", "--method", "plain", "--samples", "3",
                 "--model", tiny_path, "--layers", "2", "--precision", "bf16", "--out", str(out)]) == 0
    assert seen["precision"] == "bf16"
