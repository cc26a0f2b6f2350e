"""Every stream classifier checks its labels the same way (tempo_analysis.stream.labels): training
timelines with no labelled post and a dev split with no labelled post are refused by name, and one
labelled post is enough; the trained baselines learn from every labelled post and no other."""

import numpy as np
import pytest

from tempo_analysis.causal_lm import tiny_causal_lm
from tempo_analysis.encoders import tiny_encoder
from tempo_analysis.stream.experiment import MODELS, make_classifier

from .conftest import make_timelines

TINY = ("tempoformer", "post_encoder", "robert")                 # fine-tuned encoders: a tiny random one


@pytest.fixture(scope="module")
def splits():
    tl = make_timelines(n_timelines=6, n_posts=(5, 4, 6), labels=("calm", "shift"), seed=2)
    return tl.subset(tl.timeline_ids[:4]), tl.subset(tl.timeline_ids[4:])


def unlabelled(tl, keep: int | None = None):
    """A copy of ``tl`` with every label removed, except the post at row ``keep``."""
    out = tl.subset(tl.timeline_ids)
    labels = out.df["label"].copy()
    out.df["label"] = None
    if keep is not None:
        out.df.loc[out.df.index[keep], "label"] = labels.iloc[keep]
    return out


def build(name, tokenizer=None):
    if name == "llm_few_shot":
        lm = tiny_causal_lm(tokenizer=tokenizer, n_layer=1, n_embd=16, n_head=2, n_positions=1024).eval()
        return make_classifier(name, llm=(lm, tokenizer), window=2, shots=1, seed=0)
    enc = tiny_encoder(hidden=16, layers=2, heads=2, seed=0) if name in TINY else "default"
    return make_classifier(name, encoder=enc, window=3, epochs=1, seed=0, progress=False, device="cpu",
                           reduced_dim=3, swnu_hidden=4, sig_depth=2, seq_hidden=5, hidden=None)


@pytest.mark.parametrize("name", MODELS)
def test_training_timelines_without_a_labelled_post_are_refused(name, splits, tokenizer):
    train, _ = splits
    assert train.label_names == ["calm", "shift"]                 # the names are known, the labels are gone
    with pytest.raises(ValueError, match="every training post is unlabelled.*Fix: pass training timelines"):
        build(name, tokenizer).fit(unlabelled(train))


@pytest.mark.parametrize("name", MODELS)
def test_training_timelines_without_a_label_column_are_refused(name, splits, tokenizer):
    from tempo_analysis.data import Timelines

    train, _ = splits
    bare = Timelines.from_frame(train.df.drop(columns=["label", "seconds"]), time_unit="s", min_posts=1)
    assert not bare.label_names
    with pytest.raises(ValueError, match="column 'label': the training timelines have no labels. Fix: pass Timelines"):
        build(name, tokenizer).fit(bare)


@pytest.mark.parametrize("name", [m for m in MODELS if m not in ("random", "llm_few_shot")])
def test_a_dev_split_without_a_labelled_post_is_refused_and_one_labelled_post_trains(name, splits):
    train, dev = splits
    with pytest.raises(ValueError, match="dev timelines have no labelled post.*or pass dev=None"):
        build(name).fit(train, unlabelled(dev))
    clf = build(name).fit(unlabelled(train, keep=0), unlabelled(dev, keep=0))  # a post of the first class
    assert train.label_codes()[0] == 0 and clf.label_names_ == ["calm", "shift"]
    assert np.allclose(clf.predict_proba(dev).sum(1), 1, atol=1e-5)
    assert "macro_f1" in clf.history_[-1]                           # the one labelled dev post is scored
    no_dev = build(name).fit(train, None)                            # no dev split: nothing to score
    assert not any("macro_f1" in h for h in no_dev.history_)



@pytest.mark.parametrize("name", ["ffn_history", "bilstm", "time_bilstm", "swnu", "post_encoder", "tempoformer_vectors"])
def test_every_labelled_post_of_every_class_is_an_example_and_no_unlabelled_one(name, splits, monkeypatch):
    """The trained baselines build their examples from the rows with a label: class 0 included."""
    full_train, dev = splits
    train = full_train.subset(full_train.timeline_ids)
    train.df.loc[train.df.index[[1, 4]], "label"] = None            # two unlabelled posts in training
    clf, rows = build(name), []
    real = type(clf)._dataset
    monkeypatch.setattr(type(clf), "_dataset", lambda self, tl, codes, r: rows.append(list(r)) or real(self, tl, codes, r))
    clf.fit(train, dev)
    codes, dcodes = train.label_codes(), dev.label_codes()
    assert (codes == 0).any() and (dcodes == 0).any() and (codes < 0).sum() == 2
    assert rows == [list(np.flatnonzero(codes >= 0)), list(np.flatnonzero(dcodes >= 0))]
