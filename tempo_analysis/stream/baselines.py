"""Baselines for stream classification (paper section 4.2), all with the TempoFormer interface.

Every class has `fit(train_timelines, dev_timelines=None) -> self`, `predict_proba(timelines)`
([posts, classes], rows of timelines.df), `predict(timelines)` and `label_names_`, so they run
through the same cross-validation (`tempo_analysis.evaluation.classification.cross_validate`);
`tempo_analysis.stream.experiment.make_classifier` builds any of them by name.

- `PriorRandomClassifier`: samples each post's label from the training class distribution.
- `PostEncoderClassifier`: the encoder fine-tuned on the current post alone (pooled [CLS] -> linear).
- `FFNHistoryClassifier`: [sentence vector of the current post ; mean over the window] -> 2-layer FFN.
- `BiLSTMClassifier`: one bidirectional LSTM layer over the window's sentence vectors.
Sentence vectors are frozen mean-pooled encoder outputs (SBERT-style, as in the paper). All
trained models use the alpha-weighted focal loss (gamma 2) and the shared Trainer. Settings are
annotated dataclass fields (the constructor's keyword arguments).
"""

from __future__ import annotations

import copy
from dataclasses import KW_ONLY, dataclass

import numpy as np
import torch
import torch.nn as nn

from tempo_analysis.evaluation.classification import classification_scores
from tempo_analysis.training import TrainConfig, Trainer, seed_everything

from .batching import pad_token_rows, tokenize_texts
from .embeddings import resolve_encoder_pair, sentence_embeddings, settings_repr
from .labels import dev_is_usable, training_labels
from .model import focal_alpha_from_labels, focal_loss


@dataclass(eq=False)
class PriorRandomClassifier:
    """Random post-level baseline: labels drawn from the training class priors (seeded)."""

    seed: int = 0

    def fit(self, train, dev=None) -> "PriorRandomClassifier":
        self.label_names_, codes = training_labels(train)
        counts = np.bincount(codes[codes >= 0], minlength=len(self.label_names_)).astype(float)
        self.priors_ = counts / counts.sum()
        return self

    def predict_proba(self, timelines) -> np.ndarray:
        return np.tile(self.priors_, (len(timelines.df), 1)).astype(np.float32)

    def predict(self, timelines) -> np.ndarray:
        rng = np.random.default_rng(self.seed)
        return rng.choice(len(self.priors_), size=len(timelines.df), p=self.priors_)


# ---------------------------------------------------------------------------------------------
# shared training helpers for the small torch baselines


class _DictDataset(torch.utils.data.Dataset):
    """Rows of equally long tensors as dicts (the default collate stacks them)."""

    def __init__(self, **tensors):
        self.t = tensors
        self.n = len(next(iter(tensors.values())))

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {k: v[i] for k, v in self.t.items()}


class _TorchBaseline:
    """fit/predict plumbing: subclasses give `_features(timelines)` (dict of tensors) and `_net(C)`."""

    lr, epochs, batch_size, patience, head_lr = 1e-3, 30, 64, 5, None

    def _eval_fn(self, model, batches):
        ys, ps = [], []
        for b in batches:
            ps.append(model(**{k: v for k, v in b.items() if k != "labels"}).argmax(-1).cpu())
            ys.append(b["labels"].cpu())
        y, p = torch.cat(ys).numpy(), torch.cat(ps).numpy()
        return {"macro_f1": classification_scores(np.where(y < 0, -1, y), p, self.label_names_)["macro_f1"]}

    def _collate(self):
        return None

    def fit(self, train, dev=None):
        self.label_names_, codes = training_labels(train)
        seed_everything(self.seed)
        self.alpha_ = focal_alpha_from_labels(codes, len(self.label_names_))
        self.model_ = self._net(len(self.label_names_))
        keep = np.flatnonzero(codes >= 0)
        train_ds = self._dataset(train, codes, keep)
        dev_ds = None
        if dev_is_usable(dev, self.label_names_):
            dcodes = dev.label_codes(self.label_names_)
            dev_ds = self._dataset(dev, dcodes, np.flatnonzero(dcodes >= 0))
        alpha, gamma = self.alpha_, 2.0

        def loss_fn(model, batch):
            logits = model(**{k: v for k, v in batch.items() if k != "labels"})
            return focal_loss(logits, batch["labels"], alpha, gamma)

        cfg = TrainConfig(max_epochs=self.epochs, batch_size=self.batch_size, eval_batch_size=256, lr=self.lr,
                          schedule=self.schedule, seed=self.seed, device=self.device, progress=self.progress,
                          metric="macro_f1", greater_is_better=True,
                          patience=self.patience if dev_ds is not None else None)
        self.trainer_ = Trainer(self.model_, cfg, loss_fn=loss_fn, eval_fn=self._eval_fn,
                                collate_fn=self._collate())
        self.trainer_.fit(train_ds, dev_ds)
        self.history_ = self.trainer_.history_
        self.model_.eval()
        return self

    def _dataset(self, timelines, codes, rows):
        feats = self._features(timelines)
        return _DictDataset(**{k: v[rows] for k, v in feats.items()}, labels=torch.as_tensor(codes[rows]))

    @torch.no_grad()
    def predict_proba(self, timelines) -> np.ndarray:
        if not hasattr(self, "model_"):
            raise ValueError("this classifier is not fitted yet; call fit(train_timelines) first")
        feats = self._features(timelines)
        n = len(timelines.df)
        device = next(self.model_.parameters()).device
        out = []
        for i in range(0, n, 256):
            chunk = {k: v[i : i + 256] for k, v in feats.items()}
            if self._collate() is not None:
                chunk = self._collate()([{k: v[j] for k, v in chunk.items()} for j in range(len(next(iter(chunk.values()))))])
            out.append(self.model_(**{k: v.to(device) for k, v in chunk.items()}).float().softmax(-1).cpu())
        return torch.cat(out).numpy()

    def predict(self, timelines) -> np.ndarray:
        return self.predict_proba(timelines).argmax(-1)


