"""The time-aware BiLSTM, RoBERT, SWNU / Seq-Sig-Net and few-shot LLM baselines on tiny inputs."""

import numpy as np
import pytest
import torch

from tempo_analysis.causal_lm import tiny_causal_lm
from tempo_analysis.cli import main
from tempo_analysis.encoders import tiny_encoder
from tempo_analysis.stream.experiment import check_settings, make_classifier
from tempo_analysis.stream.llm_prompt import FewShotLLMClassifier, build_prompt
from tempo_analysis.stream.robert import RoBERTNet
from tempo_analysis.stream.signature import ExpandingLogSig, SeqSigNet, SWNUNet, fill_left_pads, unit_slices
from tempo_analysis.stream.time_bilstm import TimeBiLSTMNet, window_time_features

from .conftest import make_timelines, timelines_csv


@pytest.fixture(scope="module")
def data():
    tl = make_timelines(n_timelines=6, n_posts=(5, 4, 6), labels=("calm", "shift"), seed=2)
    return tl.subset(tl.timeline_ids[:4]), tl.subset(tl.timeline_ids[4:])


def test_time_features_follow_the_gaps():
    tl = make_timelines(n_timelines=1, n_posts=(4,), seed=0)
    s = tl.df["seconds"].to_numpy()
    f = window_time_features(tl, 3, time_scale=1.0).numpy()
    last = f[3]  # window of posts 1, 2, 3
    np.testing.assert_allclose(last[:, 0], np.log1p(s[3] - s[1:4]), rtol=1e-5)
    np.testing.assert_allclose(last[1:, 1], np.log1p(np.diff(s[1:4])), rtol=1e-5)
    assert (f[0, :2] == 0).all()  # pads of the first post's window


def test_time_aware_bilstm_uses_the_gaps():
    torch.manual_seed(0)
    net = TimeBiLSTMNet(dim=8, hidden=6, num_labels=2, dropout=0.0).eval()
    x, mask = torch.randn(3, 4, 8), torch.ones(3, 4, dtype=torch.bool)
    dt = torch.rand(3, 4, 2)
    out = net(x, mask, dt)
    assert out.shape == (3, 2)
    permuted = dt[:, torch.tensor([2, 0, 3, 1])]
    assert not torch.allclose(out, net(x, mask, permuted), atol=1e-4)


def test_expanding_log_signature_matches_pysiglib_on_a_known_path():
    import pysiglib.torch_api as ta

    layer = ExpandingLogSig(dim=2, depth=2)
    path = torch.tensor([[[9.0, 9.0], [0.0, 0.0], [1.0, 2.0], [1.0, 3.0]]])  # first slot is a pad
    mask = torch.tensor([[False, True, True, True]])
    out = layer(path, mask)
    assert out.shape == (1, 3, layer.out_dim) and layer.out_dim == 3
    # the full window: increments (1, 3) and Levy area 0.5 (known by hand), as pysiglib gives unpadded
    np.testing.assert_allclose(out[0, -1].numpy(), [1.0, 3.0, 0.5], atol=1e-5)
    np.testing.assert_allclose(out[0, -1].numpy(), ta.log_sig(path[0, 1:], 2, method=1).numpy(), atol=1e-5)
    np.testing.assert_allclose(out[0, 0].numpy(), 0.0, atol=1e-6)  # pad + first post: a constant path
    np.testing.assert_allclose(out[0, 1].numpy(), [1.0, 2.0, 0.0], atol=1e-5)
    assert torch.equal(fill_left_pads(path, mask)[0, 0], path[0, 1])


def test_signature_networks_shapes_and_units():
    torch.manual_seed(0)
    x, mask = torch.randn(4, 5, 16), torch.ones(4, 5, dtype=torch.bool)
    mask[0, :3] = False
    t, dt = torch.rand(4, 5, 2), torch.rand(4, 5, 2)
    assert SWNUNet(16, 3, reduced_dim=4, swnu_hidden=5, depth=2, hidden=(8, 8))(x, mask, t, dt).shape == (4, 3)
    net = SeqSigNet(16, 5, 2, unit=3, shift=2, reduced_dim=4, swnu_hidden=5, depth=2, seq_hidden=7, hidden=(8, 8))
    assert net(x, mask, t, dt).shape == (4, 2)
    assert unit_slices(5, 3, 2) == [slice(0, 3), slice(2, 5)]
    assert unit_slices(6, 3, 2) == [slice(0, 3), slice(2, 5), slice(3, 6)]
    with pytest.raises(ValueError, match="unit"):
        unit_slices(5, 1, 1)


