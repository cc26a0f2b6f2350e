"""DCWE for classification at its edges: which parameters each learning rate moves, the padding of a
batch, the test scores against the classifier's own predictions, prediction in small batches, labels
that are missing or blank, a single class, and a corpus too small to hold a dev split."""
import networkx as nx
import numpy as np
import pandas as pd
import pytest
import torch

from tempo_analysis.data import SocialCorpus
from tempo_analysis.diffusion.classify import SocialClsDataset, collate_cls, train_dcwe_classifier
from tempo_analysis.diffusion.corpora import split_corpus
from tempo_analysis.encoders import tiny_encoder
from tempo_analysis.evaluation.classification import classification_scores
from tempo_analysis.world import SocialWorldConfig, generate_social

SMALL = SocialWorldConfig(n_units=12, n_communities=2, n_slices=3, n_changing=2, n_stable=1, docs_per_word=2,
                          speed=2, n_seeds=1, seed=0, paired_layout="all")
TINY = dict(node2vec=dict(dim=8, num_walks=2, walk_length=10), social_dim=8, gat_heads=2, progress=False)


@pytest.fixture(scope="module")
def corpus():
    return generate_social(SMALL)[0]      # label column "sense": the sense of "cloud", empty for chatter


def _weights(module):
    return {n: p.detach().clone() for n, p in module.named_parameters()}


def _moved(before, module):
    return {n for n, p in module.named_parameters() if not torch.equal(before[n], p.detach())}


def test_lr_moves_the_body_and_dynamic_lr_the_offsets(corpus):
    """Two parameter groups: `lr` for the encoder and head, `dynamic_lr` for the GATs and offset FFNs."""
    enc, tok = tiny_encoder(seed=0)
    start = _weights(enc)
    clf = train_dcwe_classifier(corpus, "sense", (enc, tok), max_steps=2, batch_size=8, lr=1e-2, dynamic_lr=0.0, **TINY)
    assert _moved(start, clf.model.encoder)
    assert all(f.fc2.weight.abs().max() == 0 for f in clf.model.dynamic.ffns)   # fc2 starts at zero

    enc, tok = tiny_encoder(seed=0)
    start = _weights(enc)
    clf = train_dcwe_classifier(corpus, "sense", (enc, tok), max_steps=2, batch_size=8, lr=1e-9, dynamic_lr=1e-2, **TINY)
    drift = max((p.detach() - start[n]).abs().max().item() for n, p in clf.model.encoder.named_parameters())
    assert drift < 1e-6
    assert max(f.fc2.weight.abs().max().item() for f in clf.model.dynamic.ffns) > 1e-3


@pytest.fixture(scope="module")
def trained(corpus):
    enc, tok = tiny_encoder(seed=0)
    return train_dcwe_classifier(corpus, "sense", (enc, tok), epochs=1, batch_size=8, lr=1e-3, dynamic_lr=1e-3,
                                 **TINY)


def test_test_scores_are_the_classifiers_own_predictions_on_the_test_split(corpus, trained):
    labelled = corpus.df[corpus.df["sense"] != ""].reset_index(drop=True)
    _, _, test = split_corpus(SocialCorpus(labelled, corpus.graph, corpus.slices), seed=0)
    code = {n: i for i, n in enumerate(trained.label_names)}
    predicted = [code[x] for x in trained.predict(test)]
    assert trained.scores_ == classification_scores([code[x] for x in test["sense"]], predicted, trained.label_names)
    assert sum(trained.scores_["support"].values()) == len(test)


def test_predict_in_small_batches_matches_one_batch(corpus, trained):
    rows = corpus.df[corpus.df["sense"] != ""].head(7)
    one = trained.predict(rows, batch_size=32)
    assert trained.predict(rows, batch_size=3) == one and len(one) == 7
    assert trained.predict(rows.head(1)) == one[:1]


def test_collate_pads_and_masks_each_row_to_its_length(corpus):
    _, tok = tiny_encoder(seed=0)
    frame = corpus.df.head(3)
    ds = SocialClsDataset(frame, tok, corpus.unit_index, corpus.slice_index, [1, 0, 1])
    b = collate_cls(tok.pad_token_id)([ds[0], ds[1], ds[2]])
    lengths = [len(ds[i]["input_ids"]) for i in range(3)]
    assert b["input_ids"].shape == (3, max(lengths)) and b["attention_mask"].sum(1).tolist() == lengths
    for i, n in enumerate(lengths):
        assert b["input_ids"][i, :n].tolist() == list(ds[i]["input_ids"])
        assert (b["input_ids"][i, n:] == tok.pad_token_id).all()
    assert b["labels"].tolist() == [1, 0, 1]
    assert b["unit_ids"].tolist() == [corpus.unit_index[u] for u in frame["unit"]]
    assert b["slice_ids"].tolist() == [corpus.slice_index[t] for t in frame["time"]]


