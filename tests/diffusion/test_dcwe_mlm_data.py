"""DCWE's masked-LM data at its edges: documents cut to the maximum length, padding and its attention mask,
BERT masking (the rate, the 80/10/10 split, never a special token or padding, at least one target per
document, reproducible from a generator), the held-out batches' fixed masks and defaults, and the plain
encoder's interface (CWE) beside DCWE's."""
import pandas as pd
import pytest
import torch

from tempo_analysis.diffusion.mlm import MLMCollator, PlainMLM, SliceBatchSampler, SocialMLMDataset, fixed_mlm_batches
from tempo_analysis.encoders import tiny_encoder

WORDS = "the cloud stores data on a remote server while rain falls from a dark cloud over the hills".split()


@pytest.fixture(scope="module")
def tok():
    return tiny_encoder(head="mlm", seed=0)[1]


def _frame(lengths, units=None, times=None):
    texts = [" ".join(WORDS[i % len(WORDS)] for i in range(n)) for n in lengths]
    return pd.DataFrame({"text": texts, "unit": units or ["a"] * len(texts), "time": times or [2020] * len(texts)})


def _dataset(tok, lengths, **kw):
    f = _frame(lengths, kw.pop("units", None), kw.pop("times", None))
    return SocialMLMDataset(f, tok, {"a": 0, "b": 1}, {2020: 0, 2021: 1}, **kw)


def test_documents_are_cut_to_64_tokens_by_default_with_their_unit_and_slice(tok):
    ds = _dataset(tok, [100, 5], units=["b", "a"], times=[2021, 2020])
    assert [len(x) for x in ds.input_ids] == [64, 7]               # [CLS] ... [SEP] within 64
    assert ds.input_ids[0][-1] == tok.sep_token_id
    assert len(_dataset(tok, [100], max_length=20).input_ids[0]) == 20
    assert ds[0] == {"input_ids": ds.input_ids[0], "unit_ids": 1, "slice_ids": 1}
    assert ds.num_tokens() == 71 and len(ds) == 2


def test_an_empty_split_is_an_empty_dataset(tok):
    """A corpus too small for a dev split (or dev=0) gives an empty frame: an empty dataset, not a crash."""
    ds = _dataset(tok, [])
    assert len(ds) == 0 and ds.num_tokens() == 0 and ds.unit_ids == [] and ds.slice_ids == []


def test_padding_fills_to_the_longest_document_with_a_zero_one_attention_mask(tok):
    ds = _dataset(tok, [3, 9, 1])
    b = MLMCollator(tok).pad([ds[i] for i in range(3)])
    assert b["input_ids"].shape == (3, 11)
    assert b["attention_mask"].tolist()[0] == [1] * 5 + [0] * 6 and set(b["attention_mask"].unique().tolist()) == {0, 1}
    assert (b["input_ids"][b["attention_mask"] == 0] == tok.pad_token_id).all()
    assert b["unit_ids"].tolist() == [0, 0, 0] and b["slice_ids"].dtype == torch.long


def test_bert_masking_rate_and_its_80_10_10_split(tok):
    ds = _dataset(tok, [60] * 200)
    items = [ds[i] for i in range(len(ds))]
    for p in (0.15, 0.3):
        b = MLMCollator(tok, mlm_probability=p, generator=torch.Generator().manual_seed(0))(items)
        clean = MLMCollator(tok).pad(items)["input_ids"]
        chosen = b["labels"] != -100
        real = clean != tok.pad_token_id
        candidates = real & ~torch.isin(clean, torch.tensor(tok.all_special_ids))
        assert not (chosen & ~candidates).any()                               # never [CLS], [SEP] or padding
        assert chosen.sum() / candidates.sum() == pytest.approx(p, abs=0.01)
        assert torch.equal(b["labels"][chosen], clean[chosen])
        masked = b["input_ids"][chosen] == tok.mask_token_id
        kept = b["input_ids"][chosen] == clean[chosen]
        assert masked.float().mean() == pytest.approx(0.8, abs=0.02)
        assert kept.float().mean() == pytest.approx(0.1 + 0.1 / len(tok), abs=0.02)   # 10% kept (+ random hits)
        assert (~masked & ~kept).float().mean() == pytest.approx(0.1, abs=0.02)      # 10% a random token
        assert torch.equal(b["input_ids"][~chosen], clean[~chosen])           # nothing else changes


