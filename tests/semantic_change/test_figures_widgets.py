"""Figures (asserted on fig.to_dict()), UMAP map / neighbours / sentence placement, the ranker's
save-load and visualize_* methods, widgets."""
import numpy as np
import pandas as pd
import pytest

from tempo_analysis.figures import semantic_change as figs
from tempo_analysis.resolve import load_change_data
from tempo_analysis.data import PeriodCorpus
from tempo_analysis.data.change import ChangeData
from tempo_analysis.semantic_change import PostTrainConfig, RankConfig, SemanticChangeRanker, comparison_table
from tempo_analysis.semantic_change.explore import embed_sentence, period_neighbours, usage_map

from .test_cli_pipeline import FIX

SCORES = pd.DataFrame({"word": ["a", "b", "c", "d"], "score": [0.4, 0.3, 0.1, np.nan]})
TRUTH = pd.DataFrame({"word": ["a", "b", "c", "d"], "graded": [0.9, 0.2, 0.5, 0.1]})


def test_rank_scatter():
    d = figs.rank_scatter(SCORES, TRUTH, title="m").to_dict()
    words = d["data"][1]
    assert list(words["text"]) == ["a", "b", "c"]                 # NaN word left out
    assert list(words["x"]) == [1.0, 3.0, 2.0] and list(words["y"]) == [1.0, 2.0, 3.0]
    assert "Spearman ρ = 0.500" in d["layout"]["title"]["text"] and "(n = 3)" in d["layout"]["title"]["text"]
    assert d["layout"]["yaxis"]["autorange"] == "reversed"
    assert list(d["data"][0]["x"]) == list(d["data"][0]["y"]) == [1, 3]   # the diagonal from rank 1 to n
    assert words["marker"]["showscale"] is True
    assert [list(c) for c in words["customdata"]] == [[0.9, 0.4], [0.2, 0.3], [0.5, 0.1]]   # (graded, score) per word
    with pytest.raises(ValueError, match="nothing to plot"):
        figs.rank_scatter(SCORES.assign(word=list("wxyz")), TRUTH)


def test_method_comparison_and_bars_and_table():
    t = pd.DataFrame({"method": ["p", "p", "t", "t"], "scorer": ["cosine", "prt"] * 2, "spearman": [.1, .2, .3, .4]})
    d = figs.method_comparison(t).to_dict()
    assert [tr["name"] for tr in d["data"]] == ["cosine", "prt"] and list(d["data"][1]["y"]) == [.2, .4]
    b = figs.score_bars(SCORES, highlight="b").to_dict()
    assert list(b["data"][0]["x"])[:3] == ["a", "b", "c"] and b["data"][0]["marker"]["color"][1] == "#d62728"
    assert "ranks 2 of 4" in b["layout"]["title"]["text"]
    n = figs.neighbours_table({"old": [("cat", 1.0)], "new": [("click", 2.0), ("usb", 1.0)]}, word="mouse").to_dict()
    assert n["data"][0]["cells"]["values"] == [["cat", ""], ["click", "usb"]]
    eight = figs.neighbours_table({"old": [(f"w{i}", 1.0) for i in range(8)]}, word="cell").to_dict()
    table, layout = eight["data"][0], eight["layout"]
    margin = layout.get("margin", {})   # plotly's defaults: 100 top, 80 bottom; a cell 20 px, the header 28
    room = layout["height"] - margin.get("t", 100) - margin.get("b", 80)
    assert room >= table["header"].get("height", 28) + 8 * table["cells"].get("height", 20)   # no row clipped
    with pytest.raises(ValueError, match="columns"):
        figs.method_comparison(t.drop(columns="scorer"))


def test_ablation_bars_colour_time_and_keep_every_whisker():
    t = pd.DataFrame({"method": ["plain", "no-time", "temporal-attention"], "spearman": [0.5, 0.55, 0.6],
                      "ci_low": [0.3, 0.35, 0.45], "ci_high": [0.7, 0.72, 0.8], "sees_time": [False, False, True]})
    d = figs.ablation_bars(t).to_dict()
    bars = d["data"][0]
    assert list(bars["x"]) == ["plain", "no-time", "temporal-attention"]
    assert bars["marker"]["color"] == ["#9e9e9e", "#9e9e9e", figs.PERIOD_COLOURS[1]]
    np.testing.assert_allclose(bars["error_y"]["array"], [0.2, 0.17, 0.2])            # up to ci_high
    np.testing.assert_allclose(bars["error_y"]["arrayminus"], [0.2, 0.2, 0.15])       # down to ci_low
    assert bars["error_y"]["symmetric"] is False
    assert list(d["layout"]["yaxis"]["range"]) == [-0.5, 1.05]
    low = t.assign(ci_low=[-0.8, 0.35, 0.45])                  # an interval below -0.5: the axis follows it
    assert figs.ablation_bars(low).to_dict()["layout"]["yaxis"]["range"][0] == pytest.approx(-0.85)
    assert "grey: time-blind" in d["layout"]["title"]["text"]
    with pytest.raises(ValueError, match="sees_time"):
        figs.ablation_bars(t.drop(columns="sees_time"))


