"""Save and load a :class:`RankResult` (model as safetensors, tokenizer, vectors as .npz, tables as CSV, no pickle).

Used by notebook 02 through ``tempo_analysis.notebook.cached`` so a second run with the same
parameters (the browser test's Run All) reuses the trained models instead of training again.
"""
from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path

import numpy as np
import pandas as pd

from ..data import TargetUsage, usages_frame
from ..extraction import TargetVectors
from ..models.temporal_attention import TemporalAttentionForMaskedLM
from .pipeline import ChangeModel, RankConfig, RankResult
from .training import PostTrainConfig


def save_result(result: RankResult, folder) -> None:
    """Write everything needed to rebuild ``result`` into ``folder``."""
    d = Path(folder)
    d.mkdir(parents=True, exist_ok=True)
    cm = result.model
    cm.model.save_pretrained(d / "model")
    cm.tokenizer.save_pretrained(d / "model")
    tv = result.vectors
    np.savez(d / "vectors.npz", vectors=tv.vectors, layers=np.array(tv.layers), n_pieces=tv.n_pieces,
             windowed=tv.windowed)
    u = usages_frame(tv.usages)
    u["period"] = u["period"].map(lambda p: json.dumps(p))
    u.to_csv(d / "usages.csv", index=False)
    result.scores.to_csv(d / "scores.csv", index=False)
    meta = {"method": cm.method, "periods": cm.periods, "time_token_ids": cm.time_token_ids,
            "train_report": cm.train_report, "added_targets": cm.added_targets, "config": result.config.to_dict(),
            "metrics": result.metrics, "missing": result.missing, "timings": result.timings,
            "scores_attrs": result.scores.attrs}
    (d / "meta.json").write_text(json.dumps(meta, default=str))


def load_result(folder) -> RankResult:
    """Rebuild a :class:`RankResult` written by :func:`save_result`."""
    from transformers import AutoTokenizer

    d = Path(folder)
    meta = json.loads((d / "meta.json").read_text())
    model = TemporalAttentionForMaskedLM.from_pretrained(d / "model").eval()
    tok = AutoTokenizer.from_pretrained(d / "model")
    cm = ChangeModel(meta["method"], model, tok, meta["periods"], meta["time_token_ids"], meta["train_report"],
                     meta["added_targets"])
    z = np.load(d / "vectors.npz")
    u = pd.read_csv(d / "usages.csv", dtype={"doc_id": str}, keep_default_na=False)
    usages = [TargetUsage(w, json.loads(p), t, int(s), int(e), doc or None)
              for w, p, t, s, e, doc in zip(u["word"], u["period"], u["text"], u["start"], u["end"], u["doc_id"])]
    tv = TargetVectors(z["vectors"], usages, [int(x) for x in z["layers"]], z["n_pieces"], z["windowed"])
    scores = pd.read_csv(d / "scores.csv", dtype={"note": str, "word": str}, keep_default_na=False,
                         na_values={"score": ["", "nan", "NaN"], "rank": ["", "nan", "NaN"]})
    scores.attrs.update(meta["scores_attrs"])
    c = dict(meta["config"])
    train = c.pop("train")
    known = {f.name for f in fields(RankConfig)}
    cfg = RankConfig(**{k: v for k, v in c.items() if k in known},
                     train=PostTrainConfig(**train) if train is not None else None)
    return RankResult(scores, meta["metrics"], tv, cm, cfg, meta["missing"], meta["timings"])
