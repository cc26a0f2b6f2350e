"""The scores of a trained DCWE against a planted truth, at their edges: the offset ratio's division,
σ_sim's population spread and its minimum number of contexts, and the recovery table's counts."""
import math
from types import SimpleNamespace

import pandas as pd
import pytest

from tempo_analysis.diffusion import evaluate


def _norms(ratios: dict):
    return pd.DataFrame([{"word": w, "unit": "u", "time": t, "ratio": r} for w, rs in ratios.items()
                         for t, r in enumerate(rs)])


def test_the_offset_ratio_is_the_changing_words_mean_over_the_unchanged_words(monkeypatch):
    monkeypatch.setattr(evaluate, "offset_norms", lambda m, tok, words: _norms(
        {"cloud": [0.3, 0.5], "mouse": [0.4, 0.4], "table": [0.2, 0.1], "chair": [0.1, 0.2]}))
    assert evaluate.offset_ratio(None, None, ["cloud", "mouse"], ["table", "chair"]) == pytest.approx(0.4 / 0.15)
    monkeypatch.setattr(evaluate, "offset_norms", lambda m, tok, words: _norms({"cloud": [0.3], "table": [0.0]}))
    assert evaluate.offset_ratio(None, None, ["cloud"], ["table"]) == float("inf")   # no offset on the stable words
    monkeypatch.setattr(evaluate, "offset_norms", lambda m, tok, words: _norms({"cloud": [0.0], "table": [0.0]}))
    assert math.isnan(evaluate.offset_ratio(None, None, ["cloud"], ["table"]))   # no offsets at all: no ratio


def test_sigma_is_the_population_spread_over_words_with_three_contexts_or_more():
    sims = pd.DataFrame([{"word": w, "sim": s} for w, ss in
                         {"few": [0.0, 0.0, 1.0], "many": [0.0, 1.0] * 3, "two": [0.0, 5.0]}.items() for s in ss])
    # population std: many 0.5 > few 0.471; the sample std would rank few (0.577) above many (0.548)
    assert evaluate.sigma_precision_at_k(sims, ["many"]) == (1.0, ["many"])
    assert evaluate.sigma_precision_at_k(sims, ["MANY", "few"])[0] == 1.0          # case-blind
    assert "two" not in evaluate.sigma_precision_at_k(sims, ["a", "b", "c"])[1]     # 2 contexts: left out
    assert evaluate.sigma_precision_at_k(sims, ["two"], min_contexts=2) == (1.0, ["two"])


def test_the_recovery_table_counts_first_arrivals_that_match_the_planted_ones(monkeypatch):
    import tempo_analysis.diffusion.report as report

    results = {"dcwe": SimpleNamespace(first={"a": 0, "b": 2, "c": None}, mode={"mode": "walk", "walk_share": 0.8,
                                                                               "expected_walk_share": 0.4}),
               "cwe": SimpleNamespace(first={"a": 1, "b": None, "c": None}, mode={})}
    monkeypatch.setattr(report, "analyze", lambda index, graph, word, anchor, **kw: results[index])
    rows = evaluate.recovery_rows({"dcwe": "dcwe", "cwe": "cwe"}, None, "cloud", "server",
                                  {"a": 0, "b": 1, "c": None}).set_index("model")
    assert rows.loc["dcwe", "first_arrival_exact"] == 2 and rows.loc["dcwe", "units_reached"] == 2
    assert rows.loc["cwe", "first_arrival_exact"] == 1 and rows.loc["cwe", "units_reached"] == 1
    assert rows.loc["dcwe", "recovered_mode"] == "walk" and pd.isna(rows.loc["cwe", "recovered_mode"])
    assert (rows["units"] == 3).all()


