"""Masked-LM ability for the embedded encoder: a small low-rank adapter plus an MLM head, shipped as an asset.

all-MiniLM-L6-v2 is a sentence-embedding model without an MLM head, and a head trained on its
frozen last layer barely beats the unigram prior. ``tempo_analysis/assets/minilm_mlm_adapter.safetensors``
holds what turns it into a masked LM: low-rank (LoRA) updates of every linear layer of the body, a
fresh MLM head transform, the output bias and a trained ``[MASK]`` embedding. It was trained once
on CPU by ``scripts/train_mlm_adapter.py`` on text that no evaluation the project reports reads
(:data:`ADAPTER_TEXT`: ACL abstracts of 2010-2014 and the Switchboard sample; the file's metadata
records the rule). :func:`apply_adapter` merges it into the
base weights, so the result is an ordinary ``BertForMaskedLM``: nothing downstream needs to know.

:func:`mlm_eval` measures top-1 / top-5 on masked tokens of held-out text next to the unigram
prior; ``tempo-analysis encoder mlm-eval`` runs it on Brown.
"""
from __future__ import annotations

import functools
import hashlib
import json
import math
import struct
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

ASSET = Path(__file__).resolve().parent / "assets" / "minilm_mlm_adapter.safetensors"
# sha256 of the shipped asset (trained on ADAPTER_TEXT); checked on every load, so a replaced or corrupt file
# fails loudly. save_adapter writes a canonical header, so the same tensors always give the same bytes.
ASSET_SHA256 = "bd0cb0672f54c5550aa05f380375796b1adc669da1abd5409867b26ea27c54e2"
LORA_TARGETS = ("attention.self.query", "attention.self.key", "attention.self.value",
                "attention.output.dense", "intermediate.dense", "output.dense")


class AdapterNotAvailable(RuntimeError):
    """The MLM adapter asset is missing, corrupt, or does not fit the base model."""


@dataclass(frozen=True)
class AdapterConfig:
    """Shape of the adapter: LoRA rank and scaling (``alpha / rank``) on :data:`LORA_TARGETS`."""

    rank: int = 16
    alpha: float = 32.0

    @property
    def scale(self) -> float:
        return self.alpha / self.rank


# --------------------------------------------------------------------------- LoRA


class LoRALinear(nn.Module):
    """``base(x) + scale * x A^T B^T`` with ``base`` frozen; ``B`` starts at zero (identity at init)."""

    def __init__(self, base: nn.Linear, rank: int, scale: float):
        super().__init__()
        self.base, self.scale = base, scale
        self.lora_A = nn.Parameter(torch.empty(rank, base.in_features))
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, rank))
        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))

    def forward(self, x):
        return self.base(x) + (x @ self.lora_A.t() @ self.lora_B.t()) * self.scale

    def delta(self) -> torch.Tensor:
        return (self.lora_B @ self.lora_A) * self.scale


def _target_modules(bert):
    for i, layer in enumerate(bert.encoder.layer):
        for t in LORA_TARGETS:
            parent = layer
            *path, leaf = t.split(".")
            for p in path:
                parent = getattr(parent, p)
            yield f"layer.{i}.{t}", parent, leaf


def add_lora(model, cfg: AdapterConfig = AdapterConfig()) -> dict[str, LoRALinear]:
    """Wrap the body's linear layers of a ``BertForMaskedLM`` in :class:`LoRALinear` (in place)."""
    out = {}
    for name, parent, leaf in _target_modules(model.bert):
        lora = LoRALinear(getattr(parent, leaf), cfg.rank, cfg.scale)
        setattr(parent, leaf, lora)
        out[name] = lora
    return out


def adapter_state(model, loras: dict[str, LoRALinear], mask_token_id: int) -> dict[str, torch.Tensor]:
    """Everything the asset stores: LoRA factors, head transform, output bias, ``[MASK]`` embedding."""
    state = {}
    for name, lora in loras.items():
        state[f"lora.{name}.A"] = lora.lora_A.detach().clone()
        state[f"lora.{name}.B"] = lora.lora_B.detach().clone()
    head = model.cls.predictions
    for k, v in head.transform.state_dict().items():
        state[f"head.transform.{k}"] = v.detach().clone()
    state["head.bias"] = head.bias.detach().clone()
    state["mask_embedding"] = model.bert.embeddings.word_embeddings.weight[mask_token_id].detach().clone()
    return {k: v.contiguous().float() for k, v in state.items()}


