"""The semantic change pipeline's own decisions: when the head warm-up reads general text, how given
usages are sampled, and the faithful defaults of a freshly built model."""
import warnings

import pandas as pd
import pytest

from tempo_analysis.data import PeriodCorpus, TargetUsage
from tempo_analysis.data import DataError
from tempo_analysis.data.change import ChangeData
from tempo_analysis.data.loaders import nltk_corpora
from tempo_analysis.semantic_change import PostTrainConfig, RankConfig, pipeline, preset
from tempo_analysis.semantic_change.pipeline import build_model, sample_usages, train_model

TEXTS = ["the cell was small", "a cell of the body", "my cell phone rang", "the phone was new"]


def tiny_data(usages=None) -> ChangeData:
    corpus = PeriodCorpus.from_frame(pd.DataFrame({"period": ["a"] * 4 + ["b"] * 4, "text": TEXTS * 2}), order=["a", "b"])
    return ChangeData("tiny", corpus, ["cell"], None, usages=usages)


@pytest.fixture()
def seen(monkeypatch):
    """What post-training would have been given (it is not run), and which general text was loaded."""
    out = {"loaded": []}

    def fake_post_train(model, tok, texts, times, cfg, *, general_text, **kw):
        out["general_text"], out["target_ids"] = general_text, kw.get("target_ids")
        return {}

    def fake_general(n, seed):
        out["loaded"].append((n, seed))
        return out.get("corpus", ["general sentence one", "general sentence two"])

    monkeypatch.setattr(pipeline, "post_train", fake_post_train)
    monkeypatch.setattr(nltk_corpora, "general_text", fake_general)
    return out


@pytest.mark.parametrize("change, loads", [({}, True), ({"general_sentences": 0}, False), ({"head_steps": 0}, False),
                                           ({"head_from_checkpoint": True}, False)])
def test_general_text_is_read_only_for_a_head_warm_up_that_will_run(tiny_path, seen, change, loads):
    cm = build_model("plain", ["a", "b"], encoder=tiny_path)
    assert not cm.model.config.head_from_checkpoint                   # a random tiny encoder has no MLM head
    cm.model.config.head_from_checkpoint = change.pop("head_from_checkpoint", False)
    cfg = PostTrainConfig(general_sentences=change.pop("general_sentences", 1), seed=3,
                          head_steps=change.pop("head_steps", 1), progress=False)
    train_model(cm, tiny_data(), cfg)
    assert seen["loaded"] == ([(1, 3)] if loads else [])   # the smallest warm-up still reads it
    assert seen["general_text"] == (["general sentence one", "general sentence two"] if loads else [])


def test_given_general_text_is_used_as_is_and_a_missing_corpus_is_warned(tiny_path, seen):
    cm = build_model("plain", ["a", "b"], encoder=tiny_path)
    cfg = PostTrainConfig(general_sentences=7, head_steps=2, progress=False)
    train_model(cm, tiny_data(), cfg, general_text=["mine"])
    assert seen["general_text"] == ["mine"] and seen["loaded"] == []
    seen["corpus"] = []
    with pytest.warns(UserWarning, match="no shared/data NLTK corpora found"):
        train_model(cm, tiny_data(), cfg)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        train_model(cm, tiny_data(), PostTrainConfig(general_sentences=0, head_steps=2, progress=False))


def test_target_focused_masking_reaches_the_collator_with_every_targets_pieces(tiny_path, seen):
    """``target_mask_prob`` set: post-training is given the target words' token ids (every piece of a
    split target); unset: none, so every token is masked alike."""
    cm = build_model("plain", ["a", "b"], encoder=tiny_path)
    data = ChangeData("tiny", tiny_data().corpus, ["cell", "phonebook"], None)
    train_model(cm, data, PostTrainConfig(head_steps=0, progress=False), general_text=[])
    assert seen["target_ids"] is None
    train_model(cm, data, PostTrainConfig(head_steps=0, target_mask_prob=0.5, progress=False), general_text=[])
    tok = cm.tokenizer
    want = sorted(set(tok("cell", add_special_tokens=False)["input_ids"])
                  | set(tok("phonebook", add_special_tokens=False)["input_ids"]))
    assert seen["target_ids"] == want and len(tok("phonebook", add_special_tokens=False)["input_ids"]) > 1


