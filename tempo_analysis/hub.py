"""One check for every model name the project loads: a local folder, or a Hugging Face hub name.

Encoders (``load_encoder``), causal LMs (``--lm``), base models (``--base``) and saved runs all
call :func:`resolve_model_name` before ``from_pretrained``, so they behave the same:

- an existing local folder is used as is (it must hold ``config.json``);
- a path-like name that does not exist is reported as a **missing path**, at once. Path-like:
  it starts with ``.``, ``~``, ``/`` or ``\\``, contains ``\\`` or more than one ``/``, ends with
  ``/``, is not a valid hub id, or its first part is an existing local folder (``mymodels/bert``
  when ``mymodels/`` exists);
- any other name is a hub name: used when it is in the local Hugging Face cache or the hub
  answers one short connection attempt; otherwise :class:`ModelNotAvailable` at once (no retries),
  telling the user to download it and pass the local folder. A name of the form ``a/b`` (a hub id,
  but maybe a relative path) also says that no such local folder exists.

Then load with ``from_pretrained(resolved, **from_pretrained_kwargs(resolved))``: offline, that
sets ``local_files_only=True`` so transformers never starts its own retry loop. Wrap the load in
``with explain_load_errors(resolved, what=...):`` so that a local folder transformers cannot read
(config.json but no weights, a config that is not JSON) is one error naming ``what`` and the fix.
:func:`check_model_folder` looks at a local folder's files without loading anything (the CLI calls
it before reading data); :func:`require_saved_files` checks a saved run's folder before loading it.

``what`` names the thing in messages: ``"Encoder"``, ``"Causal LM"`` in the library, the option
(``"--model"``, ``"--lm"``, ``"--llm"``) at the command line.

This module imports nothing heavy (no torch, no transformers): the CLI can call it before any work.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import socket
import threading
from pathlib import Path
from urllib.parse import urlparse

DEFAULT_ENDPOINT = "https://huggingface.co"
_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?$")
_TRUE = ("1", "true", "yes", "on")


class ModelNotAvailable(OSError):
    """A model name that cannot be resolved here: a missing path, or a hub name while offline."""


def hub_offline_by_env() -> bool:
    """True when the user switched the hub off (HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE)."""
    return any(os.environ.get(v, "0").strip().lower() in _TRUE for v in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


@functools.lru_cache(maxsize=8)
def _connect(host: str, port: int, timeout: float) -> bool:
    """Can a TCP connection to host:port be opened within ``timeout`` seconds, name lookup included?

    ``create_connection``'s timeout does not cover the name lookup, which a broken resolver can stall
    for half a minute; so the attempt runs in a daemon thread and an answer later than ``timeout``
    counts as unreachable (the thread is left to finish on its own)."""
    outcome: list = []

    def attempt():
        try:
            with socket.create_connection((host, port), timeout=timeout):
                outcome.append(True)
        except OSError:
            outcome.append(False)
        except BaseException as err:   # not a network answer: raised in the caller below
            outcome.append(err)

    worker = threading.Thread(target=attempt, name="tempo-analysis-hub-probe", daemon=True)
    worker.start()
    worker.join(timeout)
    if not outcome:
        return False
    if isinstance(outcome[0], BaseException):
        raise outcome[0]
    return outcome[0]


def hub_reachable(timeout: float = 2.0) -> bool:
    """One short connection attempt to the hub (``HF_ENDPOINT`` or huggingface.co), remembered per process."""
    if hub_offline_by_env():
        return False
    url = urlparse(os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT)
    if not url.hostname:
        return False
    return _connect(url.hostname, url.port or (80 if url.scheme == "http" else 443), timeout)


def hub_cached(name: str, filename: str = "config.json") -> bool:
    """True when the hub name's ``filename`` is in the local Hugging Face cache (no network needed)."""
    try:
        from huggingface_hub import try_to_load_from_cache

        return isinstance(try_to_load_from_cache(name, filename), str)
    except Exception:  # not installed, or a name the cache cannot hold: not cached
        return False


