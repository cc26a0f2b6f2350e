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
# # 05 · Real text, end to end
#
# Lessons 01–04 each ran one method on a planted world, where the right answer is known. This
# lesson runs all four on **real text**: the ACL Anthology (abstracts from 2000 to 2021, venues
# linked by their authors) and RumourEval-2017 (Twitter threads about breaking news). Real text has
# no planted answer, so each section says what a reader can and cannot conclude from it.
#
# **What you will learn**
# - how to point each method at a real corpus, and what each costs on a laptop CPU;
# - what the four methods say about thirty years of NLP abstracts, and how far to trust it;
# - the smallest CSV each method accepts, so that you can run it on your own data.
#
# The lesson needs the shared data folder (`DATA_DIR` below). Every sample size is a parameter:
# the defaults run in a few minutes on 2 CPU cores, and larger samples give steadier numbers.

# %%
import time

import pandas as pd
from IPython.display import display

from tempo_analysis import real_text as rt
from tempo_analysis.figures import real_text as figs
from tempo_analysis.figures.future_text import side_by_side
from tempo_analysis.figures.stream import comparison_chart
from tempo_analysis.notebook import record_summary, set_notebook, show
from tempo_analysis.widgets.real_text import usage_viewer
from tempo_analysis.widgets.semantic_change import scoring_whatif

# %%
T0 = time.perf_counter()
set_notebook("05_real_text")

# %% tags=["parameters"]
DATA_DIR = None  # the shared data folder; None: the shared/data folder found beside the project
MAX_ABSTRACTS = 3000  # abstracts sampled per period for semantic change
SAMPLES = 40  # usages per word and period that are embedded and scored
MIN_USAGES = 10  # a word with fewer usages in a period is reported and left out
TRAIN_SENTENCES = 1500  # sentences of temporal-attention post-training
DOCS_PER_VENUE_YEAR = 15  # abstracts per venue and year for the diffusion model
SPREAD_ANCHOR = "encoder"  # the word whose company diffusion reads for 'transformer'
DOCS_PER_YEAR = 12  # abstracts per year the causal LM reads (the frequency history counts all)
N_TEXTS = 2  # generated 2021 abstracts per model
SEED = 0
RECORD = True  # write key numbers to build/summary.json

# %% [markdown]
# ## 1 · Load, and look
# The same loaders as the command line's `--data acl` read the abstracts by year (2018, 2020 and 2021
# come from the Anthology XML) and the venue network: each venue family is a node, and two venues
# are linked when their authors overlap. When the folder is missing, this cell stops and names the
# missing file.

# %%
folder = rt.check_data_dir(DATA_DIR)
acl = rt.load_anthology(folder, max_docs_per_venue_year=DOCS_PER_VENUE_YEAR, seed=SEED)
abstracts, venues = acl["abstracts"], acl["venues"]
print(f"{len(abstracts)} abstracts, {abstracts['year'].min()}-{abstracts['year'].max()} · "
      f"{len(venues.units)} venue families, {venues.graph.number_of_edges()} author links")
print(*(f"note: {n}" for n in acl["notes"]), sep="\n")
show(figs.abstracts_per_year(abstracts), "abstracts_per_year")

# %% [markdown]
# **Look at:** the growth of the field, about tenfold from the early 2000s; 2000 holds every paper up
# to that year.

# %%
display(rt.venue_table(venues).head(8))
show(figs.venue_graph(venues, seed=SEED), "venue_graph")

# %% [markdown]
# **Look at:** the main conferences (acl, emnlp, naacl, coling) sit in the middle, densely linked;
# small workshops hang on the edge with one or two links.

# %% [markdown]
# ## 2 · Semantic change, 2000–2009 against 2018–2021
# Eight words we expect to have changed with deep learning, and ten stable controls. A word with too
# few usages in a period is reported and left out, never scored 0.

# %%
change = rt.change_data(abstracts, max_abstracts_per_period=MAX_ABSTRACTS, min_usages=MIN_USAGES, seed=SEED)
display(change["report"])

# %% [markdown]
# **Look at:** the status column. *transformer* and *pretraining* never occur in the 2000s sample and
# *prompt* only a few times, so they cannot be compared: they are listed, not scored.
#
# Two models rank the words with the library's default scorer (the mean distance between usages
# of the same period against across periods, z-scored): plain MiniLM, and temporal attention
# post-trained on the two periods' sentences.

# %%
rankers = rt.rank_change(change["data"], samples=SAMPLES, train_sentences=TRAIN_SENTENCES, seed=SEED)
table = rt.ranking_table(rankers, change["report"])
display(table.round(3))
show(figs.change_scores(table, list(rankers)), "change_scores")

# %% [markdown]
# **Look at:** red bars (words expected to change) against grey ones (controls). *attention*,
# *network* and *embedding* lead; *model* and *representation*, used all along in both periods, sit
# among the controls. Temporal attention's ranking differs from plain MiniLM's in a few places only
# (it moves *embedding* up from 9th): where the contexts already differ between the periods, the
# period adds little.
#
# The evidence for a rank is the usages themselves. Pick a word and read how it was used in each
# period.

