"""The context index (one contextual vector per content-word occurrence) and the σ_sim table, on a
tiny random BERT: which occurrences are kept, how they are encoded, and how the table is cut and
sorted. The notebook's analyses read both, so a wrong filter or order changes every map."""
import numpy as np
import pandas as pd
import pytest
import torch

from tempo_analysis.diffusion.analysis import build_context_index, example_sentence, sim_table
from tempo_analysis.diffusion.model import DCWEForMaskedLM, content_vocabulary
from tempo_analysis.encoders import tiny_encoder

TEXTS = ["The cloud stores data on a remote server.", "Rain falls from the dark cloud, 123 times.",
         "We train unforgettable networks on data.", "A storm cloud over the hills.",
         "Server data in the cloud.", "The server and the cloud."]
UNITS = ["a", "b", "a", "b", "a", "a"]
TIMES = [0, 0, 1, 1, 0, 0]


@pytest.fixture(scope="module")
def bert():
    model, tok = tiny_encoder(seed=0)
    return model.eval(), tok


def _frame(texts=TEXTS, units=UNITS, times=TIMES):
    return pd.DataFrame({"doc_id": [f"d{i}" for i in range(len(texts))], "unit": units, "time": times,
                         "text": texts})


def _index(bert, frame=None, **kw):
    model, tok = bert
    return build_context_index(model, tok, _frame() if frame is None else frame, [0, 1], {"a": 0, "b": 1},
                               progress=False, **kw)


def test_only_alphabetic_content_words_are_indexed_lower_cased(bert):
    index = _index(bert)
    counts = index.counts()
    assert counts["cloud"] == 5 and counts["server"] == 3 and counts["data"] == 3
    assert "unforgettable" in counts                        # several word pieces: one occurrence
    for dropped in ("the", "on", "a", "from", "we", "and", "123", ",", "."):
        assert dropped not in counts, dropped
    assert all(w == w.lower() for w in index.words)
    assert len(index.word_id) == len(index.vectors) == len(index.unit) == len(index.time) == len(index.doc_id)
    # each occurrence keeps its document's unit and slice
    cloud = index.mask("cloud")
    assert sorted(index.doc_id[cloud]) == ["d0", "d1", "d3", "d4", "d5"]
    assert list(index.unit[cloud]) == [UNITS[int(d[1:])] for d in index.doc_id[cloud]]
    assert list(index.time[cloud]) == [TIMES[int(d[1:])] for d in index.doc_id[cloud]]
    assert index.units == ["a", "b"] and index.slices == [0, 1]
    assert index.texts["d2"] == TEXTS[2]


def test_words_restricts_the_index_to_those_words(bert):
    index = _index(bert, words=["Cloud", "server"])
    assert sorted(index.words) == ["cloud", "server"]
    assert index.counts().to_dict() == {"cloud": 5, "server": 3}


