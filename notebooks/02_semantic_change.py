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
# time term per sentence (not over the batch), runs through fused attention without building the
# n×n×d product (O(n·d²) per head), and starts
# exactly at the pretrained model (a gate that training opens). Baselines go through the same scorer:
#
# | method | what it adds to the pretrained encoder | sees time? |
# |---|---|---|
# | `plain` | nothing: no time, no training (averaged embeddings, Martinc et al.) | no |
# | `no-time` | **the time-blind control**: the temporal-attention model, post-trained on the same data with the same steps and seed, but fed one period for every sentence | no |
# | `temporal-attention` | time in every attention layer (the paper), MLM post-trained | yes |
# | `time-token` | a period token like `<old>` prepended to every sentence (TempoBERT), MLM post-trained | yes |
# | `both` | time token *and* temporal attention (the paper's "Both") | yes |
# | `scaled-linear/exp/doc` | attention scores multiplied by a fixed factor per period, MLM post-trained | yes |
#
# By default this runs on the **planted world**: 19 words in two periods (`old`, `new`) whose sense
# shares were set by hand, so the true amount of change is known (`graded` = how much the share of
# the changing sense moved). As in real text, each usage's own words carry its sense ("She answered
# her cell on the bus." against "The prisoner paced his cell."), and a word whose new sense spread
# has more such usages in `new`, in graded amounts. These usages are what gets ranked.
#
# The world has a second part, the **probes**: vague sentences ("I keep thinking about that cell.")
# that are the same text in both periods. There, only time can see the change: a model that ignores
# time reads them identically and ranks nothing, while a model post-trained on the period corpus and
# told each probe's period can. Reading both parts shows what time adds when the contexts already
# differ, and what it adds when they do not. Parameters switch to the pseudoword benchmark (real English,
# graded truth), Gutenberg vs Brown (real text, no truth), a SemEval-2020 Task 1 folder, or a
# DWUG folder. Every method is one `SemanticChangeRanker`:
# `fit(data)` trains, embeds and scores; what it learned ends in `_` (`scores_`, `metrics_`, ...).
# Method page: `docs/methods/semantic_change.md`.

# %% [markdown]
# **What you will learn**
#
# - How temporal attention puts the period into every attention layer, so that the same sentence gets a
#   different vector in `old` and in `new`, and how the cosine distance between a word's two period
#   means ranks the words by change.
# - What the figures let you see: each method's Spearman with its interval, the model's ranking against
#   the planted truth, a map of one word's usages with its nearest words per period, and sliders that
#   re-score the stored vectors.
# - How the time-blind control is compared: the same model, post-trained on the same data with the same
#   steps and seed but fed one period for every sentence, next to temporal attention at this seed and
#   in a recorded study over five seeds.

# %%
import pandas as pd
from IPython.display import display

from tempo_analysis.encoder_mlm import brown_mlm_eval
from tempo_analysis.encoders import load_encoder
from tempo_analysis.figures import semantic_change as figs
from tempo_analysis.notebook import record_summary, set_notebook, show
from tempo_analysis.resolve import load_change_data
from tempo_analysis.semantic_change import (NOTEBOOK_METHODS, comparison_table, fit_methods, notebook_config,
                                            recorded_study, time_ablation, time_effect)
from tempo_analysis.semantic_change.compare import headline_numbers, score_probes
from tempo_analysis.study import holds, recorded_seed_study, study_table, summary_keys
from tempo_analysis.widgets.semantic_change import scoring_whatif, sentence_probe, word_explorer
set_notebook("02_semantic_change")

# %% tags=["parameters"]
DATA = "world"  # or "pseudoword" (real text, graded truth: shared/data), "nltk" (gutenberg vs brown), "semeval:DIR", "dwug:DIR"
METHODS = list(NOTEBOOK_METHODS)  # plain, no-time, temporal-attention, time-token, both; add "scaled-linear", "scaled-exp", "scaled-doc"
SCORERS = ["cosine", "prt", "apd-within"]  # also "apd", "jsd"
SAMPLES = None  # usages per word and period (None: the notebook preset's, 30)
LAYERS = None  # the last h layers (an int), or hidden-state indices: a list or a range such as "2-4" (None: the preset's, 4)
TRAIN_EPOCHS = None  # MLM post-training epochs (None: the notebook preset's, 1; 0 = no post-training)
MAX_SENTENCES = None  # seeded cap on sentences per period for big corpora (e.g. 3000 for nltk)
TARGETS = None  # semeval, dwug, nltk: a subset of target words, e.g. ["cell", "house"] (world: all 19)
WORD = None  # the word to explore (None: "cell" when it is a target, else the top-ranked word)
SEED = 0

