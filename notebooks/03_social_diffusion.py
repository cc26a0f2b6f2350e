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
# # 03 · Social diffusion maps with dynamic contextualized word embeddings
#
# *How does a new sense of a word spread through a social network — from neighbour to neighbour
# (a random **walk**), or by jumps to units with no contact to earlier adopters (a random
# **flight**)?* Hofmann, Pierrehumbert & Schütze ("Dynamic Contextualized Word Embeddings", ACL
# 2021) give every word an input embedding that depends on **when** and **by which social unit**
# a text was written:
#
# `e' = e + o`, with `o = FFN_t([e ; s_u,t])`, one feed-forward network per time slice `t`, and
# `s_u,t` the unit's embedding from a time-specific 2-layer graph attention network (GAT) over
# node2vec vectors of the social graph. BERT then contextualises `e'`. Training is masked language
# modelling plus two priors that keep offsets small (`λa·‖o‖²`) and smooth in time
# (`λw·‖o_t − o_{t−1}‖²`).
#
# The paper's analyses (not in its public code; built here):
# * **r̂**: for a word and an *anchor* tied to its new sense, `r̂ = N − rank + 1` of the anchor's
#   time-specific centroid among the word's N nearest neighbours (0 if absent), per (unit, time);
# * **diffusion map**: which units hold the association (r̂ > 0) in each slice, and when each got it;
# * **walk vs flight**: of the units reached for the first time in a slice, how many had a
#   neighbour that already had it (walk) or none (flight);
# * **σ_sim**: how much a word's dynamic embedding varies over units and time (most variable words).
#
# By default this runs on the **planted world**: 24 units in 3 communities over 5 time slices.
# Four words ("cloud", "stream", "mouse", "tablet") each gain a new sense that spreads by a known
# mode from its own seeds. As in real text, a unit that has adopted the new sense writes the word in
# sentences of that sense, with varied context words ("All our files are backed up in the cloud.
# Cloud server."); the others write the old sense ("The storm cloud brought heavy rain. Cloud
# rain."). Some usages are ambiguous ("The cloud again."), and in 10% of the (unit, slice) cells a
# word is never written. The lesson trains on two worlds that differ only in the mode, a walk world
# and a flight world. Set `DATA = "acl"` for the ACL Anthology venue network (units = venue families
# linked by author overlap, slices = years). Method page: `docs/methods/diffusion.md`.

# %% [markdown]
# **What you will learn**
#
# - How DCWE makes a word's input embedding depend on the social unit and the time slice (an offset
#   from a graph attention network over the social graph and one feed-forward network per slice), and
#   how the paper reads a diffusion map and a walk-or-flight verdict from its contextual embeddings.
# - What the figures let you see: held-out perplexity per model, the map of units in each slice, and,
#   per slice, how many newly reached units had a neighbour that already held the new sense.
# - How the time-blind control is compared: CWE, the same encoder fine-tuned with the same steps and
#   seed but without unit or time. Where the text tells the sense, CWE draws the same map; DCWE can
#   add only where the text tells nothing, in cells never written and in ambiguous usages.

# %%
import ipywidgets as widgets
import pandas as pd
from IPython.display import display

from tempo_analysis.diffusion.lesson import (dcwe_gain, fit_data, fit_worlds, headline_numbers, hidden_table,
                                             read_maps, recovery_table, sigma_precision)
from tempo_analysis.notebook import record_summary, set_notebook, show
from tempo_analysis.resolve import load_social
from tempo_analysis.study import holds, recorded_seed_study, study_table, summary_keys
set_notebook("03_social_diffusion")

# %% tags=["parameters"]
DATA = "world"  # "world" (planted truth: a walk world and a flight world), "acl", "acl:DIR", "csv:DOCS,EDGES"
ACL_YEARS = (2017, 2018, 2019, 2020)
ACL_MAX_DOCS = 20  # abstracts sampled per (venue, year)
CHANGES = {}  # changes to the notebook preset's training settings, e.g. {"max_steps": 10}
WORD = None  # None: the planted word ("cloud"); otherwise default "network"
ANCHOR = None  # None: the planted anchor ("server"); otherwise default "neural"
SEED = 0  # world seed and model seed

# %% [markdown]
# ## The data
# A `SocialCorpus`: documents with a unit and a time slice, plus a graph over units. For the
# planted world, `truth` holds the planted diffusions (mode, words, anchors, first-arrival slices).

