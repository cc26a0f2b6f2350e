"""The embedded encoder's MLM adapter: the shipped asset is checked, and the merged model is a real masked LM."""
import shutil
import types
import warnings

import pytest
import torch

from tempo_analysis.data.locations import shared_data_dir
from tempo_analysis.encoder_mlm import (ASSET, ASSET_SHA256, AdapterNotAvailable, apply_adapter, brown_sentences,
                                        file_sha256, general_text, load_adapter, mlm_eval)
from tempo_analysis.encoders import load_encoder, tiny_encoder

# Brown held-out text is the honest test; these few general sentences keep a check on machines without it
SENTENCES = [
    "The president said that the government would raise taxes next year.",
    "She opened the door and walked into the kitchen to make some coffee.",
    "The children were playing in the garden when it started to rain.",
    "He has been working at the bank for more than ten years.",
    "We drove to the city on Sunday morning to visit my mother.",
    "The committee will meet again in two weeks to discuss the new plan.",
    "It was a cold night, and the wind was blowing from the north.",
    "The company reported a large increase in sales during the first quarter.",
    "I think that the best way to learn a language is to speak it every day.",
    "The old man sat by the fire and told stories about the war.",
    "After dinner they went for a long walk along the river.",
    "The students must finish their homework before they can go outside.",
] * 2


def _bare_mlm():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_encoder("default", head="mlm", adapter=False)


def test_shipped_asset_matches_its_sha256_and_is_small(tmp_path):
    assert ASSET.is_file() and file_sha256(ASSET) == ASSET_SHA256
    assert ASSET.stat().st_size <= 5 * 1024 * 1024
    from tempo_analysis.encoder_mlm import canonical_header

    copy = tmp_path / "asset.safetensors"
    shutil.copy(ASSET, copy)
    canonical_header(copy)
    assert file_sha256(copy) == ASSET_SHA256            # its header is the one save_adapter writes


def test_a_changed_asset_is_refused(tmp_path):
    bad = tmp_path / "adapter.safetensors"
    shutil.copy(ASSET, bad)
    data = bytearray(bad.read_bytes())
    data[-100] ^= 0xFF
    bad.write_bytes(bytes(data))
    with pytest.raises(AdapterNotAvailable, match="sha256"):
        load_adapter(bad)
    with pytest.raises(AdapterNotAvailable, match="missing"):
        load_adapter(tmp_path / "nope.safetensors")


def test_default_mlm_loads_the_adapter_silently_and_stays_tied():
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # no "no pretrained MLM head" warning any more
        model, _ = load_encoder("default", head="mlm")
    assert model.cls.predictions.decoder.weight.data_ptr() == model.bert.embeddings.word_embeddings.weight.data_ptr()
    with pytest.warns(UserWarning, match="no pretrained MLM head"):
        load_encoder("default", head="mlm", adapter=False)


def test_adapter_for_another_shape_is_refused():
    state, cfg, _ = load_adapter()
    tiny, tok = tiny_encoder(head="mlm")
    with pytest.raises(AdapterNotAvailable, match="different base model"):
        apply_adapter(tiny, state, cfg, tok.mask_token_id)


def _top5(model, tok, sents):
    return mlm_eval(model, tok, sents, seed=0, batch_size=16)


def test_mlm_beats_the_unigram_prior_and_a_zeroed_adapter_does_not():
    model, tok = load_encoder("default", head="mlm")
    good = _top5(model, tok, SENTENCES)
    assert good["top5"] >= good["unigram_top5"] + 0.15, good
    # the break: the adapter's low-rank updates zeroed (head kept) -> the body is the sentence encoder again
    state, cfg, _ = load_adapter()
    zeroed = {k: (torch.zeros_like(v) if k.startswith("lora.") else v) for k, v in state.items()}
    bare, _ = _bare_mlm()
    broken = _top5(apply_adapter(bare, zeroed, cfg, tok.mask_token_id), tok, SENTENCES)
    assert broken["top5"] < good["top5"] - 0.15, (good, broken)