def test_score_bars_put_missing_scores_last_and_mark_no_absent_word():
    b = figs.score_bars(SCORES.iloc[[3, 2, 0, 1]], highlight="zzz").to_dict()
    assert list(b["data"][0]["x"]) == ["a", "b", "c", "d"]                   # most changed first, NaN last
    assert set(b["data"][0]["marker"]["color"]) == {"#9ecae1"} and b["layout"]["title"]["text"] == "Change scores"
    with pytest.raises(ValueError, match="'kendall'"):
        figs.method_comparison(pd.DataFrame({"method": ["p"], "scorer": ["c"], "spearman": [0.1]}), metric="kendall")


def test_usage_map_figure_with_own_sentence():
    coords = np.array([[0, 0], [1, 1], [2, 2]])
    d = figs.usage_map(coords, ["old", "new", "new"], ["s1", "s2", "s3"], word="w", compared=["old", "new"],
                       extra={"x": 1.5, "y": 1.5, "text": "mine", "period": "new"}).to_dict()
    assert [t["name"] for t in d["data"]] == ["old", "new", "your sentence"]
    assert list(d["data"][1]["text"]) == ["s2", "s3"] and d["data"][2]["marker"]["symbol"] == "star"
    assert "looks like: new" in d["data"][2]["hovertemplate"]
    # each usage at its own (x, y); without `compared` the periods come in order of first appearance
    coords = np.array([[0.0, 5.0], [1.0, 6.0], [2.0, 7.0]])
    d = figs.usage_map(coords, [2000, 1900, 2000], ["s1", "s2", "s3"], word="w").to_dict()
    assert [t["name"] for t in d["data"]] == ["2000", "1900"]
    assert list(d["data"][0]["x"]) == [0.0, 2.0] and list(d["data"][0]["y"]) == [5.0, 7.0]


@pytest.fixture(scope="module")
def dwug_result(tiny_path):  # noqa: F811
    data = load_change_data(f"dwug:{FIX / 'dwug'}").data
    cfg = RankConfig(method="temporal-attention", layers=2, samples=None, encoder=tiny_path,
                     train=PostTrainConfig(head_steps=2, epochs=0.5, batch_size=8, progress=False))
    return data, SemanticChangeRanker(cfg).fit(data)


def test_explore_map_neighbours_and_sentence(dwug_result):
    data, r = dwug_result
    m = usage_map(r.vectors_, "plane", layers=2, seed=0, method="pca")   # UMAP itself runs in notebook 02
    assert m.coords.shape == (8, 2) and sorted(set(m.periods)) == ["1", "2"]
    np.testing.assert_array_equal(r.usage_map("plane", method="pca").coords, m.coords)
    v = embed_sentence(r.model_, "The plane flew over the city.", "plane", "2", layers=2)
    np.testing.assert_array_equal(r.embed_sentence("The plane flew over the city.", "plane", "2"), v)
    where = m.place(v, data.compared)
    assert where["period"] in ("1", "2") and np.isfinite([where["x"], where["y"]]).all()
    with pytest.raises(ValueError, match="does not contain the word"):
        embed_sentence(r.model_, "No target here.", "plane", "2")
    nb = period_neighbours(r.model_, r.vectors_, "plane", k=5)
    assert r.neighbours("plane", k=5) == nb
    assert list(nb) == ["1", "2"] and all(len(v) == 5 for v in nb.values())
    assert all(w.isalpha() and w != "plane" for v in nb.values() for w, _ in v)