def test_robert_encodes_each_post_and_recurs_over_the_window():
    enc, _ = tiny_encoder(hidden=16, layers=1, heads=2, seed=0)
    net = RoBERTNet(enc, num_labels=3, lstm_hidden=6, dense=4, dropout=0.0).eval()
    ids = torch.randint(5, 100, (4, 7))
    am = torch.ones_like(ids)
    wi = torch.tensor([[-1, 0, 1], [0, 1, 2], [1, 2, 3]])
    wm = wi >= 0
    out = net(ids, am, wi, wm)
    assert out.shape == (3, 3)
    # the recurrence reads the order of the posts: swapping two slots changes the output
    swapped = wi[:, [0, 2, 1]]
    assert not torch.allclose(out[1:], net(ids, am, swapped, swapped >= 0)[1:], atol=1e-5)


@pytest.mark.parametrize("name", ["time_bilstm", "swnu", "seq_sig_net", "robert"])
def test_new_baselines_fit_and_predict(name, data):
    train, test = data
    enc = tiny_encoder(hidden=16, layers=1, heads=2, seed=0) if name == "robert" else "default"
    clf = make_classifier(name, encoder=enc, window=3, epochs=1, seed=0, progress=False, device="cpu",
                          reduced_dim=3, swnu_hidden=4, sig_depth=2, seq_hidden=5, hidden=None)
    proba = clf.fit(train, test).predict_proba(test)
    assert clf.label_names_ == ["calm", "shift"]
    assert proba.shape == (len(test.df), 2) and np.allclose(proba.sum(1), 1, atol=1e-5)


@pytest.fixture(scope="module")
def llm(tokenizer):
    return tiny_causal_lm(tokenizer=tokenizer, n_layer=1, n_embd=16, n_head=2, n_positions=1024).eval(), tokenizer


def test_llm_prompt_is_built_from_train_shots_and_the_window(llm, data):
    train, test = data
    clf = FewShotLLMClassifier(llm, window=2, shots=3, seed=1).fit(train)
    assert len(clf.examples_) == 3 and {lab for *_, lab in clf.examples_} == {"calm", "shift"}
    train_texts = set(train.df["text"])
    assert all(post in train_texts for _, post, _ in clf.examples_)
    row = 2  # third post of the first test timeline: history = the post before it
    prompt = clf.prompt_for(test, row)
    texts = test.df["text"].tolist()
    query = prompt.rsplit("####\n", 1)[1]
    assert query == f"Conversation History:\n{texts[1]}\nInput: <<<{texts[2]}>>>"
    assert "no_switch" not in prompt and "calm\nshift\n" in prompt
    for history, post, label in clf.examples_:
        assert f"Input: <<<{post}>>>\nOutput: {label}" in prompt
    assert prompt == build_prompt(clf.task_, ["calm", "shift"], clf.examples_, [texts[1]], texts[2])
    # the first post of a timeline has no history block
    first = clf.prompt_for(test, 0).rsplit("####\n", 1)[1]
    assert first == f"Input: <<<{texts[0]}>>>"