# ---------------------------------------------------------------------------------------------
# sentence-vector baselines


def _window_vectors(timelines, window: int, encoder: str, max_length: int):
    """Sentence vectors per window slot [N, w, H] (zeros at pads) and the mask [N, w]."""
    emb = sentence_embeddings(timelines.df["text"].tolist(), encoder, max_length=max_length)
    w = timelines.windows(int(window))
    x = emb[np.clip(w.post_index, 0, None)] * w.mask[..., None]
    return torch.as_tensor(x, dtype=torch.float32), torch.as_tensor(w.mask)


class FFNHistoryNet(nn.Module):
    """[current ; window mean] -> Linear-ReLU-Dropout x2 -> classes."""

    def __init__(self, dim: int, hidden=(64, 64), num_labels: int = 2, dropout: float = 0.1):
        super().__init__()
        h1, h2 = hidden
        self.net = nn.Sequential(nn.Linear(2 * dim, h1), nn.ReLU(), nn.Dropout(dropout),
                                 nn.Linear(h1, h2), nn.ReLU(), nn.Dropout(dropout), nn.Linear(h2, num_labels))

    def forward(self, x, mask):
        m = mask.float()[..., None]
        mean = (x * m).sum(1) / m.sum(1).clamp(min=1)
        return self.net(torch.cat([x[:, -1], mean], dim=-1))


class BiLSTMNet(nn.Module):
    """Single-layer BiLSTM over the window's real posts (oldest -> newest) -> dropout -> linear."""

    def __init__(self, dim: int, hidden: int = 128, num_labels: int = 2, dropout: float = 0.1):
        super().__init__()
        self.lstm = nn.LSTM(dim, hidden, batch_first=True, bidirectional=True)
        self.drop = nn.Dropout(dropout)
        self.out = nn.Linear(2 * hidden, num_labels)

    def forward(self, x, mask):
        B, W, _ = x.shape
        n = mask.sum(1)
        shift = (torch.arange(W, device=x.device)[None] + (W - n)[:, None]) % W  # left -> right padded
        x = x.gather(1, shift[..., None].expand(-1, -1, x.shape[-1]))
        packed = nn.utils.rnn.pack_padded_sequence(x, n.cpu(), batch_first=True, enforce_sorted=False)
        _, (h, _) = self.lstm(packed)
        return self.out(self.drop(torch.cat([h[0], h[1]], dim=-1)))


def hidden_sizes(value, default, model: str):
    """``hidden`` as the model takes it: one positive size (``default`` an int) or two (a pair).

    None gives ``default``; 0, a negative size or the wrong number of sizes is refused, naming the
    model and the fix (``hidden or default`` would silently turn 0 into the default)."""
    if value is None:
        return default
    sizes = list(value) if isinstance(value, (list, tuple)) else [value]
    want = 2 if isinstance(default, tuple) else 1
    if len(sizes) != want or any(isinstance(v, bool) or int(v) != v or v < 1 for v in sizes):
        example = "64 64" if want == 2 else "128"
        raise ValueError(f"hidden={value!r}: {model} takes {'two FFN sizes' if want == 2 else 'one hidden size'}, "
                         f"each a positive integer. Fix: e.g. --hidden {example} (the default: {default!r}).")
    return tuple(int(v) for v in sizes) if want == 2 else int(sizes[0])