# %% [markdown]
# ## The data
# One row per sentence, with its period. The planted world also knows, for every word, the share
# of its *changing* sense in each period; `graded` is how far that share moved.

# %%
data = load_change_data(DATA, seed=SEED, max_sentences_per_period=MAX_SENTENCES, targets=TARGETS).data
configs = {m: notebook_config(m, data=DATA, train_epochs=TRAIN_EPOCHS, samples=SAMPLES, layers=LAYERS, seed=SEED)
           for m in METHODS}
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
rankers = fit_methods(data, configs, progress=lambda m: print(f"· {m} ...", flush=True))
main_method = "temporal-attention" if "temporal-attention" in rankers else next(iter(rankers))
main = rankers[main_method]
pd.DataFrame({m: {**r.timings_, "spearman": r.metrics_.get("spearman")} for m, r in rankers.items()}).T.round(3)

# %% [markdown]
# ## Does time help?
# Each method's Spearman against the truth, with a **95% bootstrap interval over targets** (19
# words give wide intervals; read overlapping bars as "not distinguishable"). Grey bars never see
# time: `plain`, the time-blind control `no-time` (the same model and training as temporal
# attention, time input held fixed), and the **frequency** baseline (how much each word's relative
# frequency changed; no model). `time_effect` = temporal attention − no-time: what time adds.

# %%
ablation = time_ablation(rankers, data)
effect = time_effect(ablation)
show(figs.ablation_bars(ablation), "time_ablation")
display(ablation.round(3))
print(f"time_effect (temporal-attention − no-time) = {effect:+.3f}")

# %% [markdown]
# *Look at:* the coloured bars against the grey ones (no time). On the world's usages the control
# ranks about as well as temporal attention: each usage's own words already say its sense, so the
# period adds little. With 19 words, overlapping intervals cannot be told apart.

# %% [markdown]
# ## Where only time can tell: the probes
# The same trained models, now reading the probes, which are word for word the same in both periods.
# Nothing is trained again; only the probes are embedded.

# %%
probe_rankers = score_probes(rankers, data) if data.name.startswith("world") else {}
probe_table = time_ablation(probe_rankers).fillna({"spearman": 0.0}) if probe_rankers else None
if probe_table is not None:
    show(figs.ablation_bars(probe_table), "probe_ablation")
    print(f"on the probes: time_effect = {time_effect(probe_table):+.3f}")

# %% [markdown]
# *Look at:* the grey bars at 0. A model blind to time reads each probe twice as the same sentence,
# so it cannot rank at all. Temporal attention reads the period and ranks the planted change.

# %% [markdown]
# **One seed is one draw.** Nineteen words give a noisy Spearman, and a short post-training lands
# differently from seed to seed. The recorded seed study reran this lesson's headline on five new
# worlds: each seed plants a new world and also seeds the model. The settings were chosen on world
# seeds 0–2 only, so the other seeds are a fair test. Read the mean and the spread, not one run.

# %%
seed_study = recorded_seed_study("02")
display(study_table(seed_study).round(3))
display(holds(seed_study))
print("recorded with:", seed_study["command"])

# %% [markdown]
# On real text the same comparison runs on the **pseudoword benchmark** (`DATA = "pseudoword"`):
# documents of Brown, Gutenberg, State of the Union, Inaugural and ACL abstracts split into two
# periods at random, then a share *p* of a target's later usages replaced by a donor word's
# sentences (the truth is *p*). It takes about 20 minutes per trained method on a 2-core CPU, so
# here we show the recorded run (shipped with the library, with the command that reproduces it; it
# was made with an earlier masked-LM adapter and time settings):

# %%
study = recorded_study()
display(study.round(3))
print("recorded with:", study.attrs["command"])

# %% [markdown]
# ## The ranking against the truth
# Each dot is a word: its true rank (x, by graded change) against the model's rank (y, by change
# score). Words on the diagonal are ranked right. The stable control words share the truth's last
# rank, so they sit in one column on the right.

# %%
if data.truth is not None and "graded" in data.truth:
    show(main.visualize_ranking(title=f"{main_method} · {main.config_.scorer}"), "ranking")
else:
    show(main.visualize_scores(title=f"{main_method}: change scores (no truth for this data)"), "scores")
display(main.scores_.head(10))

# %% [markdown]
# *Look at:* how close the dots sit to the diagonal, and where the stable words (the column on the right) land on the model's axis.

