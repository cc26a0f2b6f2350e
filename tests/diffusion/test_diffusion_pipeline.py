"""The DiffusionMapper facade and the CLI on a tiny random encoder: variants, perplexity, save/load,
analyses, figures, analyze JSON."""
import json
import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from tempo_analysis.outputs import OutputExistsError
import torch

from tempo_analysis.cli import main
from tempo_analysis.diffusion import (DiffusionMapper, DiffusionTrainConfig, SliceBatchSampler, SocialMLMDataset,
                                      fixed_mlm_batches, mlm_perplexity)
from tempo_analysis.diffusion.analysis import recover_mode
from tempo_analysis.diffusion.config import preset
from tempo_analysis.diffusion.classify import train_dcwe_classifier
from tempo_analysis.encoders import tiny_encoder
from tempo_analysis.world import SocialWorldConfig, generate_social

SMALL = SocialWorldConfig(n_units=12, n_communities=2, n_slices=3, n_changing=2, n_stable=1, docs_per_word=2,
                          speed=2, n_seeds=1, seed=0, paired_layout="all")
FAST = dict(node2vec=dict(dim=8, num_walks=2, walk_length=10), social_dim=8, gat_heads=2, batch_size=8,
            progress=False)


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("tiny_mlm")
    enc, tok = tiny_encoder(head="mlm", seed=0)
    enc.save_pretrained(d)
    tok.save_pretrained(d)
    return str(d)


@pytest.fixture(scope="module")
def run(tiny_dir):
    corpus, _ = generate_social(SMALL)
    cfg = DiffusionTrainConfig(encoder=tiny_dir, epochs=1, max_steps=2, head_warmup_steps=1, **FAST)
    mapper = DiffusionMapper(cfg)
    assert mapper.fit(corpus) is mapper  # fit returns self
    return mapper


def test_variants_and_perplexity(run):
    assert set(run.models_) == {"dcwe", "cwe", "sa", "ta"}
    assert set(run.perplexity_) == {"start", "dcwe", "cwe", "sa", "ta"}
    assert all(math.isfinite(v) and v > 1 for v in run.perplexity_.values())
    assert run.models_["sa"].config.ablation == "sa" and len(run.models_["sa"].dynamic.social) == 0
    assert len(run.models_["ta"].dynamic.social) == 1 and len(run.model_.dynamic.social) == 3
    assert run.warmup_steps_ == {"head": 1, "shared": 0}
    assert set(run.histories_) == set(run.models_) and run.history_ is run.histories_["dcwe"]
    assert run.model_ is run.models_["dcwe"] and run.history_ and "train_loss" in run.history_[0]
    assert run.model_.config.units == run.corpus_.units and run.model_.config.slices == [0, 1, 2]
    # training moved the offsets away from zero
    assert any(f.fc2.weight.abs().max() > 0 for f in run.model_.dynamic.ffns)
    sizes = {k: len(v) for k, v in run.splits_.items()}
    assert sum(sizes.values()) == len(run.corpus_) and sizes["test"] > sizes["dev"] > 0


def test_held_out_perplexity_reads_the_fit_masks_and_the_companions_apart(run):
    """The same fixed test masks as fit (so the numbers match perplexity_), and `words` scores only
    the masked tokens of those words (here the planted companions, which the unit and time decide)."""
    whole = run.held_out_perplexity()
    assert whole == pytest.approx({k: v for k, v in run.perplexity_.items() if k != "start"})
    companions = ["server", "rain", "viewers", "fish"]
    part = run.held_out_perplexity(words=companions, variants=("dcwe", "cwe"))
    assert set(part) == {"dcwe", "cwe"} and all(math.isfinite(v) and v > 1 for v in part.values())
    assert all(part[v] != pytest.approx(whole[v]) for v in part)     # a different set of tokens
    with pytest.raises(ValueError, match="no masked tokens among"):
        run.held_out_perplexity(words=["zebra"])
    with pytest.raises(ValueError, match="one-token words"):
        run.held_out_perplexity(words=["cloud server"])


