"""A fitted FutureTextModel on disk: the files ``FutureTextModel.save`` writes and ``load`` reads.

:class:`~tempo_analysis.base.Estimator` writes ``config.json`` (the settings) and the output
manifest; ``write_run`` adds the fitted state (the layout is in ``FutureTextModel._save_fitted``).
A run trained on a named or local LM does not hold that LM: ``read_run`` loads it again (by name,
or a local folder by its absolute path) and checks that a saved head is put back on the LM it was
trained around (``same_lm.py``).
"""

from __future__ import annotations

import dataclasses
import gzip
import json
from pathlib import Path

import pandas as pd
from transformers import AutoModelForCausalLM, AutoTokenizer

from tempo_analysis.causal_lm import load_causal_lm, pick_device
from tempo_analysis.encoders import quiet_transformers
from tempo_analysis.future_text.context import ContextTable
from tempo_analysis.future_text.frequency import FrequencyTable
from tempo_analysis.future_text.model import FutureLM
from tempo_analysis.data.errors import read_json_file
from tempo_analysis.hub import ModelNotAvailable, is_path_like

META = "future_text.json"          # the fitted split, model names and training logs in a saved folder
FORMAT_VERSION = 4                 # 4: the settings in config.json (Estimator.save), no "info"


def write_run(fitted, d: Path) -> None:
    """Write the fitted state of ``fitted`` into the folder ``d`` (the layout is in ``FutureTextModel._save_fitted``).

    Its settings (``config_``, with a local LM folder by its absolute path) are in ``config.json``."""
    (d / "models").mkdir(parents=True, exist_ok=True)
    meta = {"format_version": FORMAT_VERSION,
            "dev_year_": fitted.dev_year_, "test_year_": fitted.test_year_, "train_years_": fitted.train_years_,
            "models": list(fitted.models_), "histories": fitted.histories_}
    with gzip.open(d / "frame.json.gz", "wt", encoding="utf-8") as fh:
        json.dump({c: fitted.frame_[c].tolist() for c in ("doc_id", "year", "text")}, fh)
    fitted.tokenizer_.save_pretrained(d)
    fitted.freq_table_.save(d / "frequency_table.safetensors")
    if fitted.context_table_ is not None:
        fitted.context_table_.save(d / "context_table.safetensors")
    for name, model in fitted.models_.items():
        model.save_head(d / "models" / name)
    if fitted.config_.lm == "tiny":
        fitted.base_.save_pretrained(d / "base_lm")
        fitted.tokenizer_.save_pretrained(d / "base_lm")
    if fitted.trend_truth_ is not None:
        fitted.trend_truth_.to_csv(d / "trend_truth.csv", index=False)
    if fitted.results_ is not None:
        fitted.results_.to_csv(d / "results.csv", index=False)
    if getattr(fitted, "generated_", None):
        (d / "generated.json").write_text(json.dumps(fitted.generated_, indent=1))
    (d / META).write_text(json.dumps(meta, indent=2))


def read_run(fitted, directory, *, lm_given: bool = False) -> None:
    """Read the fitted state in ``directory`` into ``fitted``, whose ``config_`` holds the saved settings
    (``FutureTextModel.load``); ``lm_given``: ``config_.lm`` was given to ``load`` (the same LM, moved)."""
    d = Path(directory)
    fix = "restore the file, or train and save the run again (tempo-analysis future-text train --out DIR)"
    meta = read_json_file(d / META, what="future-text run file", fix=fix, keys=("models",))
    if meta.get("format_version") != FORMAT_VERSION:
        raise ValueError(f"{d}: format_version {meta.get('format_version')} is not {FORMAT_VERSION}; "
                         "train it again with this version")
    settings = fitted.config_
    lm = settings.lm if lm_given else None
    frame = pd.DataFrame(read_json_file(d / "frame.json.gz", what="future-text run's yearly frame", fix=fix,
                                        keys=("doc_id", "year", "text")))
    tok = AutoTokenizer.from_pretrained(d, local_files_only=True)
    base = None
    if (d / "base_lm" / "config.json").is_file():
        if lm is not None:
            raise ValueError(f"lm={lm!r} (--lm) does not apply to {str(d)!r}: the run holds its own LM (base_lm/, "
                             "the 'tiny' LM trained with it). Fix: drop it.")
        with quiet_transformers():
            base = AutoModelForCausalLM.from_pretrained(d / "base_lm", local_files_only=True).eval()
    else:
        base = _checkpoint_lm(d, settings.lm, lm, pick_device(settings.device))
    fitted._setup(frame, tokenizer=tok, freq_table=FrequencyTable.load(d / "frequency_table.safetensors"),
                base=base)
    if (d / "context_table.safetensors").is_file():
        fitted.context_table_ = ContextTable.load(d / "context_table.safetensors")
    fitted.lm_path_ = local_lm_path(settings.lm)
    if fitted.lm_path_:
        fitted.config_ = dataclasses.replace(settings, lm=fitted.lm_path_)
    fitted.models_ = {name: FutureLM.load_head(d / "models" / name, fitted.base_).to(fitted.device_)
                    for name in meta["models"]}
    fitted.histories_ = meta.get("histories", {})
    fitted.adapter_choice_ = fitted.histories_.get("baseline", {}).get("adapter_choice")
    fitted.adapter_rank_ = (next(iter(fitted.models_.values())).config.adapter_rank if fitted.models_
                          else settings.adapter_rank)
    truth = d / "trend_truth.csv"
    # a planted word such as "null" or "nan" stays a word: only a blank cell is missing
    fitted.trend_truth_ = (pd.read_csv(truth, dtype={"word": str}, keep_default_na=False, na_values=[""])
                           if truth.is_file() else None)
    results = d / "results.csv"
    fitted.results_ = pd.read_csv(results) if results.is_file() else None
    generated = d / "generated.json"
    fitted.generated_ = json.loads(generated.read_text()) if generated.is_file() else {}


def local_lm_path(name) -> str | None:
    """The absolute path of ``name`` when it is a local LM folder (not ``"default"`` or ``"tiny"``), else None."""
    if not isinstance(name, (str, Path)) or str(name) in ("default", "tiny"):
        return None
    path = Path(name).expanduser()
    return str(path.resolve()) if path.is_dir() else None


def _checkpoint_lm(d: Path, stored: str, override: str | None, device):
    """The frozen LM a saved run was trained on (``stored``, from its settings), or ``override``."""
    fix = ("Fix: pass the folder of that same LM with --lm DIR (`tempo-analysis future-text evaluate` / `generate`) "
           "or FutureTextModel.load(run, lm=DIR)")
    if override is not None:
        return load_causal_lm(override, device=device, what="Causal LM (lm=)")[0]
    if stored not in ("default", "tiny") and is_path_like(stored) and not Path(stored).expanduser().is_dir():
        raise ModelNotAvailable(f"{str(d)!r}: the LM this checkpoint was trained on ({stored}) is missing. {fix}.")
    try:
        return load_causal_lm(stored, device=device)[0]
    except ModelNotAvailable as e:
        raise ModelNotAvailable(f"{str(d)!r}: cannot load the LM this checkpoint was trained on ({stored!r}): {e} "
                                f"{fix}.") from None