@pytest.mark.realdata
def test_mlm_beats_the_unigram_prior_on_held_out_brown():
    root = shared_data_dir()
    if root is None or not (root / "nltk_data" / "corpora" / "brown").is_dir():
        pytest.skip("../shared/data/nltk_data/corpora/brown is absent")
    sents = brown_sentences(root, 80, seed=1)
    model, tok = load_encoder("default", head="mlm")
    res = _top5(model, tok, sents)
    assert res["top5"] >= 0.35 and res["top5"] >= res["unigram_top5"] + 0.12, res


def test_an_adapter_file_round_trips_its_tensors_rank_and_alpha_byte_for_byte(tmp_path):
    """The same state and metadata give the same bytes (safetensors alone writes its metadata in a hash
    map's order, so every write of the shipped adapter had another sha256)."""
    import json
    import struct

    from tempo_analysis.encoder_mlm import AdapterConfig, load_adapter, save_adapter

    state = {"lora.q.B": torch.arange(6.0).reshape(3, 2), "lora.q.A": torch.ones(2, 3), "head.bias": torch.zeros(4)}
    cfg = AdapterConfig(rank=2, alpha=5.0)
    meta = {f"setting_{c}": i for i, c in enumerate("hgfedcba")}
    path = tmp_path / "new" / "folder" / "adapter.safetensors"          # folders made as needed
    digest = save_adapter(path, state, cfg, **meta)
    back, back_cfg, back_meta = load_adapter(path, sha256=digest)
    assert back_cfg == cfg and back_meta["setting_a"] == "7"
    assert set(back) == set(state) and all(torch.equal(back[k], state[k]) for k in state)
    raw = path.read_bytes()
    header = json.loads(raw[8:8 + struct.unpack("<Q", raw[:8])[0]])
    assert list(header["__metadata__"]) == sorted(header["__metadata__"])
    assert {save_adapter(path, state, cfg, **meta) for _ in range(3)} == {digest}   # the same bytes every time


def _fake_shared_data(root):
    """A shared data folder in the original formats, a few lines of each corpus the adapter reads."""
    corpora = root / "nltk_data" / "corpora"
    for name in ("gutenberg", "inaugural", "state_union"):
        (corpora / name).mkdir(parents=True)
        (corpora / name / "a.txt").write_text(f"[{name} 1900]\n\nThe {name} book has a sentence here. Too short.\n")
    (corpora / "switchboard").mkdir()
    (corpora / "switchboard" / "transcript").write_text(
        "A.1: well i think so too\nB.2: uh huh yes\nA.3: four words right here\n")
    (corpora / "brown").mkdir()
    (corpora / "brown" / "ca01").write_text(
        "\n".join(f"\tThe/at dog/nn number/nn {i}/cd ran/vbd ./." for i in range(10)) + "\n")
    acl = root / "acl_abstracts_by_year"
    acl.mkdir()
    long = "Word " + " ".join(["word"] * 60) + "."                      # 61 words
    for year in (2014, 2015, 2017):
        (acl / f"papers_{year}.txt").write_text(f"We study parsing in {year}. Tiny one. Three words here. {long} "
                                                "Four words right here.\n"
                                                f"Sixty words exactly: {' '.join(['w'] * 56)} end.\n")
    return root


def test_general_text_reads_every_source_but_brown_with_its_filters(tmp_path):
    root = _fake_shared_data(tmp_path)
    got = general_text(root, acl_years=(2015, 2016, 2017), nltk=("gutenberg", "inaugural", "state_union", "switchboard"))
    by = {}
    for source, sentence in got:
        by.setdefault(source, []).append(sentence)
    assert set(by) == {"gutenberg", "inaugural", "state_union", "switchboard", "acl2015", "acl2017"}   # never brown
    assert by["gutenberg"] == ["The gutenberg book has a sentence here."]
    assert by["switchboard"] == ["well i think so too", "four words right here"]   # tags gone, < 4 words dropped
    assert [s for s in by["acl2015"] + by["acl2017"] if "parsing" in s] == ["We study parsing in 2015.",
                                                                            "We study parsing in 2017."]
    assert sorted(len(s.split()) for s in by["acl2015"] + by["acl2017"]) == [4, 4, 5, 5, 60, 60]   # 4..60 words kept
    default = general_text(root)                                    # ADAPTER_TEXT: ACL 2010-2014 and Switchboard
    assert {source for source, _ in default} == {"switchboard", "acl2014"}
    assert [s for _, s in default if "parsing" in s] == ["We study parsing in 2014."]
    with pytest.raises(ValueError, match="brown is the held-out evaluation text"):
        general_text(root, nltk=("brown",))