# %% [markdown]
# ## Methods and scorers
# The same stored vectors, scored three ways (`SCORERS`): `cosine` (Algorithm 1, the mean vectors'
# cosine distance), `prt` (the same on unit-length usages) and `apd-within` (average pairwise
# distance across periods minus within periods); `apd` and `jsd` (k-means clusters) can be added.
# `apd-within` over z-scored vectors is the library's default on real text (chosen on the pseudoword
# benchmark), and the notebook ranks real text with it. The world is ranked with `cosine`.

# %%
table = comparison_table(rankers, scorers=SCORERS)
if table["spearman"].notna().any():
    show(figs.method_comparison(table), "method_comparison")
display(table.pivot(index="method", columns="scorer", values="spearman").round(3))

# %% [markdown]
# *Look at:* whether the scorers agree on the order of the methods, and how far each scorer's Spearman moves for the same vectors.

# %% [markdown]
# ## One word up close
# A map of the word's usages (UMAP of their vectors): each dot is a sentence, coloured by period;
# hover to read it. A word whose sense moved shows a cloud that the later period fills and the
# earlier one does not. Next to it: the word's nearest words in each period (the model's best
# substitutes for it, from its MLM head), for the temporal model and for its time-blind control.

# %%
word = WORD or ("cell" if "cell" in main.targets_ else main.scores_.dropna().iloc[0]["word"])
umap_map = main.usage_map(word)
show(main.visualize_usage_map(word, precomputed=umap_map), "usage_map")
show(main.visualize_neighbours(word, k=8), "neighbours")
if "no-time" in rankers:
    control_neighbours = rankers["no-time"].visualize_neighbours(word, k=8)
    show(control_neighbours.update_layout(title=f"{word}: no-time control"), "neighbours_no_time")

# %% [markdown]
# *Look at:* on the usage map, the cloud of `new` dots with no `old` dots around it: the usages of the new sense.
#
# *Look at:* in the neighbour lists, whether the two periods' top words differ, for the temporal model and for the control.

# %% [markdown]
# Pick another word:

# %%
maps = {word: umap_map}  # maps computed so far, shared by the widgets below
word_explorer(main, word=word, maps=maps)

# %% [markdown]
# *Look at:* the same map and neighbours for the word you pick: does a word with a large planted change look any different from a stable one?

# %% [markdown]
# ## What if…
# **…you average other layers, sample fewer sentences, or score differently?** The sliders re-score
# the stored vectors (no re-embedding), and show where the chosen word's score and rank move.

# %%
scoring_whatif(main, word=word)

# %% [markdown]
# *Look at:* the chosen word's score and rank as you move the sliders: how much of the ranking depends on the layers, the sample size and the scorer.

# %% [markdown]
# **…you write your own sentence?** Type a sentence that uses the word: it is embedded by the
# temporal model (under the period you choose), placed on the word's map as a star, and compared
# with each period's average usage.

# %%
example = {"cell": "She answered her cell on the bus.", "mouse": "The mouse hid behind the cupboard."}
sentence_probe(main, word=word, text=example.get(word, f"I thought about the {word} all day."), maps=maps)

# %% [markdown]
# *Look at:* where your sentence's star lands on the map, and whether it sits closer to the `old` or to the `new` average usage.

# %% [markdown]
# ## Key numbers
# The lesson's headline in one table (planted world only: other data have their own truth, or none),
# also written to `build/summary.json`.

# %%
numbers = headline_numbers(rankers, probe_rankers or None) if data.name == "world" else {}
if numbers:
    record_summary(summary_keys("02", numbers))
pd.Series(numbers, dtype=object)

# %% [markdown]
# **Can the encoder fill in a masked word?** Temporal attention is post-trained with masked-LM, so
# the encoder has to predict words in the first place. The embedded MiniLM is a sentence-embedding
# model; the project ships a small adapter that gives it that ability. Here it fills masked words of
# held-out Brown sentences (needs `../shared/data`; skipped without it), next to the unigram prior
# that always guesses the most frequent words.

# %%
mlm = brown_mlm_eval(*load_encoder("default", head="mlm"), 200)
if mlm is None:
    print("Brown is not in ../shared/data here: MLM check skipped")
else:
    print(f"masked-word top-5 accuracy {mlm['top5']:.3f} (unigram prior {mlm['unigram_top5']:.3f}); "
          f"top-1 {mlm['top1']:.3f} (prior {mlm['unigram_top1']:.3f})")
    record_summary({"semantic_change.mlm_top5": round(mlm["top5"], 4),
                    "semantic_change.mlm_unigram_top5": round(mlm["unigram_top5"], 4)})