def test_the_collator_masks_target_pieces_at_their_own_rate(tiny_path):
    import torch

    from tempo_analysis.semantic_change.training import MLMCollator

    cm = build_model("plain", ["a", "b"], encoder=tiny_path)
    tok = cm.tokenizer
    (cell,) = tok("cell", add_special_tokens=False)["input_ids"]
    items = [{"input_ids": tok("the cell was small cell")["input_ids"], "time": 0} for _ in range(64)]
    ids = torch.tensor(items[0]["input_ids"])
    at_target, elsewhere = ids == cell, (ids != cell) & ~torch.isin(ids, torch.tensor(tok.all_special_ids))

    def masked(collate):
        torch.manual_seed(0)
        return (collate(items)["labels"] != -100).float()

    always = masked(MLMCollator(tok, mask_prob=0.0, target_ids=[cell], target_prob=1.0))
    assert always[:, at_target].min() == 1 and always[:, ~at_target].max() == 0   # only the targets, every time
    never = masked(MLMCollator(tok, mask_prob=1.0, target_ids=[cell], target_prob=0.0))
    assert never[:, at_target].max() == 0 and never[:, elsewhere].min() == 1
    plain = masked(MLMCollator(tok, mask_prob=0.0, target_ids=[cell], target_prob=None))
    assert plain.max() == 0                                          # no target rate: like any token
    assert masked(MLMCollator(tok, mask_prob=0.0, target_ids=[], target_prob=1.0)).max() == 0


def test_post_training_masks_only_the_targets_when_told_to(tiny_path, monkeypatch):
    """post_train hands the target ids and target_mask_prob to its collator: with mask_prob 0 and
    target_mask_prob 1 every training label is a target piece."""
    import torch

    from tempo_analysis.semantic_change import training

    labels = []

    class Recording(training.MLMCollator):
        def __call__(self, items):
            batch = super().__call__(items)
            labels.append(batch["labels"][batch["labels"] != -100])
            return batch

    monkeypatch.setattr(training, "MLMCollator", Recording)
    cm = build_model("plain", ["a", "b"], encoder=tiny_path)
    (cell,) = cm.tokenizer("cell", add_special_tokens=False)["input_ids"]
    cfg = PostTrainConfig(head_steps=0, epochs=1, batch_size=4, mask_prob=0.0, target_mask_prob=1.0, progress=False)
    training.post_train(cm.model, cm.tokenizer, TEXTS * 2, [0] * 4 + [1] * 4, cfg, target_ids=[cell])
    seen = torch.cat(labels)
    assert len(seen) == 3 * 2 and (seen == cell).all()              # "cell" occurs in 3 of the 4 texts, twice over


@pytest.mark.parametrize("field", ["mask_prob", "time_mask_prob", "target_mask_prob"])
def test_masking_probabilities_outside_zero_to_one_are_refused_by_name(field):
    with pytest.raises(ValueError, match=f"PostTrainConfig.{field}=1.5"):
        PostTrainConfig(**{field: 1.5})
    with pytest.raises(ValueError, match=f"PostTrainConfig.{field}=-0.1"):
        PostTrainConfig(**{field: -0.1})
    assert getattr(PostTrainConfig(**{field: 1.0}), field) == 1.0 and getattr(PostTrainConfig(**{field: 0.0}), field) == 0
    if field != "target_mask_prob":                                # only the target rate may be None (= mask_prob)
        with pytest.raises(ValueError, match=f"PostTrainConfig.{field}=None"):
            PostTrainConfig(**{field: None})
    else:
        assert PostTrainConfig(target_mask_prob=None).target_mask_prob is None


def test_given_usages_are_sampled_without_repeats():
    usages = [TargetUsage("cell", p, f"cell number {i}", 0, 4, f"{p}{i}") for p in "ab" for i in range(6)]
    got, missing = sample_usages(tiny_data(usages), 4, seed=0)
    assert missing == [] and len(got) == 8
    for p in "ab":
        ids = [u.doc_id for u in got if u.period == p]
        assert len(ids) == len(set(ids)) == 4 and ids == sorted(ids, key=lambda d: int(d[1:]))   # in corpus order
    all_of_them, _ = sample_usages(tiny_data(usages), 6, seed=0)
    assert [u.doc_id for u in all_of_them] == [u.doc_id for u in usages]


def test_a_fresh_temporal_attention_model_is_the_faithful_residual_form(tiny_path):
    cm = build_model("temporal-attention", ["a", "b"], encoder=tiny_path)
    assert cm.model.config.time_residual is True and cm.model.config.time_attention == "faithful"
    # ‖T‖ over all heads unless the paper's per-head norm is asked for (RankConfig.time_norm)
    assert cm.model.config.time_norm == "all_heads" == RankConfig().time_norm
    per_head = build_model("temporal-attention", ["a", "b"], encoder=tiny_path, time_norm="per_head")
    assert per_head.model.config.time_norm == "per_head"
    assert all(layer.attention.per_head_norm for layer in per_head.model.temporal.layers)
    with pytest.raises(ValueError, match="time_norm 'x' is not one of"):
        RankConfig(time_norm="x")


