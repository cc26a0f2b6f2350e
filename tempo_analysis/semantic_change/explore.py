"""Looking inside one word: a 2-D map of its usages, its nearest words per period, and where a new
sentence lands. Pure functions over a :class:`ChangeModel` and its :class:`TargetVectors`.

* ``UsageMap`` -- UMAP (cosine, seeded) of one word's usage vectors (chosen layers); ``.place`` puts a
  new usage on the same map (``umap.transform``) and says which period's mean it is closer to.
* ``period_neighbours`` -- the word's nearest vocabulary words in each period: the MLM head is applied
  to the period prototype (mean last-layer vector), and the tokens whose tied output embeddings
  score highest are the neighbours (the model's best substitutes for the word in that period).
  Sub-word pieces, special tokens, punctuation and the word itself are skipped.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import torch

from ..data import TargetUsage
from .scoring import layer_average, nearest_period

STOP = set("""a an the and or but if of to in on at by for with from as is are was were be been being it its
this that these those he she they we you i me my our your his her their them us do does did not no so
than then there here what which who whom whose when where why how all any each some such very can will
just also into over under about up down out off again only own same too s t don""".split())


@dataclass
class UsageMap:
    """UMAP coordinates of one word's usages, plus the fitted reducer to place new ones."""

    word: str
    coords: np.ndarray          # [n, 2]
    periods: list
    sentences: list[str]
    vectors: np.ndarray         # [n, D] (layer-averaged) used for the map
    reducer: object
    layers: object

    def place(self, vector: np.ndarray, compared) -> dict:
        """Coordinates of a new usage vector and the nearer period (cosine to each period's mean)."""
        xy = self.reducer.transform(np.asarray(vector, dtype=np.float32)[None])[0]
        per = np.array([str(p) for p in self.periods], dtype=object)
        A = self.vectors[per == str(compared[0])]
        B = self.vectors[per == str(compared[1])]
        near, da, db = nearest_period(vector, A, B, compared)
        return {"x": float(xy[0]), "y": float(xy[1]), "period": near,
                f"dist_{compared[0]}": da, f"dist_{compared[1]}": db}


class PCA2:
    """The first two principal axes (of unit-length vectors): the fallback and fast map."""

    def fit_transform(self, X):
        X = X / np.clip(np.linalg.norm(X, axis=1, keepdims=True), 1e-12, None)
        self.mean_ = X.mean(0)
        Xc = X - self.mean_
        vt = np.linalg.svd(Xc, full_matrices=False)[2] if len(X) > 1 else np.eye(X.shape[1])
        self.axes_ = np.vstack([vt[:2], np.zeros((max(0, 2 - len(vt)), X.shape[1]))])
        return Xc @ self.axes_.T

    def transform(self, X):
        X = X / np.clip(np.linalg.norm(X, axis=1, keepdims=True), 1e-12, None)
        return (X - self.mean_) @ self.axes_.T


def usage_map(tv, word: str, *, layers=4, seed: int = 0, n_neighbors: int = 15, method: str = "umap") -> UsageMap:
    """Fit a seeded cosine UMAP (or ``method="pca"``) on ``word``'s usage vectors (layer-averaged).

    UMAP needs at least 5 usages; with fewer the map falls back to PCA.
    """
    sub = tv.for_word(word)
    if len(sub) == 0:
        raise ValueError(f"no usages of {word!r} were embedded; pick one of the ranked targets.")
    if method not in ("umap", "pca"):
        raise ValueError(f"method={method!r}: use 'umap' or 'pca'.")
    X = layer_average(sub.vectors, sub.layers, layers)
    if method == "umap" and len(X) >= 5:
        import umap  # local: importing umap (numba) takes seconds; PCA maps never need it
        reducer = umap.UMAP(n_neighbors=min(n_neighbors, len(X) - 1), metric="cosine", random_state=seed,
                            n_jobs=1, init="random" if len(X) < 10 else "spectral")
    else:
        reducer = PCA2()
    coords = reducer.fit_transform(X)
    return UsageMap(word, np.asarray(coords), [u.period for u in sub.usages], [u.text for u in sub.usages],
                    X, reducer, layers)


def embed_sentence(cm, text: str, word: str, period, *, layers=4) -> np.ndarray:
    """The layer-averaged vector of ``word`` in a user's sentence, run under ``period``."""
    m = re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text, re.IGNORECASE)
    if m is None:
        raise ValueError(f"the sentence does not contain the word {word!r} (whole word, any case). "
                         "Type a sentence that uses it.")
    u = TargetUsage(word, period, text, m.start(), m.end())
    tv = cm.embed([u])
    return layer_average(tv.vectors, tv.layers, layers)[0]


def period_neighbours(cm, tv, word: str, *, k: int = 10) -> dict:
    """{period: [(neighbour word, score), ...]} from the MLM head applied to the period prototype."""
    sub = tv.for_word(word)
    top = max(sub.layers)
    if top not in sub.layers:
        raise ValueError("period_neighbours needs the last hidden layer in the extracted vectors.")
    li = sub.layers.index(top)
    model, tok = cm.model, cm.tokenizer
    W = model.temporal.word_embeddings.weight
    vocab = tok.convert_ids_to_tokens(list(range(W.shape[0])))
    own = {word.lower()} | {p.lower() for p in tok.tokenize(word)}
    ok = np.array([t.isalpha() and t.lower() not in STOP and t.lower() not in own and len(t) > 2
                   and not t.startswith("[") for t in vocab])
    out = {}
    for p in dict.fromkeys(u.period for u in sub.usages):
        idx = [i for i, u in enumerate(sub.usages) if u.period == p]
        proto = torch.tensor(sub.vectors[idx, li].mean(0), dtype=W.dtype, device=W.device)
        with torch.inference_mode():
            logits = model.head(proto[None], W)[0].float().cpu().numpy()
        logits[~ok] = -np.inf
        best = np.argsort(-logits)[:k]
        out[p] = [(vocab[i], float(logits[i])) for i in best]
    return out
