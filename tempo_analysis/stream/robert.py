"""RoBERT (Pappagari et al., 2019) as a stream baseline: a recurrence over per-post encoder outputs.

As in the TempoFormer paper (Table 4): every post of the window goes through the encoder on its
own (fine-tuned), its pooled [CLS] is one step of an LSTM run over the window (oldest -> newest),
and the LSTM's last state feeds a small dense layer. Pappagari et al.'s sizes: LSTM 100 units,
dense 30 (ReLU). Paper grid for the lr: {1e-6, 5e-6, 1e-5}.

Batches use the shared post encoding of `tempo_analysis.stream.batching` (each unique post of a
batch is encoded once, then gathered into the windows), the alpha-weighted focal loss and the
shared Trainer. `pooling="mean"` reads the token mean instead of [CLS] (what mean-pooling
sentence encoders such as the default MiniLM were trained for).
"""

from __future__ import annotations

import copy
from dataclasses import KW_ONLY, dataclass

import numpy as np
import torch
import torch.nn as nn

from tempo_analysis.evaluation.classification import classification_scores
from tempo_analysis.training import TrainConfig, Trainer, seed_everything

from .labels import dev_is_usable, training_labels
from .batching import WindowDataset, build_stream_data, collate_items
from .embeddings import resolve_encoder_pair, settings_repr
from .model import focal_alpha_from_labels, focal_loss

IGNORE = -100


class RoBERTNet(nn.Module):
    """Encoder per unique post -> pooled vector -> gather windows -> LSTM -> dense ReLU -> classes."""

    def __init__(self, encoder: nn.Module, num_labels: int = 2, lstm_hidden: int = 100, dense: int = 30,
                 dropout: float = 0.1, pooling: str = "cls"):
        super().__init__()
        if pooling not in ("cls", "mean"):
            raise ValueError(f"pooling={pooling!r} must be 'cls' or 'mean'")
        self.encoder, self.pooling = encoder, pooling
        self.lstm = nn.LSTM(encoder.config.hidden_size, lstm_hidden, batch_first=True)
        self.drop = nn.Dropout(dropout)
        self.dense = nn.Linear(lstm_hidden, dense)
        self.out = nn.Linear(dense, num_labels)

    def post_vectors(self, input_ids, attention_mask):
        o = self.encoder(input_ids=input_ids, attention_mask=attention_mask)
        if self.pooling == "mean":
            m = attention_mask[..., None].to(o.last_hidden_state.dtype)
            return (o.last_hidden_state * m).sum(1) / m.sum(1).clamp(min=1)
        pooled = getattr(o, "pooler_output", None)
        return pooled if pooled is not None else o.last_hidden_state[:, 0]

    def forward(self, input_ids, attention_mask, window_index, window_mask, **_):
        v = self.post_vectors(input_ids, attention_mask)  # [P, H]
        x = v[window_index.clamp(min=0)] * window_mask[..., None].to(v.dtype)  # [B, w, H]
        B, W, _ = x.shape
        n = window_mask.sum(1)
        shift = (torch.arange(W, device=x.device)[None] + (W - n)[:, None]) % W  # left -> right padded
        x = x.gather(1, shift[..., None].expand(-1, -1, x.shape[-1]))
        packed = nn.utils.rnn.pack_padded_sequence(x, n.cpu(), batch_first=True, enforce_sorted=False)
        _, (h, _) = self.lstm(packed)
        return self.out(torch.relu(self.dense(self.drop(h[-1]))))


def _inputs(batch):
    return {k: batch[k] for k in ("input_ids", "attention_mask", "window_index", "window_mask")}


