# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 02 · Semantic change ranking with temporal attention
#
# *Which words changed their meaning between two periods, and by how much?* Rosin & Radinsky
# ("Temporal Attention for Language Models") make BERT's self-attention depend on **when** a text
# was written: every token carries its period's time vector, and the attention scores become
# `Q·Tᵀ·T·Kᵀ` instead of `Q·Kᵀ`. After MLM post-training on period-tagged sentences, a word is
# embedded in *n* sampled sentences per period; the average of the last *h* layers at the word,
# averaged per period, gives one vector per period, and the **cosine distance** between the two is
# the word's change score (Algorithm 1). Words are ranked by that score and compared with the truth.
#
# Our implementation keeps the pretrained encoder (the reference code threw it away), normalises the
# time term per sentence (not over the batch), runs in O(n·d) through fused attention, and starts
# exactly at the pretrained model (a gate that training opens). Baselines go through the same scorer:
#
# | method | what it adds to the pretrained encoder |
# |---|---|
# | `plain` | nothing: no time, no training (averaged embeddings, Martinc et al.) |
# | `temporal-attention` | time in every attention layer (the paper), MLM post-trained |
# | `time-token` | a period token like `<old>` prepended to every sentence (TempoBERT), MLM post-trained |
# | `scaled-linear/exp/doc` | attention scores multiplied by a fixed factor per period, MLM post-trained |
#
# By default this runs on the **planted world**: 19 words in two periods (`old`, `new`) whose sense
# shares were set by hand, so the true amount of change is known (`graded` = how much the share of
# the changing sense moved). Parameters switch to Gutenberg vs Brown (real text, no truth), a
# SemEval-2020 Task 1 folder, or a DWUG folder. Method page: `docs/methods/semantic_change.md`.

# %%
from dataclasses import replace

import pandas as pd
from IPython.display import display

from tempo_analysis.figures import semantic_change as figs
from tempo_analysis.notebook import project_root, record_summary
from tempo_analysis.semantic_change import load_change_data
from tempo_analysis.semantic_change.compare import comparison_table, run_methods
from tempo_analysis.semantic_change.defaults import NOTEBOOK_METHODS, notebook_config
from tempo_analysis.semantic_change.explore import period_neighbours, usage_map
from tempo_analysis.widgets.semantic_change import scoring_whatif, sentence_probe, word_explorer

# %% tags=["parameters"]
DATA = "world"  # "world", "nltk:DIR" (gutenberg vs brown), "semeval:DIR" or "dwug:DIR"
USE_NLTK = False  # True: ../shared/data/nltk_data/corpora (gutenberg, 19th c. vs brown, 1961)
METHODS = list(NOTEBOOK_METHODS)  # temporal-attention, plain, time-token; add "scaled-linear", "scaled-exp", "scaled-doc" (~30-60 s each)
SCORERS = ["cosine", "prt", "apd-within"]  # also "apd", "jsd"
SAMPLES = None  # usages per word and period (None: notebook default, 30)
LAYERS = None  # average of the last h layers (None: default, 4)
TRAIN_EPOCHS = None  # MLM post-training epochs (None: default, 1; 0 = no post-training)
MAX_SENTENCES = None  # seeded cap on sentences per period for big corpora (nltk: 3000)
TARGETS = None  # a subset of target words, e.g. ["cell", "mouse", "table"]
WORD = None  # the word to explore (None: the top-ranked word)
SEED = 0

# %% [markdown]
# ## The data
# One row per sentence, with its period. The planted world also knows, for every word, the share
# of its *changing* sense in each period; `graded` is how far that share moved.

# %%
if USE_NLTK:
    DATA = f"nltk:{project_root().parent / 'shared' / 'data' / 'nltk_data' / 'corpora'}"
    MAX_SENTENCES = MAX_SENTENCES or 3000
data = load_change_data(DATA, seed=SEED, max_sentences_per_period=MAX_SENTENCES, targets=TARGETS)
overrides = {k: v for k, v in {"samples": SAMPLES, "layers": LAYERS, "seed": SEED}.items() if v is not None}
configs = {}
for m in METHODS:
    cfg = notebook_config(m, **overrides)
    if TRAIN_EPOCHS is not None and cfg.train is not None:
        cfg = replace(cfg, train=replace(cfg.train, epochs=TRAIN_EPOCHS) if TRAIN_EPOCHS > 0 else None)
    configs[m] = cfg
print(f"{data.name}: {len(data.corpus)} sentences in periods {data.periods}; {len(data.targets)} targets; "
      f"comparing {data.compared[0]!r} with {data.compared[-1]!r}")
for note in data.notes:
    print("note:", note)
if data.truth is not None:
    display(data.truth.sort_values("graded", ascending=False).reset_index(drop=True).head(20))