def test_paired_comparison_scores_each_test_document_on_the_fit_masks(run):
    """Per-document losses add up to the perplexity fit reported; the Wilcoxon test pairs the documents,
    and a model against itself is no difference at all."""
    got = run.paired_comparison("dcwe", "cwe")
    assert got["dcwe"] == pytest.approx(run.perplexity_["dcwe"]) and got["cwe"] == pytest.approx(run.perplexity_["cwe"])
    assert got["gain"] == pytest.approx(1 - got["dcwe"] / got["cwe"])
    assert 0 < got["n_docs"] <= len(run.splits_["test"]) and 0 <= got["share_lower"] <= 1
    assert 0 <= got["p_value"] <= 1 and got["wilcoxon"] is not None
    same = run.paired_comparison("cwe", "cwe")
    assert same["gain"] == 0 and same["p_value"] == 1.0 and same["share_lower"] == 0


def test_document_nll_gives_each_row_to_its_document(run):
    """Row k of the fixed batches is document k % n (repeats): the per-document sums add up to the whole."""
    from tempo_analysis.diffusion.mlm import document_nll

    ds = SocialMLMDataset(run.splits_["test"], run.tokenizer_, run.corpus_.unit_index, run.corpus_.slice_index)
    one = fixed_mlm_batches(ds, run.tokenizer_, seed=5, batch_size=3)
    twice = fixed_mlm_batches(ds, run.tokenizer_, seed=5, batch_size=3, repeats=2)
    s1, n1 = document_nll(run.model_, one, len(ds))
    s2, n2 = document_nll(run.model_, twice, len(ds))
    assert math.exp(s1.sum() / n1.sum()) == pytest.approx(mlm_perplexity(run.model_, one))
    labels = torch.cat([torch.nn.functional.pad(b["labels"], (0, 64 - b["labels"].shape[1]), value=-100)
                        for b in one])
    assert list(n1) == (labels != -100).sum(1).tolist()           # each document's own masked tokens
    assert (n2 >= n1).all() and n2.sum() > n1.sum()                # the second pass adds to the same documents


def test_save_load_roundtrip(run, tmp_path):
    run.save(tmp_path / "run")
    again = DiffusionMapper.load(tmp_path / "run")
    assert again.perplexity_ == pytest.approx(run.perplexity_) and again.config_ == run.config_
    assert again.histories_ == run.histories_ and again.warmup_steps_ == run.warmup_steps_
    assert again.corpus_.slices == run.corpus_.slices and len(again.corpus_) == len(run.corpus_)
    ds = SocialMLMDataset(run.splits_["test"], run.tokenizer_, run.corpus_.unit_index, run.corpus_.slice_index)
    batches = fixed_mlm_batches(ds, run.tokenizer_, seed=3)
    for v in ("dcwe", "cwe"):
        assert mlm_perplexity(again.models_[v], batches) == pytest.approx(mlm_perplexity(run.models_[v], batches))
    with pytest.raises(FileNotFoundError, match="has no config.json"):
        DiffusionMapper.load(tmp_path)
    from transformers import AutoConfig   # a saved DCWE folder reads as a DCWEConfig, not the base config
    assert type(AutoConfig.from_pretrained(tmp_path / "run" / "dcwe")).__name__ == "DCWEConfig"


def test_a_directed_graph_stays_directed_after_save_and_load(run, tmp_path):
    import copy
    import networkx as nx

    directed = copy.copy(run)
    directed.corpus_ = copy.copy(run.corpus_)
    directed.corpus_.graph = nx.DiGraph(run.corpus_.graph.edges(data=True))
    directed.corpus_.graph.add_nodes_from(run.corpus_.graph.nodes)
    directed.save(tmp_path / "directed")
    back = DiffusionMapper.load(tmp_path / "directed")
    assert back.corpus_.graph.is_directed()
    assert sorted(back.corpus_.graph.edges) == sorted(directed.corpus_.graph.edges)
    run.save(tmp_path / "undirected")
    assert not DiffusionMapper.load(tmp_path / "undirected").corpus_.graph.is_directed()