def apply_adapter(model, state: dict[str, torch.Tensor], cfg: AdapterConfig, mask_token_id: int):
    """Merge an adapter state into a plain ``BertForMaskedLM`` in place (``W += scale * B A``)."""
    expected = {f"lora.{n}.{ab}" for n, _, _ in _target_modules(model.bert) for ab in "AB"}
    missing = sorted(expected - set(state))
    if missing:
        raise AdapterNotAvailable(f"adapter lacks {len(missing)} LoRA tensors (e.g. {missing[0]}); "
                                  "it was trained for a different base model.")
    with torch.no_grad():
        for name, parent, leaf in _target_modules(model.bert):
            lin = getattr(parent, leaf)
            delta = (state[f"lora.{name}.B"] @ state[f"lora.{name}.A"]) * cfg.scale
            if delta.shape != lin.weight.shape:
                raise AdapterNotAvailable(f"adapter tensor {name} has shape {tuple(delta.shape)}, the model "
                                          f"{tuple(lin.weight.shape)}: a different base model.")
            lin.weight += delta
        head = model.cls.predictions
        head.transform.load_state_dict({k[len("head.transform."):]: v for k, v in state.items()
                                        if k.startswith("head.transform.")})
        head.bias.copy_(state["head.bias"])
        if getattr(head.decoder, "bias", None) is not None and head.decoder.bias.shape == head.bias.shape:
            head.decoder.bias.copy_(state["head.bias"])
        model.bert.embeddings.word_embeddings.weight[mask_token_id] = state["mask_embedding"]
    return model


# --------------------------------------------------------------------------- the asset


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def load_adapter(path: str | Path = ASSET, *, sha256: str | None = ASSET_SHA256):
    """``(state, AdapterConfig, metadata)`` from an adapter file, its sha256 checked when given."""
    from safetensors import safe_open

    path = Path(path)
    if not path.is_file():
        raise AdapterNotAvailable(f"MLM adapter {path} is missing. Reinstall tempo-analysis, or rebuild it with "
                                  "scripts/train_mlm_adapter.py in a checkout of the project.")
    if sha256 is not None:
        digest = file_sha256(path)
        if digest != sha256:
            raise AdapterNotAvailable(f"MLM adapter {path} has sha256 {digest}, expected {sha256}: the file is "
                                      "corrupt or was replaced. Reinstall tempo-analysis, or rebuild it with "
                                      "scripts/train_mlm_adapter.py.")
    with safe_open(str(path), framework="pt") as f:
        meta = dict(f.metadata() or {})
        state = {k: f.get_tensor(k) for k in f.keys()}
    cfg = AdapterConfig(rank=int(meta.get("rank", 16)), alpha=float(meta.get("alpha", 32.0)))
    return state, cfg, meta


def canonical_header(path: str | Path) -> None:
    """Rewrite a safetensors file's JSON header with sorted keys, in place (the tensor bytes are untouched).

    safetensors writes the metadata in a hash map's order, which changes from one write to the next,
    so the same tensors and metadata would give another file, and another sha256, on every run."""
    path = Path(path)
    raw = path.read_bytes()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.dumps(json.loads(raw[8:8 + n]), sort_keys=True, separators=(",", ":")).encode()
    header += b" " * (-len(header) % 8)          # the format pads its header to 8 bytes with spaces
    path.write_bytes(struct.pack("<Q", len(header)) + header + raw[8 + n:])


def save_adapter(path: str | Path, state: dict[str, torch.Tensor], cfg: AdapterConfig, **meta) -> str:
    """Write an adapter file (sorted tensors and metadata: the same state gives the same bytes) and return its
    sha256."""
    from safetensors.torch import save_file

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    md = {"rank": str(cfg.rank), "alpha": str(cfg.alpha), **{k: str(v) for k, v in meta.items()}}
    save_file({k: state[k] for k in sorted(state)}, str(path), metadata=md)
    canonical_header(path)
    return file_sha256(path)


# --------------------------------------------------------------------------- text


#: The adapter's training text, chosen so that no evaluation the project reports reads any of it:
#: the pseudoword benchmark reads Brown, Gutenberg, Inaugural, State of the Union and ACL 2005; the
#: masked-LM figure reads held-out Brown; the ACL runs read 2000-2009 and 2016-2021 (semantic change,
#: diffusion, the future-text dev and test years). What is left: ACL abstracts of 2010-2014 and the
#: Switchboard sample. ``tests/encoders/test_adapter_text.py`` checks this against the loaders' settings.
ADAPTER_TEXT = {"acl_years": (2010, 2011, 2012, 2013, 2014), "nltk": ("switchboard",)}


