"""``tempo-analysis future-text {train,evaluate,generate}``: temporal word-bias LMs from the shell.

    tempo-analysis future-text train --data world --variant freq --out runs/freq
    tempo-analysis future-text train --data acl:ABSTRACTS_DIR,XML_DIR --variant baseline --out runs/base \\
        --max-docs-per-year 300
    tempo-analysis future-text train --data csv:texts.csv --variant last-n --n 2 --out runs/last2
    tempo-analysis future-text evaluate --checkpoint runs/freq --year 2021 --out metrics.json
    tempo-analysis future-text generate --checkpoint runs/freq --year 2021 --n 5

A checkpoint folder holds the FutureLM (config.json + model.safetensors), its tokenizer, the
frequency table and ``future_text.json`` (data spec, split, settings, dev/test metrics).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

META = "future_text.json"


def _settings_args(p: argparse.ArgumentParser) -> None:
    from tempo_analysis.future_text.pipeline import FutureTextSettings

    d = FutureTextSettings()
    g = p.add_argument_group("model and training (defaults = notebook 04's)")
    g.add_argument("--vocab-size", type=int, default=d.vocab_size, help="BPE vocabulary size")
    g.add_argument("--n-layer", type=int, default=d.n_layer)
    g.add_argument("--n-embd", type=int, default=d.n_embd)
    g.add_argument("--n-head", type=int, default=d.n_head)
    g.add_argument("--block-size", type=int, default=d.block_size)
    g.add_argument("--pretrain-epochs", type=int, default=d.pretrain_epochs)
    g.add_argument("--finetune-steps", type=int, default=d.finetune_steps)
    g.add_argument("--batch-size", type=int, default=d.batch_size)
    g.add_argument("--window", type=int, default=d.window)
    g.add_argument("--alpha", type=float, default=d.alpha)
    g.add_argument("--seed", type=int, default=d.seed)


def _gen_args(p: argparse.ArgumentParser) -> None:
    from tempo_analysis.future_text.generation import GenerationSettings

    d = GenerationSettings()
    g = p.add_argument_group("generation (paper defaults)")
    g.add_argument("--num-beams", type=int, default=d.num_beams)
    g.add_argument("--greedy", action="store_true", help="no sampling (plain beam search)")
    g.add_argument("--top-k", type=int, default=d.top_k)
    g.add_argument("--top-p", type=float, default=d.top_p)
    g.add_argument("--no-repeat-ngram", type=int, default=d.no_repeat_ngram_size)
    g.add_argument("--max-new-tokens", type=int, default=d.max_new_tokens)
    g.add_argument("--gen-seed", type=int, default=d.seed)


def _gen_settings(args):
    from tempo_analysis.future_text.generation import GenerationSettings

    return GenerationSettings(num_beams=args.num_beams, do_sample=not args.greedy, top_k=args.top_k, top_p=args.top_p,
                              no_repeat_ngram_size=args.no_repeat_ngram, max_new_tokens=args.max_new_tokens,
                              seed=args.gen_seed)


def register(subparsers) -> None:
    """Add the ``future-text`` group with its three commands."""
    from tempo_analysis.models.future_lm import VARIANTS

    top = subparsers.add_parser("future-text", help="future-text generation with a temporal word bias",
                                description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = top.add_subparsers(dest="future_text_command", metavar="{train,evaluate,generate}")
    top.set_defaults(func=lambda args: (top.print_help(), 2)[1])

    t = sub.add_parser("train", help="train one variant and save a checkpoint folder")
    t.add_argument("--data", default="world", help="world | world:DIR | acl:ABSTRACTS_DIR,XML_DIR | csv:FILE")
    t.add_argument("--variant", required=True, choices=VARIANTS)
    t.add_argument("--n", type=int, default=2, help="n for --variant last-n (last n training years)")
    t.add_argument("--out", required=True, help="checkpoint folder to write")
    t.add_argument("--dev-year", type=int, default=None, help="default: 2020 for ACL, else the second-last year")
    t.add_argument("--test-year", type=int, default=None, help="default: 2021 for ACL, else the last year")
    t.add_argument("--first-year", type=int, default=None, help="first training year (ACL paper: 2003)")
    t.add_argument("--max-docs-per-year", type=int, default=None, help="seeded subset per year (CPU budgets)")
    t.add_argument("--lm", default=None, help="HF causal LM name or folder (e.g. gpt2 online); default: small "
                                             "GPT-2 trained from scratch on the training years")
    t.add_argument("--base", default=None, help="reuse the base LM saved by an earlier train run (DIR/base_lm)")
    t.add_argument("--progress", action="store_true")
    _settings_args(t)
    t.set_defaults(func=cmd_train)

    e = sub.add_parser("evaluate", help="perplexity, content perplexity and content METEOR for one year")
    e.add_argument("--checkpoint", required=True)
    e.add_argument("--year", type=int, required=True)
    e.add_argument("--out", default=None, help="write metrics JSON here (default: print)")
    e.add_argument("--data", default=None, help="override the checkpoint's data spec")
    e.add_argument("--n-generate", type=int, default=5, help="texts generated for content METEOR")
    e.add_argument("--max-references", type=int, default=None, help="seeded sample of gold texts for METEOR")
    _gen_args(e)
    e.set_defaults(func=cmd_evaluate)

    g = sub.add_parser("generate", help="write texts for a target year")
    g.add_argument("--checkpoint", required=True)
    g.add_argument("--year", type=int, required=True)
    g.add_argument("--n", type=int, default=5)
    g.add_argument("--alpha", type=float, default=None, help="bias strength (default: the trained value)")
    g.add_argument("--prompt", default=None)
    _gen_args(g)
    g.set_defaults(func=cmd_generate)


# ------------------------------------------------------------------------------------------------
def _load_frame(spec: str, first_year=None, max_docs=None, seed=0, progress=False):
    from tempo_analysis.future_text.data import load_yearly, subsample_per_year

    frame, _ = load_yearly(spec, progress=progress)
    if first_year is not None:
        frame = frame[frame["year"] >= first_year]
    return subsample_per_year(frame, max_docs, seed)


def cmd_train(args) -> int:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from tempo_analysis.future_text.pipeline import FutureTextExperiment, FutureTextSettings

    s = FutureTextSettings(vocab_size=args.vocab_size, n_layer=args.n_layer, n_embd=args.n_embd, n_head=args.n_head,
                           block_size=args.block_size, pretrain_epochs=args.pretrain_epochs,
                           finetune_steps=args.finetune_steps, batch_size=args.batch_size, window=args.window,
                           alpha=args.alpha, seed=args.seed, progress=args.progress)
    frame = _load_frame(args.data, args.first_year, args.max_docs_per_year, args.seed, args.progress)
    lm = tok = None
    if args.base or args.lm:
        from tempo_analysis.models.future_lm import load_causal_lm

        src = args.base or args.lm
        lm, tok = load_causal_lm(src), AutoTokenizer.from_pretrained(src)
    exp = FutureTextExperiment(frame, dev_year=args.dev_year, test_year=args.test_year, settings=s, tokenizer=tok, lm=lm)
    name = f"last-{args.n}" if args.variant == "last-n" else args.variant
    model = exp.train(args.variant, n=args.n if args.variant == "last-n" else None, name=name)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    exp.tokenizer_.save_pretrained(out)
    exp.freq_table_.save(out / "frequency_table.safetensors")
    if args.base is None and args.lm is None:             # reusable by later runs: --base OUT/base_lm
        exp.base_.save_pretrained(out / "base_lm")
        exp.tokenizer_.save_pretrained(out / "base_lm")
    metrics = {split: exp.evaluate(model, y) for split, y in (("dev", exp.dev_year), ("test", exp.test_year))}
    meta = {"data": args.data, "variant": args.variant, "model": name, "dev_year": exp.dev_year,
            "test_year": exp.test_year, "train_years": exp.train_years, "first_year": args.first_year,
            "max_docs_per_year": args.max_docs_per_year, "settings": s.to_dict(), "metrics": metrics}
    (out / META).write_text(json.dumps(meta, indent=2))
    print(json.dumps({"model": name, "out": str(out), **{f"{k}_{m}": v[m] for k, v in metrics.items()
                                                          for m in ("ppl", "content_ppl")}}, indent=2))
    return 0


def load_checkpoint(folder):
    """(FutureLM, tokenizer, meta dict) from a ``future-text train`` folder."""
    from transformers import AutoTokenizer

    from tempo_analysis.future_text.tokenizer import ensure_special_tokens
    from tempo_analysis.models.future_lm import FutureLM

    folder = Path(folder)
    if not (folder / "config.json").is_file():
        raise FileNotFoundError(f"--checkpoint {str(folder)!r} has no config.json; pass a folder written by "
                                "`tempo-analysis future-text train --out DIR`")
    meta = json.loads((folder / META).read_text()) if (folder / META).is_file() else {}
    model = FutureLM.from_pretrained(folder).eval()
    tok = ensure_special_tokens(AutoTokenizer.from_pretrained(folder))
    return model, tok, meta


def cmd_evaluate(args) -> int:
    from tempo_analysis.evaluation.future_text import content_meteor, perplexity
    from tempo_analysis.future_text.generation import generate_texts

    model, tok, meta = load_checkpoint(args.checkpoint)
    spec = args.data or meta.get("data")
    if not spec:
        raise ValueError("the checkpoint does not say which data it was trained on; pass --data")
    frame = _load_frame(spec, meta.get("first_year"), meta.get("max_docs_per_year"), meta.get("settings", {}).get("seed", 0))
    texts = frame.loc[frame["year"] == args.year, "text"].tolist()
    if not texts:
        raise ValueError(f"--year {args.year}: no documents in {spec}; years present: "
                         f"{sorted(set(frame['year']))[0]}-{sorted(set(frame['year']))[-1]}")
    block = meta.get("settings", {}).get("block_size", 128)
    m = perplexity(model, tok, texts, args.year, block_size=block)
    gen = generate_texts(model, tok, args.year, args.n_generate, settings=_gen_settings(args))
    m["content_meteor"] = content_meteor(gen, texts, max_references=args.max_references, seed=args.gen_seed)
    m.update({"year": args.year, "model": meta.get("model", model.config.variant), "n_generated": len(gen),
              "meteor_stages": "exact+stem", "generation": _gen_settings(args).to_dict()})
    text = json.dumps(m, indent=2)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text)
    print(text)
    return 0


def cmd_generate(args) -> int:
    from tempo_analysis.future_text.generation import generate_texts

    model, tok, _ = load_checkpoint(args.checkpoint)
    texts = generate_texts(model, tok, args.year, args.n, alpha=args.alpha, prompt=args.prompt,
                           settings=_gen_settings(args))
    for i, t in enumerate(texts, 1):
        print(f"[{i}] {t}\n")
    return 0