def test_save_replaces_a_run_as_a_whole_and_never_a_users_folder(run, tmp_path):
    """A run folder of ours is replaced whole (no stale variant of an older run survives, so a later
    `analyze` cannot load it); a user's non-empty folder is refused unless overwrite=True."""
    out = tmp_path / "run"
    import copy

    older = copy.copy(run)
    older.truth_ = {"mode": "walk"}
    older.save(out)                                                # an older run: four variants, a planted truth
    assert DiffusionMapper.load(out).truth_ == {"mode": "walk"}
    newer = copy.copy(run)
    newer.models_ = {"cwe": run.models_["cwe"]}
    newer.save(out)
    assert not (out / "dcwe").exists() and not (out / "truth.json").exists()
    assert list(DiffusionMapper.load(out).models_) == ["cwe"] and DiffusionMapper.load(out).truth_ is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"], "no temporary sibling is left behind"
    user = tmp_path / "mine"
    user.mkdir()
    (user / "notes.txt").write_text("keep")
    with pytest.raises(OutputExistsError, match="--overwrite"):
        run.save(user)
    assert [p.name for p in user.iterdir()] == ["notes.txt"]
    run.save(user, overwrite=True)
    assert (user / "run.json").is_file() and not (user / "notes.txt").exists()


def test_unfitted_mapper_says_so():
    mapper = DiffusionMapper(epochs=3, variants=("dcwe",))
    assert mapper.get_config().epochs == 3 and mapper.get_config().variants == ("dcwe",)
    assert DiffusionMapper(mapper.get_config(), epochs=1).get_config().epochs == 1
    assert DiffusionMapper("notebook").get_config() == preset("notebook") != DiffusionTrainConfig()
    with pytest.raises(ValueError, match="not fitted"):
        mapper.analyze("cloud", "server")
    with pytest.raises(ValueError, match="not fitted"):
        mapper.save("nowhere")


def test_analyses_and_figures(run):
    index = run.context_index(progress=False)
    result = run.analyze("cloud", "server", index=index, n_neighbors=5)
    assert result.word == "cloud" and result.n_neighbors == 5
    assert set(result.first) == set(run.corpus_.units)
    # the first arrivals are those of the r-hat table, and the mode is read from them
    grid = result.rhat.pivot_table(index="unit", columns="time", values="rhat")
    for u, t in result.first.items():
        row = grid.loc[u] if u in grid.index else pd.Series(dtype=float)
        assert t == next((s for s in run.corpus_.slices if row.get(s, 0) > 0), None), u
    # the walk/flight table and the mode count every unit of the map once: seeds + newcomers = units reached
    wf = result.walk_flight
    assert wf["time"].tolist() == list(run.corpus_.slices)
    assert int(wf["seeds"].sum() + wf["new"].sum()) == sum(t is not None for t in result.first.values())
    assert result.mode["new_units"] == int(wf["new"].sum())
    if result.mode["new_units"]:
        assert result.mode["walk_share"] == pytest.approx(wf["walk"].sum() / wf["new"].sum())
    # the chance share is drawn over the units observed in each slice (the map's holds), as the CLI's is
    again = recover_mode(run.corpus_.graph, result.first, run.corpus_.slices, holds=result.holds)
    assert json.dumps(result.mode, sort_keys=True) == json.dumps(again, sort_keys=True)  # (NaN-safe)
    assert run.analyze("cloud", "server", n_neighbors=5).to_dict() == result.to_dict()  # same index, same answer
    figs = [run.visualize_perplexity(), run.visualize_network_map(result), run.visualize_walk_flight(result),
            run.visualize_rhat(result)]
    assert all(isinstance(f, go.Figure) for f in figs)
    panels = {tr.get("xaxis", "x") for tr in figs[1].to_dict()["data"] if tr.get("hovertext")}
    assert len(panels) == len(run.corpus_.slices)                          # one panel per slice
    slider = run.visualize_network_map(result, slider=True).to_dict()
    assert len(slider["data"]) == 1 + len(run.corpus_.slices)              # edges + one trace per slice
    table, sims = run.variable_words(top=3, min_contexts=1)
    assert len(table) <= 3 and {"word", "sigma_sim"} <= set(table.columns) and len(sims) >= len(table)
    assert isinstance(run.visualize_variable_words(table), go.Figure)
    with pytest.raises(ValueError, match="no 'bert' model"):
        run.context_index("bert")