# %% [markdown]
# **What the evidence says**
#
# At world seed 0 temporal attention ranks the 19 words with Spearman 0.88, and on five new worlds
# (seeds 3–7) 0.76 to 0.87, while its time-blind control ranks as well or better (mean 0.86 against
# 0.83), because each usage's own words carry its sense. On the probes, which read the same in both
# periods, only temporal attention ranks at all: +0.24 on average over seeds 3–7, spread from 0.00 to
# 0.50, a real but weak signal at this budget. The paper reports 0.520 on SemEval-2020 English with
# BERT-base against 0.315 without time; on real sentences with a planted change (the pseudoword
# benchmark, recorded with an earlier masked-LM adapter) our run finds no such gain (0.698 against
# 0.702 for the control), in line with what the usages show here.

# %% [markdown]
# ## Exercises
# Two questions about what the period does to the ranking. Each has a cell for your answer (replace
# `raise NotImplementedError()` with your code) and a check cell below it. Nothing here trains or
# embeds again: use what was computed above (`probe_rankers`: one fitted `SemanticChangeRanker` per
# method, read on the probes). The questions assume the planted world (`DATA = "world"`).

# %%
import numpy as np

from tempo_analysis.exercises import check, check_prediction

# %% [markdown]
# ### Exercise 1 · What can the time-blind control rank?
# The probe part embeds vague sentences that are word for word the same in both periods.
# The control `no-time` is the temporal-attention model with its time input held fixed. **Predict
# first**: what change score does the control give each word? Write `"zero"` or `"like the temporal
# model"` in `prediction`. Then find each method's largest change score (`probe_rankers[method].scores_`
# has one row per word, with its `score`).

# %%
prediction = None  # "zero" or "like the temporal model"
max_score = {method: None for method in probe_rankers}
### BEGIN SOLUTION
prediction = "zero"
for method, ranker in probe_rankers.items():
    max_score[method] = float(ranker.scores_["score"].max())
### END SOLUTION
pd.Series(max_score)

# %% tags=["check"]
check_prediction("02_semantic_change/1", prediction, "prediction: the control's change score on the probes",
                 hint="without the period, what differs between a probe in 'old' and the same probe in 'new'?")
check(lambda: all(max_score[m] is not None and abs(max_score[m] - probe_rankers[m].scores_["score"].max()) < 1e-9
                  for m in probe_rankers), "each method's largest change score",
      hint="each ranker's scores_ table has a score column with one row per word; you want its largest "
           "value, as a number, for every method")
check(lambda: max_score["no-time"] < 1e-3, "the control scores every word (about) 0: it cannot rank at all")
check(lambda: max_score["temporal-attention"] > 10 * max_score["no-time"],
      "temporal attention reads the same probes differently in the two periods")

# %% [markdown]
# ### Exercise 2 · Rank the words with one layer only
# Temporal attention puts the period into **every** attention layer. The stored vectors keep several
# hidden layers (`probe.vectors_.layers`, with `probe = probe_rankers["temporal-attention"]`), and
# `probe.rescore(layers=[i])` scores the words with layer `i` only (no re-embedding);
# `probe.evaluate(scores)["spearman"]` compares a scoring with the truth. For every stored layer `i`,
# record temporal attention's Spearman on the probes and the control's largest change score at that
# layer (`probe_rankers["no-time"].rescore(layers=[i])`). Before you run it: is there a
# layer at which the control could rank?

# %%
probe = probe_rankers["temporal-attention"]
spearman_by_layer, control_max_by_layer = None, None
### BEGIN SOLUTION
spearman_by_layer, control_max_by_layer = {}, {}
for layer in probe.vectors_.layers:
    spearman_by_layer[layer] = probe.evaluate(probe.rescore(layers=[layer]))["spearman"]
    control_max_by_layer[layer] = float(probe_rankers["no-time"].rescore(layers=[layer])["score"].max())
### END SOLUTION
pd.DataFrame({"temporal-attention spearman": spearman_by_layer, "no-time max score": control_max_by_layer})

# %% tags=["check"]
check(lambda: spearman_by_layer is not None and sorted(spearman_by_layer) == sorted(probe.vectors_.layers),
      "one Spearman per stored layer", hint="loop over probe.vectors_.layers")
layer = list(probe.vectors_.layers)[-1]
check(lambda: np.isclose(spearman_by_layer[layer], probe.evaluate(probe.rescore(layers=[layer]))["spearman"],
                         equal_nan=True),
      f"temporal attention's Spearman with layer {layer} alone")
check(lambda: control_max_by_layer is not None and max(control_max_by_layer.values()) < 1e-3,
      "the control scores 0 at every layer: no depth of a time-blind model can see the period")