display(data.corpus.df[["period", "text"]].groupby("period").head(2))

# %% [markdown]
# ## Train and rank
# Every method starts from the same pretrained encoder (the embedded all-MiniLM-L6-v2). The
# trained ones get a short, gentle MLM post-training (new time parameters learn fast, the pretrained
# body barely moves; see the method page for why). Then each target is embedded in a seeded sample
# of its sentences in each period.

# %%
results = run_methods(data, configs, progress=lambda m: print(f"· {m} ...", flush=True))
main_method = "temporal-attention" if "temporal-attention" in results else next(iter(results))
main = results[main_method]
for m, r in results.items():
    t = ", ".join(f"{k} {v:.0f}s" for k, v in r.timings.items())
    msg = f"{m:>20}: {t}"
    if r.model.train_report and r.model.train_report.get("loss"):
        loss = r.model.train_report["loss"]
        msg += f"; MLM loss {loss[0]:.2f} -> {sum(loss[-5:]) / len(loss[-5:]):.2f}"
    if "spearman" in r.metrics:
        msg += f"; Spearman {r.metrics['spearman']:.3f}"
    print(msg)
for miss in main.missing:
    print("missing:", miss, "(scored NaN, left out of the correlation)")

# %% [markdown]
# ## The ranking against the truth
# Each dot is a word: its true rank (x, by graded change) against the model's rank (y, by change
# score). Words on the diagonal are ranked right. The stable control words share the truth's last
# rank, so they sit in one column on the right.

# %%
if data.truth is not None and "graded" in data.truth:
    display(figs.rank_scatter(main.scores, data.truth, title=f"{main_method} · {main.config.scorer}",
                              metrics=main.metrics))
else:
    display(figs.score_bars(main.scores, title=f"{main_method}: change scores (no truth for this data)"))
display(main.scores.head(10))

# %% [markdown]
# ## Methods and scorers
# The same stored vectors, scored four ways: `cosine` (Algorithm 1, the mean vectors' cosine
# distance), `prt` (the same on unit-length usages), `apd-within` (average pairwise distance across
# periods minus within periods), and optionally `apd` and `jsd` (k-means clusters).

# %%
table = comparison_table(results, data, scorers=SCORERS)
if table["spearman"].notna().any():
    display(figs.method_comparison(table))
display(table.pivot(index="method", columns="scorer", values="spearman").round(3))

# %% [markdown]
# ## One word up close
# A map of the word's usages (UMAP of their vectors): each dot is a sentence, coloured by period;
# hover to read it. A word whose sense moved shows a cloud that the later period fills and the
# earlier one does not. Next to it: the word's nearest words in each period (the model's best
# substitutes for it, from its MLM head).

# %%
word = WORD or main.scores.dropna().iloc[0]["word"]
umap_map = usage_map(main.vectors, word, layers=main.config.layers, seed=SEED)
display(figs.usage_map(umap_map.coords, umap_map.periods, umap_map.sentences, word=word, compared=data.compared))
display(figs.neighbours_table(period_neighbours(main.model, main.vectors, word, k=8), word=word))

# %% [markdown]
# Pick another word:

# %%
maps = {word: umap_map}  # maps computed so far, shared by the widgets below
word_explorer(main, data, word=word, maps=maps)

# %% [markdown]
# ## What if…
# **…you average other layers, sample fewer sentences, or score differently?** The sliders re-score
# the stored vectors (no re-embedding), and show where the chosen word's score and rank move.

# %%
scoring_whatif(main, data, word=word)

# %% [markdown]
# **…you write your own sentence?** Type a sentence that uses the word: it is embedded by the
# temporal model (under the period you choose), placed on the word's map as a star, and compared
# with each period's average usage.

# %%
example = {"cell": "She answered her cell on the bus.", "mouse": "The mouse hid behind the cupboard."}
sentence_probe(main, data, word=word, text=example.get(word, f"I thought about the {word} all day."), maps=maps)

# %% [markdown]
# ## Key numbers
# Recorded in `build/summary.json` as `semantic_change.<method>.spearman` (planted world only:
# other data have their own truth, or none).

# %%
summary = {}
if data.name == "world":
    for m, r in results.items():
        if "spearman" in r.metrics:
            summary[f"semantic_change.{m}.spearman"] = round(r.metrics["spearman"], 4)
            summary[f"semantic_change.{m}.pearson"] = round(r.metrics["pearson"], 4)
    summary["semantic_change.settings.samples"] = main.config.samples
    summary["semantic_change.settings.layers"] = str(main.config.layers)
    summary["semantic_change.settings.scorer"] = main.config.scorer
    record_summary(summary, notebook="02_semantic_change")
pd.Series(summary, dtype=object)