def is_path_like(name: str) -> bool:
    """Whether ``name`` can only be meant as a local path (see the module docstring)."""
    name = str(name)
    if name.startswith((".", "~", "/", "\\")) or "\\" in name or name.endswith("/") or name.count("/") > 1:
        return True
    if re.match(r"^[A-Za-z]:", name) or not _HUB_ID.match(name):
        return True
    first = name.split("/")[0]
    return "/" in name and Path(first).is_dir()


def resolve_model_name(name, *, what: str = "Model", required_file: str = "config.json", hint: str = "") -> str:
    """Check ``name`` (a local folder or a hub name) at once; return what ``from_pretrained`` should get.

    ``what`` names the thing in messages ("Encoder", "Causal LM", "--base model"); ``hint`` is
    appended to the fixes (e.g. "or use 'default' for the embedded MiniLM").
    Raises :class:`ModelNotAvailable` for a missing path, a folder without ``required_file``,
    or a hub name that is neither cached nor reachable; ``ValueError`` for an empty name.
    """
    if not isinstance(name, (str, os.PathLike)) or not str(name).strip():
        raise ValueError(f"{what} name must be a non-empty string or path, got {name!r}.{_tail(hint)}")
    name = os.fspath(name)
    more = _tail(hint)
    path = Path(name).expanduser()
    if path.exists():
        if not path.is_dir():
            raise ModelNotAvailable(f"{what} path {str(path)!r} is a file; pass the folder that holds "
                                    f"{required_file} and the weights.{more}")
        if not (path / required_file).is_file():
            raise ModelNotAvailable(f"{what} folder {str(path)!r} has no {required_file}: pass a folder saved with "
                                    f"save_pretrained().{more}")
        return str(path.resolve())
    if is_path_like(name):
        raise ModelNotAvailable(f"{what} path {name!r} does not exist (looked for {str(path.absolute())!r}): check "
                                f"the path.{more}")
    if hub_cached(name, required_file) or hub_reachable():
        return name
    local = (f" There is no local folder {str(path.absolute())!r} either; if you meant a path, check it."
             if "/" in name else "")
    raise ModelNotAvailable(
        f"{what} {name!r} is not a local folder and the Hugging Face hub cannot be reached (offline).{local} "
        f"Download it on a machine with internet (e.g. `huggingface-cli download {name} --local-dir "
        f"./{name.split('/')[-1]}`), then pass that local folder path instead.{more}")


# what save_pretrained writes as weights (transformers 5: safetensors, or the legacy torch pickle; sharded or not)
WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin",
                "pytorch_model.bin.index.json")
FOLDER_FIX = "pass a folder written by save_pretrained, holding config.json and model.safetensors"


def read_model_config(folder, *, what: str = "Model") -> dict:
    """A local model folder's ``config.json`` as a dict; :class:`ModelNotAvailable` naming ``what`` if unreadable."""
    path = Path(folder) / "config.json"
    try:
        cfg = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ModelNotAvailable(f"{what} folder {str(folder)!r} has no config.json. Fix: {FOLDER_FIX}.") from None
    except (OSError, ValueError) as e:
        raise ModelNotAvailable(f"{what} folder {str(folder)!r}: config.json is not valid JSON ({e}). "
                                f"Fix: {FOLDER_FIX}.") from None
    if not isinstance(cfg, dict):
        raise ModelNotAvailable(f"{what} folder {str(folder)!r}: config.json is not a JSON object. Fix: {FOLDER_FIX}.")
    return cfg


def check_model_folder(resolved, *, what: str = "Model", weights: bool = True) -> dict | None:
    """Look at a resolved model without loading it: for a local folder, ``config.json`` must be a JSON
    object and (``weights=True``) a weights file must be there; returns the config (None for a hub name)."""
    folder = Path(resolved)
    if not folder.is_dir():
        return None
    cfg = read_model_config(folder, what=what)
    if weights and not any((folder / f).is_file() for f in WEIGHT_FILES):
        raise ModelNotAvailable(f"{what} folder {str(folder)!r} has config.json but no weights (no "
                                f"{', '.join(WEIGHT_FILES)}). Fix: {FOLDER_FIX}.")
    return cfg


#: files one of which a local folder's tokenizer needs (fast tokenizer, WordPiece, BPE, SentencePiece)
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "vocab.json", "tokenizer.model", "spiece.model",
                   "sentencepiece.bpe.model")