def test_every_document_gets_a_target_even_when_the_draw_chose_none(tok):
    ds = _dataset(tok, [1, 3, 1, 2] * 25)
    items = [ds[i] for i in range(len(ds))]
    b = MLMCollator(tok, mlm_probability=0.0, generator=torch.Generator().manual_seed(0))(items)
    assert ((b["labels"] != -100).sum(1) == 1).all()                          # exactly one each, never more
    picked = (b["labels"] != -100).float().argmax(1)[1::4]                    # the 3-word documents
    assert len(set(picked.tolist())) == 3                                       # any word, not always the first
    nothing = MLMCollator(tok).pad([{"input_ids": [tok.cls_token_id, tok.sep_token_id], "unit_ids": 0,
                                     "slice_ids": 0}])
    b = MLMCollator(tok, generator=torch.Generator().manual_seed(0))(
        [{"input_ids": nothing["input_ids"][0].tolist(), "unit_ids": 0, "slice_ids": 0}])
    assert (b["labels"] == -100).all()                                          # only special tokens: no target
    full = MLMCollator(tok, mlm_probability=1.0, generator=torch.Generator().manual_seed(0))(items[:4])
    assert ((full["labels"] != -100).sum(1) == torch.tensor([1, 3, 1, 2])).all()   # a full draw is not topped up


def test_masks_repeat_with_the_generator_and_differ_with_its_seed(tok):
    ds = _dataset(tok, [30] * 8)
    items = [ds[i] for i in range(len(ds))]
    a = MLMCollator(tok, generator=torch.Generator().manual_seed(3))(items)
    b = MLMCollator(tok, generator=torch.Generator().manual_seed(3))(items)
    c = MLMCollator(tok, generator=torch.Generator().manual_seed(4))(items)
    assert torch.equal(a["labels"], b["labels"]) and torch.equal(a["input_ids"], b["input_ids"])
    assert not torch.equal(a["labels"], c["labels"])


def test_held_out_batches_use_seed_1234_and_32_documents_per_batch(tok):
    ds = _dataset(tok, [12] * 70)
    default = fixed_mlm_batches(ds, tok)
    assert [len(b["labels"]) for b in default] == [32, 32, 6]                 # every document once, in order
    again = fixed_mlm_batches(ds, tok, batch_size=32, seed=1234, repeats=1)
    assert all(torch.equal(x["labels"], y["labels"]) for x, y in zip(default, again))
    other = fixed_mlm_batches(ds, tok, seed=1235)
    assert not all(torch.equal(x["labels"], y["labels"]) for x, y in zip(default, other))
    twice = fixed_mlm_batches(ds, tok, batch_size=50, repeats=2)
    assert [len(b["labels"]) for b in twice] == [50, 50, 40]
    assert fixed_mlm_batches(_dataset(tok, [12]), tok)[0]["labels"].shape[0] == 1


def test_the_slice_sampler_starts_at_its_seed_and_moves_one_epoch_per_pass():
    slices = [0, 1, 0, 1, 0, 1, 0, 1, 2]
    s = SliceBatchSampler(slices, batch_size=3)
    assert s.seed == 0 and s.epoch == 0
    assert list(s) == s._batches(0) and s.epoch == 1
    assert list(s) == s._batches(1) and s.epoch == 2
    assert len(s) == 5 and sum(len(b) for b in s._batches(5)) == len(slices)   # slices 0 and 1: 3 + 1; slice 2: 1
    assert all(b[0] in range(len(slices)) for b in s._batches(0))