# %%
if DATA == "world":
    fitted = fit_worlds(SEED, **CHANGES)   # trains DCWE and CWE on each world (below); cached after make demo
else:
    corpus = load_social(DATA, years=ACL_YEARS, max_docs_per_unit_slice=ACL_MAX_DOCS, seed=SEED).data
    fitted = fit_data(corpus, SEED, **CHANGES)
worlds = list(fitted["mappers"])
mapper, corpus, truth = (fitted[k][worlds[0]] for k in ("mappers", "corpora", "truths"))
WORD, ANCHOR = (WORD or truth["word"], ANCHOR or truth["anchor"]) if truth else (WORD or "network", ANCHOR or "neural")
print(corpus)
display(corpus.df.groupby("kind").head(2) if "kind" in corpus.df else corpus.df.head(6))

# %% [markdown]
# *Look at:* the `usage` rows, whose own words tell the sense, next to the `bare` ones, which do not.

# %% [markdown]
# ## Train DCWE and its control
# Both models start from the same encoder, the embedded all-MiniLM-L6-v2, after a short plain
# masked-LM warm-up on the training text. Then each trains on the same 70% split, with the same steps
# and seed: **DCWE**, and **CWE**, the same encoder fine-tuned without unit or time. The settings are
# the library's notebook preset, `tempo_analysis.diffusion.config.preset("notebook")`, sized for a
# laptop CPU. The held-out perplexity uses the same masked tokens for both models; lower is better.

# %%
ppl = pd.DataFrame({w: m.perplexity_ for w, m in fitted["mappers"].items()}).T.round(3)
display(ppl)
paired = mapper.paired_comparison("dcwe", "cwe")
print(f"{worlds[0]}: DCWE has the lower loss on {paired['share_lower']:.0%} of {paired['n_docs']} test documents; "
      f"Wilcoxon signed-rank p = {paired['p_value']:.3g}")

# %% [markdown]
# *Look at:* how close DCWE and CWE are. On text whose words tell the sense, knowing the unit and the
# time helps predict little more.

# %% [markdown]
# ## The diffusion map, read the paper's way
# For each occurrence of the word, the model's contextual vector (its first six layers, with DCWE's
# offsets for the unit and the slice) is compared with the time-specific centroids of every content
# word. r̂ = N − rank + 1 of the anchor's centroid among the N nearest (0 if absent), averaged per
# (unit, slice). The paper takes N = 100 over a large vocabulary; the planted world has a few
# hundred content words, so N is 5% of them here. One panel per slice, the units at the same place
# in every panel: the fill is r̂, the outline the unit's community, a dark ring the slice in which the
# map first gives a unit the association.

# %%
maps = {w: read_maps(fitted["mappers"][w], WORD, ANCHOR) for w in worlds}
result = maps[worlds[0]]["dcwe"]
show(mapper.visualize_network_map(result, seed=SEED, communities=truth["community"] if truth else None), "network_map")
print(f"r̂ > 0 in {int((result.rhat['rhat'] > 0).sum())} of {len(result.rhat)} (unit, slice) cells with the word")

# %% [markdown]
# *Look at:* the dark nodes spreading from slice to slice: in the walk world each slice darkens
# neighbours of the nodes already dark.

# %% [markdown]
# **What if** the map were read from the control, or from the other world? Switch the model and the
# world: the maps were read once above, so switching only redraws.

# %%
model_choice = widgets.ToggleButtons(options=["dcwe", "cwe"], value="dcwe", description="read from")
world_choice = widgets.ToggleButtons(options=worlds, value=worlds[0], description="world")


def show_map(model, world):
    communities = fitted["truths"][world]["community"] if fitted["truths"][world] else None
    fitted["mappers"][world].visualize_network_map(maps[world][model], seed=SEED, communities=communities).show()


widgets.VBox([model_choice, world_choice,
              widgets.interactive_output(show_map, {"model": model_choice, "world": world_choice})])

# %% [markdown]
# *Look at:* how little the map changes from DCWE to CWE: the usages' own words draw it. In the
# flight world the dark nodes appear scattered, far from the ones already dark.

# %% [markdown]
# ## Walk or flight?
# For each slice: the units reached for the first time, split by whether a neighbour already held
# the association (walk) or none did (flight). The recovered mode compares the observed walk share
# with the share expected if new arrivals landed on random units not yet reached. The table reads
# both worlds, from DCWE and from CWE.

# %%
show(mapper.visualize_walk_flight(result), "walk_flight")
recovery = recovery_table(maps, fitted["truths"])
display(recovery.round(3))

