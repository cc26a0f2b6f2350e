"""The paper's Frequency model (eq. 6 of "Future Language Modeling"), ``freq_bias="paper"``:

    B[i, w] = A^T LSTM(log f[i-m, w], ..., log f[i-1, w])

an LSTM shared by every word over the raw log-frequencies of the m previous years, its last hidden
state dotted with a learned vector A; the bias is added to the LM's logits (eq. 3). Checked against
the equation written out by hand for a one-unit LSTM, and against the library's trend model, which
is a different model (centred input, a skip), so the two must not agree."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from tempo_analysis.future_text.config import PRESETS, FutureTextSettings
from tempo_analysis.future_text.model import FutureLM, FutureLMConfig

from .conftest import TINY, tiny_gpt2, toy_frame

FIRST = 2000
S = [3, 7]                                   # the two tokens with a bias
LOG_F = np.array([[-2.0, -1.0],              # log f of tokens 3 and 7 in 2000
                  [-1.0, -3.0],              # 2001
                  [-0.5, -2.0]],             # 2002
                 dtype="float32")
W_IH = [0.5, -0.25, 1.0, 0.75]               # gates i, f, g, o (PyTorch's order), one unit
W_HH = [0.1, 0.2, -0.3, 0.4]
B_IH = [0.05, 0.1, 0.0, -0.2]
A = 2.0


def eq6_by_hand(log_f: list[float]) -> float:
    """Eq. 6 for one word, written out: h_0 = c_0 = 0, then for each year x of the window
    i, f, o = sigmoid(w x + u h + b), g = tanh(w_g x + u_g h + b_g), c = f c + i g, h = o tanh(c); B = A h."""
    sig = lambda z: 1.0 / (1.0 + math.exp(-z))
    h = c = 0.0
    for x in log_f:
        zi, zf, zg, zo = (W_IH[k] * x + W_HH[k] * h + B_IH[k] for k in range(4))
        c = sig(zf) * c + sig(zi) * math.tanh(zg)
        h = sig(zo) * math.tanh(c)
    return A * h


def paper_model(**kw) -> FutureLM:
    torch.manual_seed(0)
    m = FutureLM.from_lm(tiny_gpt2(50), variant="freq", token_ids=S, window=2, lstm_hidden=1,
                         freq_model="eq6", **kw)
    m.set_history(LOG_F, FIRST)
    lstm = m.bias.lstm
    with torch.no_grad():
        lstm.weight_ih_l0.copy_(torch.tensor(W_IH)[:, None])
        lstm.weight_hh_l0.copy_(torch.tensor(W_HH)[:, None])
        lstm.bias_ih_l0.copy_(torch.tensor(B_IH))
        lstm.bias_hh_l0.zero_()
        m.bias.head.weight.fill_(A)
    return m.eval()


def test_the_hand_computation_itself():
    # the numbers below were computed once from the formula; they pin the reference the model is held to
    assert eq6_by_hand([-2.0, -1.0]) == pytest.approx(-0.2330244412, abs=1e-9)
    assert eq6_by_hand([-1.0, -3.0]) == pytest.approx(-0.0578793418, abs=1e-9)
    assert eq6_by_hand([-1.0, -0.5]) == pytest.approx(-0.2448998022, abs=1e-9)


def test_the_bias_is_eq6_over_the_raw_log_frequencies():
    m = paper_model()
    assert m.config.bias_kind == "eq6" and not m.config.center_tokens
    with torch.no_grad():
        b = m.year_terms([FIRST + 2, FIRST + 3]).numpy()
    assert b[0] == pytest.approx([eq6_by_hand([-2.0, -1.0]), eq6_by_hand([-1.0, -3.0])], abs=1e-6)
    assert b[1] == pytest.approx([eq6_by_hand([-1.0, -0.5]), eq6_by_hand([-3.0, -2.0])], abs=1e-6)


def test_the_bias_is_added_to_the_lm_logits_and_only_over_its_tokens():
    """Eq. 3: logits = LM logits + alpha * B for the biased tokens; every other token gets nothing."""
    m = paper_model(alpha=0.5)
    ids = torch.tensor([[1, 2, 4, 5]])
    with torch.no_grad():
        plain = m.lm(input_ids=ids).logits
        biased = m(input_ids=ids, years=torch.tensor([FIRST + 2])).logits
    added = (biased - plain)[0]                                          # [positions, V]
    want = [0.5 * eq6_by_hand([-2.0, -1.0]), 0.5 * eq6_by_hand([-1.0, -3.0])]
    for k in range(ids.shape[1]):
        assert added[k, S].numpy() == pytest.approx(want, abs=1e-5)
    others = [v for v in range(50) if v not in S]
    assert added[:, others].abs().max() < 1e-5


def test_the_library_trend_model_is_a_different_model():
    """Same weights, same history: the trend model centres each word on its own mean and adds a skip,
    so its bias is not eq. 6's (the two settings really select two models)."""
    torch.manual_seed(0)
    trend = FutureLM.from_lm(tiny_gpt2(50), variant="freq", token_ids=S, window=2, lstm_hidden=1,
                             monotone_trend=False, center_tokens=True)
    trend.set_history(LOG_F, FIRST)
    with torch.no_grad():
        trend.bias.head.weight.fill_(A)
        b_trend = trend.eval().year_terms([FIRST + 2]).numpy()[0]
    assert trend.config.bias_kind == "trend"
    assert abs(b_trend[0] - eq6_by_hand([-2.0, -1.0])) > 1e-2


def test_an_unknown_freq_model_is_refused():
    with pytest.raises(ValueError, match="freq_model='eq7'"):
        FutureLMConfig(freq_model="eq7")
    with pytest.raises(ValueError, match="freq_bias='eq6'.*'monotone', 'lstm', 'paper'"):
        FutureTextSettings(freq_bias="eq6")


def test_the_paper_preset_trains_eq6_and_the_default_the_trend_model():
    from tempo_analysis.future_text.estimator import FutureTextModel

    assert PRESETS["paper"].freq_bias == "paper" and PRESETS["cli"].freq_bias == "monotone"
    torch.set_num_threads(1)
    fitted = FutureTextModel(variants=["freq"], freq_bias="paper", **dict(TINY, finetune_steps=10)).fit(toy_frame())
    m = fitted.models_["freq"]
    assert m.config.freq_model == "eq6" and m.config.bias_kind == "eq6" and not m.config.center_tokens
    assert type(m.bias).__name__ == "WindowLSTMBias"
    # its inputs are the table's own log((c + 1) / (N + |V|)) features, unnormalised
    feats = fitted.freq_table_.features()[:, fitted.token_ids_]
    np.testing.assert_allclose(m.history[..., 0].numpy(), feats, rtol=0, atol=1e-6)
