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
# # tempo_analysis: a tour of the suite and of its planted world
#
# **tempo_analysis** is a set of notebooks and a small Python library for *temporal NLP*:
# models that know **when** a text was written, and analyses of how language changes over time.
# Each notebook is a lesson on one published method: the data, the model, the results, interactive
# plots, and *what-if* widgets. Everything runs offline on a laptop CPU.
#
# | notebook | method (paper) | the question | library |
# |---|---|---|---|
# | `01_stream_classification` | **TempoFormer**: a hierarchical BERT over a window of timestamped posts, with rotary attention over log time gaps | when does a person's mood or stance *switch*, as it happens? | `stream/model.py` |
# | `02_semantic_change` | **Temporal Attention**: BERT whose self-attention is conditioned on the text's time period | which words changed meaning between two periods, and how much? | `semantic_change/model.py` |
# | `03_social_diffusion` | **Dynamic Contextualized Word Embeddings**: embeddings offset by time and by a social unit's graph (GAT) embedding | how does a new sense spread through a social network: by *walk* or by *flight*? | `diffusion/model.py` |
# | `04_future_text` | **Temporal word bias**: an LSTM forecasts each word's next-period bias, added to a causal LM's logits | what will *next year's* text look like? | `future_text/model.py` + `future_text/bias.py` |
#
# All four read the same data types (`tempo_analysis.data`: timelines, period corpora, social
# corpora) and by default run on one small **planted-truth world** in `data/world/`: seeded
# synthetic corpora, written in real English, whose right answers are known. This notebook tours
# that world, one planted truth per method, so that you know what each method *should* find.
# Every loader also reads real data (RumourEval, SemEval/DWUG, the ACL Anthology; see the README).

# %% tags=["parameters"]
WORLD_DIR = None  # None: the project's data/ (or $TEMPO_ANALYSIS_DATA); or a folder holding world/
N_TIMELINES = 12  # timelines drawn in the first figure
SEED = 0  # seed of the what-if worlds that the widgets below generate

# %%
import dataclasses

import pandas as pd
from IPython.display import display

from tempo_analysis.data.locations import data_dir
from tempo_analysis.figures import overview as ov
from tempo_analysis.notebook import record_summary, set_notebook, show
from tempo_analysis.overview import key_numbers
from tempo_analysis.widgets.overview import diffusion_controls, gap_controls, what_if
from tempo_analysis.world import generate_social, generate_timelines, load_world
set_notebook("00_overview")

# %%
world = load_world(WORLD_DIR)
print(f"world loaded from {WORLD_DIR or data_dir()}")
world

# %% [markdown]
# The world in numbers. `config.json` next to the files holds every generator knob that made it
# (`tempo-analysis world --out data/` rewrites it, byte for byte).

# %%
summary = world.summary()
pd.DataFrame({"value": summary}).rename_axis("fact")

# %% [markdown]
# *Look at:* the size of each part, and the planted facts the lessons are checked against: the share of each post label, the changed words, the diffusion mode.

# %% [markdown]
# ## 1. Timelines of posts, for stream classification (TempoFormer, notebook 01)
#
# Each timeline is one author's posts. Most posts are *ordinary* (`O`); the planted events are
# **switches** (`IS`, the mood flips) and **escalations** (`IE`, a run of ever stronger posts).
# Hover over a point to read the post, its time and the gap since the previous post.

# %%
show(ov.timelines_figure(world.timelines.df, max_timelines=N_TIMELINES), "timelines")

# %% [markdown]
# *Look at:* where the switches and escalations sit on each timeline, and the empty stretches before the switches.

# %% [markdown]
# Time gaps are irregular, bursts and silences, and they **carry signal**: in this world a switch
# tends to follow a long silence and an escalation comes in a burst. A model that sees *when* each
# post was written (TempoFormer's rotary attention over log time gaps) can use that; one that only
# reads the text cannot.

# %%
posts = world.timelines.df
gaps = ov.post_gaps(posts)
median_gap_h = (gaps / 3600).groupby(posts["label"]).median()
display(median_gap_h.rename("median gap before the post (hours)").to_frame())
show(ov.gap_figure(posts), "time_gaps")

# %% [markdown]
# *Look at:* the switches' box, hours above the ordinary posts' (a silence before a switch), and the escalations' box, lowest (a burst).

# %% [markdown]
# **What if** time carried less signal? Two knobs of the generator put time into the labels:
# `time_signal`, how strongly the gaps before the *text-told* switches and escalations track their
# labels (0: not at all), and `time_switch_rate`, the share of posts that are switches told by
# time alone (a return after days of silence, with no cue in the text). Move both to 0 and watch
# the boxes converge: that is the world in which TempoFormer's time encoding has nothing to add.
# With `time_signal` at 0 alone, the time-told switches still keep the IS box high.

# %%
def show_gaps(time_signal, time_switch_rate):
    config = dataclasses.replace(world.config.stream, time_signal=time_signal, time_switch_rate=time_switch_rate,
                                 seed=SEED)
    df = generate_timelines(config).df
    display(ov.gap_figure(df, title=f"Time gap before a post, by label (time_signal={time_signal:.1f}, "
                                    f"time_switch_rate={time_switch_rate:.2f})"))


what_if(show_gaps, gap_controls(world.config.stream))  # sliders at the world's own values

