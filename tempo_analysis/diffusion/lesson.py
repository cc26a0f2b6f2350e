"""Lesson 03's headline computation, shared by the notebook and the seed study.

    from tempo_analysis.diffusion.lesson import fit_worlds, headline_numbers
    fitted = fit_worlds(seed=0)           # DCWE and CWE on the walk world and on the flight world
    headline_numbers(fitted)              # per world: planted and recovered mode, cells held; dcwe_gain, ...

**The map, read the paper's way.** r̂ of the word's contextualised dynamic embeddings in each
(unit, slice) towards the anchor's time-specific centroid (``DiffusionMapper.analyze`` over every
sense-bearing usage of the word), with N = 100 scaled to the candidate vocabulary (``"auto"``: 5% of
it, at least 5; the planted world has a few hundred content words, so 100 would take them all).
The first slice in which a unit holds the association is its arrival; walk or flight is read from
the arrivals against chance. CWE, the same encoder without unit or time, is read the same way.

**What only the dynamic component can know** (``dcwe_gain``): items whose own text tells nothing:

- the held-out cells, (unit, slice) cells where the word is never written: DCWE's masked prediction
  next to the word ("cloud [MASK].") for that unit and slice, anchor against old anchor, says whether
  the unit has adopted; CWE gives one answer for every cell;
- the ambiguous usages ("the cloud again."): the usage's contextualised dynamic embedding, closer to
  the anchor's or to the old anchor's centroid of its slice.

``dcwe_gain`` = DCWE's accuracy on these items minus CWE's, with a sign test over the items the two
answer differently. ``slice_majority`` is the best any unit-blind answer could do (one answer per
slice, picked with the truth): DCWE above it knows units, not only slices.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .config import preset

MODES = ("walk", "flight")
LESSON_VARIANTS = ("dcwe", "cwe")


def usage_docs(corpus) -> set | None:
    """The documents that write the word in a sentence of its sense (the planted world's ``usage``
    rows); None for corpora without a ``kind`` column (every document counts)."""
    df = corpus.df
    return set(df.loc[df["kind"] == "usage", "doc_id"]) if "kind" in df else None


def fit_worlds(seed: int = 0, *, modes=MODES, progress: bool = False, cache: bool = True, **changes) -> dict:
    """DCWE and CWE trained (the notebook preset, ``seed``) on the planted world regenerated with world
    seed ``seed``, once per diffusion mode. Returns ``{"mappers", "corpora", "truths", "settings"}``,
    each keyed by mode. ``cache`` memoises each fit (:func:`tempo_analysis.notebook.cached`)."""
    from ..notebook import cached
    from ..resolve import planted_world
    from .estimator import DiffusionMapper

    cfg = preset("notebook", seed=seed, progress=progress, **changes)
    out = {"mappers": {}, "corpora": {}, "truths": {}, "params": {}}
    for mode in modes:
        world = planted_world("social", seed, mode=mode)

        def fit(world=world):
            return DiffusionMapper(cfg, variants=LESSON_VARIANTS).fit(world.data, world.truth)

        params = {"mode": mode, "world_seed": seed, "data_fingerprint": world.data.fingerprint(),
                  "config": {k: v for k, v in vars(cfg).items()}, "variants": list(LESSON_VARIANTS)}
        out["params"][mode] = params
        if cache:
            mapper = cached(f"03-lesson-{mode}", params, fit, save=lambda m, folder: m.save(folder),
                            load=DiffusionMapper.load)
        else:
            mapper = fit()
        out["mappers"][mode], out["corpora"][mode], out["truths"][mode] = mapper, world.data, world.truth
    out["settings"] = {"max_steps": cfg.max_steps, "shared_warmup_steps": cfg.shared_warmup_steps, "lr": cfg.lr,
                       "dynamic_lr": cfg.dynamic_lr, "lambda_w": cfg.lambda_w, "variants": list(LESSON_VARIANTS),
                       "n_neighbors": "auto"}
    return out


def fit_data(corpus, seed: int = 0, *, progress: bool = False, **changes) -> dict:
    """:func:`fit_worlds`'s shape for a corpus of your own (no truth): DCWE and CWE, key ``"data"``, and
    ``"params"``, the memo key of the fit (for steps that read it)."""
    from ..notebook import cached
    from .estimator import DiffusionMapper

    cfg = preset("notebook", seed=seed, progress=progress, **changes)
    params = {"data_fingerprint": corpus.fingerprint(), "config": dict(vars(cfg)), "variants": list(LESSON_VARIANTS)}
    mapper = cached("03-lesson-data", params, lambda: DiffusionMapper(cfg, variants=LESSON_VARIANTS).fit(corpus),
                    save=lambda m, folder: m.save(folder), load=DiffusionMapper.load)
    return {"mappers": {"data": mapper}, "corpora": {"data": corpus}, "truths": {"data": None}, "params": params,
            "settings": {"max_steps": cfg.max_steps, "variants": list(LESSON_VARIANTS), "n_neighbors": "auto"}}


def recovery_table(maps: dict, truths: dict) -> pd.DataFrame:
    """One row per (world, model): the planted and the recovered mode, the walk share against chance,
    the cells held and the units whose first arrival matches the planted one."""
    rows = []
    for world, read in maps.items():
        truth = truths.get(world)
        for variant, r in read.items():
            row = {"world": world, "model": variant, "planted_mode": truth["mode"] if truth else None,
                   "recovered_mode": r.mode.get("mode"), "walk_share": r.mode.get("walk_share"),
                   "expected_walk_share": r.mode.get("expected_walk_share"),
                   "cells_held": int((r.rhat["rhat"] > 0).sum()), "cells_read": len(r.rhat)}
            if truth:
                row["first_arrival_exact"] = sum(r.first.get(u) == s for u, s in truth["first_slice"].items())
                row["units"] = len(truth["first_slice"])
            rows.append(row)
    return pd.DataFrame(rows)


def read_maps(mapper, word: str, anchor: str, *, variants=LESSON_VARIANTS) -> dict:
    """{variant: DiffusionAnalysis}: the paper's r̂ map of each model, over the word's sense-bearing
    usages, with the context index kept as ``.index`` for further reading."""
    docs = usage_docs(mapper.corpus_)
    out = {}
    for v in variants:
        index = mapper.context_index(v, progress=False)
        result = mapper.analyze(word, anchor, index=index, word_docs=docs)
        result.index = index
        out[v] = result
    return out


def _centroid(index, word: str, t) -> np.ndarray | None:
    m = index.mask(word) & (index.time == t)
    if not m.any():
        return None
    c = index.vectors[m].mean(0)
    return c / max(np.linalg.norm(c), 1e-12)


def hidden_items(mapper, index_of: dict, truth: dict) -> pd.DataFrame:
    """One row per item whose own text tells nothing, for every changing word: ``kind`` ("held-out
    cell" or "ambiguous usage"), word, unit, time, ``adopted`` (planted), and each variant's answer
    (True = the new sense). ``index_of``: {variant: ContextIndex} of the mapper's corpus."""
    from .probe import prediction_rhat

    corpus = mapper.corpus_
    rows = []
    for w in truth["changing_words"]:
        info = truth["words"][w]
        first = info["first_slice"]
        cells = [tuple(c) for c in truth.get("held_out_cells", {}).get(w, [])]
        answers = {}
        # the same candidates for every model and both anchors: DCWE's dynamic vocabulary and the two anchors
        cand = list(mapper.models_["dcwe"].dynamic_token_ids) + [info["anchor"], info["old_anchor"]]
        for v in LESSON_VARIANTS:
            model = mapper.models_[v]
            new = prediction_rhat(model, mapper.tokenizer_, w, info["anchor"], corpus.units, corpus.slices,
                                  candidates=cand).set_index(["unit", "time"])["anchor_prob"]
            old = prediction_rhat(model, mapper.tokenizer_, w, info["old_anchor"], corpus.units, corpus.slices,
                                  candidates=cand).set_index(["unit", "time"])["anchor_prob"]
            answers[v] = {c: bool(new[c] > old[c]) for c in cells}
        for u, t in cells:
            rows.append({"kind": "held-out cell", "word": w, "unit": u, "time": t,
                         "adopted": first[u] is not None and first[u] <= t,
                         **{v: answers[v][(u, t)] for v in LESSON_VARIANTS}})
        bare = corpus.df[(corpus.df.get("kind") == "bare") & (corpus.df.get("word") == w)] if "kind" in corpus.df \
            else corpus.df.iloc[:0]
        bare_docs = set(bare["doc_id"])
        for v, index in index_of.items():
            if v not in LESSON_VARIANTS:
                continue
            m = index.mask(w) & np.isin(index.doc_id, np.asarray(list(bare_docs), dtype=object))
            for i in np.flatnonzero(m):
                t = index.time[i]
                a, o = _centroid(index, info["anchor"], t), _centroid(index, info["old_anchor"], t)
                if a is None or o is None:
                    continue
                q = index.vectors[i] / max(np.linalg.norm(index.vectors[i]), 1e-12)
                key = (w, index.unit[i], t, index.doc_id[i])
                answers.setdefault("usage", {}).setdefault(key, {})[v] = bool(q @ a > q @ o)
        for (w_, u, t, _doc), ans in answers.get("usage", {}).items():
            if all(v in ans for v in LESSON_VARIANTS):
                rows.append({"kind": "ambiguous usage", "word": w_, "unit": u, "time": t,
                             "adopted": first[u] is not None and first[u] <= t, **ans})
    return pd.DataFrame(rows, columns=["kind", "word", "unit", "time", "adopted", *LESSON_VARIANTS])


def hidden_table(fitted: dict, maps: dict, *, cache: bool = True) -> pd.DataFrame:
    """:func:`hidden_items` of every world of :func:`fit_worlds` (column ``world``), memoised with
    the worlds' fits (:func:`tempo_analysis.notebook.cached`) so a rerun after ``make demo`` reads it."""
    from ..notebook import cached

    def compute():
        return pd.concat([hidden_items(fitted["mappers"][w], {v: r.index for v, r in maps[w].items()},
                                       fitted["truths"][w]).assign(world=w) for w in fitted["mappers"]],
                         ignore_index=True)

    params = fitted.get("params")
    if not cache or not params:
        return compute()
    return cached("03-lesson-hidden", {"fits": params}, compute)   # the items depend on the fits alone


def dcwe_gain(items: pd.DataFrame) -> dict:
    """DCWE's accuracy on the hidden items minus CWE's (``gain``), each accuracy, the best unit-blind
    answer (``slice_majority``: one answer per (word, slice), picked with the truth), and a two-sided
    sign test over the items the two models answer differently (``p_value``)."""
    from scipy.stats import binomtest

    if items.empty:
        return {"gain": float("nan"), "dcwe": float("nan"), "cwe": float("nan"), "slice_majority": float("nan"),
                "p_value": float("nan"), "items": 0}
    right = {v: (items[v] == items["adopted"]) for v in LESSON_VARIANTS}
    better, worse = int((right["dcwe"] & ~right["cwe"]).sum()), int((~right["dcwe"] & right["cwe"]).sum())
    p = binomtest(better, better + worse).pvalue if better + worse else 1.0
    majority = items.groupby(["word", "time"])["adopted"].agg(lambda s: max(s.mean(), 1 - s.mean()) * len(s)).sum()
    return {"gain": float(right["dcwe"].mean() - right["cwe"].mean()), "dcwe": float(right["dcwe"].mean()),
            "cwe": float(right["cwe"].mean()), "slice_majority": float(majority / len(items)), "p_value": float(p),
            "items": int(len(items)), "by_kind": {k: float((g["dcwe"] == g["adopted"]).mean() - (g["cwe"] == g["adopted"]).mean())
                                                  for k, g in items.groupby("kind")}}


def sigma_precision(mapper, truth: dict) -> tuple[float, list]:
    """σ_sim precision@k (k = the number of changing words) on the mapper's dev contexts."""
    from .evaluate import sigma_precision_at_k

    _, sims = mapper.variable_words(top=len(truth["changing_words"]))
    return sigma_precision_at_k(sims, truth["changing_words"])


def headline_numbers(fitted: dict, maps: dict | None = None, items: pd.DataFrame | None = None) -> dict:
    """The lesson's numbers from :func:`fit_worlds` (``maps``: {mode: read_maps(...)} and ``items``:
    :func:`hidden_table` already read)."""
    out, read_items = {}, []
    for mode, mapper in fitted["mappers"].items():
        truth = fitted["truths"][mode]
        read = maps[mode] if maps and mode in maps else read_maps(mapper, truth["word"], truth["anchor"])
        out[f"{mode}.planted_mode"] = truth["mode"]
        out[f"{mode}.recovered_mode"] = read["dcwe"].mode.get("mode")
        out[f"{mode}.cwe_recovered_mode"] = read["cwe"].mode.get("mode")
        out[f"{mode}.map_cells_held"] = int((read["dcwe"].rhat["rhat"] > 0).sum())
        out[f"{mode}.first_arrival_exact"] = int(sum(read["dcwe"].first.get(u) == s
                                                     for u, s in truth["first_slice"].items()))
        if items is None:
            read_items.append(hidden_items(mapper, {v: r.index for v, r in read.items()}, truth).assign(world=mode))
    gain = dcwe_gain(items if items is not None else pd.concat(read_items, ignore_index=True))
    out.update({"dcwe_gain": gain["gain"], "dcwe_gain_p": gain["p_value"], "hidden_items": gain["items"],
                "dcwe_hidden_accuracy": gain["dcwe"], "cwe_hidden_accuracy": gain["cwe"],
                "slice_majority_accuracy": gain["slice_majority"]})
    first = next(iter(fitted["mappers"]))
    precision, top = sigma_precision(fitted["mappers"][first], fitted["truths"][first])
    out["sigma_precision_at_k"], out["sigma_top_words"] = precision, ", ".join(top)
    return out