def test_brown_sentences_are_a_seeded_sample_without_repeats_in_corpus_order(tmp_path):
    root = _fake_shared_data(tmp_path)
    every = brown_sentences(root)
    assert len(every) == 10 and every[3] == "The dog number 3 ran."
    for seed in (0, 1):
        some = brown_sentences(root, 9, seed=seed)
        assert len(set(some)) == 9 and some == sorted(some, key=every.index)
        assert some == brown_sentences(root, 9, seed=seed)
    assert brown_sentences(root, 6, seed=0) != brown_sentences(root, 6, seed=1)
    assert brown_sentences(root, 10) == every and brown_sentences(root, 50) == every


class _RankingMLM(torch.nn.Module):
    """Scores every position the same way: special tokens highest (they must be banned), then the
    given words in order, every other token 0."""

    def __init__(self, tok, words):
        super().__init__()
        self.scores = torch.nn.Parameter(torch.zeros(len(tok)), requires_grad=False)
        with torch.no_grad():
            self.scores[tok.all_special_ids] = 100.0
            for rank, word in enumerate(words):
                self.scores[tok.convert_tokens_to_ids(word)] = 50.0 - rank

    def forward(self, input_ids, attention_mask):
        assert set(attention_mask.unique().tolist()) <= {0, 1}
        return types.SimpleNamespace(logits=self.scores.expand(*input_ids.shape, -1))


def test_mlm_eval_counts_top1_top5_and_the_unigram_prior_over_every_masked_token():
    _, tok = tiny_encoder(hidden=16, layers=1, heads=2)
    model = _RankingMLM(tok, ["the", "cat", "sat", "on", "mat", "dog"])
    sents = ["the cat sat on the mat", "a dog dog", "the the"]
    # mask_prob 1: every word is masked (11 of them); the model always answers the, cat, sat, on, mat
    res = mlm_eval(model, tok, sents, mask_prob=1.0, batch_size=2)
    assert res["n_masked"] == 11 and res["n_sentences"] == 3
    assert res["top1"] == pytest.approx(4 / 11)              # "the" four times
    assert res["top5"] == pytest.approx(8 / 11)              # all but a, dog, dog
    assert res["unigram_top1"] == pytest.approx(4 / 11)      # in-sample prior: the, dog, cat, sat, on
    assert res["unigram_top5"] == pytest.approx(9 / 11)
    other = mlm_eval(model, tok, sents, mask_prob=1.0, batch_size=1, prior_sentences=["dog dog a", "a"])
    assert (other["top1"], other["top5"]) == (res["top1"], res["top5"])   # batching changes nothing
    assert other["unigram_top1"] == pytest.approx(2 / 11) and other["unigram_top5"] == pytest.approx(3 / 11)
    cut = mlm_eval(model, tok, sents, mask_prob=1.0, max_length=5)     # [CLS] the cat sat [SEP]
    assert cut["n_masked"] == 8 and cut["top1"] == pytest.approx(3 / 8)
    with pytest.raises(ValueError, match="sentences is empty"):
        mlm_eval(model, tok, [])


def test_brown_mlm_eval_reads_the_seeded_brown_sample_and_skips_without_brown(tmp_path):
    from tempo_analysis.encoder_mlm import brown_mlm_eval

    _, tok = tiny_encoder(hidden=16, layers=1, heads=2)
    model = _RankingMLM(tok, ["the", "dog"])
    assert brown_mlm_eval(model, tok, root=tmp_path) is None                 # no Brown: the notebook skips
    root = _fake_shared_data(tmp_path / "shared")
    res = brown_mlm_eval(model, tok, 4, seed=1, root=root)
    assert res == mlm_eval(model, tok, brown_sentences(root, 4, seed=1), seed=1) and res["n_sentences"] == 4
    assert brown_mlm_eval(model, tok, root=root)["n_sentences"] == 10         # default 200: all ten here
