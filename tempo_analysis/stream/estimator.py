"""TempoFormerClassifier: the stream-classification estimator over Timelines (scikit-learn style).

    clf = TempoFormerClassifier(window=5, epochs=3).fit(train_timelines, dev_timelines)
    clf = TempoFormerClassifier("notebook")          # notebook 01's settings (stream.config.PRESETS)
    proba = clf.predict_proba(test_timelines)      # [posts, classes], rows of test_timelines.df
    clf.temporal_attention(test_timelines, post_id) # the window's rotary attention maps
    clf.visualize_attention(test_timelines, post_id) # the same as a plotly figure
    clf.save("run/"); TempoFormerClassifier.load("run/")

The settings are a :class:`~tempo_analysis.stream.config.StreamConfig` (a preset name, a config,
and/or its fields by name); ``fit`` checks them first and keeps them in ``config_``. What ``fit``
learns ends in ``_`` (``model_``, ``tokenizer_``, ``label_names_``, ``history_``, ``trainer_``).
Training goes through the shared `tempo_analysis.training.Trainer` (seeded, AdamW, linear
schedule, early stopping on dev macro-F1, best weights restored). With `freeze_local=True` the
local stack is frozen and its per-post output is computed ONCE per post and cached, so an epoch
only runs the two upper layers (the fast CPU setting the notebook uses).
The model is :mod:`tempo_analysis.stream.model` (Tseriotou et al., 2024); the what-ifs (edit a
post, move it in time) are :mod:`tempo_analysis.stream.time_effect`; the experiment protocol
(splits, baselines by name) is :mod:`tempo_analysis.stream.experiment`.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch
from transformers import AutoTokenizer

from tempo_analysis.base import Estimator
from tempo_analysis.data.errors import DataError
from tempo_analysis.encoders import quiet_transformers, resolve_encoder
from tempo_analysis.hub import WEIGHT_FILES
from tempo_analysis.evaluation.classification import classification_scores
from tempo_analysis.training import TrainConfig, Trainer, seed_everything

from .batching import WindowDataset, build_stream_data, collate_items, model_inputs, pad_token_rows
from .config import PRESETS, StreamConfig
from .embeddings import resolve_encoder_pair
from .labels import dev_is_usable, training_labels
from .model import TempoFormerModel, focal_alpha_from_labels

if TYPE_CHECKING:
    import plotly.graph_objects as go

# local-stack outputs per (fingerprint of the local stack's weights, device, post tokens), shared
# by every classifier of this process whose local stack is the same (bounded, oldest dropped)
_LOCAL_MEMO: OrderedDict = OrderedDict()
_LOCAL_MEMO_MAX_POSTS = 50_000

# what TempoFormerClassifier.save writes besides config.json (checked by load before anything is read)
_LABELS_FILE = "classifier.json"
_SAVED_FILES = (_LABELS_FILE, "model/config.json", tuple(f"model/{f}" for f in WEIGHT_FILES))


def _remember(key, value: torch.Tensor) -> None:
    _LOCAL_MEMO[key] = value
    while len(_LOCAL_MEMO) > _LOCAL_MEMO_MAX_POSTS:
        _LOCAL_MEMO.popitem(last=False)


def _local_stack_fingerprint(model) -> str:
    """Hash of the bytes of the embeddings + local layers (what `local_encode` computes with).

    Remembered on the model until any of those tensors changes in place (an optimiser step bumps
    their version counters), so the memo can never serve outputs of other weights.
    """
    params = [*model.encoder.embeddings.parameters(), *model.local_layers.parameters()]
    versions = tuple((id(p), p._version) for p in params)
    cached = getattr(model, "_local_fingerprint", None)
    if cached is not None and cached[0] == versions:
        return cached[1]
    h = hashlib.blake2b(digest_size=16)
    for p in params:
        h.update(p.detach().cpu().contiguous().numpy().tobytes())
    model._local_fingerprint = (versions, h.hexdigest())
    return model._local_fingerprint[1]


def _encoder_summary(encoder) -> str:
    """How the encoder summarises a post: "mean" for sentence-transformers folders trained with mean
    pooling (such as the embedded all-MiniLM-L6-v2, whose [CLS] is never trained), else "cls"."""
    if not isinstance(encoder, str):
        return "cls"
    try:
        pooling = Path(resolve_encoder(encoder)) / "1_Pooling" / "config.json"
        if pooling.is_file() and json.loads(pooling.read_text()).get("pooling_mode_mean_tokens"):
            return "mean"
    except OSError:
        pass
    return "cls"


class TempoFormerClassifier(Estimator):
    """TempoFormer over windows of `window` posts; fit/predict on Timelines (see module docstring).

    ``TempoFormerClassifier(config=None, **overrides)``: ``config`` is a preset name ("cli", the
    default; "notebook"), a :class:`~tempo_analysis.stream.config.StreamConfig` or a dict, and
    ``overrides`` are StreamConfig fields by name (``encoder=``, ``window=``, ``epochs=``, ...).
    """

    config_class = StreamConfig
    presets = PRESETS
    kind = "tempoformer-classifier"
    fitted_attribute = "model_"

    @property
    def window(self) -> int:
        """The window the classifier was fitted with (what the what-if readers cut around a post)."""
        self._check_fitted()
        return self.config_.window

    # ----- building ---------------------------------------------------------------------------
    def _build_model(self, cfg: StreamConfig, label_names, train_labels) -> TempoFormerModel:
        if cfg.encoder == "custom":
            raise DataError("encoder='custom': this classifier was saved with an encoder given as a loaded "
                            "(model, tokenizer) pair, which cannot be read back. Fix: pass encoder= again "
                            "(the pair, a name or a folder) to train anew.")
        enc, self.tokenizer_ = resolve_encoder_pair(cfg.encoder)
        kw = dict(num_labels=len(label_names), id2label=dict(enumerate(label_names)),
                  label2id={n: i for i, n in enumerate(label_names)}, ablation=cfg.ablation,
                  focal_alpha=focal_alpha_from_labels(train_labels, len(label_names)),
                  max_window=max(64, cfg.window),
                  summary=_encoder_summary(cfg.encoder) if cfg.summary == "auto" else cfg.summary)
        kw.update(cfg.model_kwargs)
        return TempoFormerModel.from_encoder(enc, **kw)

    def _stream_data(self, timelines, window: int | None = None):
        return build_stream_data(timelines, window or self.config_.window, self.tokenizer_, self.config_.max_length,
                                 self.label_names_)

    @torch.no_grad()
    def _local_cache(self, data, batch_size: int = 64) -> list:
        """Frozen local-stack output per post (unpadded [T_i, H]), computed once.

        Outputs are also memoised per post across classifiers of this process (`_LOCAL_MEMO`),
        keyed by a fingerprint of the local stack's weights: the notebook's ablation models, the
        what-if widgets and repeated predictions with the same frozen encoder encode each post once.
        """
        model = self.model_
        was = model.training
        model.eval()
        device = next(model.parameters()).device
        memo_key = (_local_stack_fingerprint(model), str(device))
        cache = [None] * len(data.tokens)
        todo = []
        for r, toks in enumerate(data.tokens):
            hit = _LOCAL_MEMO.get((memo_key, tuple(np.asarray(toks).tolist())))
            if hit is None:
                todo.append(r)
            else:
                cache[r] = hit
        order = [todo[i] for i in np.argsort([len(data.tokens[r]) for r in todo], kind="stable")]
        for i in range(0, len(order), batch_size):
            rows = order[i : i + batch_size]
            ids, am = pad_token_rows([data.tokens[r] for r in rows], data.pad_id)
            h = model.local_encode(ids.to(device), am.to(device)).cpu()
            for j, r in enumerate(rows):
                cache[r] = h[j, : len(data.tokens[r])].clone()
                _remember((memo_key, tuple(np.asarray(data.tokens[r]).tolist())), cache[r])
        model.train(was)
        return cache

    def _dataset(self, timelines, labelled_only=False, window: int | None = None, chunk: int = 1) -> WindowDataset:
        data = self._stream_data(timelines, window)
        pos = np.flatnonzero(data.labels >= 0) if labelled_only else None
        cache = self._local_cache(data) if self.config_.freeze_local else None
        return WindowDataset(data, pos, cache, chunk=chunk)

    # ----- fit / predict ----------------------------------------------------------------------
    def fit(self, train, dev=None) -> "TempoFormerClassifier":
        """Train on `train` Timelines; early stopping / best epoch on `dev` macro-F1 when given."""
        cfg = self._start_fit()
        self.label_names_, codes = training_labels(train)
        seed_everything(cfg.seed)
        self.model_ = self._build_model(cfg, self.label_names_, codes)
        if cfg.freeze_local:
            for p in [*self.model_.encoder.embeddings.parameters(), *self.model_.local_layers.parameters()]:
                p.requires_grad_(False)
        # training items are chunks of consecutive windows (shuffled as chunks): posts are shared
        train_ds = self._dataset(train, labelled_only=True, chunk=cfg.chunk)
        dev_ds = self._dataset(dev, labelled_only=True, chunk=16) if dev_is_usable(dev, self.label_names_) else None
        enc_params = {id(p) for p in self.model_.encoder.parameters()}
        params = [p for p in self.model_.parameters() if p.requires_grad]
        groups = [{"params": [p for p in params if id(p) in enc_params], "lr": cfg.lr},
                  {"params": [p for p in params if id(p) not in enc_params], "lr": cfg.head_lr}]
        train_cfg = TrainConfig(max_epochs=cfg.epochs, batch_size=max(1, cfg.batch_size // cfg.chunk),
                                grad_accum_steps=cfg.grad_accum_steps,
                                eval_batch_size=4, lr=cfg.lr, schedule="linear", warmup_ratio=cfg.warmup_ratio,
                                seed=cfg.seed, device=cfg.device, progress=cfg.progress, metric="macro_f1",
                                greater_is_better=True, patience=cfg.patience if dev_ds is not None else None)
        self.trainer_ = Trainer(self.model_, train_cfg, collate_fn=collate_items, eval_fn=self._eval_fn,
                                param_groups=[g for g in groups if g["params"]])
        self.trainer_.fit(train_ds, dev_ds)
        self.history_ = self.trainer_.history_
        self.model_.eval()
        return self

    # ----- persistence (safetensors + JSON; save/load are the base's) ---------------------------
    @classmethod
    def _saved_files(cls) -> tuple:
        return _SAVED_FILES

    def _save_fitted(self, folder: Path) -> None:
        self.model_.save_pretrained(folder / "model")
        self.tokenizer_.save_pretrained(folder / "model")
        (folder / _LABELS_FILE).write_text(json.dumps({"label_names": self.label_names_}, indent=2))

    def _load_fitted(self, folder: Path) -> None:
        try:
            label_names = json.loads((folder / _LABELS_FILE).read_text(encoding="utf-8"))["label_names"]
            if not isinstance(label_names, list):
                raise TypeError("label_names is not a list")
        except (ValueError, KeyError, TypeError) as e:
            raise DataError(f"TempoFormerClassifier folder {str(folder)!r}: {_LABELS_FILE} does not hold the "
                            f"classifier's labels ({type(e).__name__}: {e}). Fix: pass a folder written by "
                            "TempoFormerClassifier.save (clf.save(DIR))") from None
        with quiet_transformers():   # our own folder: no weight-loading bar in a notebook
            self.model_ = TempoFormerModel.from_pretrained(folder / "model", local_files_only=True).eval()
            self.tokenizer_ = AutoTokenizer.from_pretrained(folder / "model", local_files_only=True)
        self.label_names_ = label_names

    def _eval_fn(self, model, batches) -> dict:
        ys, ps = [], []
        for b in batches:
            ps.append(model(**model_inputs(b)).logits.argmax(-1).cpu())
            ys.append(b["labels"].cpu())
        y, p = torch.cat(ys).numpy(), torch.cat(ps).numpy()
        y = np.where(y == -100, -1, y)
        return {"macro_f1": classification_scores(y, p, self.label_names_)["macro_f1"]}

    @torch.no_grad()
    def predict_proba(self, timelines, batch_size: int = 64, window: int | None = None) -> np.ndarray:
        """[len(timelines.df), n_classes] probabilities for every post (labelled or not).

        window: predict with another window size than the one trained with (positions are
        relative to the current post, so any w <= config.max_window works; a what-if knob).
        """
        self._check_fitted()
        if window is not None and not 1 <= int(window) <= self.model_.config.max_window:
            raise ValueError(f"window={window} must be in [1, {self.model_.config.max_window}]")
        ds = self._dataset(timelines, window=window)
        device = next(self.model_.parameters()).device
        self.model_.eval()
        out = np.zeros((len(timelines.df), len(self.label_names_)), dtype=np.float32)
        for i in range(0, len(ds), batch_size):  # in order: consecutive windows share their posts
            b = collate_items([ds[j] for j in range(i, min(i + batch_size, len(ds)))])
            inputs = {k: v.to(device) for k, v in model_inputs(b).items()}
            proba = self.model_(**inputs).logits.float().softmax(-1).cpu().numpy()
            out[b["target_rows"].numpy()] = proba
        return out

    def predict(self, timelines) -> np.ndarray:
        """Label code per post (argmax of predict_proba)."""
        return self.predict_proba(timelines).argmax(-1)

    @torch.no_grad()
    def temporal_attention(self, timelines, post_id) -> dict:
        """The rotary attention maps of the window whose current post is `post_id`.

        Returns {"post_ids": window posts oldest -> newest, "gaps": seconds to the current post,
        "attention": [layers, heads, w, w] array (real posts only), "proba": class probabilities}.
        """
        self._check_fitted()
        data = self._stream_data(timelines)
        rows = np.flatnonzero(timelines.df["post_id"].to_numpy() == str(post_id))
        if len(rows) == 0:
            raise ValueError(f"post_id {post_id!r} is not in these timelines")
        pos = int(np.flatnonzero(data.windows.target_index == rows[0])[0])
        cache = self._local_cache(data) if self.config_.freeze_local else None
        b = WindowDataset(data, [pos], cache).collate([0])  # one window
        device = next(self.model_.parameters()).device
        out = self.model_(**{k: v.to(device) for k, v in model_inputs(b).items()}, output_attentions=True)
        real = data.windows.mask[pos]
        att = torch.stack([a[0] for a in out.temporal_attentions]).cpu().numpy()[:, :, real][:, :, :, real]
        post_rows = data.windows.post_index[pos][real]
        return {"post_ids": timelines.df["post_id"].to_numpy()[post_rows].tolist(),
                "gaps": data.windows.gaps[pos][real].tolist(), "attention": att,
                "proba": out.logits.softmax(-1)[0].cpu().numpy()}

    # ----- figures (tempo_analysis.figures.stream) ---------------------------------------------
    def visualize_attention(self, timelines, post_id, *, layer: int = -1, head: int | None = None,
                            title: str | None = None) -> go.Figure:
        """Heatmap of the temporal rotary attention in the window of `post_id` (query x key post).

        layer: upper layer (0 = first, -1 = last); head=None averages the heads. Hover shows the posts.
        """
        from tempo_analysis.figures import stream as figures   # plotly loads with the first figure

        att = self.temporal_attention(timelines, post_id)
        texts = timelines.df.set_index("post_id").loc[att["post_ids"], "text"].tolist()
        return figures.attention_heatmap(att, layer=layer, head=head, texts=texts, title=title)

    def visualize_probabilities(self, timelines, timeline_id=None, *, proba: np.ndarray | None = None,
                                title: str | None = None) -> go.Figure:
        """Predicted probability of each change class along one timeline (default: the first),
        with the true changes marked. `proba`: a `predict_proba(timelines)` result to reuse."""
        from tempo_analysis.figures import stream as figures

        self._check_fitted()
        proba = self.predict_proba(timelines) if proba is None else proba
        tid = timelines.timeline_ids[0] if timeline_id is None else timeline_id
        return figures.probability_plot(timelines, tid, proba, self.label_names_, title=title)

    def visualize_confusion(self, timelines, *, proba: np.ndarray | None = None,
                            title: str = "confusion matrix (rows = truth)") -> go.Figure:
        """Confusion matrix of the predictions on labelled `timelines` (rows = true labels).
        `proba`: a `predict_proba(timelines)` result to reuse."""
        from tempo_analysis.figures import stream as figures

        self._check_fitted()
        proba = self.predict_proba(timelines) if proba is None else proba
        names = self.label_names_
        scores = classification_scores(timelines.label_codes(names), np.asarray(proba).argmax(-1), names)
        return figures.confusion_heatmap(scores["confusion"], names, title=title)


__all__ = ["TempoFormerClassifier"]
