"""Batches of windows with SHARED post encoding: each unique post of a batch appears once.

A batch of B windows over w slots references at most B*w posts, but consecutive windows of one
timeline overlap in w-1 of them. `collate_windows` gathers the batch's unique posts, pads them
only to the longest of those posts (dynamic padding, never a fixed 512), and gives every window
a row index into that post list. The model runs its local stack once per unique post and gathers
windows from the result. `per_window_batch` rebuilds the naive layout (every window carries its
own copy of every post, optionally padded to 512 as in the reference code) for tests and the
benchmark.

Batch dict (what `TempoFormerModel.forward` takes):
    input_ids, attention_mask [P, T]   unique posts (or local_hidden [P, T, H] from a cache)
    window_index [B, w] long           rows into the posts, -1 = pad; current post in the last slot
    window_mask [B, w] bool            True = real post (the only padding marker)
    post_times [P] float64             absolute seconds
    labels [B] long                    -100 where the current post has no label
    target_rows [B] long               row ids (into Timelines.df) of the current posts
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

IGNORE = -100


@dataclass
class StreamData:
    """Everything needed to batch one Timelines at one window size (tokens computed once)."""

    windows: object  # tempo_analysis.data.Windows
    tokens: list  # per row of Timelines.df: np.ndarray of token ids (already truncated)
    seconds: np.ndarray  # [N] float64 absolute seconds per row
    labels: np.ndarray  # [N] int64 per window (its current post), -1 = unlabeled
    pad_id: int = 0

    def __len__(self) -> int:
        return len(self.windows)


def tokenize_texts(texts, tokenizer, max_length: int = 64) -> list[np.ndarray]:
    """Token ids per text, truncated to max_length (with [CLS]/[SEP]), never padded."""
    if max_length < 4:
        raise ValueError(f"max_length={max_length} is too small; use at least 4 (e.g. 64)")
    out = tokenizer(list(texts), truncation=True, max_length=max_length, padding=False)
    return [np.asarray(ids, dtype=np.int64) for ids in out["input_ids"]]


def build_stream_data(timelines, window: int, tokenizer=None, max_length: int = 64,
                      label_names=None, tokens=None) -> StreamData:
    """Windows + tokens of a Timelines. Pass `tokens` to reuse a tokenization of the same rows."""
    windows = timelines.windows(int(window), label_names=label_names)
    if tokens is None:
        if tokenizer is None:
            raise ValueError("build_stream_data needs a tokenizer (or tokens=)")
        tokens = tokenize_texts(timelines.df["text"].tolist(), tokenizer, max_length)
    if len(tokens) != len(timelines.df):
        raise ValueError(f"tokens has {len(tokens)} rows but the timelines have {len(timelines.df)} posts")
    pad_id = getattr(tokenizer, "pad_token_id", None) or 0
    return StreamData(windows=windows, tokens=tokens,
                      seconds=timelines.df["seconds"].to_numpy(np.float64),
                      labels=np.asarray(windows.labels, dtype=np.int64), pad_id=int(pad_id))


def pad_token_rows(rows: list[np.ndarray], pad_id: int, pad_to: int | None = None):
    """[P, T] input_ids and attention_mask, T = longest row (or pad_to)."""
    T = max(len(r) for r in rows) if pad_to is None else int(pad_to)
    ids = torch.full((len(rows), T), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), T), dtype=torch.long)
    for i, r in enumerate(rows):
        if len(r) > T:
            raise ValueError(f"a post has {len(r)} tokens, more than pad_to={T}")
        ids[i, : len(r)] = torch.as_tensor(r)
        mask[i, : len(r)] = 1
    return ids, mask


def collate_windows(data: StreamData, idx, local_cache=None) -> dict:
    """Batch of windows `idx` (positions into data.windows) with each unique post once.

    local_cache: optional list (per Timelines row) of [T_i, H] tensors from a frozen local stack;
    then the batch carries `local_hidden` instead of input_ids.
    """
    idx = np.asarray(idx, dtype=np.int64)
    w = data.windows
    post_index, mask = w.post_index[idx], w.mask[idx]
    rows, inverse = np.unique(post_index[mask], return_inverse=True)  # unique posts, sorted row ids
    window_index = np.full(post_index.shape, -1, dtype=np.int64)
    window_index[mask] = inverse
    labels = data.labels[idx].copy()
    labels[labels < 0] = IGNORE
    batch = {
        "window_index": torch.from_numpy(window_index),
        "window_mask": torch.from_numpy(mask.copy()),
        "post_times": torch.from_numpy(data.seconds[rows].copy()),
        "labels": torch.from_numpy(labels),
        "target_rows": torch.from_numpy(w.target_index[idx].copy()),
    }
    toks = [data.tokens[r] for r in rows]
    ids, am = pad_token_rows(toks, data.pad_id)
    batch["attention_mask"] = am
    if local_cache is None:
        batch["input_ids"] = ids
    else:
        H = local_cache[rows[0]].shape[-1]
        hid = torch.zeros(len(rows), ids.shape[1], H, dtype=local_cache[rows[0]].dtype)
        for i, r in enumerate(rows):
            hid[i, : local_cache[r].shape[0]] = local_cache[r]
        batch["local_hidden"] = hid
    return batch


def window_chunks(windows, positions, chunk: int) -> list[np.ndarray]:
    """Split window positions into runs of <= `chunk` CONSECUTIVE windows of one timeline.

    Consecutive windows of a timeline share w-1 posts, so a batch made of a few such runs
    encodes far fewer unique posts than a batch of random windows (which share almost none).
    """
    positions = np.asarray(positions, dtype=np.int64)
    if chunk <= 1 or len(positions) == 0:
        return [positions[i : i + 1] for i in range(len(positions))]
    tl = np.asarray(windows.timeline_id)[positions]
    breaks = np.flatnonzero((tl[1:] != tl[:-1]) | (np.diff(positions) != 1)) + 1
    out = []
    for run in np.split(positions, breaks):
        out.extend(run[i : i + chunk] for i in range(0, len(run), chunk))
    return out


class WindowDataset(torch.utils.data.Dataset):
    """Map-style dataset whose items are chunks of consecutive windows (see `window_chunks`).

    Items are (dataset, positions) so that ONE collate function (`collate_items`) batches train and
    dev sets alike (the Trainer takes one collate_fn); a shuffled loader shuffles whole chunks.
    chunk=1 gives one window per item (random batches, little post sharing).
    """

    def __init__(self, data: StreamData, positions=None, local_cache=None, chunk: int = 1):
        self.data, self.local_cache = data, local_cache
        self.positions = np.arange(len(data)) if positions is None else np.asarray(positions, np.int64)
        self.chunks = window_chunks(data.windows, self.positions, int(chunk))

    def __len__(self) -> int:
        return len(self.chunks)

    def __getitem__(self, i):
        return self, self.chunks[i]

    def collate(self, items) -> dict:
        """Batch of item indices into this dataset."""
        return collate_items([self[i] for i in items])


def collate_items(items) -> dict:
    """Collate (dataset, positions) items of one WindowDataset into a shared-encoding batch."""
    ds = items[0][0]
    if any(it[0] is not ds for it in items):
        raise ValueError("a batch mixes windows of different datasets; batch each dataset separately")
    return collate_windows(ds.data, np.concatenate([np.atleast_1d(p) for _, p in items]), ds.local_cache)


def per_window_batch(batch: dict, pad_to: int | None = None) -> dict:
    """The naive layout: every real (window, slot) gets its own copy of its post.

    pad_to=None pads each copy to the longest post (dynamic); pad_to=512 reproduces the
    reference code's fixed padding. Same model output as the shared batch (up to float error).
    """
    wi, wm = batch["window_index"], batch["window_mask"].bool()
    b_idx, s_idx = wm.nonzero(as_tuple=True)
    src = wi[b_idx, s_idx]  # which unique post each copy comes from
    new_index = torch.full_like(wi, -1)
    new_index[b_idx, s_idx] = torch.arange(len(src))
    out = dict(batch)
    out["window_index"] = new_index
    out["post_times"] = batch["post_times"][src]
    am = batch["attention_mask"][src]
    T = am.shape[1] if pad_to is None else int(pad_to)
    if T < am.shape[1]:
        raise ValueError(f"pad_to={pad_to} is shorter than the longest post ({am.shape[1]} tokens)")
    pad = T - am.shape[1]
    out["attention_mask"] = torch.nn.functional.pad(am, (0, pad))
    if "input_ids" in batch:
        out["input_ids"] = torch.nn.functional.pad(batch["input_ids"][src], (0, pad))
    if "local_hidden" in batch:
        out["local_hidden"] = torch.nn.functional.pad(batch["local_hidden"][src], (0, 0, 0, pad))
    return out


def model_inputs(batch: dict) -> dict:
    """The keys TempoFormerModel.forward takes (drops bookkeeping such as target_rows)."""
    keep = ("input_ids", "attention_mask", "window_index", "window_mask", "post_times", "labels",
            "local_hidden", "token_type_ids")
    return {k: v for k, v in batch.items() if k in keep}
