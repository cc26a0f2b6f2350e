"""Scorers (Algorithm 1 cosine, PRT, APD, APD-within, JSD), layer choice, z-scoring, NaN reporting,
and the ranking evaluation (Spearman/Pearson with p-values, binary accuracy)."""
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from tempo_analysis.data import TargetUsage
from tempo_analysis.evaluation.ranking import binary_accuracy, correlate, rank_table, spearman_ci
from tempo_analysis.semantic_change.extraction import TargetVectors
from tempo_analysis.semantic_change.scoring import (check_layers, cosine_distance, layer_average, score_pair, score_words,
                                                    zscore)


def test_cosine_distance_not_euclidean():
    rng = np.random.default_rng(0)
    A, B = rng.normal(size=(20, 8)) + 1, rng.normal(size=(25, 8)) + 1
    s = score_pair(A, B, "cosine")
    assert s == pytest.approx(cosine_distance(A.mean(0), B.mean(0)))
    assert score_pair(A, 10 * B, "cosine") == pytest.approx(s)        # scale-free: not Euclidean
    assert score_pair(A, A, "cosine") == pytest.approx(0.0, abs=1e-12)
    assert score_pair(np.array([[1.0, 0]]), np.array([[0, 1.0]]), "cosine") == pytest.approx(1.0)


def test_prt_apd_and_within_correction():
    e1, e2 = np.array([1.0, 0, 0]), np.array([0, 1.0, 0])
    same_mix = np.array([e1, e2, e1, e2])
    # a word that is equally polysemous in both periods: raw APD is high, APD-within ~ 0
    assert score_pair(same_mix, same_mix, "apd") == pytest.approx(0.5)
    assert score_pair(same_mix, same_mix, "apd-within") == pytest.approx(0.5 - 2 / 3)
    assert score_pair(np.array([e1, e1]), np.array([e2, e2]), "apd-within") == pytest.approx(1.0)
    # two usages are enough for a within-period distance: here 1 in each period, so 0.5 - 1
    assert score_pair(np.array([e1, e2]), np.array([e1, e2]), "apd-within") == pytest.approx(-0.5)
    # PRT counts each usage equally whatever its norm
    A = np.array([100 * e1, e2])
    assert score_pair(A, np.array([e2]), "prt") == pytest.approx(cosine_distance(np.array([.5, .5, 0]), e2))
    assert score_pair(A, np.array([e2]), "cosine") > score_pair(A, np.array([e2]), "prt")


def test_jsd_clusters():
    rng = np.random.default_rng(0)
    c1 = rng.normal(size=(20, 5)) * 0.05 + np.eye(5)[0]
    c2 = rng.normal(size=(20, 5)) * 0.05 + np.eye(5)[1]
    assert score_pair(c1, c2, "jsd", k=2) == pytest.approx(1.0)
    mix = np.vstack([c1[:10], c2[:10]])
    assert score_pair(mix, np.vstack([c1[10:], c2[10:]]), "jsd", k=2) == pytest.approx(0.0, abs=1e-9)
    with pytest.raises(ValueError, match="scorer"):
        score_pair(c1, c2, "euclid")


def test_layer_average_and_zscore():
    v = np.arange(2 * 4 * 3, dtype=float).reshape(2, 4, 3)          # hidden states 0..3
    np.testing.assert_allclose(layer_average(v, [0, 1, 2, 3], 2), v[:, 2:4].mean(1))
    np.testing.assert_allclose(layer_average(v, [0, 1, 2, 3], [1]), v[:, 1])
    with pytest.raises(ValueError, match="between 1 and"):
        layer_average(v, [0, 1, 2, 3], 9)
    with pytest.raises(ValueError, match="not extracted"):
        layer_average(v[:, :1], [3], [1])
    X = np.random.default_rng(0).normal(3, 2, size=(50, 4))
    Z = zscore(X)
    np.testing.assert_allclose(Z.mean(0), 0, atol=1e-12)
    np.testing.assert_allclose(Z.std(0), 1, atol=1e-12)
    X[:, 2] = 7.0                                                     # a constant dimension: centred, not divided by 0
    Z = zscore(X)
    assert np.isfinite(Z).all() and np.allclose(Z[:, 2], 0.0)