def test_llm_scores_each_label_after_the_prompt(llm, data):
    train, test = data
    clf = FewShotLLMClassifier(llm, window=2, shots=2, seed=0).fit(train)
    model, tok = llm
    prompt = clf.prompt_for(test, 1)
    got = clf.label_logprobs([prompt])[0]
    ids = tok(prompt + "\nOutput:", add_special_tokens=False)["input_ids"]
    for k, lab in enumerate(["calm", "shift"]):
        ans = tok(" " + lab, add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            logp = model(input_ids=torch.tensor([ids + ans])).logits.log_softmax(-1)[0]
        want = sum(logp[len(ids) - 1 + j, a].item() for j, a in enumerate(ans))
        assert got[k] == pytest.approx(want, abs=1e-4)
    proba = clf.predict_proba(test)
    assert proba.shape == (len(test.df), 2) and np.allclose(proba.sum(1), 1, atol=1e-5)


def test_llm_calibration_subtracts_a_content_free_or_dev_mean_bias(llm, data):
    train, test = data
    raw = FewShotLLMClassifier(llm, window=2, shots=2, seed=0).fit(train)
    assert np.array_equal(raw.bias_, np.zeros(2))
    lp = raw.label_logprobs([raw.prompt_for(test, r) for r in range(len(test.df))])

    cf = FewShotLLMClassifier(llm, window=2, shots=2, seed=0, calibrate="content-free").fit(train)
    assert cf.examples_ == raw.examples_
    empty = build_prompt(cf.task_, cf.label_names_, cf.examples_, [], "N/A")
    assert empty.rsplit("####\n", 1)[1] == "Input: <<<N/A>>>"
    assert np.allclose(cf.bias_, raw.label_logprobs([empty])[0], atol=1e-5)
    want = torch.as_tensor(lp - cf.bias_).softmax(-1).numpy()
    assert np.allclose(cf.predict_proba(test), want, atol=1e-5)

    dev = FewShotLLMClassifier(llm, window=2, shots=2, seed=0, calibrate="dev-mean").fit(train, test)
    assert np.allclose(dev.bias_, lp.mean(0), atol=1e-5)  # the dev posts' own prompts, texts only
    log_odds = np.log(dev.predict_proba(test)[:, 1]) - np.log(dev.predict_proba(test)[:, 0])
    assert abs(log_odds.mean()) < 1e-3 and 0 < dev.predict(test).mean() < 1  # neither label always wins

    with pytest.raises(ValueError, match="dev"):
        FewShotLLMClassifier(llm, window=2, shots=2, calibrate="dev-mean").fit(train)
    with pytest.raises(ValueError, match="calibrate='platt'.*content-free"):
        FewShotLLMClassifier(llm, calibrate="platt")


def test_options_a_model_does_not_take_are_refused(tmp_path, capsys):
    with pytest.raises(ValueError, match="epochs"):
        check_settings("random", {"epochs": 99})
    check_settings("time_bilstm", {"epochs": 3, "hidden": 16})
    csv = timelines_csv(tmp_path)
    out = tmp_path / "res.json"
    args = ["stream", "evaluate", "--data", f"csv:{csv}", "--time-unit", "s", "--folds", "3", "--max-folds", "1",
            "--no-progress", "--out", str(out)]
    assert main(args + ["--baseline", "random", "--epochs", "99"]) == 2
    assert "--epochs" in capsys.readouterr().err and not out.exists()
    assert main(args + ["--baseline", "llm_few_shot", "--hidden", "8"]) == 2
    assert main(args + ["--baseline", "bilstm", "--calibrate", "content-free"]) == 2
    assert "calibrate" in capsys.readouterr().err and not out.exists()
    assert main(args + ["--baseline", "random"]) == 0
    import json

    rec = json.loads(out.read_text())
    assert rec["settings"] == {} and rec["model"] == "random"


class _Fixed:
    """An estimator that is right (or wrong) on every post; records what it was fitted on."""

    def __init__(self, right, seen):
        self.right, self.seen = right, seen

    def fit(self, train, dev=None):
        self.label_names_ = list(train.label_names)
        self.seen.append((set(train.df["post_id"]), set(dev.df["post_id"])))
        return self

    def predict(self, tl):
        codes = tl.label_codes(self.label_names_)
        return codes if self.right else 1 - codes


def test_dev_tuning_keeps_the_best_point_on_dev(data):
    from tempo_analysis.stream.tuning import DevTunedClassifier, parse_grid

    train, dev = data
    seen = []
    tuned = DevTunedClassifier(lambda right, k: _Fixed(right, seen), {"right": [False, True, False], "k": [1]})
    tuned.fit(train, dev)
    assert tuned.best_params_ == {"right": True, "k": 1} and tuned.dev_macro_f1_ == 1.0
    assert [p["dev_macro_f1"] for p in tuned.tuning_] == [0.0, 1.0, 0.0]
    assert all(tr == set(train.df["post_id"]) for tr, _ in seen) and len(seen) == 3
    assert (tuned.predict(dev) == dev.label_codes(tuned.label_names_)).all()
    tuned.best_.window = 3          # window readers (the gap what-if) see the chosen model's window
    assert tuned.window == 3
    with pytest.raises(ValueError, match="dev"):
        DevTunedClassifier(lambda **p: _Fixed(True, []), {"right": [True]}).fit(train, None)
    assert parse_grid(["hidden=200,300", "lr=1e-3", "pooling=cls"]) == {"hidden": [200, 300], "lr": [1e-3],
                                                                       "pooling": ["cls"]}
    assert parse_grid(["hidden=32x32,128x128", "summary=mean_then_cls"]) == {
        "hidden": [(32, 32), (128, 128)], "summary": ["mean_then_cls"]}
    with pytest.raises(ValueError, match="KEY=V1,V2"):
        parse_grid(["hidden"])


def test_cli_tune_records_the_point_chosen_on_dev(tmp_path):
    import json

    tl = make_timelines(n_timelines=8, n_posts=(5, 4), labels=("no", "yes"), seed=4)
    csv = tmp_path / "posts.csv"
    tl.df.drop(columns=["seconds"]).assign(timestamp=tl.df["seconds"]).to_csv(csv, index=False)
    out = tmp_path / "res.json"
    args = ["stream", "evaluate", "--data", f"csv:{csv}", "--time-unit", "s", "--folds", "3", "--max-folds", "1",
            "--no-progress", "--device", "cpu", "--baseline", "bilstm", "--window", "2", "--epochs", "1",
            "--out", str(out)]
    assert main(args + ["--tune", "hidden=4,8", "--hidden", "4"]) == 2  # fixed and tuned at once
    assert main(args + ["--tune", "shots=2"]) == 2  # not a BiLSTM setting
    assert main(args + ["--tune", "seed=7,8"]) == 2  # the run's seeds are --seeds, never a tuned setting
    assert main(args + ["--tune", "window=1,2"]) == 2  # a tuned window would be filed under --window
    # a time-aware baseline takes its own time scale, fixed or tuned on dev
    timed = [a if a != "bilstm" else "time_bilstm" for a in args]
    assert main(timed + ["--time-scale", "5"]) == 0
    assert json.loads(out.read_text())["settings"]["time_scale"] == 5.0
    assert main(timed + ["--tune", "time_scale=5,20"]) == 0
    run = json.loads(out.read_text())["by_window"]["2"]["runs"][0]
    assert [p["time_scale"] for p in run["tuned"]["grid"]] == [5, 20] and "time_scale" in run["tuned"]["chosen"]
    assert main(args + ["--tune", "hidden=4,8"]) == 0
    run = json.loads(out.read_text())["by_window"]["2"]["runs"][0]
    assert [p["hidden"] for p in run["tuned"]["grid"]] == [4, 8]
    best = max(run["tuned"]["grid"], key=lambda p: p["dev_macro_f1"])
    assert run["tuned"]["chosen"] == {"hidden": best["hidden"]}


def _tiny_llama(tok):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=2048)
    return LlamaForCausalLM(cfg).eval()