@dataclass(eq=False)
class RoBERTClassifier:
    """RoBERT stream baseline: fine-tuned encoder per post + LSTM over the window."""

    encoder: object = "default"  # "default", an HF name, a path, or a (model, tokenizer) pair
    _: KW_ONLY
    window: int = 5
    epochs: int = 3
    lr: float = 1e-5  # encoder lr (paper grid 1e-6, 5e-6, 1e-5)
    head_lr: float = 1e-3  # LSTM and dense layers
    batch_size: int = 16
    max_length: int = 64
    lstm_hidden: int = 100
    dense: int = 30
    dropout: float = 0.1
    pooling: str = "cls"
    patience: int | None = None
    chunk: int = 4  # consecutive windows of one timeline per shuffled item (posts shared)
    seed: int = 0
    device: str = "auto"
    progress: bool = False

    __repr__ = settings_repr

    def __post_init__(self):
        self.window = int(self.window)
        if self.window < 1:
            raise ValueError(f"window={self.window} must be >= 1")
        if self.pooling not in ("cls", "mean"):
            raise ValueError(f"pooling={self.pooling!r} must be 'cls' or 'mean'")

    def _dataset(self, timelines, labelled_only=False, chunk=1):
        data = build_stream_data(timelines, self.window, self.tokenizer_, self.max_length, self.label_names_)
        pos = np.flatnonzero(data.labels >= 0) if labelled_only else None
        return WindowDataset(data, pos, chunk=chunk)

    def _eval_fn(self, model, batches):
        ys, ps = [], []
        for b in batches:
            ps.append(model(**_inputs(b)).argmax(-1).cpu())
            ys.append(b["labels"].cpu())
        y, p = torch.cat(ys).numpy(), torch.cat(ps).numpy()
        return {"macro_f1": classification_scores(np.where(y == IGNORE, -1, y), p, self.label_names_)["macro_f1"]}

    def fit(self, train, dev=None) -> "RoBERTClassifier":
        self.label_names_, codes = training_labels(train)
        seed_everything(self.seed)
        enc, self.tokenizer_ = resolve_encoder_pair(self.encoder)
        self.model_ = RoBERTNet(copy.deepcopy(getattr(enc, "base_model", enc)).train(), len(self.label_names_),
                                self.lstm_hidden, self.dense, self.dropout, self.pooling)
        alpha = focal_alpha_from_labels(codes, len(self.label_names_))
        chunk = max(1, min(int(self.chunk), int(self.batch_size)))
        train_ds = self._dataset(train, True, chunk)
        dev_ds = self._dataset(dev, True, 16) if dev_is_usable(dev, self.label_names_) else None

        def loss_fn(model, batch):
            return focal_loss(model(**_inputs(batch)), batch["labels"], alpha, 2.0)

        enc_ids = {id(p) for p in self.model_.encoder.parameters()}
        groups = [{"params": [p for p in self.model_.parameters() if id(p) in enc_ids], "lr": self.lr},
                  {"params": [p for p in self.model_.parameters() if id(p) not in enc_ids], "lr": self.head_lr}]
        cfg = TrainConfig(max_epochs=self.epochs, batch_size=max(1, self.batch_size // chunk), eval_batch_size=4,
                          lr=self.lr, schedule="linear", seed=self.seed, device=self.device, progress=self.progress,
                          metric="macro_f1", greater_is_better=True,
                          patience=self.patience if dev_ds is not None else None)
        self.trainer_ = Trainer(self.model_, cfg, loss_fn=loss_fn, eval_fn=self._eval_fn, collate_fn=collate_items,
                                param_groups=groups)
        self.trainer_.fit(train_ds, dev_ds)
        self.history_ = self.trainer_.history_
        self.model_.eval()
        return self

    @torch.no_grad()
    def predict_proba(self, timelines, batch_size: int = 64) -> np.ndarray:
        if not hasattr(self, "model_"):
            raise ValueError("this classifier is not fitted yet; call fit(train_timelines) first")
        ds = self._dataset(timelines)
        device = next(self.model_.parameters()).device
        out = np.zeros((len(timelines.df), len(self.label_names_)), dtype=np.float32)
        for i in range(0, len(ds), batch_size):
            b = collate_items([ds[j] for j in range(i, min(i + batch_size, len(ds)))])
            logits = self.model_(**{k: v.to(device) for k, v in _inputs(b).items()})
            out[b["target_rows"].numpy()] = logits.float().softmax(-1).cpu().numpy()
        return out

    def predict(self, timelines) -> np.ndarray:
        return self.predict_proba(timelines).argmax(-1)


__all__ = ["RoBERTClassifier", "RoBERTNet"]