def test_dataset_rejects_unknown_unit(run):
    bad = pd.DataFrame({"doc_id": ["x"], "unit": ["zz"], "time": [0], "text": ["a cloud"]})
    with pytest.raises(ValueError, match=r"unit\(s\) \['zz'\] are not nodes of the social graph"):
        SocialMLMDataset(bad, run.tokenizer_, run.corpus_.unit_index, run.corpus_.slice_index)


def test_shared_warmup_gives_every_variant_the_same_start(tiny_dir):
    """shared_warmup_steps: plain MLM on the training text once, then every variant forks from it,
    so "start" (the encoder every variant begins from) is the warmed encoder, not the raw one."""
    corpus, _ = generate_social(SMALL)
    base = dict(encoder=tiny_dir, epochs=1, max_steps=1, head_warmup_steps=0, variants=("dcwe", "cwe"),
                lr=1e-3, mlm_probability=0.3, slice_batches=False, **FAST)
    raw = DiffusionMapper(**base).fit(corpus)
    warm = DiffusionMapper(**base, shared_warmup_steps=3).fit(corpus)
    assert warm.warmup_steps_["shared"] == 3 and raw.warmup_steps_["shared"] == 0
    assert warm.perplexity_["start"] != raw.perplexity_["start"]
    # the same seed and steps after the fork: the trained models differ only through their start
    assert not torch.equal(warm.models_["cwe"].encoder.get_input_embeddings().weight,
                           raw.models_["cwe"].encoder.get_input_embeddings().weight)
    with pytest.raises(ValueError, match="mlm_probability"):
        DiffusionTrainConfig(mlm_probability=0)


def test_config_validation():
    with pytest.raises(ValueError, match="variants"):
        DiffusionTrainConfig(variants=("dcwe", "bert"))
    with pytest.raises(ValueError, match="head_warmup_steps"):
        DiffusionTrainConfig(head_warmup_steps=-1)