def check_tokenizer_files(resolved, *, what: str = "Model") -> None:
    """A local folder must hold its tokenizer: without one, transformers builds an empty tokenizer
    (a handful of special tokens) and every text becomes [UNK], silently. A hub name passes."""
    folder = Path(resolved)
    if folder.is_dir() and not any((folder / f).is_file() for f in TOKENIZER_FILES):
        raise ModelNotAvailable(f"{what} folder {str(folder)!r} has no tokenizer (none of {', '.join(TOKENIZER_FILES)}), "
                                "so every text would become unknown tokens. Fix: save the tokenizer there too "
                                "(tokenizer.save_pretrained(folder)), or pass the folder that holds both.")


@contextlib.contextmanager
def explain_load_errors(resolved, *, what: str = "Model"):
    """Turn transformers' ``OSError``/``ValueError`` for a LOCAL folder into one :class:`ModelNotAvailable`
    naming ``what``, the folder and the fix (a hub name's errors pass unchanged)."""
    try:
        yield
    except ModelNotAvailable:
        raise
    except Exception as e:
        if damaged_weights(e):
            raise ModelNotAvailable(damaged_message(what, resolved, e)) from None
        if not isinstance(e, (OSError, ValueError)) or not Path(resolved).is_dir():
            raise
        reason = (str(e).strip().splitlines() or [type(e).__name__])[0].rstrip(".")
        raise ModelNotAvailable(f"{what} folder {str(resolved)!r} could not be loaded: {reason}. "
                                f"Fix: {FOLDER_FIX}.") from e


def damaged_weights(err: BaseException) -> bool:
    """A truncated or corrupt safetensors file, or a pickle where weights should be (never unpickled)."""
    import pickle

    names = {t.__name__ for t in type(err).__mro__}
    return bool(names & {"SafetensorError", "HeaderTooLarge", "UnpicklingError"}) or isinstance(err, pickle.UnpicklingError)


def damaged_message(what: str, folder, err: BaseException) -> str:
    """One line for damaged weights: the folder, what is wrong, and the safe fix (no unsafe loading)."""
    reason = "a pickle file, which is never loaded" if "Unpickling" in type(err).__name__ else \
        "a truncated or corrupt safetensors file"
    return (f"{what} folder {str(folder)!r}: its weights could not be read ({reason}). Fix: re-save the model as "
            "safetensors (model.save_pretrained(DIR) writes model.safetensors), or train and save it again.")


def require_saved_files(folder, files, *, what: str, fix: str) -> Path:
    """Check a saved folder before loading it: it exists and holds each of ``files`` (an entry may be a
    tuple of alternatives, e.g. the weight file names). Raises ``DataPathError`` (a ``DataError`` and a
    ``FileNotFoundError``) naming ``what``, the folder, the first missing file and ``fix``."""
    from tempo_analysis.data.errors import DataPathError   # light, but imported only when needed

    d = Path(folder)
    if not d.is_dir():
        kind = "is a file" if d.exists() else "does not exist"
        raise DataPathError(f"{what} {str(d)!r} {kind}. Fix: {fix}.")
    for entry in files:
        options = (entry,) if isinstance(entry, str) else tuple(entry)
        if not any((d / f).exists() for f in options):
            raise DataPathError(f"{what} {str(d)!r} has no {options[0]}"
                                + (f" (nor {', '.join(options[1:])})" if len(options) > 1 else "") + f". Fix: {fix}.")
    return d


def from_pretrained_kwargs(resolved: str) -> dict:
    """``{"local_files_only": True}`` for a local folder or while the hub is unreachable (no retry loop)."""
    return {"local_files_only": Path(resolved).exists() or not hub_reachable()}


def _tail(hint: str) -> str:
    return f" Or {hint.removeprefix('or ').rstrip('.')}." if hint else ""


__all__ = ["FOLDER_FIX", "WEIGHT_FILES", "ModelNotAvailable", "check_model_folder", "explain_load_errors",
           "from_pretrained_kwargs", "hub_cached", "hub_offline_by_env", "hub_reachable", "is_path_like",
           "read_model_config", "require_saved_files", "resolve_model_name"]
