"""DiffusionMapper's training set-up at its edges: the config's refusals, the two learning rates' parameter
groups, and when the MLM head counts as fresh (so that "auto" warms it up)."""
import inspect

import pytest
import torch

from tempo_analysis.diffusion import DiffusionMapper, DiffusionTrainConfig
from tempo_analysis.diffusion.classify import train_dcwe_classifier
from tempo_analysis.diffusion.training import build_dcwe, load_mlm_encoder, param_groups
from tempo_analysis.encoders import tiny_encoder
from tempo_analysis.world import SocialWorldConfig, generate_social

SMALL = SocialWorldConfig(n_units=12, n_communities=2, n_slices=3, n_changing=2, n_stable=1, docs_per_word=2,
                          speed=2, n_seeds=1, seed=0, paired_layout="all")


@pytest.mark.parametrize("kw, field", [
    ({"epochs": 0}, "epochs=0"), ({"epochs": 1.5}, "epochs=1.5"),
    ({"shared_warmup_steps": -1}, "shared_warmup_steps=-1"), ({"shared_warmup_steps": 2.0}, "shared_warmup_steps=2.0"),
    ({"mlm_probability": 1.0}, "mlm_probability=1.0"), ({"mlm_probability": 0.0}, "mlm_probability=0.0"),
    ({"mlm_probability": "0.3"}, "mlm_probability='0.3'"),
    ({"head_warmup_steps": -1}, "head_warmup_steps=-1"), ({"head_warmup_steps": "some"}, "head_warmup_steps='some'"),
    ({"variants": ()}, "variants=()"), ({"variants": ("dcwe", "bert")}, "variants=")])
def test_bad_settings_are_refused_by_name(kw, field):
    with pytest.raises(ValueError, match=field.replace("(", r"\(").replace(")", r"\)")):
        DiffusionTrainConfig(**kw)


def test_the_edges_of_each_range_are_accepted():
    cfg = DiffusionTrainConfig(epochs=1, shared_warmup_steps=0, mlm_probability=0.99, head_warmup_steps=0,
                               variants=["cwe"])
    assert cfg.variants == ("cwe",)


@pytest.fixture(scope="module")
def dcwe():
    corpus, _ = generate_social(SMALL)
    enc, tok = tiny_encoder(head="mlm", seed=0)
    return build_dcwe(enc, corpus, torch.randn(len(corpus.units), 8), [tok.convert_tokens_to_ids("cloud")], "dcwe",
                      DiffusionTrainConfig(social_dim=8, gat_heads=2))


def test_the_encoder_trains_at_lr_the_dynamic_component_at_dynamic_lr_without_decay_on_vectors(dcwe):
    groups = param_groups(dcwe, DiffusionTrainConfig(lr=1e-4, dynamic_lr=3e-3), decay=0.05)
    name = {id(p): n for n, p in dcwe.named_parameters()}
    seen = [id(p) for g in groups for p in g["params"]]
    assert sorted(seen) == sorted(id(p) for p in dcwe.parameters()) and len(seen) == len(set(seen))  # each once
    for g in groups:
        names = [name[id(p)] for p in g["params"]]
        assert all(n.startswith("dynamic.") for n in names) == (g["lr"] == 3e-3), (g["lr"], names[:3])
        assert all(n.startswith("dynamic.") for n in names) or not any(n.startswith("dynamic.") for n in names)
        assert g["weight_decay"] == (0.05 if all(p.ndim >= 2 for p in g["params"]) else 0.0)
        assert all(p.ndim >= 2 for p in g["params"]) or all(p.ndim < 2 for p in g["params"])
    assert {g["lr"] for g in groups} == {1e-4, 3e-3} and len(groups) == 4


def test_frozen_parameters_are_left_out_of_every_group(dcwe):
    frozen = [p for n, p in dcwe.named_parameters() if n.startswith("dynamic.ffns")]
    for p in frozen:
        p.requires_grad = False
    try:
        groups = param_groups(dcwe, DiffusionTrainConfig())
        kept = {id(p) for g in groups for p in g["params"]}
        assert not kept & {id(p) for p in frozen}
        assert kept == {id(p) for p in dcwe.parameters() if p.requires_grad}
    finally:
        for p in frozen:
            p.requires_grad = True


def test_a_saved_mlm_head_is_not_fresh_and_a_bare_body_is(encoder_dirs):
    assert load_mlm_encoder(encoder_dirs["with_head"])[2] is False
    assert load_mlm_encoder(encoder_dirs["bare"])[2] is True


@pytest.fixture(scope="module")
def encoder_dirs(tmp_path_factory):
    """A tiny encoder saved with its MLM head, and the same body without one."""
    dirs = {}
    for name, head in (("with_head", "mlm"), ("bare", None)):
        d = tmp_path_factory.mktemp(name)
        enc, tok = tiny_encoder(head=head, seed=0)
        enc.save_pretrained(d)
        tok.save_pretrained(d)
        dirs[name] = str(d)
    return dirs


def _fit(encoder, **kw):
    cfg = DiffusionTrainConfig(encoder=encoder, variants=("cwe",), epochs=1, batch_size=8, progress=False,
                               node2vec=dict(dim=8, num_walks=2, walk_length=10), social_dim=8, gat_heads=2, **kw)
    return DiffusionMapper(cfg).fit(generate_social(SMALL)[0])


def test_auto_head_warmup_trains_a_fresh_head_for_one_variants_steps_and_a_saved_head_not_at_all(encoder_dirs):
    capped = _fit(encoder_dirs["bare"], max_steps=2)
    assert capped.warmup_steps_["head"] == 2                       # as many steps as a variant trains
    whole = _fit(encoder_dirs["bare"], max_steps=None)
    epoch = -(-len(whole.splits_["train"]) // 8)
    assert epoch > 2 and whole.warmup_steps_["head"] == epoch       # at most one epoch
    assert _fit(encoder_dirs["with_head"], max_steps=2).warmup_steps_["head"] == 0


def test_the_social_components_defaults_are_the_references():
    """REFERENCE-NOTES section 3: s of size 50 from 2 GAT layers of 4 heads (dropout 0.6), offset FFN dropout 0.2,
    lambda_a = 1e-3 lambda_w; BERT's 15% held-out masks, each test document masked 3 times; 70/10/20 splits."""
    cfg = DiffusionTrainConfig()
    assert (cfg.social_dim, cfg.gat_heads, cfg.gat_dropout, cfg.offset_dropout, cfg.lambda_a) == (50, 4, 0.6, 0.2, None)
    assert (cfg.mlm_probability, cfg.eval_repeats, cfg.dev, cfg.test, cfg.seed) == (0.15, 3, 0.1, 0.2, 0)
    assert (cfg.max_length, cfg.slice_batches, cfg.variants) == (64, True, ("dcwe", "cwe", "sa", "ta"))
    clf = {k: v.default for k, v in inspect.signature(train_dcwe_classifier).parameters.items()}
    assert (clf["social_dim"], clf["gat_heads"], clf["max_length"], clf["seed"]) == (50, 4, 128, 0)