# %% [markdown]
# *Look at:* the boxes as you move both sliders to 0: they meet, and the gap no longer tells the labels apart.

# %% [markdown]
# ## 2. A two-period corpus, for semantic change (Temporal Attention, notebook 02)
#
# Usages of target words in an *old* and a *new* period. Some words **gain** a sense (a *cell*
# becomes a phone, a *tweet* a post), some **lose** one (*tape* is less and less a cassette), and
# control words stay **stable**. The graded change is the share of usages whose sense moved; the
# binary label says whether it passed the threshold. A method should rank words in this order.

# %%
show(ov.change_figure(world.change_truth, threshold=world.config.change.threshold), "change_truth")

# %% [markdown]
# *Look at:* the order of the bars, the ranking a method should find, and the words on either side of the binary threshold.

# %% [markdown]
# The sentences are real English per sense, so a pretrained encoder can tell the senses apart.
# One usage of *cell* per period and sense, with each sense's share of the period's usages
# ("unclear" usages are the generator's noise: vague wording that fits either sense). These usages
# are what notebook 02 ranks. The probes, the same vague sentences written into both periods (where
# only a model that reads time can see a change), are left out, so the shares are the truth's:

# %%
usages = world.periods.df
cells = usages[(usages["word"] == "cell") & (usages["sense"] != "probe")]
share = cells.groupby("period")["sense"].value_counts(normalize=True).rename("share")
examples = cells.groupby(["period", "sense"], sort=False).head(1).join(share, on=["period", "sense"])
examples = examples.sort_values(["period_order", "share"], ascending=[True, False])
(examples[["period", "sense", "share", "text"]].style.hide(axis="index")
 .format({"share": "{:.0%}"}).set_properties(subset=["text"], **{"text-align": "left"}))

# %% [markdown]
# *Look at:* how the senses' shares move from the old period to the new one, and the sentences that carry each sense.

# %% [markdown]
# ## 3. A social graph over time, for diffusion (DCWE, notebook 03)
#
# Units (users, venues) form communities on a graph. From slice 0 on, a new sense of a word
# spreads: by **walk** it passes to neighbours of units that already use it; by **flight** it jumps
# to units with no adopting neighbour. The planted mode is recorded, so that a diffusion analysis
# can be checked against it. A unit that has adopted writes the word in sentences of its new sense
# and names its new companion ("All our files are backed up in the cloud. Cloud server."); the
# others write the old sense. Notebook 03 reads the spread from these usages, the paper's way.

# %%
truth = world.diffusion_truth
print(f"word '{truth['word']}': '{truth['old_sense']}' -> '{truth['new_sense']}' "
      f"(anchor '{truth['anchor']}'), mode {truth['mode']}, "
      f"walk share {truth['walk_share']:.2f} (share of new adopters with an adopting neighbour)")  # fmt: skip
show(ov.diffusion_figure(world.social.graph, truth["first_slice"], truth["community"], truth["n_slices"]), "diffusion")

# %% [markdown]
# *Look at:* the slice in which each unit adopts, neighbour after neighbour, and the adoption curve of each community.

# %% [markdown]
# **What if** the sense spread differently? Pick the mode and the speed (new adopters per slice)
# and a fresh world is generated: under *walk*, adoption creeps along edges and fills one
# community first; under *flight*, it scatters across communities at once.

# %%
def show_diffusion(mode, speed):
    config = dataclasses.replace(world.config.social, mode=mode, speed=speed, seed=SEED)
    corpus, t = generate_social(config)
    title = f"mode={mode}, speed={speed}: walk share {t['walk_share']:.2f}"
    display(ov.diffusion_figure(corpus.graph, t["first_slice"], t["community"], t["n_slices"], title=title))


what_if(show_diffusion, diffusion_controls(world.config.social, mode=truth["mode"]))

# %% [markdown]
# *Look at:* under *walk* one community fills first, under *flight* every community starts at once; the walk share in the title says the same.

# %% [markdown]
# ## 4. Yearly documents, for future text (temporal word bias, notebook 04)
#
# Abstract-like documents per year in which terms **rise**, **fall**, stay **flat**, or **burst**
# along planted curves. Notebook 04 forecasts each word's next-year bias from these histories and
# writes "next year's" text with it; the last year is held out as the test year.

# %%
show(ov.trends_figure(world.trend_truth), "trends")

# %% [markdown]
# *Look at:* which terms rise and which fall, and the last year: the one notebook 04 forecasts.

# %% [markdown]
# ## Key numbers
#
# Every notebook records its key numbers in `build/summary.json` (`make demo` prints them as a
# table). For the overview, those are the facts of the world the other notebooks run on.

# %%
recorded = record_summary(key_numbers(summary, median_gap_h))  # world.<fact> keys
pd.Series(recorded, name="value").to_frame()

# %% [markdown]
# *Look at:* the same facts as at the top, under the names `make demo` prints, with the median gaps in hours.

# %% [markdown]
# ## Where next
#
# - `01_stream_classification`: TempoFormer finds the switches of section 1 in real time.
# - `02_semantic_change`: temporal attention ranks the words of section 2.
# - `03_social_diffusion`: DCWE against its time- and unit-blind control on the text of section 3,
#   and the diffusion map read from it, which tells walk from flight.
# - `04_future_text`: temporal word bias writes the next year of section 4.
#
# Run everything headless with `make demo`; open the notebooks with `make lab`.