def adapter_text_rule(acl_years=ADAPTER_TEXT["acl_years"], nltk=ADAPTER_TEXT["nltk"]) -> str:
    """The training-text rule as one line, as the adapter file records it."""
    return (f"acl_abstracts_by_year papers_{{{','.join(str(y) for y in acl_years)}}}.txt "
            f"(abstracts, sentences of 4-60 words); nltk_data/corpora/{{{','.join(nltk)}}} (turns of >= 4 words)")


def general_text(root: str | Path, *, acl_years: tuple[int, ...] = ADAPTER_TEXT["acl_years"],
                 nltk: tuple[str, ...] = ADAPTER_TEXT["nltk"]) -> list[tuple[str, str]]:
    """``(source, sentence)`` pairs of the adapter's training text from the shared data folder.

    ``root`` is the folder holding ``nltk_data/`` and ``acl_abstracts_by_year/``. The defaults are
    :data:`ADAPTER_TEXT`; ``nltk`` may also name ``gutenberg``, ``inaugural`` and ``state_union``
    (the earlier adapter's text), never ``brown``. ``source`` is ``"switchboard"``, the NLTK corpus'
    name, or ``"acl<year>"``.
    """
    import re

    from tempo_analysis.data.errors import DataPathError
    from tempo_analysis.data.loaders.nltk_corpora import _SENT_RE, read_gutenberg

    unknown = sorted(set(nltk) - {"gutenberg", "inaugural", "state_union", "switchboard"})
    if unknown:
        raise ValueError(f"general_text(nltk=...): {unknown} is not a training source. Fix: choose from "
                         "gutenberg, inaugural, state_union, switchboard (brown is the held-out evaluation text).")
    root = Path(root)
    corpora = root / "nltk_data" / "corpora"
    if nltk and not corpora.is_dir():
        raise DataPathError(f"{corpora} does not exist. Fix: pass the shared data folder (holding nltk_data/).")
    out: list[tuple[str, str]] = []
    for name in nltk:
        if name != "switchboard":
            out += [(name, s) for s in read_gutenberg(corpora / name)]
    swb = corpora / "switchboard" / "transcript"
    if "switchboard" in nltk and swb.is_file():
        for line in swb.read_text(encoding="utf-8", errors="replace").splitlines():
            text = re.sub(r"^[AB]\.\d+:\s*", "", line).strip()
            if len(text.split()) >= 4:
                out.append(("switchboard", text))
    acl = root / "acl_abstracts_by_year"
    for year in acl_years:
        f = acl / f"papers_{year}.txt"
        if f.is_file():
            for line in f.read_text(encoding="utf-8", errors="replace").splitlines():
                out += [(f"acl{year}", s.strip()) for s in _SENT_RE.split(" ".join(line.split()))
                        if 4 <= len(s.split()) <= 60]
    return out


def brown_sentences(root: str | Path, n: int | None = None, *, seed: int = 0) -> list[str]:
    """A seeded sample of ``n`` held-out Brown sentences (all of them when ``n`` is None)."""
    from tempo_analysis.data.errors import DataPathError
    from tempo_analysis.data.loaders.nltk_corpora import read_brown

    folder = Path(root) / "nltk_data" / "corpora" / "brown"
    if not folder.is_dir():
        raise DataPathError(f"{folder} does not exist. Fix: pass the shared data folder (holding nltk_data/).")
    sents = read_brown(folder)
    if n is not None and n < len(sents):
        idx = np.sort(np.random.default_rng(seed).choice(len(sents), n, replace=False))
        sents = [sents[i] for i in idx]
    return sents


# --------------------------------------------------------------------------- evaluation


def mask_positions(ids: list[int], special: set[int], prob: float, rng: np.random.Generator) -> list[int]:
    """Positions of ``ids`` to mask: each non-special token with probability ``prob``, at least one."""
    cand = [i for i, t in enumerate(ids) if t not in special]
    if not cand:
        return []
    pick = [i for i in cand if rng.random() < prob]
    return pick or [cand[int(rng.integers(len(cand)))]]


