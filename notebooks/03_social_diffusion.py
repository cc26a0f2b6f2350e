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
# By default this runs on the **planted world**: 40 units in 4 communities over 7 slices; the new
# *computing* sense of "cloud" (always said with "server") spreads by a known mode. Set
# `DATA = "acl"` for the ACL Anthology venue network (units = venue families linked by author
# overlap, slices = years). Method page: `docs/methods/diffusion.md`.

# %%
import dataclasses

import pandas as pd
from IPython.display import display

from tempo_analysis.data.specs import load_social
from tempo_analysis.diffusion import DiffusionMapper, DiffusionTrainConfig
from tempo_analysis.diffusion.report import analyze
from tempo_analysis.notebook import cached, record_summary
from tempo_analysis.widgets.diffusion import DiffusionExplorer

# %% tags=["parameters"]
DATA = "world"  # "world" (planted truth), "acl" (ACL Anthology XML venue network), "acl:DIR", "csv:DOCS,EDGES"
ACL_YEARS = (2017, 2018, 2019, 2020)
ACL_MAX_DOCS = 20  # abstracts sampled per (venue, year)
ENCODER = "default"  # all-MiniLM-L6-v2 (embedded); any HF name or local path
EPOCHS = 1
MAX_STEPS = 20  # optimiser steps per model (None: full epochs); raise it for better fits
HEAD_WARMUP_STEPS = "auto"  # MLM-head steps with the body frozen ("auto": only if the head is fresh)
WORD = None  # None: the planted word ("cloud"); otherwise default "network"
ANCHOR = None  # None: the planted anchor ("server"); otherwise default "neural"
N = "auto"  # neighbours for r̂: an integer (paper: 100) or "auto" (5% of the candidate words, <= 100)
SEED = 0

# %% [markdown]
# ## The data
# A `SocialCorpus`: documents with a unit and a time slice, plus a graph over units. For the
# planted world, `truth` holds the planted diffusion (mode, word, anchor, first-arrival slices).

# %%
corpus, truth = load_social(DATA, years=ACL_YEARS, max_docs_per_unit_slice=ACL_MAX_DOCS, seed=SEED)
if truth is not None:
    WORD, ANCHOR = WORD or truth["word"], ANCHOR or truth["anchor"]
else:
    WORD, ANCHOR = WORD or "network", ANCHOR or "neural"
print(corpus)
display(corpus.df.head(6))
if truth is not None:
    print(f"planted: '{truth['word']}' gains its {truth['new_sense']} sense (anchor '{truth['anchor']}') "
          f"by {truth['mode'].upper()}; planted walk share {truth['walk_share']:.2f}")

# %% [markdown]
# ## Train DCWE and the comparison models
# All four start from the same encoder (the MLM head first trained with the body frozen when the
# encoder ships none) and train on the same 70% split:
# **DCWE**; **CWE**, the plain fine-tuned encoder; **SA** (social ablation: offsets depend on word
# and time only); **TA** (temporal ablation: one social component for all slices). The held-out
# perplexity uses the same masked tokens for every model. Lower is better.

# %%
cfg = DiffusionTrainConfig(encoder=ENCODER, epochs=EPOCHS, max_steps=MAX_STEPS, head_warmup_steps=HEAD_WARMUP_STEPS,
                           seed=SEED, progress=False)
params = {"data": DATA, "acl": [list(ACL_YEARS), ACL_MAX_DOCS], **dataclasses.asdict(cfg)}
mapper = cached("03-train-dcwe", params, lambda: DiffusionMapper(cfg).fit(corpus),
                save=lambda m, folder: m.save(folder), load=DiffusionMapper.load)
ppl = pd.DataFrame({"model": list(mapper.perplexity_), "perplexity": list(mapper.perplexity_.values())})
display(ppl.round(3))
mapper.visualize_perplexity().show()

# %% [markdown]
# ## The diffusion map
# One pass of the trained DCWE over every document gives a contextual vector per word occurrence
# (mean of the first six layers, with each document's own unit/time offsets). Move the slider:
# nodes are coloured by r̂ of the word towards the anchor; hollow nodes did not use the word in
# that slice. Hover for the unit and an example sentence.

# %%
index = mapper.context_index(progress=False)
result = mapper.analyze(WORD, ANCHOR, index=index, n_neighbors=N)
mapper.visualize_network_map(result, seed=SEED).show()

# %% [markdown]
# ## Walk or flight?
# For each slice: units reached for the first time, split by whether a neighbour already held the
# association. The recovered mode compares the observed walk share with the share expected if
# new arrivals landed on random not-yet-reached units.

# %%
mapper.visualize_walk_flight(result).show()
display(result.walk_flight)
print(f"recovered mode: {result.mode['mode']}  (walk share {result.mode['walk_share']:.2f}, "
      f"expected under random arrival {result.mode['expected_walk_share']:.2f})")
if truth is not None:
    found = {u for u, t in result.first.items() if t is not None}
    planted = {u for u, t in truth["first_slice"].items() if t is not None}
    same = sum(result.first[u] == truth["first_slice"][u] for u in planted | found)
    print(f"planted mode: {truth['mode']}; units holding the sense at the end: planted {len(planted)}, "
          f"found {len(found)}; first-arrival slice exactly right for {same}/{len(planted | found)} of them")

# %% [markdown]
# ## The most variable words (σ_sim)
# `sim` = cosine between a word's static embedding and its dynamic one in a (unit, time) context;
# σ_sim is its spread over the dev split's contexts. Examples show a context above and below the
# word's mean sim.

# %%
top_words, _ = mapper.variable_words(top=8)  # contexts of the dev split
display(top_words[["word", "sigma_sim", "mean_sim", "contexts", "above_context", "above_text", "below_context",
                   "below_text"]])

# %% [markdown]
# ## What if ...?
# Pick another word, anchor or N; on the planted world, regenerate it with the other diffusion
# mode or another speed (new adopters per slice) and re-read it with the same trained model.

# %%
regen = mapper.world_regenerator() if truth is not None else None
explorer = DiffusionExplorer(index, mapper.corpus_.graph, WORD, ANCHOR, n_neighbors=N, truth=truth, regenerate=regen,
                             mode=truth["mode"] if truth else "walk", speed=2)
explorer

# %% [markdown]
# The same what-if without widgets: the world regenerated with the *other* mode.

# %%
other = None
if truth is not None:
    other_mode = "flight" if truth["mode"] == "walk" else "walk"
    o_index, o_graph, o_truth = regen(other_mode, 2)
    other = analyze(o_index, o_graph, WORD, ANCHOR, n_neighbors=N)
    print(f"regenerated with mode={other_mode}: recovered {other.mode['mode']} "
          f"(walk share {other.mode['walk_share']:.2f} vs {other.mode['expected_walk_share']:.2f} expected)")
    mapper.visualize_walk_flight(other, title=f"World regenerated with mode={other_mode}").show()

# %% [markdown]
# ## Key numbers

# %%
summary = {"diffusion.recovered_mode": result.mode["mode"], "diffusion.walk_share": result.mode["walk_share"],
           **{f"diffusion.{k}.perplexity": v for k, v in mapper.perplexity_.items() if k in ("dcwe", "cwe", "sa", "ta")}}
if truth is not None:
    summary["diffusion.planted_mode"] = truth["mode"]
record_summary(summary, notebook="03_social_diffusion")
summary
