"""Shared set-up of the DCWE dev-split scripts (dcwe_dev_compare.py, dcwe_readout_check.py): notebook 03's
training defaults for the DCWE / CWE pair on the planted world, and their dev perplexities."""
import torch

from tempo_analysis.resolve import load_social
from tempo_analysis.diffusion.mlm import SocialMLMDataset, fixed_mlm_batches, mlm_perplexity
from tempo_analysis.diffusion.config import preset
from tempo_analysis.diffusion.estimator import DiffusionMapper

# notebook 03's settings (the library's notebook preset), for the DCWE / CWE pair. (Before the preset, this
# said epochs=100 against the notebook's 10: the same runs, since max_steps=40 ends training first.)
NOTEBOOK03 = {**vars(preset("notebook")), "variants": ("dcwe", "cwe")}


def fit_pair(args: dict):
    """(mapper, corpus, truth, cfg): DCWE and CWE fitted on the world; `args` = config changes, plus
    "world" (SocialWorldConfig changes), "threads" (default 1), "oracle_social" (default false: see
    :func:`use_oracle_social`) and "output_offsets" (default false: see :func:`use_output_offsets`)."""
    args = dict(args)
    world = args.pop("world", {})
    torch.set_num_threads(int(args.pop("threads", 1)))
    oracle = bool(args.pop("oracle_social", False))
    if args.pop("output_offsets", False):
        use_output_offsets()
    loaded = load_social("world", world=world)
    corpus, truth = loaded.data, loaded.truth
    cfg = preset("notebook", **{**NOTEBOOK03, **args})
    if oracle:
        use_oracle_social(corpus, truth)
    return DiffusionMapper(cfg).fit(corpus), corpus, truth, cfg


def oracle_social_tables(corpus, truth, social_dim: int) -> list:
    """Per slice, a [units, social_dim] table holding the planted adoption bits: column i is +1 where the
    unit has adopted changing word i by that slice, -1 where not; the other columns are 0."""
    words = truth["changing_words"]
    if len(words) > social_dim:
        raise ValueError(f"{len(words)} changing words do not fit social_dim={social_dim}")
    tables = []
    for t in range(len(corpus.slices)):
        tab = torch.zeros(len(corpus.units), social_dim)
        for ui, u in enumerate(corpus.units):
            for wi, w in enumerate(words):
                f = truth["words"][w]["first_slice"][u]
                tab[ui, wi] = 1.0 if (f is not None and f <= t) else -1.0
        tables.append(tab)
    return tables


def use_oracle_social(corpus, truth):
    """A diagnostic, never a model: DCWE's social vector s_{u,t} becomes the planted adoption bits of unit u
    at slice t (the GAT still runs, its output is replaced), so the offset network gets exactly what the
    world plants. How far that DCWE gets past CWE bounds what any learned social component can add at
    the same budget. Patches DynamicComponent.social_table for the rest of the process. The temporal
    ablation (one social component for all slices) keeps its learned GAT: a per-slice table would hand
    it the time it is built without."""
    from tempo_analysis.diffusion import model as dm

    learned, tables = dm.DynamicComponent.social_table, {}

    def oracle(self, t):
        s = learned(self, t)
        if self.timeless:
            return s
        key = (t, s.shape[1])
        if key not in tables:
            tables[key] = oracle_social_tables(corpus, truth, s.shape[1])[t]
        return s * 0 + tables[key]

    dm.DynamicComponent.social_table = oracle


def dev_perplexities(m, corpus, truth, cfg) -> dict:
    """{variant: (all masked tokens, the changing words' companions only)} on the dev split's fixed masks."""
    tok = m.tokenizer_
    ds = SocialMLMDataset(m.splits_["dev"], tok, corpus.unit_index, corpus.slice_index, cfg.max_length)
    b = fixed_mlm_batches(ds, tok, seed=cfg.seed + 2, repeats=3)
    comp = [truth["words"][w][k] for w in truth["changing_words"] for k in ("anchor", "old_anchor")]
    only = [tok(w, add_special_tokens=False)["input_ids"][0] for w in comp]
    return {v: (round(mlm_perplexity(m.models_[v], b), 4), round(mlm_perplexity(m.models_[v], b, only=only), 4))
            for v in ("dcwe", "cwe")}


def use_output_offsets():
    """A diagnostic: DCWE's MLM output layer also uses the dynamic embeddings. BERT ties its decoder to the
    input embeddings; here the logit of a dynamic-vocabulary word j at a masked position of a document of
    unit u in slice t becomes z·(e_j + o_{j,u,t}) + b_j, with z the head's transformed hidden state and o the
    same offset network as on the input side. CWE (no dynamic component) is unchanged. BERT-style heads
    only (`cls.predictions` with `transform` and `decoder`, as the embedded encoder has). Patches
    DCWEForMaskedLM.forward for the rest of the process."""
    import torch.nn.functional as F
    from tempo_analysis.diffusion import model as dm

    def forward(self, input_ids, unit_ids, slice_ids, attention_mask=None, token_type_ids=None, labels=None,
                output_hidden_states=False, **kwargs):
        embeds, offsets, prior_a, prior_w, pos = self.input_embeddings(input_ids, attention_mask, unit_ids,
                                                                        slice_ids)
        head = dm.mlm_head(self.encoder).predictions
        kw = {"token_type_ids": token_type_ids} if token_type_ids is not None else {}
        base = self.encoder.base_model(inputs_embeds=embeds, attention_mask=attention_mask,
                                       output_hidden_states=output_hidden_states, **kw)
        seq = base.last_hidden_state
        sel = (labels != -100) if labels is not None else torch.ones(seq.shape[:2], dtype=torch.bool)
        b_idx = sel.nonzero(as_tuple=True)[0]
        z = head.transform(seq[sel])
        logits = head.decoder(z)
        dyn = self.dynamic
        D = dyn.dynamic_mask.nonzero(as_tuple=True)[0]
        e_d = self.encoder.get_input_embeddings().weight[D]
        t_r, u_r = slice_ids[b_idx], unit_ids[b_idx]
        extra = z.new_zeros(z.shape[0], len(D))
        cache, social = {}, self.config.ablation != "sa"
        for t in sorted(set(t_r.tolist())):
            rows = (t_r == t).nonzero(as_tuple=True)[0]
            units, inv = torch.unique(u_r[rows], return_inverse=True)
            k = len(units)
            e = e_d[None].expand(k, -1, -1)
            s = dyn.social_lookup(t, units, None, cache)[:, None].expand(-1, len(D), -1) if social else None
            o = dyn.offset(t, e, s)                                  # [k, |D|, H]
            extra = extra.index_put((rows,), torch.einsum("rh,rdh->rd", z[rows], o[inv]))
        logits = logits.index_add(1, D, extra)
        task = F.cross_entropy(logits, labels[sel]) if labels is not None else None
        if labels is None:
            logits = logits.reshape(*seq.shape[:2], -1)
        loss = None if task is None else task + prior_a + prior_w
        return dm.DCWEOutput(loss=loss, logits=logits, task_loss=task, prior_a=prior_a, prior_w=prior_w,
                             hidden_states=base.hidden_states, offsets=offsets, offset_positions=pos)

    dm.DCWEForMaskedLM.forward = forward