# %%
display(usage_viewer(change["data"], table.index[:6]))

# %% [markdown]
# **Look at:** *attention* in the 2000s is mostly the reader's ("pay attention to"); in 2018–2021 it is
# a layer of a network.
#
# Which layers to read is a choice, and the ranking can depend on it. The sweep rescores the stored
# vectors with the last *h* layers (no re-embedding) and measures how far the changing words score
# above the controls.

# %%
sweep = rt.layer_sweep(rankers, change["report"])
show(figs.layer_sweep_chart(sweep), "layer_sweep")
display(scoring_whatif(rankers["temporal-attention"]))

# %% [markdown]
# **Look at:** the separation stays above 0 at every layer choice for both models, about 0.7 of a
# standard deviation for plain MiniLM and 0.8 to 0.9 for temporal attention. A result that held at one choice only would be a weak one.
#
# **What you can conclude.** There is no graded truth here: the words were picked by hand, so a good
# separation says the model agrees with common knowledge of the field, not that it measures change
# correctly, and with 7 changing words against 9 controls a separation under one standard deviation is
# a tendency, not a test. A word's score also mixes a change of sense with a change of topic: *network* in 2005 was
# often a semantic or social network, in 2020 a neural one.

# %% [markdown]
# ## 3 · Diffusion of a sense over venues
# How did *transformer*, the architecture, spread over the venues? DCWE (lesson 03) is trained on
# the venues' abstracts of 2016–2021 and read the paper's way: in each venue and year, r̂ > 0 means the
# word's contextual embeddings have *encoder* among their nearest words (r̂ = N − rank + 1 of the
# anchor among the N nearest). The first year a venue holds the association is its arrival, and walk or
# flight is read from the arrivals against chance.
#
# Why *encoder*? In ACL abstracts *transformer* appears from 2017 on and almost always names the
# encoder–decoder architecture, so its company is *encoder*, *decoder* and *architecture*. Anchors such
# as *neural* or *attention* are used in so many ways that their average sits far from any one word:
# set `SPREAD_ANCHOR = "neural"` and the map stays empty.

# %%
spread_fit = rt.fit_spread(venues, seed=SEED)
spread = rt.read_spread(spread_fit, anchor=SPREAD_ANCHOR)
print(*(f"note: {n}" for n in spread_fit["notes"] + spread["notes"]), sep="\n")
display(spread["table"])
mapper = spread_fit["mappers"]["data"]
show(mapper.visualize_network_map(spread["maps"]["dcwe"]), "diffusion_map")

# %% [markdown]
# **Look at:** the panels year by year. No venue uses *transformer* in 2016, one in 2017, and most of
# the sampled venues by 2020. Wherever the word occurs, it sits next to *encoder*.

# %%
reached = {model: rt.reached(result) for model, result in spread["maps"].items()}
show(figs.reach_chart(reached, title=f"venues where transformer sits near {SPREAD_ANCHOR}, by year"), "reach")
show(mapper.visualize_walk_flight(spread["maps"]["dcwe"]), "walk_flight")

# %% [markdown]
# **Look at:** the walk share against its chance line. A walk means new venues are mostly neighbours of
# venues that already use the sense; at chance, the sense arrives regardless of who is linked to whom
# (a flight).
#
# **What you can conclude.** Here the walk share equals its chance expectation, and the table's mode is
# empty: every venue that uses the word uses it in the new sense, so a venue's arrival is simply its
# first use of the word, and the arrivals cannot tell walk from flight. The paper's reading needs
# venues that use a word in its old sense first (as lesson 03's world does). CWE, the same encoder
# without venues or years, draws the same map: on real text, the usages carry the spread.

# %% [markdown]
# ## 4 · Future text for 2021
# The frequency model (lesson 04) forecasts each word's 2021 bias from its frequency history
# (2003–2020); the control is the same frozen SmolLM2 with one adaptation over all years. Both are
# scored on the 2021 abstracts: content perplexity, lower is better. With a dozen abstracts a year the
# adaptation overfits within a few dozen steps, so both train 50 steps (the dev year keeps the best).

# %%
future = rt.fit_future(abstracts, max_docs_per_year=DOCS_PER_YEAR, n_texts=N_TEXTS, seed=SEED)
numbers = rt.future_numbers(future)
display(future.results_.set_index("model")[["dev_ppl", "test_ppl", "test_content_ppl"]].round(2))
print(f"content perplexity on 2021: control {numbers['control_content_ppl']:.1f}, frequency model "
      f"{numbers['freq_content_ppl']:.1f} ({100 * numbers['gain']:+.1f}% lower)")

# %% [markdown]
# **Look at:** the gain: the forecast bias alone makes 2021's words less surprising.

# %%
words = rt.trending_words(future)
print("words the frequency model pushes up for 2021:", ", ".join(words))
show(side_by_side(future.generated_["baseline"], future.generated_["freq"], words,
                  titles=("control", "frequency model")), "generated")