def test_cli_train_and_analyze_csv(tiny_dir, tmp_path, capsys):
    corpus, truth = generate_social(SMALL)
    lonely = pd.DataFrame({"doc_id": ["l0", "l1", "l2"], "unit": "lonely", "time": [0, 1, 2],
                           "text": ["A cloud over the lonely hill."] * 3})
    pd.concat([corpus.df, lonely]).to_csv(tmp_path / "docs.csv", index=False)
    edges = pd.DataFrame(list(corpus.graph.edges), columns=["source", "target"])
    edges.to_csv(tmp_path / "edges.csv", index=False)
    out = tmp_path / "run"
    with pytest.warns(UserWarning, match=r"isolated node\(s\) \['lonely'\]"):  # walks of itself; run goes on
        rc = main(["diffusion", "train", "--data", f"csv:{tmp_path / 'docs.csv'},{tmp_path / 'edges.csv'}",
                   "--model", tiny_dir, "--out", str(out), "--variants", "dcwe", "--epochs", "1", "--max-steps", "1",
                   "--batch-size", "8", "--no-progress"])
    assert rc == 0 and (out / "dcwe" / "model.safetensors").is_file() and (out / "run.json").is_file()
    rc = main(["diffusion", "analyze", "--checkpoint", str(out), "--word", "cloud", "--anchor", "server",
               "--n", "5", "--out", str(tmp_path / "result.json"), "--no-progress"])
    assert rc == 0
    res = json.loads((tmp_path / "result.json").read_text())
    assert res["word"] == "cloud" and res["n_neighbors"] == 5
    assert {"unit", "time", "rhat", "n", "example"} <= set(res["rhat"][0])
    assert set(res["first_arrival"]) == set(corpus.units) | {"lonely"}
    assert [r["time"] for r in res["walk_flight"]] == [0, 1, 2]
    g = corpus.graph.copy()
    g.add_node("lonely")
    again = recover_mode(g, res["first_arrival"], [0, 1, 2])
    assert res["mode"]["mode"] == again["mode"] and res["mode"]["new_units"] == again["new_units"]
    assert "recovered mode" in capsys.readouterr().out
    # bad input: a word that never occurs -> one clear line, exit code 2
    rc = main(["diffusion", "analyze", "--checkpoint", str(out), "--word", "zebra", "--anchor", "server",
               "--out", str(tmp_path / "r2.json"), "--no-progress"])
    assert rc == 2 and "never occurs" in capsys.readouterr().err
    rc = main(["diffusion", "train", "--data", "parquet:x", "--out", str(tmp_path / "x")])
    assert rc == 2 and "use one of world" in capsys.readouterr().err


def test_cli_world_run_has_truth(tiny_dir, tmp_path):
    out = tmp_path / "wrun"
    rc = main(["diffusion", "train", "--data", "world", "--mode", "flight", "--model", tiny_dir, "--out", str(out),
               "--variants", "dcwe", "--max-steps", "1", "--batch-size", "8", "--no-progress"])
    assert rc == 0
    truth = json.loads((out / "truth.json").read_text())
    assert truth["mode"] == "flight"
    rc = main(["diffusion", "analyze", "--checkpoint", str(out), "--word", truth["word"], "--anchor",
               truth["anchor"], "--out", str(tmp_path / "r.json"), "--max-docs", "2", "--no-progress"])
    res = json.loads((tmp_path / "r.json").read_text())
    assert rc == 0 and res["planted"]["mode"] == "flight" and res["planted"]["anchor"] == truth["anchor"]
    assert torch.tensor([r["rhat"] for r in res["rhat"]]).ge(0).all()


def test_slice_batch_sampler():
    slices = [0, 0, 0, 1, 1, 2, 2, 2, 2, 0, 1]
    s = SliceBatchSampler(slices, batch_size=2, seed=0)
    first, second = list(s), list(s)
    for epoch in (first, second):
        assert sorted(i for b in epoch for i in b) == list(range(len(slices)))  # every example once
        assert all(len({slices[i] for i in b}) == 1 and len(b) <= 2 for b in epoch)  # one slice per batch
    assert first != second and len(s) == len(first)  # reshuffled each epoch, seeded
    assert list(SliceBatchSampler(slices, 2, seed=0)) == first


def test_classifier_on_a_labelled_social_corpus():
    corpus, _ = generate_social(SMALL)  # label = the sense of "cloud" (empty for chatter documents)
    enc, tok = tiny_encoder(seed=0)
    clf = train_dcwe_classifier(corpus, "sense", (enc, tok), epochs=2, batch_size=8, node2vec=FAST["node2vec"],
                                social_dim=8, gat_heads=2, progress=False)
    n_chatter = int((corpus.df["sense"] == "").sum())
    assert clf.dropped_unlabelled_ == n_chatter > 0
    assert clf.label_names == ["computing", "sky"] and 0 <= clf.scores_["macro_f1"] <= 1
    assert sum(clf.scores_["support"].values()) > 0
    rows = corpus.df[corpus.df["sense"] != ""].head(3)
    assert set(clf.predict(rows)) <= {"computing", "sky"} and len(clf.predict(rows)) == 3
    with pytest.raises(ValueError, match="not in the corpus"):
        train_dcwe_classifier(corpus, "stars", (enc, tok))