def test_check_layers_accepts_every_layer_the_encoder_has_and_refuses_the_rest():
    check_layers(6, 6)                                  # all six layers
    check_layers(1, 6)
    check_layers([0, 3, 6], 6)                          # 0 = the embedding output, 6 = the last layer
    for bad in (0, 7):
        with pytest.raises(ValueError, match="between 1 and the encoder's 6 layers"):
            check_layers(bad, 6)
    for bad in ([-1, 2], [2, 7]):
        with pytest.raises(ValueError, match="numbered 0 \\(embeddings\\) to 6"):
            check_layers(bad, 6)


def make_tv(n=8, seed=0, D=6, missing_word=None):
    """Two words: 'moved' changes direction between periods, 'still' does not."""
    rng = np.random.default_rng(seed)
    usages, vecs = [], []
    for w, shift in (("moved", 3.0), ("still", 0.0), ("gone", 0.0)):
        for p in ("old", "new"):
            if w == missing_word and p == "new":
                continue
            for i in range(n):
                usages.append(TargetUsage(w, p, f"a {w} here", 2, 2 + len(w)))
                base = np.eye(D)[0] + (np.eye(D)[1] * shift if p == "new" else 0)
                vecs.append(np.stack([base + rng.normal(0, .1, D)] * 3))
    return TargetVectors(np.array(vecs, dtype=np.float32), usages, [0, 1, 2], np.ones(len(usages), int),
                         np.zeros(len(usages), bool))


@pytest.mark.parametrize("scorer", ["cosine", "prt", "apd", "apd-within", "jsd"])
def test_score_words_ranks_the_moved_word_first(scorer):
    df = score_words(make_tv(), ["old", "new"], scorer=scorer, layers=2)
    assert df.iloc[0]["word"] == "moved" and df.iloc[0]["rank"] == 1
    assert list(df.columns) == ["word", "score", "rank", "n_old", "n_new", "note"]
    assert df.attrs["scorer"] == scorer and df.attrs["layers"] == 2


def test_missing_period_scores_nan_and_is_reported():
    with pytest.warns(UserWarning, match="no usages in one period"):
        df = score_words(make_tv(missing_word="gone"), ["old", "new"], layers=1)
    row = df.set_index("word").loc["gone"]
    assert np.isnan(row["score"]) and "new" in row["note"] and row["n_new"] == 0
    truth = pd.DataFrame({"word": ["moved", "still", "gone"], "graded": [0.9, 0.1, 0.5]})
    out = correlate(df, truth)
    assert out["n"] == 2 and out["n_dropped"] == 1 and out["dropped"] == ["gone"]


def test_seeded_subsample():
    tv = make_tv(n=20)
    a = score_words(tv, ["old", "new"], n=5, seed=3, layers=1)
    b = score_words(tv, ["old", "new"], n=5, seed=3, layers=1)
    c = score_words(tv, ["old", "new"], n=5, seed=4, layers=1)
    pd.testing.assert_frame_equal(a, b)
    assert (a["n_old"] == 5).all()
    assert not np.allclose(a.set_index("word")["score"], c.set_index("word")["score"])
    # a subsample draws distinct usages: 8 of 10 mutually orthogonal usages per period have every
    # within-period distance 1, and every distance across periods is 1, so APD-within is exactly 0
    eye = np.eye(20, dtype=np.float32)
    usages = [TargetUsage("w", p, "a w here", 2, 3) for p in ("old", "new") for _ in range(10)]
    distinct = TargetVectors(np.stack([np.stack([eye[i]] * 2) for i in range(20)]), usages, [0, 1],
                             np.ones(20, int), np.zeros(20, bool))
    assert score_words(distinct, ["old", "new"], scorer="apd-within", n=8, layers=1)["score"].iloc[0] == \
        pytest.approx(0.0, abs=1e-6)
    # a word's subsample is its own: scoring it alone or beside the other targets gives the same score
    alone = score_words(tv, ["old", "new"], n=5, seed=3, layers=1, words=["still"])
    assert alone.set_index("word").loc["still", "score"] == a.set_index("word").loc["still", "score"]