# %% [markdown]
# **Look at:** the trending words: *covid*, *transformer*, *offensive* (language), few-*shot*. The texts
# are sampled (no beam search, to stay fast), from a frozen chat model: they read as generic abstracts,
# and the bias shows in the words they pick more than in their topic.
#
# **What you can conclude.** The gain is measured on real 2021 text the models never saw. It comes from
# a small sample of abstracts per year; lesson 04's seed study shows how much such a number moves.

# %% [markdown]
# ## 5 · Stream classification on RumourEval-2017
# Each Twitter thread, sorted by time, is a timeline; a post is labelled when the balance of support
# against denial switches (the LRS labels of the TempoFormer paper). On one fold: TempoFormer over
# sentence vectors, its time-blind control, and a BiLSTM.

# %%
stream = rt.fit_stream(folder, seed=SEED)
show(comparison_chart(stream["rows"], stream["names"], title="RumourEval-2017, test threads of fold 0: F1 by model"),
     "stream_comparison")
display(pd.Series(stream["macro_f1"], name="macro-F1").round(3).to_frame().T)

# %% [markdown]
# **Look at:** the macro-F1 of TempoFormer against its control, and both against the BiLSTM. Time
# helps TempoFormer by a few points on this fold, but the BiLSTM, which reads the posts in order and
# ignores the gaps, does best: the threads are short, and what a reply says (a denial, a question)
# tells the switch better than when it was posted. One fold and one seed: a difference of a few
# points can turn at another seed.

# %% [markdown]
# ## 6 · Your own data
# Each method reads a CSV. Below, for each one: the smallest file it accepts (three rows), written
# to `own_data/` and read back by the library's loader, and the command that trains on it.

# %%
ex = rt.own_data_example("stream classification", "own_data")
display(ex["frame"])
print(ex["command"], "\n", ex["loaded"])

# %%
ex = rt.own_data_example("semantic change", "own_data")
display(ex["frame"])
print(ex["call"], "\n", ex["loaded"])

# %%
ex = rt.own_data_example("social diffusion", "own_data")
display(ex["frame"], ex["edges"])
print(ex["command"], "\n", ex["loaded"])

# %%
ex = rt.own_data_example("future text", "own_data")
display(ex["frame"])
print(ex["command"], "\n", ex["loaded"].shape)

# %% [markdown]
# ## What the evidence says
# On twenty years of ACL abstracts, temporal attention and plain MiniLM both put the words of the
# deep-learning era above the stable controls, and the period adds little where the contexts already
# differ. DCWE maps where *transformer* arrived venue by venue, but on real text the new sense and the
# word arrive together, so walk and flight cannot be told apart, and CWE draws the same map; the
# frequency bias lowers 2021's content perplexity by about 5%, as the paper reports for its own, larger
# setup. On RumourEval time helps TempoFormer a little, while a BiLSTM without time does best: each
# reading is one run at one seed, and lessons 01–04 show with seed studies how far such numbers move.

# %%
if RECORD:
    record_summary(rt.summary_values(change, rankers, spread, future, stream, time.perf_counter() - T0))
print(f"notebook ran in {time.perf_counter() - T0:.0f} s")

# %% [markdown]
# ## Exercises
# Two questions about reading real results. Nothing here trains again: use what was computed above.

# %%
from tempo_analysis.exercises import check

# %% [markdown]
# ### Exercise 1 · Does the ranking depend on the layers?
# `sweep` has one row per method and layer choice, with the `separation` of the changing words from
# the controls. For temporal attention, find the layer choice with the largest separation and the
# number of layer choices at which the separation is above 0.

# %%
best_layers, positive_choices = None, None
### BEGIN SOLUTION
ta = sweep[sweep["method"] == "temporal-attention"]
best_layers = int(ta.loc[ta["separation"].idxmax(), "layers"])
positive_choices = int((ta["separation"] > 0).sum())
### END SOLUTION
best_layers, positive_choices

# %% tags=["check"]
ta_rows = sweep[sweep["method"] == "temporal-attention"]
check(lambda: best_layers == int(ta_rows.loc[ta_rows["separation"].idxmax(), "layers"]),
      "the layer choice with the largest separation", hint="filter sweep by method, then idxmax on separation")
check(lambda: positive_choices == int((ta_rows["separation"] > 0).sum()), "the layer choices above 0",
      hint="count the rows whose separation is above 0")

# %% [markdown]
# ### Exercise 2 · How much does time add on RumourEval?
# `stream["macro_f1"]` holds each model's macro-F1. Compute the time effect, TempoFormer over
# vectors minus its time-blind control, and say with `control_wins` (True or False) whether the
# control does better.

# %%
time_effect, control_wins = None, None
### BEGIN SOLUTION
time_effect = stream["macro_f1"]["tempoformer_vectors"] - stream["macro_f1"]["control"]
control_wins = time_effect < 0
### END SOLUTION
time_effect, control_wins

# %% tags=["check"]
expected = stream["macro_f1"]["tempoformer_vectors"] - stream["macro_f1"]["control"]
check(lambda: time_effect is not None and abs(time_effect - expected) < 1e-9, "the time effect",
      hint="subtract the control's macro-F1 from TempoFormer's")
check(lambda: control_wins == (expected < 0), "whether the control does better")
