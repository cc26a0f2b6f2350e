"""Safetensors checkpoints: atomic writes, JSON metadata in the header, never pickle.

A checkpoint is one `.safetensors` file. Tensors (model weights, optimiser moments, RNG states)
live in the body; everything else (optimiser hyper-parameters, scheduler state, trainer counters,
history, config) is JSON, stored as one string under the header's `__metadata__`. Loading never
calls `torch.load`/pickle, so a checkpoint from an untrusted source cannot run code.

File layout (the safetensors format): 8-byte little-endian header length N, N bytes of JSON
header {name: {dtype, shape, data_offsets}, "__metadata__": {"format": "pt", "tempo_analysis": <json>}},
then the raw tensor bytes.

Ours or theirs: a file is a Trainer checkpoint when its header carries our JSON with ``kind``
"best" or "last" (:func:`checkpoint_meta` reads the header only). The Trainer refuses to replace or
resume from a ``best``/``last.safetensors`` that is not (:class:`ForeignCheckpointError`).
Temporaries (``.NAME.tempo_analysis-tmp-<pid>-<token>``, marked) of writers that died (SIGKILL, power loss) are removed at the
start of the next save (:func:`tempo_analysis.outputs.clean_stale_temps`).
"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import save as _st_save

from tempo_analysis.outputs import OutputExistsError, clean_stale_temps, temp_file_for

META_KEY = "tempo_analysis"  # the __metadata__ key that holds our JSON
_MAX_HEADER = 100 * 1024 * 1024  # the safetensors format's own limit on the JSON header


class ForeignCheckpointError(OutputExistsError):
    """A checkpoint file in the way that the Trainer did not write (a DataError: bad input, exit 2)."""


def checkpoint_meta(path) -> dict | None:
    """Our JSON metadata of a checkpoint file, read from its header only; None if it is not one of ours.

    Anything else (a user's safetensors, a file of another format, a truncated file) gives None.
    """
    try:
        with open(path, "rb") as fh:
            head = fh.read(8)
            if len(head) != 8:
                return None
            (n,) = struct.unpack("<Q", head)
            if not 0 < n <= _MAX_HEADER:
                return None
            header = json.loads(fh.read(n))
        meta = json.loads(header["__metadata__"][META_KEY])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return meta if isinstance(meta, dict) else None


def check_ours(path, kind: str) -> None:
    """Raise ForeignCheckpointError if ``path`` exists and is not a Trainer checkpoint of ``kind``."""
    path = Path(path)
    if not path.exists() and not path.is_symlink():
        return
    meta = checkpoint_meta(path) if path.is_file() else None
    if meta is None or meta.get("kind") != kind:
        what = ("a folder" if path.is_dir() else
                f"a Trainer '{meta.get('kind')}' checkpoint, not '{kind}'" if meta else
                "not a checkpoint written by the tempo_analysis Trainer (no Trainer metadata in its header)")
        raise ForeignCheckpointError(
            f"{path} is {what}; the Trainer neither replaces nor resumes from it. Fix: move that file away, "
            "or set TrainConfig.checkpoint_dir to a folder of its own.")


# --------------------------------------------------------------------------------------------------
# The two public primitives
# --------------------------------------------------------------------------------------------------
def save_checkpoint(path, tensors: dict[str, torch.Tensor], metadata: dict | None = None) -> Path:
    """Write `tensors` + JSON `metadata` to `path` as safetensors, atomically (tmp file + os.replace).

    Either the old file (or nothing) or the complete new file is at `path`, never a partial one:
    bytes go to a hidden temp file in the same directory, are fsync'ed, then renamed over `path`.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    clean_stale_temps(path.parent)        # temp files of writers killed mid-write (their pid is gone)
    try:
        meta_json = json.dumps(metadata or {})
    except TypeError as exc:
        raise ValueError(f"checkpoint metadata for {path} is not JSON-serialisable ({exc}); "
                         "store tensors in `tensors` and only plain numbers/strings/lists/dicts in metadata") from None
    clean = {}
    for name, t in tensors.items():
        if not isinstance(t, torch.Tensor):
            raise ValueError(f"checkpoint tensor {name!r} is a {type(t).__name__}, not a torch.Tensor; "
                             "put non-tensor values in metadata")
        clean[name] = t.detach().to("cpu").contiguous()
    # safetensors refuses two tensors on one storage; callers dedupe tied weights (model_tensors),
    # and anything else that still shares a storage (views, slices) gets its own copy here.
    seen = set()
    for name, t in clean.items():
        ptr = t.untyped_storage().data_ptr()
        if t.numel() and ptr in seen:
            clean[name] = t.clone()
        elif t.numel():
            seen.add(ptr)
    blob = _st_save(clean, metadata={"format": "pt", META_KEY: meta_json})

    with temp_file_for(path) as tmp:      # a marked temp folder beside path, removed whatever happens
        with open(tmp, "wb") as fh:
            fh.write(blob)
            fh.flush()
            os.fsync(fh.fileno())         # bytes are on disk before the rename makes them visible
        os.replace(tmp, path)             # atomic on POSIX and Windows (same filesystem)
    try:                                  # persist the rename itself (best effort; not on Windows)
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError:
        pass
    return path


def load_checkpoint(path, device: str | torch.device = "cpu") -> tuple[dict[str, torch.Tensor], dict]:
    """Read a checkpoint written by save_checkpoint -> (tensors, metadata). No pickle involved."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"checkpoint {path} does not exist; check TrainConfig.checkpoint_dir")
    tensors = {}
    try:
        with safe_open(str(path), framework="pt", device=str(device)) as fh:
            header_meta = fh.metadata() or {}
            for name in fh.keys():
                tensors[name] = fh.get_tensor(name)
        metadata = json.loads(header_meta[META_KEY]) if META_KEY in header_meta else dict(header_meta)
    except (SafetensorError, ValueError) as e:   # not safetensors, truncated, or our JSON is damaged
        raise ForeignCheckpointError(f"{path} is not a readable safetensors checkpoint ({str(e).splitlines()[0]}). "
                                     "Fix: pass a file written by save_checkpoint / the Trainer.") from None
    return tensors, metadata


# --------------------------------------------------------------------------------------------------
# Model weights, with tied parameters (e.g. a LM head tied to the embedding) stored once
# --------------------------------------------------------------------------------------------------
def model_tensors(model: torch.nn.Module, prefix: str = "model.") -> tuple[dict[str, torch.Tensor], dict]:
    """state_dict as (tensors, {"aliases": {alias_name: stored_name}}); shared storage saved once."""
    tensors, aliases, first = {}, {}, {}
    for name, t in model.state_dict().items():
        key = (t.untyped_storage().data_ptr(), t.storage_offset(), tuple(t.shape), tuple(t.stride()), t.dtype)
        if t.numel() and key in first:
            aliases[name] = first[key]
            continue
        first[key] = name
        tensors[prefix + name] = t
    return tensors, {"aliases": aliases}


def load_model_tensors(model: torch.nn.Module, tensors: dict, meta: dict, prefix: str = "model.") -> None:
    """Load weights saved by model_tensors into `model` (strict: every key must match)."""
    state = {k[len(prefix):]: v for k, v in tensors.items() if k.startswith(prefix)}
    for alias, stored in (meta or {}).get("aliases", {}).items():
        state[alias] = state[stored]
    own = model.state_dict()
    missing = sorted(set(own) - set(state))
    unexpected = sorted(set(state) - set(own))
    if missing or unexpected:
        raise ValueError(f"checkpoint weights do not fit this model: missing {missing[:5]}, unexpected "
                         f"{unexpected[:5]}; the checkpoint was written for a different architecture — "
                         "use a fresh TrainConfig.checkpoint_dir or resume=False")
    model.load_state_dict(state, strict=True)


# --------------------------------------------------------------------------------------------------
# Optimiser and scheduler state, flattened so no pickle is needed
# --------------------------------------------------------------------------------------------------
def _json_ok(value, where: str):
    try:
        json.dumps(value)
    except TypeError:
        raise ValueError(f"optimizer state {where}={value!r} is neither a tensor nor JSON-serialisable, "
                         "so it cannot be checkpointed without pickle; use a torch optimizer with plain state") from None
    return value


def optimizer_tensors(optimizer: torch.optim.Optimizer, prefix: str = "optim.") -> tuple[dict, dict]:
    """optimizer.state_dict() -> tensors "optim.<param_idx>.<name>" + JSON {param_groups, scalars}."""
    sd = optimizer.state_dict()
    tensors, scalars = {}, {}
    for idx, slots in sd["state"].items():
        for name, value in slots.items():
            if isinstance(value, torch.Tensor):
                tensors[f"{prefix}{idx}.{name}"] = value
            else:
                scalars.setdefault(str(idx), {})[name] = _json_ok(value, f"[{idx}][{name!r}]")
    groups = []
    for g in sd["param_groups"]:
        g = {k: (list(v) if isinstance(v, tuple) else v) for k, v in g.items()}
        groups.append({k: _json_ok(v, f"param_groups[{k!r}]") for k, v in g.items()})
    return tensors, {"param_groups": groups, "scalars": scalars}


def load_optimizer_tensors(optimizer: torch.optim.Optimizer, tensors: dict, meta: dict, prefix: str = "optim.") -> None:
    """Inverse of optimizer_tensors (torch moves each state tensor to its parameter's device)."""
    state: dict[int, dict] = {}
    for key, value in tensors.items():
        if key.startswith(prefix):
            idx, name = key[len(prefix):].split(".", 1)
            state.setdefault(int(idx), {})[name] = value
    for idx, slots in meta.get("scalars", {}).items():
        state.setdefault(int(idx), {}).update(slots)
    groups = []
    for g in meta["param_groups"]:
        g = dict(g)
        if "betas" in g and isinstance(g["betas"], list):
            g["betas"] = tuple(g["betas"])   # AdamW checks/uses a tuple
        groups.append(g)
    optimizer.load_state_dict({"state": state, "param_groups": groups})


def scheduler_state(scheduler) -> dict:
    """LR scheduler state as JSON (lambda functions themselves are rebuilt from the config)."""
    sd = {k: v for k, v in scheduler.state_dict().items() if k != "lr_lambdas"}
    return {k: _json_ok(v, f"scheduler[{k!r}]") for k, v in sd.items()}


def load_scheduler_state(scheduler, meta: dict) -> None:
    """Inverse of scheduler_state."""
    sd = dict(meta)
    if hasattr(scheduler, "lr_lambdas"):
        sd["lr_lambdas"] = [None] * len(scheduler.lr_lambdas)  # None = keep our own lambdas
    scheduler.load_state_dict(sd)