def test_ranker_with_year_periods_and_a_number_word_round_trips(tiny_path, tmp_path):
    """Periods that are numbers (years from a CSV) and a target spelled as a number come back as they were."""
    texts = ["a cell here", "the cell phone", "in 1984 it rained", "the year 1984 went"]
    c = PeriodCorpus.from_frame(pd.DataFrame({"period": [1990] * 4 + [2000] * 4, "text": texts * 2}))
    data = ChangeData("years", c, ["cell", "1984"], pd.DataFrame({"word": ["cell", "1984"], "graded": [0.5, 0.1]}))
    r = SemanticChangeRanker(RankConfig(encoder=tiny_path, train=None, layers=1, samples=5)).fit(data)
    r.save(tmp_path / "r")
    back = SemanticChangeRanker.load(tmp_path / "r")
    assert [(u.word, u.period) for u in back.vectors_.usages] == [(u.word, u.period) for u in r.vectors_.usages]
    assert {type(u.period) for u in back.vectors_.usages} == {int} and back.periods_ == [1990, 2000]
    pd.testing.assert_frame_equal(back.rescore(), r.rescore(), check_dtype=False)


def test_ranker_save_load_roundtrip(dwug_result, tmp_path, capfd):
    data, r = dwug_result
    r.save(tmp_path / "r")
    r.save(tmp_path / "r")  # our own folder is replaced as a whole, without overwrite=True
    capfd.readouterr()
    back = SemanticChangeRanker.load(tmp_path / "r")
    assert "Loading weights" not in capfd.readouterr().err   # a notebook's cache loads without transformers' bar
    np.testing.assert_array_equal(back.vectors_.vectors, r.vectors_.vectors)
    assert [u.period for u in back.vectors_.usages] == [u.period for u in r.vectors_.usages]
    pd.testing.assert_frame_equal(back.scores_, r.scores_, check_dtype=False)
    assert back.config == r.config and back.model_.method == "temporal-attention"
    assert back.ranking_ == r.ranking_ and back.metrics_ == r.metrics_
    assert (back.targets_, back.periods_, back.compared_) == (r.targets_, r.periods_, r.compared_)
    assert back.evaluate() == r.evaluate()           # truth_ round-trips too
    t1 = comparison_table({"ta": r}, scorers=("cosine",))
    t2 = comparison_table({"ta": back}, scorers=("cosine",))
    pd.testing.assert_frame_equal(t1, t2)
    v1 = r.embed_sentence("The plane landed.", "plane", "2")
    v2 = back.embed_sentence("The plane landed.", "plane", "2")
    np.testing.assert_allclose(v1, v2, atol=1e-5)


def test_ranker_rescore_and_visualize(dwug_result):
    data, r = dwug_result
    assert r.rescore().equals(r.scores_) and r.evaluate() == r.metrics_
    assert r.ranking_ == r.scores_["word"].tolist() and sorted(r.ranking_) == ["plane", "risk", "tip"]
    prt = r.rescore(scorer="prt", layers=1, n=2)
    assert prt.attrs["scorer"] == "prt" and prt.attrs["layers"] == 1 and (prt.filter(like="n_") <= 2).all().all()
    d = r.visualize_ranking(title="ta").to_dict()
    assert sorted(d["data"][1]["text"]) == ["plane", "risk", "tip"] and "Spearman" in d["layout"]["title"]["text"]
    assert r.visualize_scores(highlight="tip").to_dict()["data"][0]["marker"]["color"][r.ranking_.index("tip")] \
        == "#d62728"
    m = r.visualize_usage_map("plane", method="pca", sentence="The plane landed.", period="2").to_dict()
    assert [t["name"] for t in m["data"]] == ["1", "2", "your sentence"]
    assert r.visualize_neighbours("plane", k=3).to_dict()["data"][0]["type"] == "table"
    with pytest.raises(ValueError, match="not fitted"):
        SemanticChangeRanker().rescore()
    bogus = SemanticChangeRanker(method="bogus")           # stored as given; fit checks it, before any work
    with pytest.raises(ValueError, match="method 'bogus'"):
        bogus.fit(data)


def test_widgets_build_and_react(dwug_result):
    from tempo_analysis.widgets.semantic_change import rescore, scoring_whatif, sentence_probe, word_explorer
    data, r = dwug_result
    box = scoring_whatif(r, word="tip")
    label = box.children[2]
    assert "tip" in label.value and "rank" in label.value
    h_slider = box.children[1].children[0]
    h_slider.value = 1                                          # what-if: use only the last layer
    df, _ = rescore(r, layers=1, n=4, scorer=r.config_.scorer)
    assert f"score {df.set_index('word').loc['tip', 'score']:.4f}" in label.value
    word_explorer(r, word="plane", method="pca")
    probe = sentence_probe(r, word="plane", text="The plane landed.", method="pca")
    assert probe.children[1].value == "The plane landed."