def _hand_corpus(labels, per_slice=4):
    """Three units on a path, two slices, `per_slice` documents in each (round(0.1 * 4) = 0: no dev split)."""
    rows = [{"unit": "abc"[i % 3], "time": t, "text": f"the cloud and the server number {i} in year {t}"}
            for t in (0, 1) for i in range(per_slice)]
    df = pd.DataFrame(rows)
    df["label"] = [labels[i % len(labels)] for i in range(len(df))]
    return SocialCorpus.from_frame(df, nx.path_graph(["a", "b", "c"]), slices=[0, 1])


def test_a_corpus_without_a_dev_split_trains_on_the_loss():
    corpus = _hand_corpus(["yes", "no"])
    assert len(split_corpus(corpus)[1]) == 0
    enc, tok = tiny_encoder(seed=0)
    clf = train_dcwe_classifier(corpus, "label", (enc, tok), epochs=1, batch_size=4, **TINY)
    assert clf.label_names == ["no", "yes"] and 0 <= clf.scores_["macro_f1"] <= 1


def test_missing_and_blank_labels_are_dropped_and_counted():
    corpus = _hand_corpus(["yes", None, "no", ""], per_slice=8)
    enc, tok = tiny_encoder(seed=0)
    clf = train_dcwe_classifier(corpus, "label", (enc, tok), epochs=1, batch_size=4, **TINY)
    assert clf.dropped_unlabelled_ == 8 and clf.label_names == ["no", "yes"]


def test_one_class_is_refused_by_name():
    corpus = _hand_corpus(["yes", None])
    enc, tok = tiny_encoder(seed=0)
    with pytest.raises(ValueError, match=r"'label' has 1 distinct label\(s\) \['yes'\]; need at least 2"):
        train_dcwe_classifier(corpus, "label", (enc, tok), **TINY)
    np.testing.assert_equal(len(corpus.df), 8)     # the corpus itself is left as it was


def test_too_few_labelled_documents_for_a_test_split_are_refused():
    corpus = _hand_corpus(["yes", "no"], per_slice=2)     # round(0.2 * 2) = 0 test documents per slice
    enc, tok = tiny_encoder(seed=0)
    with pytest.raises(ValueError, match="the test split is empty .4 labelled documents"):
        train_dcwe_classifier(corpus, "label", (enc, tok), **TINY)


def test_predict_cuts_documents_where_training_did(corpus, monkeypatch):
    import tempo_analysis.diffusion.classify as classify

    enc, tok = tiny_encoder(seed=0)
    clf = train_dcwe_classifier(corpus, "sense", (enc, tok), max_steps=1, batch_size=8, max_length=16, **TINY)
    seen = []
    real = classify.SocialClsDataset

    class Recording(real):
        def __init__(self, *args, **kw):
            super().__init__(*args, **kw)
            seen.append(max(len(x) for x in self.input_ids))

    monkeypatch.setattr(classify, "SocialClsDataset", Recording)
    long = corpus.df[corpus.df["sense"] != ""].head(2).assign(text=" ".join(["cloud server"] * 40))
    clf.predict(long)
    assert clf.max_length == 16 and seen == [16]


def test_node2vec_settings_reach_the_social_input(trained):
    assert tuple(trained.model.dynamic.node_features.shape) == (12, 8)      # TINY's node2vec dim, not the default 50


@pytest.mark.parametrize("per_slice, metric", [(10, "macro_f1"), (4, "loss")])
def test_the_best_weights_are_chosen_on_dev_macro_f1_when_there_is_a_dev_split(per_slice, metric, monkeypatch):
    import tempo_analysis.diffusion.classify as classify

    configs = []
    real = classify.Trainer

    def recording(model, config, **kw):
        configs.append((config, kw.get("eval_fn")))
        return real(model, config, **kw)

    monkeypatch.setattr(classify, "Trainer", recording)
    corpus = _hand_corpus(["yes", "no"], per_slice=per_slice)
    assert (len(split_corpus(corpus)[1]) > 0) == (metric == "macro_f1")
    enc, tok = tiny_encoder(seed=0)
    train_dcwe_classifier(corpus, "label", (enc, tok), epochs=1, batch_size=4, **TINY)
    (config, eval_fn), = configs
    assert config.metric == metric and config.greater_is_better == (metric == "macro_f1")
    assert (eval_fn is not None) == (metric == "macro_f1")