@pytest.fixture
def dcwe():
    import torch

    from tempo_analysis.diffusion.model import DCWEForMaskedLM, content_vocabulary
    from tempo_analysis.encoders import tiny_encoder

    enc, tok = tiny_encoder(head="mlm", seed=0)
    texts = ["cloud server", "cloud rain", "river boat", "river bridge", "mouse cheese"]
    m = DCWEForMaskedLM.from_encoder(enc, node_features=torch.randn(3, 4, generator=torch.Generator().manual_seed(0)),
                                     edge_index=[[0, 1], [1, 2]], dynamic_token_ids=content_vocabulary(texts, tok),
                                     units=list("abc"), slices=[0, 1], social_dim=4, gat_heads=1, offset_dropout=0.0,
                                     gat_dropout=0.0)
    with torch.no_grad():   # offsets that differ by unit and slice, as after training
        for i, ffn in enumerate(m.dynamic.ffns):
            ffn.fc2.weight.normal_(0, 0.5, generator=torch.Generator().manual_seed(i))
    return m.eval(), tok


def _by_hand(model, tok, word, anchor, unit, t, candidates):
    """The anchor's probability among ``candidates`` at the [MASK] of each probe, log-probabilities averaged."""
    import torch

    from tempo_analysis.diffusion.probe import PROBES

    lps = []
    for p in PROBES:
        enc = tok(p.format(word=word, mask=tok.mask_token), return_tensors="pt")
        at = int((enc["input_ids"][0] == tok.mask_token_id).nonzero()[0, 0])
        with torch.no_grad():
            logits = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"],
                           unit_ids=torch.tensor([unit]), slice_ids=torch.tensor([t])).logits[0, at]
        lps.append(torch.log_softmax(logits, -1)[candidates])
    lp = torch.stack(lps).mean(0)
    a = candidates.index(tok.convert_tokens_to_ids(anchor))
    return float(torch.softmax(lp, 0)[a]), int((lp > lp[a]).sum()) + 1


def test_the_masked_prediction_is_read_at_the_mask_among_the_dynamic_vocabulary(dcwe):
    from tempo_analysis.diffusion.probe import prediction_rhat

    m, tok = dcwe
    table = prediction_rhat(m, tok, "cloud", "server", list("abc"), [0, 1]).set_index(["unit", "time"])
    cands = [c for c in sorted(m.dynamic_token_ids) if c != tok.convert_tokens_to_ids("cloud")]
    probs = set()
    for ui, u in enumerate("abc"):
        for t in (0, 1):
            prob, rank = _by_hand(m, tok, "cloud", "server", ui, t, cands)
            assert table.loc[(u, t), "anchor_prob"] == pytest.approx(prob, rel=1e-5)
            assert table.loc[(u, t), "rank"] == rank and table.loc[(u, t), "n_neighbors"] == 1   # one neighbour by default
            assert table.loc[(u, t), "rhat"] == (1.0 if rank == 1 else 0.0)
            assert table.loc[(u, t), "example"] == ("cloud server." if rank == 1 else f"cloud {tok.mask_token}.")
            probs.add(round(prob, 6))
    assert len(probs) > 1                            # the offsets make the prediction depend on unit and slice
    wide = prediction_rhat(m, tok, "cloud", "server", ["a"], [0], n_neighbors=400)
    rank = int(wide["rank"].iloc[0])
    assert wide["rhat"].iloc[0] == 400 - rank + 1 and wide["example"].iloc[0] == "cloud server."
    exact = prediction_rhat(m, tok, "cloud", "server", ["a"], [0], n_neighbors=rank)    # the anchor is the last one in
    assert exact["rhat"].iloc[0] == 1 and exact["example"].iloc[0] == "cloud server."


@pytest.mark.parametrize("n", [0, -1, 2.5, "3", None])
def test_the_number_of_neighbours_is_a_positive_integer(dcwe, n):
    from tempo_analysis.diffusion.probe import prediction_rhat

    m, tok = dcwe
    with pytest.raises(ValueError, match="n_neighbors=.*use a positive integer"):
        prediction_rhat(m, tok, "cloud", "server", ["a"], [0], n_neighbors=n)