def test_every_variant_trains_on_the_same_masks(tiny_dir, monkeypatch):
    """DCWE's offset and GAT dropout draw random numbers that CWE does not: the training masks come
    from a generator of their own, so each variant sees the same masked positions and replacements."""
    import tempo_analysis.diffusion.estimator as pipeline

    seen = []

    class Recording(pipeline.MLMCollator):
        def __call__(self, items):
            batch = super().__call__(items)
            seen.append((batch["input_ids"].clone(), batch["labels"].clone()))
            return batch

    monkeypatch.setattr(pipeline, "MLMCollator", Recording)
    corpus, _ = generate_social(SMALL)
    cfg = DiffusionTrainConfig(encoder=tiny_dir, epochs=1, max_steps=3, head_warmup_steps=0, shared_warmup_steps=0,
                               variants=("dcwe", "cwe"), **FAST)
    DiffusionMapper(cfg).fit(corpus)
    assert len(seen) == 6                       # 3 training batches of DCWE, then 3 of CWE
    dcwe, cwe = seen[:3], seen[3:]
    for (ids_a, lab_a), (ids_b, lab_b) in zip(dcwe, cwe):
        assert torch.equal(ids_a, ids_b) and torch.equal(lab_a, lab_b)


def test_a_run_without_a_dev_split_trains_and_scores(tiny_dir):
    """dev=0 (or a corpus too small for one): no dev split, nothing to select on, the run still scores its test."""
    corpus, _ = generate_social(SMALL)
    cfg = DiffusionTrainConfig(encoder=tiny_dir, dev=0.0, epochs=1, max_steps=2, head_warmup_steps=1,
                               variants=("dcwe", "cwe"), **FAST)
    mapper = DiffusionMapper(cfg).fit(corpus)
    assert len(mapper.splits_["dev"]) == 0 and len(mapper.splits_["train"]) + len(mapper.splits_["test"]) == len(corpus)
    assert all(math.isfinite(v) and v > 1 for v in mapper.perplexity_.values()) and set(mapper.perplexity_) == {
        "start", "dcwe", "cwe"}


def test_paired_comparison_statistics_from_known_document_losses(run, monkeypatch):
    """Per-document losses given: documents without a masked token are left out, ties count as not lower, and
    the test is scipy's Wilcoxon over the paired mean losses (a tie is kept, not a reason to skip the test)."""
    import numpy as np
    from scipy.stats import wilcoxon

    import tempo_analysis.diffusion.estimator as pipeline

    sums = {"dcwe": np.array([1.0, 2.0, 3.0, 6.0, 0.0, 0.5]), "cwe": np.array([2.0, 2.0, 1.5, 8.0, 0.0, 1.0])}
    n = np.array([1, 1, 1, 2, 0, 1])
    monkeypatch.setattr(pipeline, "document_nll",
                        lambda model, batches, n_docs: (sums["dcwe" if model is run.models_["dcwe"] else "cwe"], n))
    got = run.paired_comparison("dcwe", "cwe")
    a, b = np.array([1.0, 2.0, 3.0, 3.0, 0.5]), np.array([2.0, 2.0, 1.5, 4.0, 1.0])
    assert got["n_docs"] == 5 and got["share_lower"] == pytest.approx(3 / 5)
    assert got["dcwe"] == pytest.approx(np.exp(12.5 / 6)) and got["cwe"] == pytest.approx(np.exp(14.5 / 6))
    assert got["wilcoxon"] == pytest.approx(wilcoxon(a, b).statistic) and got["p_value"] == pytest.approx(
        wilcoxon(a, b).pvalue)
    assert run.paired_comparison("cwe", "dcwe")["share_lower"] == pytest.approx(1 / 5)