# %% [markdown]
# *Look at:* `recovered_mode` against `planted_mode` in each world, and that CWE's row matches DCWE's:
# the map is read from the text, and the text tells the sense.

# %% [markdown]
# ## What only the unit and the time can tell
# Two kinds of item carry no sense in their own text: the cells where a word is never written, and
# the ambiguous usages ("The cloud again."). In a held-out cell, DCWE's masked prediction next to
# the word ("cloud [MASK].") for that unit and slice, the new companion against the old one, says
# whether the unit has adopted. For an ambiguous usage, its contextual vector is closer to the
# new or to the old companion's centroid. CWE has no unit input, so it gives one answer per slice.
# `slice majority` is the best any such answer could do.

# %%
if truth:
    items = hidden_table(fitted, maps)   # one row per hidden item of both worlds; cached after make demo
    gain = dcwe_gain(items)
    display(pd.DataFrame({k: gain[k] for k in ("dcwe", "cwe", "slice_majority", "gain", "p_value", "items")},
                         index=["accuracy on hidden items"]).round(3))

# %% [markdown]
# *Look at:* `gain`, DCWE's accuracy minus CWE's, and whether DCWE rises above `slice majority`:
# only then does it know which unit adopted, not only how far the spread had gone.

# %% [markdown]
# ## Which words did the offsets move?
# `sim` = cosine between a word's static embedding and its dynamic one in a (unit, slice) context;
# σ_sim is its spread over the dev split's contexts. The precision is the share of the k most
# variable words that are planted changing words (k = the number of changing words).

# %%
if truth:
    precision, top_k = sigma_precision(mapper, truth)
    print(f"σ_sim top-{len(top_k)}: {top_k}: precision {precision:.2f} against {truth['changing_words']}")

# %% [markdown]
# *Look at:* whether the words whose dynamic embeddings vary most are the changing words.

# %% [markdown]
# ## One seed is one draw
# The recorded seed study reran this lesson's headline on new pairs of worlds, one row per seed: each
# seed plants new worlds and also seeds the models. The settings were chosen on world seeds 0–2 only,
# so none of these seeds was used for choosing.

# %%
seed_study = recorded_seed_study("03")
display(study_table(seed_study))
display(holds(seed_study))
print("recorded with:", seed_study["command"])

# %% [markdown]
# ## Key numbers
# The lesson's headline in one table, also written to `build/summary.json`.

# %%
numbers = headline_numbers(fitted, maps, items) if truth else {}
if numbers:
    record_summary(summary_keys("03", numbers))
pd.Series(numbers, dtype=object)

# %% [markdown]
# **What the evidence says**
#
# At world seed 0 the map read the paper's way from DCWE recovers the planted mode in both worlds (a
# walk in the walk world, a flight in the flight world; the first arrival is exact for 9 of 24 units in
# the walk world and 19 of 24 in the flight world), and so does CWE, the same encoder without unit or
# time: the usages' own words draw the spread, which is how real text carries a new sense. DCWE fits the
# held-out text about 5% better than CWE (perplexity 46.4 against 49.0 in the walk world, Wilcoxon
# p < 0.001). Where the text tells nothing, in held-out cells and ambiguous usages, neither model beats
# a guess (DCWE 0.54, CWE 0.55, against 0.68 for the best one-answer-per-slice reading), and σ_sim
# does not single out the changing words: at this CPU budget the offsets barely learn who adopted
# when. On five new worlds (the seed study above) CWE's map recovers both modes every time, and DCWE's
# at three of five seeds (at seed 4 it reads the flight as a walk, at seed 7 it reads no mode): the
# dynamic offsets add noise to the map rather than signal. DCWE's gain on the hidden items is small
# (+0.01 on average, above 0 at four of five seeds, significant at one; at seed 0 here it is -0.01),
# far below what a unit-blind reading of each slice could reach. The paper, with BERT-base on a GPU, also
# finds fits only slightly better than CWE (ArXiv test perplexity 3.513 against 3.530) and reads a walk
# for *network* and a flight for *mask* from maps of real usages.

# %% [markdown]
# ## Exercises
# Two questions about what the unit and the time do to the map. Each has a cell for your answer
# (replace `raise NotImplementedError()` with your code) and a check cell below it. Nothing here
# trains: use what was computed above (`mapper`, `corpus`, `truth`) and `read_map(model, corpus,
# WORD, ANCHOR)`, defined below, which reads a map from a model's masked predictions in a few
# seconds: in probes such as "cloud [MASK]." written by each unit in each slice, the rank of the
# anchor among the model's guesses. The questions assume the planted world (`DATA = "world"`).