@dataclass(eq=False)
class _SentenceVectorBaseline(_TorchBaseline):
    schedule = "constant"

    encoder: str = "default"  # encoder name or path whose mean-pooled vectors are the posts' features
    _: KW_ONLY
    window: int = 5  # posts per window (the current post last)
    hidden: tuple | int | None = None  # FFN: (h1, h2), default (64, 64); BiLSTM: LSTM size, default 128
    epochs: int = 30
    lr: float = 1e-3
    batch_size: int = 64
    dropout: float = 0.1
    patience: int | None = 5  # early stopping on dev macro-F1 (only when dev timelines are given)
    max_length: int = 128  # tokens per post for the sentence vectors
    seed: int = 0
    device: str = "auto"
    progress: bool = False

    hidden_default = None  # the model's default hidden size(s): one int, or a pair for FFN heads

    def __post_init__(self):
        if not isinstance(self.encoder, str):
            raise ValueError("sentence-vector baselines take an encoder name or path (e.g. 'default')")
        self.window = int(self.window)
        if self.hidden_default is not None:       # a bad size fails here, before any post is embedded
            hidden_sizes(self.hidden, self.hidden_default, type(self).__name__)

    def _features(self, timelines):
        x, mask = _window_vectors(timelines, self.window, self.encoder, self.max_length)
        self.dim_ = x.shape[-1]
        return {"x": x, "mask": mask}

    def fit(self, train, dev=None):
        self._features(train.subset(train.timeline_ids[:1]))  # sets dim_
        return super().fit(train, dev)


class FFNHistoryClassifier(_SentenceVectorBaseline):
    """FFN-History (paper): sentence vectors of the current post and of the window mean."""

    hidden_default = (64, 64)

    def _net(self, num_labels):
        hidden = hidden_sizes(self.hidden, self.hidden_default, "ffn_history")
        return FFNHistoryNet(self.dim_, hidden, num_labels, self.dropout)


class BiLSTMClassifier(_SentenceVectorBaseline):
    """BiLSTM (paper): bidirectional single-layer LSTM over the window's sentence vectors."""

    hidden_default = 128

    def _net(self, num_labels):
        return BiLSTMNet(self.dim_, hidden_sizes(self.hidden, self.hidden_default, "bilstm"), num_labels, self.dropout)


# ---------------------------------------------------------------------------------------------
# fine-tuned post-level encoder


class PostEncoderNet(nn.Module):
    """Encoder -> pooled [CLS] (BERT pooler, or [CLS] when absent) -> dropout -> linear."""

    def __init__(self, encoder: nn.Module, num_labels: int, dropout: float = 0.1):
        super().__init__()
        self.encoder = encoder
        self.drop = nn.Dropout(dropout)
        self.out = nn.Linear(encoder.config.hidden_size, num_labels)

    def forward(self, input_ids, attention_mask):
        o = self.encoder(input_ids=input_ids, attention_mask=attention_mask)
        pooled = o.pooler_output if getattr(o, "pooler_output", None) is not None else o.last_hidden_state[:, 0]
        return self.out(self.drop(pooled))


@dataclass(eq=False)
class PostEncoderClassifier(_TorchBaseline):
    """BERT-style post-level baseline: the encoder fine-tuned on the current post only."""

    schedule = "linear"

    encoder: object = "default"  # "default", an HF name, a path, or a (model, tokenizer) pair
    _: KW_ONLY
    epochs: int = 3
    lr: float = 5e-5
    batch_size: int = 16
    max_length: int = 64  # tokens per post
    patience: int | None = None
    seed: int = 0
    device: str = "auto"
    progress: bool = False

    __repr__ = settings_repr

    def _net(self, num_labels):
        enc, self.tokenizer_ = resolve_encoder_pair(self.encoder)
        return PostEncoderNet(copy.deepcopy(getattr(enc, "base_model", enc)).train(), num_labels)

    def _features(self, timelines):
        _, tok = resolve_encoder_pair(self.encoder)
        ids = tokenize_texts(timelines.df["text"].tolist(), tok, self.max_length)
        self.pad_id_ = int(tok.pad_token_id or 0)
        rows = np.empty(len(ids), dtype=object)    # one token array per post: np.array(ids) would make a 2-D
        for i, r in enumerate(ids):                 # grid of objects when every post has the same length
            rows[i] = r
        return {"input_ids": rows}

    def _dataset(self, timelines, codes, rows):
        ids = self._features(timelines)["input_ids"]
        return _DictDataset(input_ids=ids[rows], labels=torch.as_tensor(codes[rows]))

    def _collate(self):
        def collate(items):
            ids, am = pad_token_rows([it["input_ids"] for it in items], self.pad_id_)
            out = {"input_ids": ids, "attention_mask": am}
            if "labels" in items[0]:
                out["labels"] = torch.stack([torch.as_tensor(it["labels"]) for it in items])
            return out

        return collate


__all__ = ["BiLSTMClassifier", "BiLSTMNet", "FFNHistoryClassifier", "FFNHistoryNet", "PostEncoderClassifier",
           "PostEncoderNet", "PriorRandomClassifier"]
