"""FutureLM: layout, once-per-year bias, cache, Context^2 train/generate agreement, save/load, bad input."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tempo_analysis.causal_lm import output_cache
from tempo_analysis.data.errors import DataError
from tempo_analysis.future_text.bias import GatedBias, PreviousYearBias, TrendLSTMBias, lstm_last_hidden, window_index, windows
from tempo_analysis.future_text.model import FutureLM, TemporalBiasProcessor

from .conftest import tiny_gpt2

V, FIRST, Y = 50, 2000, 6


def make(variant="freq", fdim=1, window=3, seed=0, **kw):
    torch.manual_seed(seed)
    m = FutureLM.from_lm(tiny_gpt2(V), variant=variant, window=window, feature_dim=fdim, lstm_hidden=8, **kw)
    if m.bias is not None:
        rng = np.random.default_rng(seed)
        m.set_history(rng.standard_normal((Y, V, fdim)).astype("float32"), FIRST)
        for p in m.bias.parameters():          # move off the "start as plain LM" init so biases are non-zero
            torch.nn.init.normal_(p, std=0.3)
    if m.adapter is not None:                  # the context adapter starts at zero: give it a non-zero map
        torch.nn.init.normal_(m.adapter.up.weight, std=0.5)
    return m.eval()


def test_window_layout_is_token_major_in_year_order():
    # table value encodes (year row, token): 1000 * row + token
    table = (1000 * torch.arange(Y)[:, None] + torch.arange(V)[None, :]).float()[..., None]   # [Y, V, 1]
    idx = window_index(torch.tensor([2004, 2002]), FIRST, Y, 3)
    assert idx.tolist() == [[1, 2, 3], [0, 0, 1]]            # 2002's window left-pads with the first year
    # the year after the table forecasts from the table's last W rows, its last row included
    assert window_index(torch.tensor([FIRST + Y]), FIRST, Y, 3).tolist() == [[Y - 3, Y - 2, Y - 1]]
    w = windows(table, idx)                                   # [U, V, W, 1]
    flat = w.reshape(2 * V, 3)                                # what the LSTM sees: row u*V + v
    for u, rows in enumerate(idx.tolist()):
        for v in (0, 1, 7, V - 1):
            assert flat[u * V + v].tolist() == [1000 * r + v for r in rows]   # token v's own years, in order


def test_nolstm_bias_is_the_scaled_feature_of_the_year_before_the_target():
    table = (1000 * torch.arange(Y)[:, None] + torch.arange(V)[None, :]).float()[..., None]   # [Y, V, 1]
    idx = window_index(torch.tensor([FIRST + 4, FIRST + 2]), FIRST, Y, 3)
    b = PreviousYearBias(init_scale=0.5)(table, idx)
    assert b.shape == (2, V)
    assert b.tolist() == [[0.5 * (1000 * 3 + v) for v in range(V)], [0.5 * (1000 * 1 + v) for v in range(V)]]


def test_context_gate_is_alpha_sigmoid_of_state_times_s_times_m():
    """Eq. 10: bias[b, k, v] = alpha * sigmoid((H_k . C A) * s[b, v]) * m[b, v], with s and m the
    per-year terms that `GatedBias.forward` stacks in that order."""
    torch.manual_seed(0)
    d = 6
    gate = GatedBias(feature_dim=1, hidden=4, d_model=d)
    torch.nn.init.normal_(gate.C.weight)
    torch.nn.init.normal_(gate.D.weight)
    hidden, terms = torch.randn(2, 3, d), torch.randn(2, 5, 2)
    got = gate.apply_gate(hidden, terms, alpha=0.7)
    q = hidden @ (gate.C.weight @ gate.A)                                  # [B, S]
    s, m = terms[..., 0], terms[..., 1]
    want = 0.7 * torch.sigmoid(q[..., None] * s[:, None, :]) * m[:, None, :]
    torch.testing.assert_close(got, want)
    emb = torch.randn(5, d)
    rows, idx = torch.randn(4, 5, 1), window_index(torch.tensor([FIRST + 3]), FIRST, 4, 2)
    s_m = gate(rows, idx, emb)
    B = gate.core(rows, idx)
    torch.testing.assert_close(s_m[..., 0], (B * emb).sum(-1))
    torch.testing.assert_close(s_m[..., 1], s_m[..., 0] * (emb @ (gate.D.weight @ gate.A)))


def test_unrolled_lstm_matches_nn_lstm():
    torch.manual_seed(0)
    lstm = torch.nn.LSTM(5, 8, batch_first=True)
    x = torch.randn(7, 3, 5)
    _, (h, _) = lstm(x)
    xproj = x @ lstm.weight_ih_l0.t() + lstm.bias_ih_l0
    torch.testing.assert_close(lstm_last_hidden(lstm, xproj, projected=True), h[-1])
    torch.testing.assert_close(lstm_last_hidden(lstm, x), h[-1])


@pytest.mark.parametrize("variant,fdim", [("freq", 1), ("context", 4), ("context", 40)])
def test_bias_of_token_v_is_lstm_over_its_own_history(variant, fdim):
    # fdim 40 > 4 x the LSTM's 8 units: wide features take the path that projects each history row once
    m = make(variant, fdim, monotone_trend=False)          # the unconstrained LSTM: nn.LSTM is the reference
    year = 2004
    bias = m.year_terms([year])[0]                                       # [V]
    for v in (0, 3, V - 1):
        seq = m.history[year - FIRST - 3:year - FIRST, v, :]             # token v, years 2001..2003
        seq = (seq - m.feature_mean) / m.feature_std
        _, (h, _) = m.bias.lstm(seq[None])
        want = m.bias.head(h[-1])[0, 0]
        if variant == "freq":                     # + the linear skip on the last year's centred feature
            want = want + torch.nn.functional.softplus(m.bias.skip) * (m.history[year - FIRST - 1, v, 0] - m.feature_mean[0])
        torch.testing.assert_close(bias[v], want)


@pytest.mark.parametrize("variant", ["context", "context2"])
def test_an_untrained_context_bias_leaves_the_lm_as_it_is(variant):
    """A = 0 (Context) and D = 0 (Context^2, eq. 10 has no bias term): before training, the model is the plain LM."""
    torch.manual_seed(0)
    m = FutureLM.from_lm(tiny_gpt2(V), variant=variant, window=3, feature_dim=4, lstm_hidden=8)
    m.set_history(np.random.default_rng(0).standard_normal((Y, V, 4)).astype("float32"), FIRST)
    ids = torch.randint(1, V, (2, 7))
    with torch.no_grad():
        torch.testing.assert_close(m.eval()(ids, years=[2004, 2005]).logits, m.lm(ids).logits)


def test_the_frequency_bias_defaults_are_the_documented_ones():
    """docs/methods/future_text.md: a monotone LSTM by default, and a linear skip of slope 1 at the start."""
    b = TrendLSTMBias()
    assert b.monotone
    assert torch.nn.functional.softplus(b.skip).item() == pytest.approx(1.0)


def test_monotone_frequency_bias_is_its_own_tokens_monotone_lstm():
    """Layout and arithmetic of the default (monotone) freq bias against a per-token reference."""
    m = make("freq")
    assert m.config.monotone_trend
    sp = torch.nn.functional.softplus
    lstm, H = m.bias.lstm, 8
    year = 2004
    bias = m.year_terms([year])[0]
    for v in (0, 3, V - 1):
        seq = ((m.history[year - FIRST - 3:year - FIRST, v, :] - m.feature_mean) / m.feature_std)[:, 0]
        h = c = torch.zeros(H)
        for x in seq:                                                    # sigmoid gates AND candidate
            a = torch.sigmoid(sp(lstm.weight_ih_l0)[:, 0] * x + sp(lstm.weight_hh_l0) @ h + lstm.bias_ih_l0 + lstm.bias_hh_l0)
            c = a[H:2 * H] * c + a[:H] * a[2 * H:3 * H]
            h = a[3 * H:] * torch.tanh(c)
        want = sp(m.bias.head.weight)[0] @ h + sp(m.bias.skip) * (m.history[year - FIRST - 1, v, 0] - m.feature_mean[0])
        torch.testing.assert_close(bias[v], want)


@pytest.mark.parametrize("monotone", [True, False])
def test_a_rising_year_never_lowers_the_monotone_frequency_bias(monotone):
    """Sign: raising any year of a token's window never lowers its freq bias (monotone LSTM + skip >= 0).
    The unconstrained LSTM (monotone_trend=False) does lower it for some tokens: the check can fail."""
    m = make("freq", seed=1, monotone_trend=monotone)
    year = 2005
    base = m.year_terms([year])[0].detach()
    drops = []
    for row in (year - FIRST - 3, year - FIRST - 2, year - FIRST - 1):
        hist = m.history.clone()
        hist[row, :, 0] += 1.5                                          # every token rises in that year
        m.set_history(hist, FIRST, refit_norm=False)
        drops.append((m.year_terms([year])[0].detach() - base).min().item())
    m.set_history(hist, FIRST, refit_norm=False)
    if monotone:
        assert min(drops) >= -1e-6, drops
    else:
        assert min(drops) < -1e-3, drops                                # regression to the mean is learnable


def test_bias_once_per_distinct_year_equals_per_example(monkeypatch):
    m = make("freq")
    years = torch.tensor([2003, 2005, 2003, 2003, 2005])
    seen = []
    orig = m._compute_year_terms
    monkeypatch.setattr(m, "_compute_year_terms", lambda ys, share_rows=True: (seen.append(ys.tolist()), orig(ys, share_rows))[1])
    with torch.enable_grad():
        m.train()
        per_year = m.year_terms(years)
    assert seen == [[2003, 2005]]                                        # one LSTM pass for 2 distinct years
    m.bias_per_example = True
    ref = m.year_terms(years)
    torch.testing.assert_close(per_year, ref)
    assert per_year.shape == (5, V)


def test_bias_cache_in_eval_and_invalidation(monkeypatch):
    m = make("freq")
    calls = []
    orig = m._compute_year_terms
    monkeypatch.setattr(m, "_compute_year_terms", lambda ys, share_rows=True: (calls.append(ys.tolist()), orig(ys, share_rows))[1])
    with torch.no_grad():
        a = m.year_terms([2004, 2004])
        b = m.year_terms([2004, 2003])
    assert calls == [[2004], [2003]]                                     # 2004 computed once, then cached
    torch.testing.assert_close(a[0], b[0])
    m.set_history(m.history * 2, FIRST, refit_norm=False)              # new history -> recomputed
    with torch.no_grad():
        m.year_terms([2004])
    assert calls[-1] == [2004]


@pytest.mark.parametrize("variant,fdim,rank,kv", [("context2", 4, 0, "cache"), ("freq", 1, 0, "cache"),
                                                  ("freq-nolstm", 1, 0, "cache"), ("baseline", 1, 0, "cache"),
                                                  ("baseline", 1, 4, "cache"), ("freq", 1, 4, "past_key_values")])
def test_full_sequence_logits_equal_incremental_kv_cache(variant, fdim, rank, kv):
    """kv: the cache's keyword (transformers 5's `cache`, or the deprecated `past_key_values`)."""
    m = make(variant, fdim, adapter_rank=rank)
    ids = torch.randint(1, V, (3, 9))
    years = torch.tensor([2004, 2001, 2006])
    with torch.no_grad():
        full = m(ids, years=years).logits
        out = m(ids[:, :1], years=years, use_cache=True)
        steps = [out.logits]
        for k in range(1, ids.shape[1]):
            out = m(ids[:, k:k + 1], years=years, use_cache=True, **{kv: output_cache(out)})
            steps.append(out.logits)
    torch.testing.assert_close(torch.cat(steps, 1), full, atol=1e-5, rtol=1e-5)
    if variant != "baseline" or rank:                                    # the bias / adapter really contributes
        with torch.no_grad():
            plain = m.lm(ids).logits
        assert (full - plain).abs().max() > 1e-3


def test_context2_gate_does_not_depend_on_padding_length():
    m = make("context2", 4)
    ids = torch.randint(1, V, (1, 6))
    padded = torch.cat([ids, torch.zeros(1, 10, dtype=torch.long)], 1)
    att = torch.cat([torch.ones(1, 6), torch.zeros(1, 10)], 1).long()
    with torch.no_grad():
        short = m(ids, years=[2004]).logits
        long = m(padded, attention_mask=att, years=[2004]).logits[:, :6]
    torch.testing.assert_close(short, long, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("variant,fdim,rank", [("context2", 4, 0), ("freq", 1, 0), ("freq", 1, 4), ("baseline", 1, 4)])
def test_generation_processor_matches_forward(variant, fdim, rank):
    """The logits processor used inside HF generate gives the forward pass's (log-softmaxed) logits
    (the context adapter reads the decoder state of the last position, as Context^2's gate does)."""
    m = make(variant, fdim, adapter_rank=rank)
    ids = torch.randint(1, V, (2, 7))
    proc = TemporalBiasProcessor(m, 2005)
    with torch.no_grad():
        full = torch.log_softmax(m(ids, years=[2005, 2005]).logits, -1)
        if rank:                                                          # the adapter really contributes
            assert (full - torch.log_softmax(m.lm(ids).logits, -1)).abs().max() > 1e-3
        out = None
        for k in range(ids.shape[1]):
            out = m.lm(ids[:, k:k + 1], cache=None if out is None else output_cache(out), use_cache=True)
            got = proc(ids[:, :k + 1], out.logits[:, -1])
            torch.testing.assert_close(got, full[:, k], atol=1e-5, rtol=1e-5)


def test_save_and_from_pretrained_roundtrip(tmp_path):
    m = make("context2", 4)
    ids = torch.randint(1, V, (2, 5))
    m.save_pretrained(tmp_path)
    assert (tmp_path / "model.safetensors").is_file() and not list(tmp_path.glob("*.bin"))
    m2 = FutureLM.from_pretrained(tmp_path).eval()
    assert m2.lm.get_output_embeddings().weight is m2.lm.get_input_embeddings().weight     # still tied
    assert m2.history_years == list(range(FIRST, FIRST + Y))
    with torch.no_grad():
        torch.testing.assert_close(m2(ids, years=[2003, 2006]).logits, m(ids, years=[2003, 2006]).logits)


def test_bad_inputs_have_clear_errors(tmp_path):
    m = make("freq", window=3)
    with pytest.raises(DataError, match="no previous-year history"):
        m(torch.ones(1, 3, dtype=torch.long), years=[FIRST])              # first year has no past
    with pytest.raises(DataError, match="no previous-year history"):
        m(torch.ones(1, 3, dtype=torch.long), years=[FIRST + Y + 1])
    with pytest.raises(DataError, match="window=3 is longer"):
        m.set_history(np.zeros((2, V), "float32"), FIRST)
    with pytest.raises(DataError, match="vocabulary axis"):
        m.set_history(np.zeros((Y, V + 1), "float32"), FIRST)
    with pytest.raises(ValueError, match="needs years"):
        m(torch.ones(1, 3, dtype=torch.long))
    untied = tiny_gpt2(V)
    untied.config.tie_word_embeddings = False
    untied.lm_head.weight = torch.nn.Parameter(untied.lm_head.weight.detach().clone())
    with pytest.raises(ValueError, match="not tied"):
        FutureLM.from_lm(untied, variant="freq")
    with pytest.raises(OSError, match="does not exist .*check the path"):
        FutureLM.from_lm(str(tmp_path / "no-such-model"), variant="freq")


def _lm_folder(folder):
    """A tiny GPT-2 saved with a word-level tokenizer (what load_causal_lm reads from a local folder)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    tk = Tokenizer(models.WordLevel({w: i for i, w in enumerate(["<unk>", "<eos>", "the", "cat"])}, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    lm = tiny_gpt2(V)
    lm.save_pretrained(folder)
    PreTrainedTokenizerFast(tokenizer_object=tk, unk_token="<unk>", eos_token="<eos>").save_pretrained(folder)
    return lm


def test_from_lm_loads_names_through_the_projects_one_loader(tmp_path, monkeypatch):
    """from_lm(str) had its own loader beside tempo_analysis.causal_lm: 'default' went to the hub as a repo
    name (about 40 s of retries offline), an empty folder gave transformers' raw "Unrecognized model in ...",
    and its hint said "(lm=None)", which crashed. Names now go through causal_lm.load_causal_lm."""
    import socket

    from tempo_analysis import causal_lm, hub

    def no_network(address, *a, **k):
        raise AssertionError(f"a network call to {address}")

    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(hub, "_connect", lambda host, port, timeout: False)
    monkeypatch.setattr(hub, "hub_cached", lambda name, filename="config.json": False)
    lm = _lm_folder(tmp_path / "lm")
    m = FutureLM.from_lm(str(tmp_path / "lm"), variant="baseline")
    assert torch.equal(m.lm.get_input_embeddings().weight, lm.get_input_embeddings().weight)
    # "default" is the embedded SmolLM2 (its converted folder; here a stand-in), never a hub repo name
    monkeypatch.setattr(causal_lm, "default_causal_lm_path", lambda: str(tmp_path / "lm"))
    assert FutureLM.from_lm("default", variant="baseline").lm.config.vocab_size == V
    (tmp_path / "empty").mkdir()
    with pytest.raises(OSError, match=r"folder '.*empty' has no config.json: pass a folder saved with save_pretrained"):
        FutureLM.from_lm(str(tmp_path / "empty"))
    with pytest.raises(OSError, match=r"'gpt2' is not a local folder .*offline.*Or use 'default' for the embedded "
                                      r"SmolLM2-135M-Instruct\.$"):
        FutureLM.from_lm("gpt2")
    with pytest.raises(TypeError, match=r"from_lm\(lm=None\): give a causal LM .*'default'"):
        FutureLM.from_lm(None)


def test_bias_cache_follows_load_state_dict_and_parameter_updates():
    """A cached year bias is never stale: an optimiser step or load_state_dict changes what is served."""
    m = make("freq")
    saved = {k: v.clone() for k, v in m.state_dict().items()}
    with torch.no_grad():
        a = m.year_terms([2004]).clone()
    opt = torch.optim.SGD(m.bias.parameters(), lr=1.0)
    with torch.enable_grad():
        m.year_terms([2004]).pow(2).sum().backward()
    opt.step()                                                             # an in-place parameter update
    with torch.no_grad():
        b = m.year_terms([2004]).clone()
        fresh = m._compute_year_terms(torch.tensor([2004]))
    torch.testing.assert_close(b, fresh)                                   # served the updated bias
    assert (a - b).abs().max() > 1e-4
    m.load_state_dict(saved)
    with torch.no_grad():
        torch.testing.assert_close(m.year_terms([2004]), a)                # back to the saved weights


@pytest.mark.parametrize("variant,fdim,rank", [("freq", 1, 0), ("context2", 4, 0), ("baseline", 1, 0), ("baseline", 1, 4),
                                               ("context2", 4, 4)])
def test_state_nll_equals_the_full_forward_on_a_vocabulary_subset(variant, fdim, rank):
    """Training/scoring from cached states over S + one rest class is exactly the full model's NLL,
    including targets outside S (the offset and the bias are scattered into the whole vocabulary)."""
    from tempo_analysis.future_text.states import StateCache, document_states, full_head_terms, rest_terms

    torch.manual_seed(1)
    S = torch.tensor(sorted(np.random.default_rng(0).choice(V, 30, replace=False).tolist()))
    m = FutureLM.from_lm(tiny_gpt2(V), variant=variant, window=3, feature_dim=fdim, lstm_hidden=8, token_ids=S,
                         adapter_rank=rank)
    if m.bias is not None:
        m.set_history(np.random.default_rng(1).standard_normal((Y, len(S), fdim)).astype("float32"), FIRST)
        for p in m.bias.parameters():
            torch.nn.init.normal_(p, std=0.3)
    if m.adapter is not None:
        torch.nn.init.normal_(m.adapter.up.weight, std=0.5)
    with torch.no_grad():
        m.offset.normal_(std=0.5)
    m.eval()
    ids = torch.randint(1, V, (1, 12))
    with torch.no_grad():
        full = torch.log_softmax(m(ids, years=[2004]).logits[0, :-1], -1)
        want = -full.gather(1, ids[0, 1:, None])[:, 0]
        h = document_states(m.lm, [ids[0, 1:].tolist()], int(ids[0, 0]))[0][:-1]      # states of ids[:-1]
        head = m.lm.get_output_embeddings()
        st = StateCache(h, ids[0, :-1], ids[0, 1:], torch.zeros(len(h), dtype=torch.long), torch.tensor([2004]),
                        *full_head_terms(head, h, ids[0, 1:]))
        lse, zt = rest_terms(head, st, S)
        got = m.state_nll(h, torch.full((len(h),), 2004), ids[0, 1:], lse, zt)
    assert (~torch.isin(ids[0, 1:], S)).any() and torch.isin(ids[0, 1:], S).any()
    torch.testing.assert_close(got, want, atol=1e-4, rtol=1e-4)
    # a position whose rest mass is too small to measure (lse_rest at its floor): a target outside S
    # still costs its own surprise, -(z_target + rest offset - log Z over S), never 0
    from tempo_analysis.future_text.states import REST_FLOOR
    with torch.no_grad():
        floor = torch.full_like(lse, REST_FLOOR)
        got = m.state_nll(h, torch.full((len(h),), 2004), ids[0, 1:], floor, zt)
        log_z = torch.logsumexp(m.state_logits(h, torch.full((len(h),), 2004), floor)[:, :-1].float(), -1)
        out = ~torch.isin(ids[0, 1:], S)
        torch.testing.assert_close(got[out], -(zt + m.offset[-1] - log_z)[out], atol=1e-4, rtol=1e-4)


def test_models_sharing_one_lm_do_not_keep_each_other_alive():
    import gc
    import weakref

    lm = tiny_gpt2(V)
    head = lm.get_output_embeddings()
    S = torch.arange(10)
    models = [FutureLM.from_lm(lm, variant="context2", window=3, feature_dim=4, lstm_hidden=8, token_ids=S,
                               adapter_rank=2) for _ in range(3)]
    assert len(head._forward_pre_hooks) == 3
    keep, refs = models[0], [weakref.ref(m) for m in models[1:]]
    del models
    gc.collect()
    assert all(r() is None for r in refs) and len(head._forward_pre_hooks) == 1
    keep.set_history(np.zeros((Y, 10, 4), dtype="float32"), FIRST)
    with torch.no_grad():                       # the survivor still reads the decoder state at the head
        keep(torch.randint(1, V, (1, 5)), years=[2004])
    assert keep._hidden is not None and keep._hidden.shape[-1] == lm.config.n_embd


def test_a_head_is_loaded_only_around_the_lm_it_was_saved_with(tmp_path):
    """save_head keeps everything but the LM; load_head refuses an LM of another vocabulary or width
    (the head's offsets and bias would be read against the wrong tokens), or of the same shape with
    other weights (a base model for its instruction-tuned version), and accepts the same one, also
    loaded in another precision."""
    m = FutureLM.from_lm(tiny_gpt2(V), variant="freq", window=3, feature_dim=1, lstm_hidden=8,
                         token_ids=torch.arange(10))
    m.save_head(tmp_path / "h")
    assert FutureLM.load_head(tmp_path / "h", tiny_gpt2(V)).config.variant == "freq"      # the same weights
    assert FutureLM.load_head(tmp_path / "h", tiny_gpt2(V).to(torch.bfloat16)).config.variant == "freq"
    for other in (tiny_gpt2(80), tiny_gpt2(V, n_embd=32)):
        with pytest.raises(ValueError, match="trained around another LM.*Fix: load it around the LM it was saved with"):
            FutureLM.load_head(tmp_path / "h", other)
    with pytest.raises(ValueError, match="another LM of the same shape.*Fix: load it around the LM it was saved with"):
        FutureLM.load_head(tmp_path / "h", tiny_gpt2(V, seed=1))
