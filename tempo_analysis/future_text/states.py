"""Frozen-LM adaptation: the causal LM's final hidden states, computed once per document and cached.

The future-text variants all share ONE adaptation of a frozen pretrained LM (SmolLM2 by default):
the LM's weights never change, so the state its head reads at every position of every document
is computed once (``document_states``) and every variant -- the all-years baseline, last-n, and
the temporal-bias models -- trains only what sits on top of it: a per-token output offset (the
head adaptation) and, for the bias models, the temporal bias. The comparison therefore isolates
the bias.

Each document is read whole as ``[BOS] tokens`` (targets ``tokens [EOS]``), never restarting the
context mid-document; only a document longer than the LM's context is read in windows that
overlap by half a window (every position after the first window sees at least half a window of
context).

Vocabulary split (exact, and what makes CPU training cheap): the temporal bias and the per-token
offset live on the tokens seen in the history texts (``S``, a few thousand ids); every other id
gets one shared offset and no temporal bias. For a position with head logits ``z``, the softmax
over the whole vocabulary then needs only ``z[S]`` and ``lse_rest = logsumexp(z[not S])``,
which does not change during training. The one full-vocabulary pass per position happens when
the states are computed (``lse_all`` and the target's logit ``z_target``, both cached with the
states); ``rest_terms`` then gets ``lse_rest = log(exp(lse_all) - sum_S exp(z))`` (float64) from
a pass over S alone. Training and scoring are exact, not sampled.

Cache: ``$TEMPO_ANALYSIS_CACHE_DIR/future_text_states/<key>.safetensors`` (else
``~/.cache/tempo_analysis/...``), ``key`` = sha256 of the LM's fingerprint (config and a
strided sample of every weight), the tokenizer's vocabulary fingerprint, BOS/EOS ids and the texts.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load_file, save_file
from tqdm.auto import tqdm

from tempo_analysis.causal_lm import cache_root
from tempo_analysis.cpu_linears import packed_linears
from tempo_analysis.future_text.tokenizer import vocab_fingerprint

REST_FLOOR = -1e9       # lse_rest when every token is in S (an empty rest)


def lm_fingerprint(lm) -> str:
    """sha256 (16 hex) of the LM's config and a strided sample of every parameter and buffer."""
    h = hashlib.sha256(json.dumps(lm.config.to_dict(), sort_keys=True, default=str).encode())
    for name, t in sorted(lm.state_dict().items()):
        flat = t.detach().reshape(-1)
        sample = flat[:: max(1, flat.numel() // 4096)].float().cpu().numpy()
        h.update(name.encode())
        h.update(sample.tobytes())
    return h.hexdigest()[:16]


def max_context(lm) -> int:
    cfg = lm.config
    return int(getattr(cfg, "max_position_embeddings", None) or getattr(cfg, "n_positions", None) or 1024)


def _decoder(lm):
    """The LM without its head: its output is what the (tied) head reads."""
    return getattr(lm, lm.base_model_prefix)


@torch.inference_mode()
def document_states(lm, docs: list[list[int]], bos: int, *, max_len: int | None = None, batch_size: int = 8,
                    progress: bool = False) -> list[torch.Tensor]:
    """For each document ``ids``: the head-input states ``[len(ids) + 1, d]`` of ``[BOS] ids`` (float32, CPU).

    Row ``k`` predicts token ``k`` of ``ids + [EOS]``. Documents longer than ``max_len`` (default:
    the LM's context) are read in windows overlapping by half a window.
    """
    max_len = int(max_len or max_context(lm))
    device = next(lm.parameters()).device
    dec = _decoder(lm)
    # (doc, start, keep_from, input ids) pieces; keep_from = first row of the piece whose state is kept
    pieces = []
    for d, ids in enumerate(docs):
        seq = [bos] + list(ids)
        if len(seq) <= max_len:
            pieces.append((d, 0, 0, seq))
            continue
        half = max_len // 2
        pieces.append((d, 0, 0, seq[:max_len]))
        done = max_len
        while done < len(seq):
            start = done - half
            pieces.append((d, start, half, seq[start:start + max_len]))
            done = start + max_len
    order = sorted(range(len(pieces)), key=lambda i: len(pieces[i][3]))
    parts: dict[int, list[tuple[int, torch.Tensor]]] = {}
    was = lm.training
    lm.eval()
    with packed_linears(dec, rows=batch_size * 64):       # CPU: oneDNN prepacked weights (cpu_linears)
        for s in tqdm(range(0, len(order), batch_size), disable=not progress, desc="LM states"):
            chunk = [pieces[i] for i in order[s:s + batch_size]]
            L = max(len(p[3]) for p in chunk)
            ids = torch.zeros((len(chunk), L), dtype=torch.long)
            att = torch.zeros((len(chunk), L), dtype=torch.long)
            for r, p in enumerate(chunk):
                ids[r, :len(p[3])], att[r, :len(p[3])] = torch.tensor(p[3]), 1
            h = dec(input_ids=ids.to(device), attention_mask=att.to(device)).last_hidden_state.float().cpu()
            for r, (d, start, keep, seq) in enumerate(chunk):
                parts.setdefault(d, []).append((start + keep, h[r, keep:len(seq)]))
    lm.train(was)
    return [torch.cat([t for _, t in sorted(parts[d], key=lambda x: x[0])]) for d in range(len(docs))]


@dataclass
class StateCache:
    """Concatenated states of many documents: ``hidden [N, d]``, ``inputs [N]``, ``targets [N]``,
    ``doc [N]`` (document index of each position), ``lse_all [N]`` (logsumexp of the head's
    logits) and ``z_target [N]`` (the target's logit); ``years [D]`` per document."""

    hidden: torch.Tensor
    inputs: torch.Tensor
    targets: torch.Tensor
    doc: torch.Tensor
    years: torch.Tensor
    lse_all: torch.Tensor
    z_target: torch.Tensor

    @property
    def pos_years(self) -> torch.Tensor:
        return self.years[self.doc]

    @classmethod
    def build(cls, lm, tokenizer, texts, years, *, bos: int, eos: int, cache: bool | str | Path = True,
              batch_size: int = 8, progress: bool = False) -> "StateCache":
        """States of every text (from the on-disk cache when ``cache`` and the key matches)."""
        texts = [str(t) for t in texts]
        enc = tokenizer(texts, add_special_tokens=False)["input_ids"]
        path = None
        if cache:
            key = hashlib.sha256(json.dumps(["states-v2", lm_fingerprint(lm), vocab_fingerprint(tokenizer), bos, eos,
                                             texts]).encode()).hexdigest()[:24]
            folder = Path(cache) if isinstance(cache, (str, Path)) else cache_root().parent / "future_text_states"
            path = folder / f"{key}.safetensors"
            if path.is_file():
                t = load_file(str(path))
                return cls(t["hidden"], t["inputs"], t["targets"], t["doc"], torch.as_tensor(np.asarray(years)).long(),
                           t["lse_all"], t["z_target"])
        states = document_states(lm, enc, bos, batch_size=batch_size, progress=progress)
        hidden = torch.cat(states).contiguous()
        targets = torch.cat([torch.tensor(ids + [eos]) for ids in enc])
        lse_all, z_target = full_head_terms(lm.get_output_embeddings(), hidden, targets)
        out = cls(hidden, torch.cat([torch.tensor([bos] + ids) for ids in enc]), targets,
                  torch.cat([torch.full((len(ids) + 1,), d) for d, ids in enumerate(enc)]),
                  torch.as_tensor(np.asarray(years)).long(), lse_all, z_target)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
            save_file({"hidden": out.hidden, "inputs": out.inputs, "targets": out.targets, "doc": out.doc,
                       "lse_all": out.lse_all, "z_target": out.z_target}, str(tmp))
            os.replace(tmp, path)
        return out

    def select(self, docs) -> "StateCache":
        """The positions of the documents ``docs`` (indices), renumbered 0..len(docs)-1."""
        docs = torch.as_tensor(list(docs), dtype=torch.long)
        remap = torch.full((len(self.years),), -1, dtype=torch.long)
        remap[docs] = torch.arange(len(docs))
        keep = remap[self.doc] >= 0
        return StateCache(self.hidden[keep], self.inputs[keep], self.targets[keep], remap[self.doc[keep]],
                          self.years[docs], self.lse_all[keep], self.z_target[keep])


@torch.no_grad()
def full_head_terms(head, hidden: torch.Tensor, targets: torch.Tensor, chunk: int = 1024):
    """``(lse_all [N], z_target [N])``: logsumexp of the head's logits and the target's logit per position."""
    lse, zt = torch.empty(len(hidden)), torch.empty(len(hidden))
    with packed_linears(head, rows=chunk):
        for s in range(0, len(hidden), chunk):
            z = head(hidden[s:s + chunk].to(head.weight.device)).float().cpu()
            zt[s:s + chunk] = z.gather(1, targets[s:s + chunk, None])[:, 0]
            lse[s:s + chunk] = torch.logsumexp(z, dim=1)
    return lse, zt


@torch.no_grad()
def rest_terms(head, states: "StateCache", token_ids: torch.Tensor, chunk: int = 4096):
    """``(lse_rest [N], z_target [N])``: logsumexp of the head logits outside ``token_ids`` (from
    ``lse_all`` minus the mass on S, float64) and the target's logit."""
    w = head.weight[token_ids.to(head.weight.device)]
    b = head.bias[token_ids] if getattr(head, "bias", None) is not None else None
    lse = torch.empty(len(states.hidden))
    for s in range(0, len(states.hidden), chunk):
        z = states.hidden[s:s + chunk].to(w.device) @ w.t()
        z = (z if b is None else z + b).double().cpu()
        all_ = states.lse_all[s:s + chunk].double()
        frac = torch.exp(torch.logsumexp(z, dim=1) - all_).clamp(max=1.0)
        rest = all_ + torch.log1p(-frac)
        lse[s:s + chunk] = torch.where(torch.isfinite(rest) & (frac < 1 - 1e-12), rest,
                                       torch.full_like(rest, REST_FLOOR)).float()
    return lse, states.z_target


@torch.no_grad()
def state_context_table(states: StateCache, token_ids: torch.Tensor, first_year: int, last_year: int,
                        fallback: torch.Tensor) -> np.ndarray:
    """Per-year mean of the LM state at each occurrence of a token of ``token_ids`` as INPUT
    (the Context / Context^2 history, eq. 7, with the LM itself as the contextual encoder).

    ``[Y, |S|, d]``. A token absent from a year carries its previous vector forward; before its
    first occurrence it is ``fallback[v]`` (the LM's input embedding row). No later year leaks back.
    """
    V = int(max(int(token_ids.max()) + 1, int(states.inputs.max()) + 1))
    col = torch.full((V,), -1, dtype=torch.long)
    col[token_ids] = torch.arange(len(token_ids))
    Y, n, d = last_year - first_year + 1, len(token_ids), states.hidden.shape[1]
    out = np.empty((Y, n, d), dtype=np.float32)
    prev = fallback.float().clone()
    py = states.pos_years
    for i, y in enumerate(range(first_year, last_year + 1)):
        m = (py == y) & (col[states.inputs.clamp(max=V - 1)] >= 0)
        c = col[states.inputs[m]]
        sums = torch.zeros(n, d).index_add_(0, c, states.hidden[m])
        cnt = torch.zeros(n).index_add_(0, c, torch.ones(len(c)))
        cur = torch.where(cnt[:, None] > 0, sums / cnt.clamp_min(1)[:, None], prev)
        out[i], prev = cur.numpy(), cur
    return out