def test_the_plain_encoder_takes_dcwe_batches_and_returns_hidden_states_only_when_asked(tok):
    enc = tiny_encoder(head="mlm", seed=0)[0]
    plain = PlainMLM(enc).eval()
    b = MLMCollator(tok, generator=torch.Generator().manual_seed(0))([_dataset(tok, [10, 6])[i] for i in range(2)])
    out = plain(**b)
    assert out.hidden_states is None and out.logits.shape == (int((b["labels"] != -100).sum()), len(tok))
    layers = enc.config.num_hidden_layers + 1
    assert len(plain(**b, output_hidden_states=True).hidden_states) == layers
    hidden = plain.encode(b["input_ids"], b["attention_mask"])
    assert len(hidden) == layers
    torch.testing.assert_close(hidden[-1], enc.base_model(input_ids=b["input_ids"],
                                                          attention_mask=b["attention_mask"]).last_hidden_state)


def _hand_ce(model, batches):
    """Every masked token's cross-entropy, batch by batch, from the full logits (no shortcut)."""
    out = []
    for b in batches:
        full = model.encoder(input_ids=b["input_ids"], attention_mask=b["attention_mask"]).logits
        sel = b["labels"] != -100
        ce = torch.nn.functional.cross_entropy(full[sel], b["labels"][sel], reduction="none")
        rows = sel.nonzero(as_tuple=True)[0]
        out.append((ce, b["labels"][sel], rows))
    return out


def test_held_out_perplexity_is_the_exp_mean_over_every_masked_token_or_the_chosen_ones(tok):
    import math

    from tempo_analysis.diffusion.mlm import mlm_perplexity

    plain = PlainMLM(tiny_encoder(head="mlm", seed=0)[0]).eval()
    batches = fixed_mlm_batches(_dataset(tok, [9, 14, 5, 11, 7]), tok, batch_size=2, seed=0)
    with torch.no_grad():
        parts = _hand_ce(plain, batches)
    ce = torch.cat([c for c, _, _ in parts])
    assert mlm_perplexity(plain, batches) == pytest.approx(math.exp(ce.mean().item()), rel=1e-5)
    targets = torch.cat([t for _, t, _ in parts])
    cloud = tok.convert_tokens_to_ids("cloud")
    some = [cloud, int(targets[0])]
    keep = torch.isin(targets, torch.tensor(some))
    assert 0 < int(keep.sum()) < len(targets)
    assert mlm_perplexity(plain, batches, only=some) == pytest.approx(math.exp(ce[keep].mean().item()), rel=1e-5)
    with pytest.raises(ValueError, match="no masked tokens among the 1 ids of `only`"):
        mlm_perplexity(plain, batches, only=[tok.convert_tokens_to_ids("zebra")])
    empty = [{**batches[0], "labels": torch.full_like(batches[0]["labels"], -100)}]
    with pytest.raises(ValueError, match="have no masked tokens; give more held-out text"):
        mlm_perplexity(plain, empty)


def test_document_scores_give_each_row_to_its_document_over_repeats(tok):
    from tempo_analysis.diffusion.mlm import document_nll

    plain = PlainMLM(tiny_encoder(head="mlm", seed=0)[0]).eval()
    ds = _dataset(tok, [9, 14, 5])
    batches = fixed_mlm_batches(ds, tok, batch_size=2, seed=0, repeats=2)      # rows: docs 0 1 | 2 0 | 1 2
    total, count = document_nll(plain, batches, len(ds), device=torch.device("cpu"))
    with torch.no_grad():
        parts = _hand_ce(plain, batches)
    want_total, want_count, row0 = torch.zeros(3, dtype=torch.float64), torch.zeros(3), 0
    for (ce, _, rows), b in zip(parts, batches):
        for c, r in zip(ce, rows):
            want_total[(row0 + int(r)) % 3] += float(c)
            want_count[(row0 + int(r)) % 3] += 1
        row0 += len(b["labels"])
    assert count.tolist() == want_count.tolist() and count.sum() == sum(int((b["labels"] != -100).sum()) for b in batches)
    assert total == pytest.approx(want_total.numpy(), rel=1e-5)