@torch.inference_mode()
def mlm_eval(model, tokenizer, sentences, *, mask_prob: float = 0.15, seed: int = 0, batch_size: int = 32,
             max_length: int = 128, prior_sentences=None, progress: bool = False) -> dict:
    """Top-1 / top-5 accuracy of a masked LM on masked tokens of ``sentences``, next to the unigram prior.

    Each non-special token is masked with probability ``mask_prob`` (at least one per sentence; all
    masked at once, replaced by ``[MASK]``), positions drawn from a seeded RNG, so two models see the
    same masks. The unigram prior predicts the most frequent tokens of ``prior_sentences`` (default:
    the evaluated sentences themselves, an in-sample prior that favours the baseline). Special tokens
    are never predicted.
    """
    from tqdm.auto import tqdm

    sentences = list(sentences)
    if not sentences:
        raise ValueError("sentences is empty. Fix: pass at least one sentence to evaluate on.")
    special = set(tokenizer.all_special_ids)
    rng = np.random.default_rng(seed)
    enc = tokenizer(sentences, truncation=True, max_length=max_length)["input_ids"]
    prior_ids = enc if prior_sentences is None else tokenizer(list(prior_sentences), truncation=True,
                                                               max_length=max_length)["input_ids"]
    counts = Counter(t for ids in prior_ids for t in ids if t not in special)
    prior = [t for t, _ in counts.most_common(5)]
    model.eval()
    device = next(model.parameters()).device
    banned = torch.tensor(sorted(special), device=device)
    hit1 = hit5 = uni1 = uni5 = n = 0
    order = sorted(range(len(enc)), key=lambda i: len(enc[i]))
    masks = {i: mask_positions(enc[i], special, mask_prob, rng) for i in range(len(enc))}
    for start in tqdm(range(0, len(order), batch_size), disable=not progress, desc="mlm-eval"):
        rows = order[start:start + batch_size]
        width = max(len(enc[i]) for i in rows)
        ids = torch.full((len(rows), width), tokenizer.pad_token_id, dtype=torch.long)
        att = torch.zeros_like(ids)
        tgt_r, tgt_c, gold = [], [], []
        for r, i in enumerate(rows):
            ids[r, :len(enc[i])] = torch.tensor(enc[i])
            att[r, :len(enc[i])] = 1
            for c in masks[i]:
                tgt_r.append(r), tgt_c.append(c), gold.append(enc[i][c])
                ids[r, c] = tokenizer.mask_token_id
        logits = model(input_ids=ids.to(device), attention_mask=att.to(device)).logits
        sel = logits[torch.tensor(tgt_r), torch.tensor(tgt_c)].float()
        sel[:, banned] = -float("inf")
        top = sel.topk(5, dim=-1).indices.cpu()
        g = torch.tensor(gold)
        hit1 += int((top[:, 0] == g).sum())
        hit5 += int((top == g[:, None]).any(-1).sum())
        uni1 += sum(int(t == prior[0]) for t in gold)
        uni5 += sum(int(t in prior) for t in gold)
        n += len(gold)
    return {"top1": hit1 / n, "top5": hit5 / n, "unigram_top1": uni1 / n, "unigram_top5": uni5 / n,
            "n_masked": n, "n_sentences": len(sentences)}


def brown_mlm_eval(model, tokenizer, n_sentences: int = 200, *, seed: int = 0, root=None) -> dict | None:
    """:func:`mlm_eval` of a masked LM on ``n_sentences`` held-out Brown sentences.

    ``model, tokenizer``: e.g. ``load_encoder("default", head="mlm")``. ``root``: the shared data
    folder (default: found beside the project). Returns None when Brown is not there (a fresh clone
    without ``../shared/data``), so a notebook cell can skip quietly.
    """
    from tempo_analysis.data.locations import shared_data_dir

    root = Path(root) if root is not None else shared_data_dir()
    if root is None or not (root / "nltk_data" / "corpora" / "brown").is_dir():
        return None
    return mlm_eval(model, tokenizer, brown_sentences(root, n_sentences, seed=seed), seed=seed)


__all__ = ["ASSET", "ASSET_SHA256", "AdapterConfig", "AdapterNotAvailable", "LORA_TARGETS", "LoRALinear",
           "add_lora", "adapter_state", "apply_adapter", "brown_mlm_eval", "brown_sentences", "canonical_header",
           "general_text", "load_adapter", "ADAPTER_TEXT", "adapter_text_rule",
           "mask_positions", "merge_default_adapter", "mlm_eval", "save_adapter"]


@functools.lru_cache(maxsize=1)
def _default_adapter():
    return load_adapter(ASSET, sha256=ASSET_SHA256)


def merge_default_adapter(model, *, mask_token_id: int):
    """Merge the shipped adapter (sha256-checked once per process) into a fresh default ``BertForMaskedLM``."""
    state, cfg, _ = _default_adapter()
    return apply_adapter(model, state, cfg, mask_token_id)