@pytest.mark.parametrize("arch", ["gpt2", "llama"])
def test_llm_shared_prefix_cache_gives_the_whole_prompt_scores(arch, llm):
    from tempo_analysis.stream.llm_prompt import shared_prefix_length

    tl = make_timelines(n_timelines=6, n_posts=(5, 4, 6), labels=("no_switch", "switch", "new_switch"), seed=2)
    train, test = tl.subset(tl.timeline_ids[:4]), tl.subset(tl.timeline_ids[4:])
    model, tok = llm
    if arch == "llama":
        model = _tiny_llama(tok)
    prompts = [FewShotLLMClassifier((model, tok), window=3, shots=3, seed=0).fit(train).prompt_for(test, r)
               for r in range(len(test.df))]
    # batches of one and of three posts (two labels each): padding, the last partial batch, fresh copies
    for bs in (1, 3):
        cached = FewShotLLMClassifier((model, tok), window=3, shots=3, seed=0, batch_size=bs).fit(train)
        whole = FewShotLLMClassifier((model, tok), window=3, shots=3, seed=0, batch_size=bs,
                                     prefix_cache=False).fit(train)
        got, want = cached.label_logprobs(prompts), whole.label_logprobs(prompts)
        np.testing.assert_allclose(got, want, atol=1e-4)
    seqs = [cached._encode(p)[0] for p in prompts]
    answers = cached._encode(prompts[0])[1]
    assert sorted(map(len, answers)) == [1, 3, 3]  # one-token and two three-token answers (cache copies)
    assert len({len(s) for s in seqs}) > 1  # prompts of different lengths: right padding is exercised
    assert shared_prefix_length(seqs, 10**6) > 100  # the few-shot examples really are shared
    assert shared_prefix_length([[1, 2, 3], [1, 2, 4], [1, 5]], 10) == 1
    assert shared_prefix_length([[1, 2, 3], [1, 2, 3]], 2) == 2



