"""DCWE for text classification on any labelled social corpus (paper §5.5, e.g. sentiment).

    clf = train_dcwe_classifier(corpus, label_column="label", encoder="default")
    clf.scores_          # macro-F1 etc. on the held-out test split
    clf.predict(frame)   # label names for new (unit, time, text) rows

The corpus frame needs a label column; rows with a missing label are left out (and counted).
Training: the shared Trainer, cross-entropy + the offset priors, best dev macro-F1 weights kept.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from tempo_analysis.data import SocialCorpus
from tempo_analysis.diffusion.corpora import graph_tensors, split_corpus
from tempo_analysis.diffusion.mlm import SocialMLMDataset
from tempo_analysis.diffusion.model import DCWEForSequenceClassification, content_vocabulary
from tempo_analysis.diffusion.node2vec import Node2Vec
from tempo_analysis.encoders import load_encoder
from tempo_analysis.evaluation.classification import classification_scores
from tempo_analysis.training import TrainConfig, Trainer


class SocialClsDataset(SocialMLMDataset):
    """SocialMLMDataset + an integer label per document."""

    def __init__(self, frame, tokenizer, unit_index, slice_index, labels, max_length: int = 128):
        super().__init__(frame, tokenizer, unit_index, slice_index, max_length)
        self.labels = list(labels)

    def __getitem__(self, i):
        return {**super().__getitem__(i), "labels": self.labels[i]}


def collate_cls(pad_id: int):
    """Pad input ids; stack unit, slice and label ids."""
    def collate(items):
        L = max(len(x["input_ids"]) for x in items)
        ids = torch.full((len(items), L), pad_id, dtype=torch.long)
        attn = torch.zeros_like(ids)
        for i, x in enumerate(items):
            ids[i, : len(x["input_ids"])] = torch.as_tensor(x["input_ids"])
            attn[i, : len(x["input_ids"])] = 1
        return {"input_ids": ids, "attention_mask": attn,
                **{k: torch.tensor([x[k] for x in items], dtype=torch.long) for k in ("unit_ids", "slice_ids", "labels")}}
    return collate


@dataclass
class DCWEClassifier:
    """A trained DCWEForSequenceClassification with its tokenizer, label names and test scores."""

    model: DCWEForSequenceClassification
    tokenizer: object
    label_names: list
    unit_index: dict
    slice_index: dict
    scores_: dict
    dropped_unlabelled_: int = 0
    max_length: int = 128          # tokens per document, as in training

    @torch.no_grad()
    def predict(self, frame: pd.DataFrame, batch_size: int = 32) -> list:
        """Label names for rows with unit, time, text."""
        ds = SocialClsDataset(frame, self.tokenizer, self.unit_index, self.slice_index, [0] * len(frame),
                              self.max_length)
        collate = collate_cls(self.tokenizer.pad_token_id)
        self.model.eval()
        out = []
        for i in range(0, len(ds), batch_size):
            b = collate([ds[j] for j in range(i, min(i + batch_size, len(ds)))])
            b.pop("labels")
            out += self.model(**b).logits.argmax(-1).tolist()
        return [self.label_names[k] for k in out]


def train_dcwe_classifier(corpus: SocialCorpus, label_column: str = "label", encoder="default", *,
                          ablation: str = "dcwe", epochs: int = 3, max_steps: int | None = None, batch_size: int = 16,
                          lr: float = 5e-5, dynamic_lr: float = 5e-5, max_length: int = 128, top_k: int = 10000,
                          node2vec: dict | None = None, social_dim: int = 50, gat_heads: int = 4,
                          seed: int = 0, device: str = "auto", progress: bool = True) -> DCWEClassifier:
    """Fine-tune DCWE + a 2-layer head on `corpus.df[label_column]` (70/10/20 split by slice)."""
    if label_column not in corpus.df.columns:
        raise ValueError(f"column {label_column!r} not in the corpus ({list(corpus.df.columns)}); "
                         "pass label_column= naming the label column.")
    labelled = corpus.df[corpus.df[label_column].notna() & (corpus.df[label_column].astype(str) != "")]
    dropped = len(corpus.df) - len(labelled)
    names = sorted(labelled[label_column].astype(str).unique())
    if len(names) < 2:
        raise ValueError(f"column {label_column!r} has {len(names)} distinct label(s) {names}; need at least 2.")
    sub = SocialCorpus(labelled.reset_index(drop=True), corpus.graph, corpus.slices)
    train_df, dev_df, test_df = split_corpus(sub, seed=seed)
    for name, part in (("train", train_df), ("test", test_df)):
        if part.empty:
            raise ValueError(f"the {name} split is empty ({len(sub)} labelled documents, 70/10/20 by time slice); "
                             "give more labelled documents.")
    enc, tok = load_encoder(encoder) if isinstance(encoder, str) else encoder
    units, edge_index = graph_tensors(corpus)
    x = Node2Vec(**{"seed": seed, **(node2vec or {})}).fit(corpus.graph).vectors(units)
    model = DCWEForSequenceClassification.from_encoder(
        enc, node_features=x, edge_index=edge_index, dynamic_token_ids=content_vocabulary(train_df["text"], tok, top_k),
        units=units, slices=corpus.slices, ablation=ablation, num_labels=len(names), social_dim=social_dim,
        gat_heads=gat_heads)
    code = {n: i for i, n in enumerate(names)}
    ds = {k: SocialClsDataset(df, tok, corpus.unit_index, corpus.slice_index,
                              [code[str(v)] for v in df[label_column]], max_length)
          for k, df in (("train", train_df), ("dev", dev_df), ("test", test_df))}
    collate = collate_cls(tok.pad_token_id)

    def predict(m, data):
        ys, ps = [], []
        for b in data:
            ys += b["labels"].tolist()
            ps += m(**{k: v for k, v in b.items() if k != "labels"}).logits.argmax(-1).tolist()
        return np.array(ys), np.array(ps)

    def eval_fn(m, batches):
        y, p = predict(m, batches)
        return {"macro_f1": classification_scores(y, p, names)["macro_f1"]}

    dyn = {id(p) for p in model.dynamic.parameters()}
    groups = [{"params": [p for p in model.parameters() if id(p) not in dyn], "lr": lr},
              {"params": [p for p in model.parameters() if id(p) in dyn], "lr": dynamic_lr}]
    has_dev = len(ds["dev"]) > 0
    tc = TrainConfig(max_epochs=epochs, max_steps=max_steps, batch_size=batch_size, lr=lr, seed=seed, device=device,
                     progress=progress, metric="macro_f1" if has_dev else "loss", greater_is_better=has_dev)
    Trainer(model, tc, eval_fn=eval_fn if has_dev else None, collate_fn=collate,
            param_groups=groups).fit(ds["train"], ds["dev"] if has_dev else None)
    model = model.to("cpu").eval()
    test_loader = torch.utils.data.DataLoader(ds["test"], batch_size=32, collate_fn=collate)
    with torch.no_grad():
        y, p = predict(model, test_loader)
    return DCWEClassifier(model, tok, names, corpus.unit_index, corpus.slice_index,
                          classification_scores(y, p, names), dropped, max_length)