# %%
from tempo_analysis.diffusion.analysis import recover_mode
from tempo_analysis.diffusion.report import prediction_map
from tempo_analysis.exercises import check, check_prediction


def read_map(model, corpus, word, anchor):
    return prediction_map(model, mapper.tokenizer_, corpus, word, anchor, candidates=mapper.model_.dynamic_token_ids)

# %% [markdown]
# ### Exercise 1 · Read the map from the time-blind control
# A map read by `read_map` holds, per (unit, slice), the rank of the anchor among the model's guesses
# for the masked word next to `WORD` (its `.rhat`, columns `unit`, `time`, `rank`, ...). CWE, the control, has no
# unit or time offsets. **Predict first**: across the units of one slice, how many different ranks
# can CWE give? Put the number in `prediction`. Then read CWE's map (`mapper.models_["cwe"]`) and
# count, for DCWE and for CWE, the largest number of different ranks in any one slice.

# %%
prediction = None  # a number
ranks_per_slice = {"dcwe": None, "cwe": None}
### BEGIN SOLUTION
prediction = 1
dcwe_map = read_map(mapper.models_["dcwe"], corpus, WORD, ANCHOR)
cwe_map = read_map(mapper.models_["cwe"], corpus, WORD, ANCHOR)
for model_name, model_map in (("dcwe", dcwe_map), ("cwe", cwe_map)):
    ranks_per_slice[model_name] = int(model_map.rhat.groupby("time")["rank"].nunique().max())
### END SOLUTION
print(prediction, ranks_per_slice)

# %% tags=["check"]
check_prediction("03_social_diffusion/1", prediction,
                 "prediction: how many different ranks CWE can give across the units of one slice",
                 hint="what in CWE's input differs between two units?")
check(lambda: ranks_per_slice["dcwe"] == read_map(mapper.models_["dcwe"], corpus, WORD, ANCHOR).rhat.groupby("time")["rank"].nunique().max(),
      "DCWE's largest number of different ranks in one slice",
      hint="group the map's rhat by slice, count the different ranks in each group, and keep the largest "
           "count (one number)")
check(lambda: ranks_per_slice["cwe"] == 1, "CWE gives one answer per slice: it cannot draw a map")

# %% [markdown]
# ### Exercise 2 · Walk or flight, in the planted truth and in the control
# `truth["first_slice"]` says in which slice each unit adopted the new sense (`None`: never). A
# unit reached after the first slice arrived by **walk** if a graph neighbour (`corpus.graph`)
# had adopted in an earlier slice, by **flight** otherwise. Compute the planted walk share: of the
# units first reached after slice `corpus.slices[0]`, the share that arrived by walk. Then take
# CWE's first arrivals (`.first` of its map, a dict unit → slice or `None`) and list the distinct
# slices in which CWE's units first hold the association. What can walk/flight say about that?

# %%
planted_walk_share, cwe_first_slices = None, None
### BEGIN SOLUTION
order = {s: i for i, s in enumerate(corpus.slices)}
first = truth["first_slice"]
later = [(u, s) for u, s in first.items() if s is not None and order[s] > 0]
neighbours = {u: list(corpus.graph.neighbors(u)) if u in corpus.graph else [] for u, _ in later}
by_walk = [any(first.get(v) is not None and order[first[v]] < order[s] for v in neighbours[u]) for u, s in later]
planted_walk_share = sum(by_walk) / len(later)
cwe_first = read_map(mapper.models_["cwe"], corpus, WORD, ANCHOR).first
cwe_first_slices = sorted({s for s in cwe_first.values() if s is not None})
### END SOLUTION
print(planted_walk_share, cwe_first_slices)

# %% tags=["check"]
planted = recover_mode(corpus.graph, truth["first_slice"], corpus.slices)
check(lambda: planted_walk_share is not None and abs(planted_walk_share - planted["walk_share"]) < 1e-9,
      f"the planted walk share ({planted['walk_share']:.2f}; the world spreads by {truth['mode']})",
      hint="count the later arrivals with a neighbour that adopted earlier")
check(lambda: cwe_first_slices is not None and len(cwe_first_slices) <= 1,
      "CWE's units all adopt in the same slice, or never: there is no spread to call walk or flight")