def test_rank_config_defaults_are_the_cli_preset_with_the_chosen_scorer_settings():
    """``RankConfig()``, the ``"cli"`` preset and ``SemanticChangeRanker()`` run one set of defaults; the
    scorer settings in it are the ones chosen on the pseudoword benchmark (APD-within over z-scored
    vectors, last 4 layers; research/results/semantic_change/README.md, section 1)."""
    from tempo_analysis.semantic_change import PRESETS, SemanticChangeRanker

    assert RankConfig() == PRESETS["cli"] == preset("cli") == SemanticChangeRanker().get_config()
    assert (RankConfig().scorer, RankConfig().layers, RankConfig().zscore) == ("apd-within", 4, True)
    assert preset("notebook") == SemanticChangeRanker("notebook").get_config() != RankConfig()
    assert preset("cli") is not PRESETS["cli"]           # a copy: changing it leaves the preset alone
    with pytest.raises(ValueError, match="unknown preset 'paper-x'"):
        preset("paper-x")


def test_a_new_target_token_matches_the_whole_word_in_any_case_only(tiny_path):
    from tempo_analysis.semantic_change.pipeline import add_target_tokens

    cm = build_model("plain", ["a", "b"], encoder=tiny_path)
    assert add_target_tokens(cm, ["cell", "unbelievableness"]) == ["unbelievableness"]   # only split words
    tok = cm.tokenizer
    assert tok.tokenize("The Unbelievableness of it") == ["the", "unbelievableness", "of", "it"]
    assert "unbelievableness" not in tok.tokenize("unbelievablenesses abound")            # inside a longer word


def test_the_notebooks_training_epochs_zero_means_none_and_negative_is_refused():
    from tempo_analysis.semantic_change import notebook_config

    assert notebook_config("temporal-attention", train_epochs=0).train is None
    assert notebook_config("temporal-attention", train_epochs=0.5).train.epochs == 0.5
    assert notebook_config("plain", train_epochs=2).train is None              # plain stays without training
    with pytest.raises(ValueError, match="train_epochs=-1: use 0"):
        notebook_config("temporal-attention", train_epochs=-1)


def test_the_notebook_ranks_real_text_with_the_library_scorer_and_the_world_with_cosine():
    from tempo_analysis.semantic_change import notebook_config

    for spec in ("pseudoword", "pseudoword:/data", "dwug:/d", "semeval:/d", "nltk"):
        cfg = notebook_config("temporal-attention", data=spec)
        assert (cfg.scorer, cfg.zscore) == (preset("cli").scorer, preset("cli").zscore), spec
        assert cfg.samples == preset("notebook").samples                 # the rest stays the notebook's
    for spec in ("world", "world:/tmp/w", " World "):
        cfg = notebook_config("temporal-attention", data=spec)
        assert (cfg.scorer, cfg.zscore) == ("cosine", False), spec
    assert notebook_config("plain", data="pseudoword", scorer="prt", zscore=False).scorer == "prt"
    assert notebook_config("plain", data="pseudoword", zscore=False).zscore is False
    with pytest.raises(DataError, match="not understood"):
        notebook_config("plain", data="bogus:x")


def test_the_clis_training_epochs_take_fractions_zero_means_none_and_negative_is_refused():
    from tempo_analysis.semantic_change import cli_config

    assert cli_config(train_epochs=0.5).train.epochs == 0.5 and cli_config(train_epochs=0).train is None
    assert cli_config(method="plain").train is None and cli_config(method="plain", train_epochs=1).train.epochs == 1
    with pytest.raises(ValueError, match="--train-epochs -1: use 0"):
        cli_config(train_epochs=-1)


def test_three_equal_scores_rank_nothing():
    from tempo_analysis.semantic_change.pipeline import evaluate_scores

    truth = pd.DataFrame({"word": ["a", "b", "c"], "graded": [0.1, 0.5, 0.9]})
    flat = evaluate_scores(pd.DataFrame({"word": ["a", "b", "c"], "score": [0.3, 0.3 + 1e-12, 0.3]}), truth)
    assert flat["constant_scores"] and flat["spearman"] == 0.0 and flat["spearman_ci_low"] == 0.0
    ranked = evaluate_scores(pd.DataFrame({"word": ["a", "b", "c"], "score": [0.1, 0.2, 0.3]}), truth)
    assert "constant_scores" not in ranked and ranked["spearman"] == pytest.approx(1.0)
