"""SemanticChangeRanker's own decisions, on a tiny corpus and a tiny random encoder: periods it needs,
when post-training (and new whole target tokens) happen, the config's defaults in rescore and the usage
map, and what save/load keeps."""
import numpy as np
import pandas as pd
import pytest

from tempo_analysis.data import PeriodCorpus
from tempo_analysis.data.change import ChangeData
from tempo_analysis.data.errors import DataError
from tempo_analysis.outputs import OutputExistsError
from tempo_analysis.semantic_change import PostTrainConfig, RankConfig, SemanticChangeRanker, comparison_table
from tempo_analysis.semantic_change import time_ablation

TEXTS = ["the cell was small and dark", "a cell of the body grew", "my cell phone rang twice",
         "the unbelievableness of it all", "sheer unbelievableness again today", "plain words and a cell"]


def change_data(periods=(1990, 2000), truth=True, doc_ids=None) -> ChangeData:
    n = len(periods)
    frame = pd.DataFrame({"period": [p for p in periods for _ in TEXTS], "text": TEXTS * n})
    if doc_ids is not None:
        frame["doc_id"] = doc_ids
    corpus = PeriodCorpus.from_frame(frame)
    words = ["cell", "unbelievableness", "phone"]
    t = pd.DataFrame({"word": words, "graded": [0.5, 0.1, 0.3]}) if truth else None
    return ChangeData("tiny", corpus, words, t)


def ranker(tiny_path, **settings) -> SemanticChangeRanker:
    return SemanticChangeRanker(RankConfig(encoder=tiny_path, layers=1, samples=6, **{"train": None, **settings}))


def test_one_period_is_refused_before_any_model_is_built(tiny_path):
    with pytest.raises(DataError, match="semantic change ranking needs at least 2 periods, but the corpus has 1"):
        ranker(tiny_path).fit(change_data(periods=(1990,)))


def test_zero_training_epochs_skip_post_training_and_the_new_target_tokens(tiny_path):
    r = ranker(tiny_path, add_targets=True, train=PostTrainConfig(epochs=0, head_steps=1, progress=False))
    r.fit(change_data())
    assert r.model_.train_report is None and not r.model_.added_targets
    assert r.model_.tokenizer.tokenize("unbelievableness") != ["unbelievableness"]      # still split
    trained = ranker(tiny_path, add_targets=True,
                     train=PostTrainConfig(epochs=1, head_steps=1, batch_size=8, progress=False)).fit(change_data())
    assert trained.model_.train_report is not None and trained.model_.added_targets == ["unbelievableness"]


def test_rescore_defaults_to_the_configs_z_scoring(tiny_path):
    r = ranker(tiny_path, zscore=True).fit(change_data())
    pd.testing.assert_frame_equal(r.rescore(), r.rescore(zscore=True))
    pd.testing.assert_frame_equal(r.scores_, r.rescore(zscore=True))
    assert not np.allclose(r.rescore(zscore=False)["score"], r.rescore(zscore=True)["score"])


def test_a_ranking_figure_needs_graded_truth(tiny_path):
    r = ranker(tiny_path).fit(change_data(truth=False))
    with pytest.raises(ValueError, match="'tiny' has no graded truth to rank against. Fix: use visualize_scores"):
        r.visualize_ranking()
    r.truth_ = pd.DataFrame({"word": ["cell", "unbelievableness"], "binary": [1, 0]})
    with pytest.raises(ValueError, match="no graded truth"):
        r.visualize_ranking()


def test_your_sentence_lands_where_the_later_period_puts_it_by_default(tiny_path):
    """The time-token model reads the period, so the placed sentence depends on it: unset = the later one."""
    r = ranker(tiny_path, method="time-token").fit(change_data())

    def placed(**kw):
        d = r.visualize_usage_map("cell", method="pca", sentence="a cell of mine", **kw).to_dict()
        star = d["data"][-1]
        return star["x"][0], star["y"][0]

    assert placed() == placed(period=2000)
    assert placed() != placed(period=1990)


def test_save_and_load_keep_the_truth_the_doc_ids_and_the_time_blind_control(tiny_path, tmp_path):
    ids = [f"d{i}" for i in range(len(TEXTS) * 2)]
    ids[0], ids[6] = "NA", "null"                   # ids that pandas would read as missing
    r = ranker(tiny_path, method="no-time").fit(change_data(doc_ids=ids))
    assert r.model_.time_blind
    r.truth_ = pd.concat([r.truth_, pd.DataFrame({"word": ["NA", "null"], "graded": [0.0, 0.2]})], ignore_index=True)
    r.save(tmp_path / "r")
    back = SemanticChangeRanker.load(tmp_path / "r")
    assert back.model_.time_blind and back.model_.method == "no-time"
    pd.testing.assert_frame_equal(back.truth_, r.truth_)
    assert [u.doc_id for u in back.vectors_.usages] == [u.doc_id for u in r.vectors_.usages]
    assert {"NA", "null"} <= {u.doc_id for u in back.vectors_.usages}
    plain = ranker(tiny_path, method="plain").fit(change_data())
    plain.save(tmp_path / "p")
    assert not SemanticChangeRanker.load(tmp_path / "p").model_.time_blind
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("a user's own file")
    with pytest.raises(OutputExistsError):                  # a folder tempo_analysis did not write is kept
        plain.save(mine)
    assert (mine / "notes.txt").read_text() == "a user's own file"


def test_ten_neighbours_per_period_by_default(tiny_path):
    r = ranker(tiny_path).fit(change_data())
    nb = r.neighbours("cell")
    assert list(nb) == [1990, 2000] and all(len(v) == 10 for v in nb.values())
    table = r.visualize_neighbours("cell").to_dict()["data"][0]
    assert all(len(col) == 10 for col in table["cells"]["values"])


def test_the_comparison_table_reads_layers_and_z_scoring_from_each_rankers_config(tiny_path):
    r = ranker(tiny_path, zscore=True).fit(change_data())
    table = comparison_table({"plain": r}, scorers=("cosine",))
    row = table.iloc[0]
    assert (row["layers"], bool(row["zscore"])) == ("1", True)
    assert np.isfinite(row["spearman"]) and row["spearman"] == pytest.approx(r.evaluate(r.rescore(scorer="cosine", layers=1, zscore=True))["spearman"])
    other = comparison_table({"plain": r}, scorers=("cosine",), layers=2, zscore=False).iloc[0]
    assert (other["layers"], bool(other["zscore"])) == ("2", False)


def test_the_time_ablation_adds_the_frequency_baseline_only_with_graded_truth(tiny_path):
    data = change_data()
    r = ranker(tiny_path, method="no-time").fit(data)
    table = time_ablation({"no-time": r}, data).set_index("method")
    assert list(table.index) == ["no-time", "frequency"]
    assert not table.loc["frequency", "sees_time"] and not table.loc["frequency", "trained"]
    assert not table.loc["no-time", "sees_time"] and not table.loc["no-time", "trained"]
    assert list(time_ablation({"no-time": r}).index) == [0]                       # no data: no baseline
    assert list(time_ablation({"no-time": r}, change_data(truth=False))["method"]) == ["no-time"]
    binary = change_data()
    binary.truth = pd.DataFrame({"word": ["cell", "unbelievableness", "phone"], "binary": [1, 0, 1]})
    assert list(time_ablation({"no-time": r}, binary)["method"]) == ["no-time"]