@pytest.fixture(scope="module")
def cloud_map(run):
    return run.analyze("cloud", "server", index=run.context_index(progress=False), n_neighbors=5)


def test_the_network_map_defaults_to_louvain_communities_and_the_r_hat_scale(run, cloud_map):
    from tempo_analysis.diffusion.analysis import graph_communities

    fig = run.visualize_network_map(cloud_map, top_words=None).to_dict()
    given = run.visualize_network_map(cloud_map, top_words=None,
                                      communities=graph_communities(run.corpus_.graph, seed=0)).to_dict()
    plain = run.visualize_network_map(cloud_map, top_words=None, communities={}).to_dict()
    assert fig == given != plain
    assert fig["layout"]["coloraxis"]["cmax"] == 5.0                # r-hat counts of 5 neighbours at most
    words = {u: ["zebra"] for u in run.corpus_.units}                 # a {unit: words} table is used as given
    hover = " ".join(str(tr.get("hovertext")) for tr in run.visualize_network_map(cloud_map, top_words=words)
                     .to_dict()["data"])
    assert "zebra" in hover


def test_context_index_progress_follows_the_config_unless_given(run, capfd):
    capfd.readouterr()
    run.context_index(progress=True)
    assert "encode" in capfd.readouterr().err
    run.context_index()                                              # the run's config: progress=False
    assert "encode" not in capfd.readouterr().err


def test_save_and_load_keep_the_corpus_as_it_was(run, tmp_path):
    """Units or texts that read as missing values in a CSV ("NA", "null") and the document table's columns
    come back as they were saved, with the same splits."""
    import copy

    import networkx as nx

    from tempo_analysis.data import SocialCorpus

    rename = {run.corpus_.units[0]: "NA"}
    df = run.corpus_.df.copy()
    df["unit"] = df["unit"].replace(rename)
    df.loc[0, "text"] = "null"
    corpus = SocialCorpus.from_frame(df, nx.relabel_nodes(run.corpus_.graph, rename), slices=run.corpus_.slices)
    mapper = copy.copy(run)
    mapper.corpus_ = corpus
    mapper.save(tmp_path / "run")
    again = DiffusionMapper.load(tmp_path / "run", variants=["cwe"])
    assert again.config_.variants == ("cwe",) and list(again.models_) == ["cwe"] and again.model_ is again.models_["cwe"]
    assert again.config.variants == run.config_.variants                 # the saved settings, as saved
    pd.testing.assert_frame_equal(again.corpus_.df, corpus.df)
    assert again.corpus_.units == corpus.units and "NA" in again.corpus_.units
    assert {k: v["doc_id"].tolist() for k, v in again.splits_.items()} == {
        k: v["doc_id"].tolist() for k, v in run.splits_.items()}


