"""One call from a trained model to the paper's diffusion analyses, and their JSON form.

    index = index_corpus(model, tokenizer, corpus)                  # one encoder pass
    result = analyze(index, corpus.graph, "cloud", "server")         # r-hat, map, walk/flight, mode
    result.to_dict()                                                  # what `diffusion analyze` writes

:class:`tempo_analysis.diffusion.DiffusionMapper` calls these with its trained model
(``mapper.context_index()``, ``mapper.analyze(word, anchor)``); the what-if widget calls
``analyze`` directly on indexes of regenerated worlds.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import networkx as nx
import pandas as pd

from tempo_analysis.data import SocialCorpus
from tempo_analysis.diffusion.analysis import (ContextIndex, build_context_index, diffusion_map, recover_mode,
                                               rhat_scores, walk_flight)
from tempo_analysis.world import SocialWorldConfig, generate_social


@dataclass
class DiffusionAnalysis:
    """r-hat per (unit, time), who holds the association when, first arrivals, walk/flight, mode."""

    word: str
    anchor: str
    n_neighbors: int
    threshold: float
    rhat: pd.DataFrame
    holds: pd.DataFrame
    first: dict
    walk_flight: pd.DataFrame
    mode: dict

    def to_dict(self) -> dict:
        """JSON-able: r-hat rows, first-arrival slices, walk/flight shares per slice, recovered mode."""
        def clean(v):
            if isinstance(v, float) and math.isnan(v):
                return None
            return v.item() if hasattr(v, "item") else v

        return {
            "word": self.word, "anchor": self.anchor, "n_neighbors": self.n_neighbors, "threshold": self.threshold,
            "rhat": [{k: clean(v) for k, v in r.items()} for r in
                     self.rhat[["unit", "time", "rhat", "n", "rank", "example"]].to_dict("records")],
            "first_arrival": {u: clean(t) for u, t in self.first.items()},
            "walk_flight": [{k: clean(v) for k, v in r.items()} for r in self.walk_flight.to_dict("records")],
            "mode": {k: clean(v) for k, v in self.mode.items()},
        }


def index_corpus(model, tokenizer, corpus: SocialCorpus, frame: pd.DataFrame | None = None, *,
                 max_docs_per_unit_slice: int | None = None, batch_size: int = 32, max_length: int = 128,
                 seed: int = 0, progress: bool = True) -> ContextIndex:
    """Contextual vectors (first six layers, DCWE offsets for each doc's unit and slice) of every content word.

    The model is read in eval mode with the o_{t-1} pass off; both are restored afterwards, so
    training may go on after an analysis."""
    dyn = getattr(model, "dynamic", None)
    was_priors, was_training = (dyn.training_priors if dyn is not None else None), model.training
    if dyn is not None:
        dyn.training_priors = False  # inference: no o_{t-1} pass
    try:
        return build_context_index(model, tokenizer, corpus.df if frame is None else frame, corpus.slices,
                                   corpus.unit_index, batch_size=batch_size, max_length=max_length,
                                   max_docs_per_unit_slice=max_docs_per_unit_slice, seed=seed, progress=progress)
    finally:
        if dyn is not None:
            dyn.training_priors = was_priors
        model.train(was_training)


def analyze(index: ContextIndex, graph: nx.Graph, word: str, anchor: str, n_neighbors="auto",
            threshold: float = 0.0, min_count: int = 2, word_docs=None) -> DiffusionAnalysis:
    """r-hat -> diffusion map (r-hat > threshold) -> walk/flight per slice -> recovered mode.

    word_docs: score only the word's occurrences in these documents (see ``rhat_scores``)."""
    rhat = rhat_scores(index, word, anchor, n_neighbors=n_neighbors, min_count=min_count, word_docs=word_docs)
    return analyze_rhat(rhat, graph, index.units, index.slices, word, anchor, threshold)


def analyze_rhat(rhat: pd.DataFrame, graph: nx.Graph, units: list, slices: list, word: str, anchor: str,
                 threshold: float = 0.0) -> DiffusionAnalysis:
    """The diffusion map, walk/flight and mode of any r-hat frame (``rhat_scores`` or
    ``probe.prediction_rhat``: columns unit, time, rhat, n, rank, n_neighbors, example)."""
    holds, first = diffusion_map(rhat, units, slices, threshold)
    n = int(rhat["n_neighbors"].max()) if len(rhat) else 0
    return DiffusionAnalysis(word=word.lower(), anchor=anchor.lower(), n_neighbors=n, threshold=threshold,
                             rhat=rhat, holds=holds, first=first, walk_flight=walk_flight(graph, first, slices),
                             mode=recover_mode(graph, first, slices, holds=holds))


def prediction_map(model, tokenizer, corpus: SocialCorpus, word: str, anchor: str, *, candidates=None,
                   n_neighbors: int = 1, threshold: float = 0.0) -> DiffusionAnalysis:
    """The diffusion map read from a model's own masked predictions next to `word`
    (``probe.prediction_rhat``: is `anchor` among its first `n_neighbors` choices, for each unit and
    slice of `corpus`?), with walk/flight and the mode. Read DCWE and its time-blind controls (CWE,
    ``evaluate.without_offsets``) on the same `candidates`, e.g. DCWE's ``dynamic_token_ids``."""
    from tempo_analysis.diffusion.probe import prediction_rhat

    rhat = prediction_rhat(model, tokenizer, word, anchor, corpus.units, corpus.slices, n_neighbors=n_neighbors,
                           candidates=candidates)
    return analyze_rhat(rhat, corpus.graph, corpus.units, corpus.slices, word, anchor, threshold=threshold)


def world_regenerator(model, tokenizer, base_config=None, progress: bool = False):
    """A callable (mode, speed) -> (index, graph, truth): the planted world regenerated with another
    diffusion mode or speed, re-encoded with `model` (trained on the default world: same units and
    slices, so no retraining is needed to read the new texts)."""
    base = base_config or SocialWorldConfig()

    def regenerate(mode: str, speed: int):
        corpus, truth = generate_social(dataclasses.replace(base, mode=mode, speed=int(speed)))
        if hasattr(model, "config") and hasattr(model.config, "units") and list(model.config.units) != corpus.units:
            raise ValueError("the regenerated world's units differ from the model's; keep n_units and the seed.")
        return index_corpus(model, tokenizer, corpus, progress=progress), corpus.graph, truth

    return regenerate