def test_scoring_whatif_opens_at_the_first_word_with_every_usage_and_shows_spearman(dwug_result):
    from tempo_analysis.evaluation.ranking import correlate
    from tempo_analysis.widgets.semantic_change import rescore, scoring_whatif, word_explorer
    _, r = dwug_result
    box = scoring_whatif(r)
    (word, _, _), (h, n), label = box.children[0].children, box.children[1].children, box.children[2]
    assert word.value == r.targets_[0]
    n_cols = r.scores_.filter(like="n_")
    assert n.max == n.value == int(n_cols.max().max()) and n.min == 2 and h.min == 1
    df, m = rescore(r, layers=h.value, n=n.value, scorer=r.config_.scorer)
    assert m == correlate(df, r.truth_) and f"Spearman {m['spearman']:.3f}" in label.value
    # no graded truth: no Spearman, and no error
    assert rescore(type("NoTruth", (), {"rescore": r.rescore, "truth_": None})(), layers=1, n=4,
                   scorer=r.config_.scorer)[1] == {}
    explorer = word_explorer(r, method="pca")
    assert explorer.children[0].value == r.targets_[0]


def test_scoring_whatif_n_slider_reaches_the_most_usages_any_word_has():
    """The n slider's top is the largest usage count of any word in any period (a word with fewer
    usages is scored on all it has), not the smallest."""
    from types import SimpleNamespace

    from tempo_analysis.widgets.semantic_change import scoring_whatif
    asked = []

    def rescore(**kw):
        asked.append(kw["n"])
        return pd.DataFrame({"word": ["a", "b"], "score": [0.2, 0.1], "rank": [1, 2]})

    ranker = SimpleNamespace(config_=SimpleNamespace(layers=2, scorer="cosine", zscore=False), targets_=["a", "b"],
                             vectors_=SimpleNamespace(layers=[1, 2, 3]), truth_=None, rescore=rescore,
                             scores_=pd.DataFrame({"word": ["a", "b"], "n_old": [3, 7], "n_new": [5, 2]}))
    n = scoring_whatif(ranker).children[1].children[1]
    assert n.max == n.value == 7 and asked[0] == 7


def test_the_notebook_cache_tells_apart_data_of_one_name(tiny_path, tmp_path, monkeypatch):
    """fit_methods' cache keys on the data's contents, not only its name: a world from another folder or
    another sentence cap is fitted anew, and the same data is read back from the cache."""
    from tempo_analysis.semantic_change import fit_methods

    def fit_cached(data, cfg):
        return fit_methods(data, {"plain": cfg})["plain"]

    monkeypatch.setenv("TEMPO_ANALYSIS_CACHE", str(tmp_path / "cache"))
    truth = pd.DataFrame({"word": ["cell"], "graded": [0.5]})

    def data(n):
        c = PeriodCorpus.from_frame(pd.DataFrame({"period": [1] * n + [2] * n, "text": ["a cell here"] * (2 * n)}))
        return ChangeData("same-name", c, ["cell"], truth)

    cfg = RankConfig(encoder=tiny_path, train=None, layers=1, samples=None)
    small, large = fit_cached(data(2), cfg), fit_cached(data(5), cfg)
    assert len(small.vectors_) == 4 and len(large.vectors_) == 10
    again = fit_cached(data(2), cfg)
    assert len(again.vectors_) == 4 and len(list((tmp_path / "cache").iterdir())) == 2


@pytest.mark.parametrize("layers, message", [(5, r"layers=5 must be between 1 and the encoder's 2 layers"),
                                             ([1, 3], r"layers \[3\]: .*numbered 0 \(embeddings\) to 2")])
def test_layers_the_encoder_lacks_fail_before_training(tiny_path, monkeypatch, layers, message):
    import tempo_analysis.semantic_change.estimator as ranker_module

    def no_training(*a, **k):
        raise AssertionError("post-training started before the layers were checked")
    monkeypatch.setattr(ranker_module, "train_model", no_training)
    c = PeriodCorpus.from_frame(pd.DataFrame({"period": [1, 1, 2, 2], "text": ["a cell here"] * 4}))
    data = ChangeData("toy", c, ["cell"], None)
    with pytest.raises(ValueError, match=message):
        SemanticChangeRanker(RankConfig(encoder=tiny_path, layers=layers, train=PostTrainConfig(progress=False))).fit(data)