class _CacheNamed(torch.nn.Module):
    """A causal LM that takes its key/value cache under one name only: `cache` (transformers 5) or
    `past_key_values` (releases before the rename). Records whether each call got a cache."""

    def __init__(self, lm, name):
        super().__init__()
        self.lm, self.config, self.calls = lm, lm.config, []
        self.forward = self._new if name == "cache" else self._old

    def _new(self, input_ids=None, attention_mask=None, cache=None, use_cache=None, position_ids=None):
        self.calls.append(cache is not None)
        return self.lm(input_ids=input_ids, attention_mask=attention_mask, cache=cache, use_cache=use_cache,
                       position_ids=position_ids)

    def _old(self, input_ids=None, attention_mask=None, past_key_values=None, use_cache=None, position_ids=None):
        self.calls.append(past_key_values is not None)
        return self._new(input_ids, attention_mask, past_key_values, use_cache, position_ids)


def test_llm_passes_the_cache_under_the_name_the_model_takes(llm):
    from tempo_analysis.causal_lm import cache_keyword

    tl = make_timelines(n_timelines=6, n_posts=(5, 4, 6), labels=("no_switch", "switch"), seed=2)
    train, test = tl.subset(tl.timeline_ids[:4]), tl.subset(tl.timeline_ids[4:])
    _, tok = llm
    model = _tiny_llama(tok)
    assert cache_keyword(model) == "cache"  # transformers 5's name (past_key_values is deprecated)
    prompts = [FewShotLLMClassifier((model, tok), window=3, shots=2, seed=0).fit(train).prompt_for(test, r)
               for r in range(3)]
    want = FewShotLLMClassifier((model, tok), window=3, shots=2, seed=0, batch_size=2, prefix_cache=False
                                ).fit(train).label_logprobs(prompts)
    for name in ("cache", "past_key_values"):
        wrapped = _CacheNamed(model, name)
        assert cache_keyword(wrapped) == name
        got = FewShotLLMClassifier((wrapped, tok), window=3, shots=2, seed=0, batch_size=2).fit(train).label_logprobs(prompts)
        np.testing.assert_allclose(got, want, atol=1e-4)
        assert any(wrapped.calls), name  # the shared prefix really went in as a cache


@pytest.mark.parametrize("name, hidden, takes", [
    ("bilstm", 0, "one hidden size"), ("time_bilstm", (64, 64), "one hidden size"),
    ("tempoformer_vectors", -4, "one hidden size"), ("ffn_history", 64, "two FFN sizes"),
    ("swnu", (8, 8, 8), "two FFN sizes"), ("seq_sig_net", (0, 8), "two FFN sizes")])
def test_a_bad_hidden_size_is_refused_when_the_baseline_is_made(name, hidden, takes):
    """0 used to become the default size silently, and a count the model cannot take crashed only
    after every post was embedded."""
    with pytest.raises(ValueError, match=f"hidden=.*takes {takes}.*Fix: e.g. --hidden"):
        make_classifier(name, hidden=hidden)


def test_cli_tune_records_each_runs_own_chosen_point(tmp_path, monkeypatch):
    """With --tune, every fold x seed run records the point chosen on ITS dev split (a mutant filing the
    first run's choice under every run passed the test above, which runs one fold and one seed)."""
    import json

    class Tuned:
        made = 0

        def __init__(self, make, grid):
            Tuned.made += 1
            self.k = Tuned.made

        def fit(self, train, dev):
            self.label_names_ = list(train.label_names)
            self.best_params_, self.tuning_ = {"hidden": self.k}, [{"hidden": self.k, "dev_macro_f1": 0.5}]
            return self

        def predict(self, timelines):
            return np.zeros(len(timelines.df), dtype=int)

    monkeypatch.setattr("tempo_analysis.stream.tuning.DevTunedClassifier", Tuned)
    tl = make_timelines(n_timelines=9, n_posts=(5, 4), labels=("no", "yes"), seed=4)
    csv = tmp_path / "posts.csv"
    tl.df.drop(columns=["seconds"]).assign(timestamp=tl.df["seconds"]).to_csv(csv, index=False)
    out = tmp_path / "res.json"
    assert main(["stream", "evaluate", "--data", f"csv:{csv}", "--time-unit", "s", "--folds", "3", "--max-folds", "2",
                 "--seeds", "0", "1", "--no-progress", "--baseline", "bilstm", "--window", "2", "--tune",
                 "hidden=4,8", "--out", str(out)]) == 0
    runs = json.loads(out.read_text())["by_window"]["2"]["runs"]
    assert [r["tuned"]["chosen"]["hidden"] for r in runs] == [1, 2, 3, 4]
    assert [r["tuned"]["grid"][0]["hidden"] for r in runs] == [1, 2, 3, 4]
