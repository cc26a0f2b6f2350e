"""FutureLM's parts at their edges: the config's defaults and bounds, the tied-head checks, the history
table's normalisation, cache invalidation for Context^2, multi-year batches from cached states, the
HF loss, the processor after a whole prompt, the context adapter, and the head files."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from safetensors.torch import load_file, save_file

from tempo_analysis.data.errors import DataError
from tempo_analysis.future_text.model import ContextAdapter, FutureLM, FutureLMConfig, TemporalBiasProcessor

from .conftest import tiny_gpt2
from .test_future_lm import FIRST, V, Y, make


def test_the_config_defaults_are_the_documented_ones():
    """REFERENCE-NOTES section 4 and docs/methods/future_text.md: an LSTM of hidden size 32 over the
    last 3 years of a one-number frequency feature, alpha 1 (fixed), a monotone trend LSTM, no adapter."""
    c = FutureLMConfig(lm_config={"model_type": "gpt2"})
    assert (c.variant, c.window, c.lstm_hidden, c.feature_dim, c.alpha) == ("freq", 3, 32, 1, 1.0)
    assert not c.learn_alpha and not c.center_tokens and c.monotone_trend
    assert (c.bias_vocab, c.adapter_rank, c.history_first_year, c.history_num_years) == (0, 0, 0, 0)
    assert c.train_years == [] and c.lm_config == {"model_type": "gpt2"}


@pytest.mark.parametrize("window", [0, -1, 2.0, "3", None])
def test_a_window_that_is_not_a_positive_integer_is_refused(window):
    with pytest.raises(ValueError, match=r"FutureLMConfig\.window"):
        FutureLMConfig(window=window)


def test_a_one_year_window_is_allowed_and_reads_only_the_previous_year():
    m = make("freq", window=1)
    assert m.config.window == 1
    h = m.history.clone()
    with torch.no_grad():
        before = m.year_terms([FIRST + 3])
        m.history[1] += 5.0                          # an older year: outside a one-year window for FIRST + 3
        m.clear_bias_cache()
        torch.testing.assert_close(m.year_terms([FIRST + 3]), before)
        m.history[2] += 5.0                          # the previous year
        m.clear_bias_cache()
        assert (m.year_terms([FIRST + 3]) - before).abs().max() > 1e-4
    m.history = h


def test_an_lm_whose_config_unties_the_head_is_refused_when_built_from_a_config():
    cfg = tiny_gpt2(V).config.to_dict()
    cfg["tie_word_embeddings"] = False
    with pytest.raises(ValueError, match="not tied"):
        FutureLM(FutureLMConfig(lm_config=cfg))


def test_an_lm_that_claims_a_tied_head_but_holds_two_tensors_is_refused():
    lm = tiny_gpt2(V)
    assert lm.config.tie_word_embeddings
    lm.lm_head.weight = torch.nn.Parameter(lm.lm_head.weight.detach().clone())   # same values, own tensor
    with pytest.raises(ValueError, match="not tied"):
        FutureLM.from_lm(lm, variant="freq")


def test_a_history_exactly_as_long_as_the_window_is_accepted():
    m = FutureLM.from_lm(tiny_gpt2(V), variant="freq", window=3, lstm_hidden=4)
    m.set_history(np.zeros((3, V), "float32"), FIRST)
    assert m.history_years == [FIRST, FIRST + 1, FIRST + 2]
    with pytest.raises(DataError, match="feature axis"):
        m.set_history(np.zeros((3, V, 2), "float32"), FIRST)


def test_set_history_refits_the_input_normalisation_by_default_and_keeps_it_when_asked():
    rng = np.random.default_rng(0)
    m = FutureLM.from_lm(tiny_gpt2(V), variant="freq", window=2, lstm_hidden=4)
    f = (3.0 + 2.0 * rng.standard_normal((Y, V))).astype("float32")
    m.set_history(f, FIRST)
    assert m.feature_mean.item() == pytest.approx(f.mean(), abs=1e-4)
    assert m.feature_std.item() == pytest.approx(f.reshape(-1).std(ddof=1), rel=1e-4)
    m.set_history(f + 10.0, FIRST, refit_norm=False)                      # a what-if edit: the scale is kept
    assert m.feature_mean.item() == pytest.approx(f.mean(), abs=1e-4)


def test_centred_tokens_remove_each_tokens_own_level_and_share_one_scale():
    """center_tokens: the mean is per token over the history years ([n, F]); the std is one value per
    feature, pooled over every (year, token) after that centring."""
    rng = np.random.default_rng(1)
    level = rng.normal(0, 5, V).astype("float32")
    f = (level[None, :] + rng.standard_normal((Y, V))).astype("float32")
    m = FutureLM.from_lm(tiny_gpt2(V), variant="freq", window=2, lstm_hidden=4, center_tokens=True)
    m.set_history(f, FIRST)
    assert tuple(m.feature_mean.shape) == (V, 1)
    np.testing.assert_allclose(m.feature_mean[:, 0].numpy(), f.mean(0), atol=1e-5)
    centred = f - f.mean(0, keepdims=True)
    assert m.feature_std.shape == (1,)
    assert m.feature_std.item() == pytest.approx(centred.reshape(-1).std(ddof=1), rel=1e-4)


def test_the_context2_bias_cache_follows_an_update_of_the_lm_embeddings():
    """Context^2's bias reads E_v, the LM's (tied) embeddings: changing them must not serve a stale bias."""
    m = make("context2", 4)
    with torch.no_grad():
        a = m.year_terms([2004]).clone()
        m.lm.get_input_embeddings().weight.mul_(2.0)
        b = m.year_terms([2004])
    assert (a - b).abs().max() > 1e-4


def test_load_state_dict_is_strict_by_default_and_train_means_train():
    m = make("freq")
    state = {k: v for k, v in m.state_dict().items() if k != "offset"}
    with pytest.raises(RuntimeError, match="offset"):
        m.load_state_dict(state)
    m.train()
    assert m.training and m.bias.training
    m.eval()
    assert not m.training


@pytest.mark.parametrize("variant,fdim", [("freq", 1), ("freq-nolstm", 1), ("context2", 4)])
def test_state_nll_on_a_batch_of_several_years_equals_each_rows_forward(variant, fdim):
    """Positions of different target years in one cached-state batch each get their own year's bias
    (the pipeline's one-year batches fold the bias into the offset; a mixed batch must not)."""
    from tempo_analysis.future_text.states import StateCache, document_states, full_head_terms, rest_terms

    m = make(variant, fdim)
    with torch.no_grad():
        m.offset.normal_(std=0.5)
    S = m.token_ids
    docs = [torch.randint(1, V, (9,)) for _ in range(2)]
    years = [FIRST + 2, FIRST + 5]
    want, hs, targets, ys = [], [], [], []
    with torch.no_grad():
        for ids, y in zip(docs, years):
            full = torch.log_softmax(m(ids[None], years=[y]).logits[0, :-1], -1)
            want.append(-full.gather(1, ids[1:, None])[:, 0])
            hs.append(document_states(m.lm, [ids[1:].tolist()], int(ids[0]))[0][:-1])
            targets.append(ids[1:])
            ys.append(torch.full((len(ids) - 1,), y))
        h, t, yy = torch.cat(hs), torch.cat(targets), torch.cat(ys)
        head = m.lm.get_output_embeddings()
        st = StateCache(h, torch.cat([d[:-1] for d in docs]), t, torch.zeros(len(h), dtype=torch.long),
                        torch.tensor(years), *full_head_terms(head, h, t))
        lse, zt = rest_terms(head, st, S)
        got = m.state_nll(h, yy, t, lse, zt)
    torch.testing.assert_close(got, torch.cat(want), atol=1e-4, rtol=1e-4)


def test_the_hf_loss_is_the_shifted_cross_entropy_and_skips_minus_100():
    m = make("freq")
    ids = torch.randint(1, V, (2, 8))
    labels = ids.clone()
    labels[0, 3] = -100
    with torch.no_grad():
        out = m(ids, years=[FIRST + 3, FIRST + 4], labels=labels)
        lp = torch.log_softmax(out.logits[:, :-1].float(), -1)
        nll = -lp.gather(2, ids[:, 1:, None])[..., 0]
        keep = labels[:, 1:] != -100
    assert out.loss.item() == pytest.approx(nll[keep].mean().item(), rel=1e-5)


@pytest.mark.parametrize("variant,fdim,rank", [("context2", 4, 0), ("freq", 1, 4)])
def test_the_processor_after_a_whole_prompt_reads_the_last_position(variant, fdim, rank):
    """generate's first step runs the whole prompt at once: the gate and the adapter must read the
    decoder state of its last position, not of an earlier one."""
    m = make(variant, fdim, adapter_rank=rank)
    ids = torch.randint(1, V, (2, 7))
    proc = TemporalBiasProcessor(m, 2005)
    with torch.no_grad():
        want = torch.log_softmax(m(ids, years=[2005, 2005]).logits[:, -1], -1)
        out = m.lm(ids)
        got = proc(ids, out.logits[:, -1])
    torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-5)


def test_an_untrained_context_adapter_adds_exactly_nothing_and_has_no_biases():
    a = ContextAdapter(16, 4, 30)
    assert a.down.bias is None and a.up.bias is None
    assert torch.count_nonzero(a(torch.randn(3, 5, 16))) == 0
    m = FutureLM.from_lm(tiny_gpt2(V), variant="baseline", adapter_rank=4)
    ids = torch.randint(1, V, (1, 6))
    with torch.no_grad():
        torch.testing.assert_close(m(ids).logits, m.lm(ids).logits)


def test_save_head_makes_nested_folders_and_overwrites_and_load_head_refuses_a_partial_file(tmp_path):
    m = make("freq")
    d = tmp_path / "a" / "b" / "head"
    m.save_head(d)
    m.save_head(d)                                             # saving again into the same folder
    back = FutureLM.load_head(d, m.lm)
    torch.testing.assert_close(back.year_terms([2004]), m.year_terms([2004]))
    state = load_file(str(d / "head.safetensors"))
    del state["offset"]
    save_file(state, str(d / "head.safetensors"))
    with pytest.raises(ValueError, match="does not match its config"):
        FutureLM.load_head(d, m.lm)