def test_analyze_predictions_reads_every_model_on_dcwes_candidates(run, tmp_path, capsys):
    """notebook 03's map (is the anchor the model's first choice in "cloud [MASK]." for this unit and
    slice?) from the facade and from `diffusion analyze --read predictions`, for DCWE and its controls."""
    from tempo_analysis.diffusion.evaluate import without_offsets
    from tempo_analysis.diffusion.probe import prediction_rhat

    corpus, tok, ids = run.corpus_, run.tokenizer_, run.model_.dynamic_token_ids
    cells = len(corpus.units) * len(corpus.slices)
    for variant in ("dcwe", "cwe"):
        got = run.analyze_predictions("cloud", "server", variant=variant)
        want = prediction_rhat(run.models_[variant], tok, "cloud", "server", corpus.units, corpus.slices, candidates=ids)
        pd.testing.assert_frame_equal(got.rhat, want)
        assert got.n_neighbors == 1 and len(got.rhat) == cells and set(got.first) == set(corpus.units)
    assert run.analyze_predictions("cloud", "server", variant="cwe").rhat["rank"].nunique() == 1   # blind to (u, t)
    blind = without_offsets(run.model_)
    zeroed = run.analyze_predictions("cloud", "server", model=blind, n_neighbors=3).rhat
    assert zeroed["rank"].nunique() == 1 and (zeroed["n_neighbors"] == 3).all()
    want = prediction_rhat(blind, tok, "cloud", "server", corpus.units, corpus.slices, n_neighbors=3, candidates=ids)
    assert np.array_equal(zeroed["anchor_prob"], want["anchor_prob"])        # the model given is the one read
    dcwe = run.analyze_predictions("cloud", "server").rhat
    assert not np.array_equal(zeroed["anchor_prob"], dcwe["anchor_prob"])     # (and it is not DCWE itself)
    # the same map from the command line, read from CWE of a saved run
    run.save(tmp_path / "run")
    rc = main(["diffusion", "analyze", "--checkpoint", str(tmp_path / "run"), "--word", "cloud", "--anchor", "server",
               "--read", "predictions", "--variant", "cwe", "--out", str(tmp_path / "p.json"), "--no-progress"])
    assert rc == 0, capsys.readouterr().err
    res = json.loads((tmp_path / "p.json").read_text())
    cwe = run.analyze_predictions("cloud", "server", variant="cwe").rhat
    assert res["read"] == "predictions" and res["variant"] == "cwe" and res["n_neighbors"] == 1
    assert [r["rank"] for r in res["rhat"]] == cwe["rank"].tolist() and len(res["rhat"]) == cells
    rc = main(["diffusion", "analyze", "--checkpoint", str(tmp_path / "run"), "--word", "cloud", "--anchor", "server",
               "--read", "predictions", "--max-docs", "2", "--out", str(tmp_path / "q.json")])
    assert rc == 2 and "--max-docs applies only to --read neighbours" in capsys.readouterr().err


@pytest.mark.parametrize("method, function, names", [
    ("analyze", "tempo_analysis.diffusion.report:analyze", ["n_neighbors", "threshold", "min_count", "word_docs"]),
    ("analyze_predictions", "tempo_analysis.diffusion.report:prediction_map", ["n_neighbors", "threshold"]),
    ("variable_words", "tempo_analysis.diffusion.analysis:sim_table", ["top", "min_contexts"]),
    ("context_index", "tempo_analysis.diffusion.report:index_corpus",
     ["max_docs_per_unit_slice", "batch_size", "max_length", "seed"]),
])
def test_the_facade_keeps_the_defaults_of_the_functions_it_calls(method, function, names):
    """A DiffusionMapper method and the pure function behind it mean the same when called alike."""
    import importlib
    import inspect

    module, name = function.split(":")
    theirs = inspect.signature(getattr(importlib.import_module(module), name)).parameters
    ours = inspect.signature(getattr(DiffusionMapper, method)).parameters
    assert {n: ours[n].default for n in names} == {n: theirs[n].default for n in names}


def test_the_network_maps_layout_follows_the_seed_unless_given(run, cloud_map, monkeypatch):
    from tempo_analysis.figures import diffusion as figures

    real, seeds = figures.graph_layout, []

    def layout(graph, seed=0):
        seeds.append(seed)
        return real(graph, seed=seed)

    monkeypatch.setattr(figures, "graph_layout", layout)
    for slider in (False, True):
        seeds.clear()
        run.visualize_network_map(cloud_map, top_words=None, communities={}, seed=3, slider=slider)
        assert seeds == [3]
        seeds.clear()
        given = {u: (float(i), 0.0) for i, u in enumerate(run.corpus_.units)}
        fig = run.visualize_network_map(cloud_map, top_words=None, communities={}, slider=slider, layout=given)
        assert seeds == []                                   # a given layout is used as it is
        xs = {x for tr in fig.to_dict()["data"] if tr.get("mode") == "markers" for x in tr.get("x", []) if x is not None}
        assert xs <= {float(i) for i in range(len(given))}