def test_a_vector_is_the_mean_of_its_word_pieces_over_the_encoders_layers(bert):
    model, tok = bert
    index = _index(bert)
    enc = tok([TEXTS[2]], return_tensors="pt", return_offsets_mapping=True)
    with torch.no_grad():
        hs = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"],
                   output_hidden_states=True).hidden_states
    assert len(hs) == 3                                      # embeddings + 2 layers: both layers are read
    layer_mean = torch.stack([hs[1], hs[2]]).mean(0)[0]
    offsets = enc["offset_mapping"][0].tolist()
    word_of = enc.word_ids(0)
    start = TEXTS[2].index("unforgettable")
    w = next(word_of[j] for j, (a, _) in enumerate(offsets) if word_of[j] is not None and a == start)
    pieces = [j for j in range(len(word_of)) if word_of[j] == w]
    assert len(pieces) > 1                                   # the word really is split
    want = layer_mean[pieces].mean(0).numpy()
    got = index.vectors[index.mask("unforgettable")][0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    # the chosen layers are used: the first layer alone gives another vector
    first = build_context_index(model, tok, _frame(), [0, 1], {"a": 0, "b": 1}, layers=[1], progress=False)
    assert not np.allclose(first.vectors[first.mask("unforgettable")][0], want, atol=1e-4)


def test_max_docs_per_unit_slice_keeps_a_seeded_sample_of_each_group(bert):
    full = _index(bert)
    capped = _index(bert, max_docs_per_unit_slice=1, seed=0)
    kept = sorted(set(capped.doc_id))
    groups = {(UNITS[int(d[1:])], TIMES[int(d[1:])]) for d in kept}
    assert len(kept) == len(groups) == 4                      # (a,0) (b,0) (a,1) (b,1): one document each
    assert sorted(set(full.doc_id)) == [f"d{i}" for i in range(6)]
    assert sorted(set(_index(bert, max_docs_per_unit_slice=1, seed=0).doc_id)) == kept      # seeded
    others = {tuple(sorted(set(_index(bert, max_docs_per_unit_slice=1, seed=s).doc_id))) for s in range(1, 8)}
    assert len(others | {tuple(kept)}) > 1                    # another seed can keep other documents of (a, 0)
    assert set(capped.texts) == set(kept)


def test_texts_without_a_content_word_and_slow_tokenizers_are_refused(bert):
    model, tok = bert
    with pytest.raises(ValueError, match="no content word"):
        _index(bert, frame=_frame(["The and of.", "We are on it."], ["a", "b"], [0, 1]))
    with pytest.raises(ValueError, match="no content word"):
        _index(bert, words=["absent"])

    class Slow:
        is_fast = False

    class Unknown:                 # says nothing about being fast: not trusted with offsets either
        pass
    for slow in (Slow(), Unknown()):
        with pytest.raises(ValueError, match="fast tokenizer"):
            build_context_index(model, slow, _frame(), [0, 1], {"a": 0, "b": 1}, progress=False)


def test_texts_are_cut_at_max_length_tokens(bert):
    long = "cloud " * 10 + "server"
    index = _index(bert, frame=_frame([long], ["a"], [0]), max_length=6)    # [CLS] + 4 words + [SEP]
    assert index.counts().to_dict() == {"cloud": 4}


def test_require_names_the_most_frequent_words(bert):
    index = _index(bert)
    with pytest.raises(ValueError, match=r"'absent' never occurs.*e\.g\. \['cloud'"):
        index.require("absent")
    index.require("Cloud")                                    # case does not matter


def test_example_sentence_shortens_a_long_text_to_200_characters():
    assert example_sentence("x" * 200, "cloud") == "x" * 200
    short = example_sentence("x" * 201, "cloud")
    assert len(short) == 200 and short.endswith("...")


# ---- sim_table -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def dcwe():
    texts = TEXTS + ["Cloud rain storm.", "Storm rain cloud.", "Remote hills."]
    return _dcwe(texts)


def _dcwe(texts):
    enc, tok = tiny_encoder(head="mlm", seed=0)
    m = DCWEForMaskedLM.from_encoder(enc, node_features=torch.randn(2, 8, generator=torch.Generator().manual_seed(0)),
                                     edge_index=[[0, 1], [1, 0]], dynamic_token_ids=content_vocabulary(texts, tok),
                                     units=["a", "b"], slices=[0, 1], social_dim=6, gat_heads=2)
    with torch.no_grad():          # non-zero offsets, as after training
        for ffn in m.dynamic.ffns:
            ffn.fc2.weight.normal_(0, 0.2, generator=torch.Generator().manual_seed(1))
            ffn.fc2.bias.normal_(0, 0.2, generator=torch.Generator().manual_seed(2))
    return m.eval(), tok, texts


def test_sim_table_sorts_by_sigma_and_keeps_words_with_enough_contexts(dcwe):
    m, tok, texts = dcwe
    frame = _frame(texts, ["a", "b", "a", "b", "a", "a", "b", "a", "b"], [0, 0, 1, 1, 0, 1, 1, 0, 0])
    table, sims = sim_table(m, tok, frame, top=50, min_contexts=1)
    assert list(table.index) == list(range(len(table)))
    assert list(table.columns) == ["word", "sigma_sim", "mean_sim", "contexts", "above_context", "above_sim",
                                   "above_text", "below_context", "below_sim", "below_text"]
    assert list(sims.columns) == ["word", "unit", "time", "sim", "doc_id"]
    assert table["sigma_sim"].is_monotonic_decreasing and table["sigma_sim"].iloc[0] > table["sigma_sim"].iloc[-1]
    contexts = sims.groupby("word").size()
    assert dict(zip(table["word"], table["contexts"])) == contexts.to_dict()
    row = table.set_index("word").loc["cloud"]
    cloud = sims[sims["word"] == "cloud"]
    assert row["mean_sim"] == pytest.approx(cloud["sim"].mean())
    assert row["sigma_sim"] == pytest.approx(cloud["sim"].std(ddof=0))
    best, worst = cloud.loc[cloud["sim"].idxmax()], cloud.loc[cloud["sim"].idxmin()]
    assert row["above_context"] == f"{best['unit']} @ {best['time']}" and row["above_sim"] == best["sim"]
    assert row["below_context"] == f"{worst['unit']} @ {worst['time']}" and row["below_sim"] == worst["sim"]
    assert "cloud" in row["above_text"].lower()
    # one (word, unit, time) context per row of sims, however often the word occurs there
    assert not sims.duplicated(["word", "unit", "time"]).any()
    assert contexts["cloud"] == 4                             # a@0, b@0, b@1, a@1
    # min_contexts: a word with exactly that many contexts stays, one with fewer goes
    assert set(sim_table(m, tok, frame, top=50, min_contexts=4)[0]["word"]) == set(contexts[contexts >= 4].index)
    assert "cloud" in set(contexts[contexts >= 4].index)
    with pytest.raises(ValueError, match="min_contexts=5"):
        sim_table(m, tok, frame, top=50, min_contexts=5)
    # top cuts the sorted table
    assert sim_table(m, tok, frame, top=2, min_contexts=1)[0]["word"].tolist() == table["word"].head(2).tolist()


def test_sim_table_reads_whole_words_averaging_their_pieces():
    """σ_sim is per word, not per token id (paper fn. 14): "snowstorm" is two WordPiece pieces,
    snow + ##storm, of which only "snow" has offsets. Its sim is the cosine of the means of its
    pieces' static and dynamic embeddings, its label and example sentences are the whole word, and
    a bare "snow" elsewhere is another word."""
    texts = ["A snowstorm over the hills.", "The snowstorm hit the cloud server.", "Snowstorm warnings today.",
             "Fresh snow on the hills.", "The cloud over the hills."]
    m, tok, _ = _dcwe(texts)
    assert tok.tokenize("snowstorm") == ["snow", "##storm"]
    snow, storm = tok.convert_tokens_to_ids(["snow", "##storm"])
    assert snow in m.dynamic_token_ids and storm not in m.dynamic_token_ids
    frame = _frame(texts, ["a", "b", "a", "b", "a"], [0, 0, 1, 1, 1])
    table, sims = sim_table(m, tok, frame, top=50, min_contexts=1)
    assert not sims["word"].str.startswith("##").any()
    storm_rows = sims[sims["word"] == "snowstorm"]
    assert sorted(zip(storm_rows["unit"], storm_rows["time"])) == [("a", 0), ("a", 1), ("b", 0)]
    assert list(sims.loc[sims["word"] == "snow", "doc_id"]) == ["d3"]     # the bare word only
    slice_of, unit_of = {0: 0, 1: 1}, {"a": 0, "b": 1}
    for _, r in storm_rows.iterrows():
        e, d = m.static_and_dynamic([snow, storm], [unit_of[r["unit"]]] * 2, [slice_of[r["time"]]] * 2)
        want = torch.nn.functional.cosine_similarity(e.mean(0), d.mean(0), dim=0)
        assert r["sim"] == pytest.approx(float(want), abs=1e-6)
        e1, d1 = m.static_and_dynamic([snow], [unit_of[r["unit"]]], [slice_of[r["time"]]])
        assert r["sim"] != pytest.approx(float(torch.nn.functional.cosine_similarity(e1[0], d1[0], dim=0)),
                                         abs=1e-6)               # not the first piece alone
    row = table.set_index("word").loc["snowstorm"]
    assert "snowstorm" in row["above_text"].lower() and "snowstorm" in row["below_text"].lower()
    assert row["above_text"] in texts and row["below_text"] in texts


def test_sim_table_refuses_texts_without_dynamic_words_or_enough_contexts(dcwe):
    m, tok, _ = dcwe
    with pytest.raises(ValueError, match="no dynamic-vocabulary word"):
        sim_table(m, tok, _frame(["The and of."], ["a"], [0]))
    with pytest.raises(ValueError, match="min_contexts=9"):
        sim_table(m, tok, _frame(["The cloud."], ["a"], [0]), min_contexts=9)