def test_correlate_matches_scipy_with_p_values():
    rng = np.random.default_rng(1)
    words = [f"w{i}" for i in range(12)]
    truth = pd.DataFrame({"word": words, "graded": rng.random(12)})
    scores = pd.DataFrame({"word": words[::-1], "score": (truth["graded"] + rng.normal(0, .2, 12)).to_numpy()[::-1]})
    out = correlate(scores, truth)
    rho, p = stats.spearmanr(scores.set_index("word").loc[words, "score"], truth["graded"])
    r, pp = stats.pearsonr(scores.set_index("word").loc[words, "score"], truth["graded"])
    assert out["spearman"] == pytest.approx(rho) and out["spearman_p"] == pytest.approx(p)
    assert out["pearson"] == pytest.approx(r) and out["pearson_p"] == pytest.approx(pp)
    assert out["n"] == 12 and out["n_dropped"] == 0


def test_correlate_needs_three_words_and_two_values_on_each_side():
    truth = pd.DataFrame({"word": list("abc"), "graded": [0.1, 0.2, 0.3]})
    assert correlate({"a": 1.0, "b": 2.0, "c": 3.0}, truth)["spearman"] == pytest.approx(1.0)   # three are enough
    assert correlate({"a": 1.0, "b": 1.0, "c": 3.0}, truth)["spearman"] == pytest.approx(np.sqrt(3) / 2)
    assert np.isnan(correlate({"a": 1.0, "b": 2.0}, truth)["spearman"])                      # two words
    assert np.isnan(correlate({"a": 1.0, "b": 1.0, "c": 1.0}, truth)["spearman"])           # constant scores
    flat = truth.assign(graded=0.5)
    assert np.isnan(correlate({"a": 1.0, "b": 2.0, "c": 3.0}, flat)["pearson"])             # constant truth
    two = truth.assign(graded=[0.0, 0.0, 1.0])                                              # two truth values
    assert correlate({"a": 1.0, "b": 2.0, "c": 3.0}, two)["spearman"] == pytest.approx(np.sqrt(3) / 2)
    with pytest.raises(ValueError, match="expected columns 'word' and 'score'"):
        correlate(pd.DataFrame({"word": ["a"]}), truth)


def test_spearman_interval_from_three_words_on():
    truth = pd.DataFrame({"word": list("abc"), "graded": [0.1, 0.2, 0.3]})
    lo, hi = spearman_ci({"a": 1.0, "b": 2.0, "c": 3.0}, truth, n_boot=200)
    assert lo == pytest.approx(1.0) and hi == pytest.approx(1.0)   # every resample of a perfect ranking has rho 1
    assert np.isnan(spearman_ci({"a": 1.0, "b": 2.0}, truth)[0])


def test_oracle_threshold_with_no_changed_word_labels_none_changed():
    out = binary_accuracy({"a": 0.9, "b": 0.5, "c": 0.1}, pd.DataFrame({"word": list("abc"), "binary": [0, 0, 0]}))
    assert out["accuracy"] == 1.0 and out["recall"] == 0.0
    at = binary_accuracy({"a": 0.9, "b": 0.5, "c": 0.1}, pd.DataFrame({"word": list("abc"), "binary": [1, 0, 0]}),
                         threshold=0.5)
    assert at["accuracy"] == 1.0                          # score > threshold: a word at the threshold is unchanged


def test_binary_accuracy_thresholds():
    scores = {"a": 0.9, "b": 0.8, "c": 0.2, "d": 0.1}
    truth = pd.DataFrame({"word": list("abcd"), "binary": [1, 0, 1, 0]})
    assert binary_accuracy(scores, truth, threshold=0.5)["accuracy"] == pytest.approx(0.5)
    out = binary_accuracy(scores, truth)                 # top-2 (truth rate) labelled changed
    assert out["accuracy"] == pytest.approx(0.5) and out["threshold"] == pytest.approx(0.8, abs=1e-9)
    assert binary_accuracy(scores, truth, threshold=0.85)["accuracy"] == pytest.approx(0.75)
    low = binary_accuracy(scores, truth, threshold=0.15)             # a, b, c labelled changed; a and c are
    assert low["precision"] == pytest.approx(2 / 3) and low["recall"] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="threshold"):
        binary_accuracy(scores, truth, threshold="mean")
    t = rank_table(scores, pd.DataFrame({"word": list("abcd"), "graded": [.4, .3, .2, .1]}))
    assert t["pred_rank"].tolist() == [1, 2, 3, 4] and t["true_rank"].tolist() == [1, 2, 3, 4]
    assert "index" not in t.columns and t.index.tolist() == [0, 1, 2, 3]
