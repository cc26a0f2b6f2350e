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
# # 01 · Stream classification with TempoFormer
#
# *Is this post a change?* A **timeline** is a stream of timestamped posts: one person's diary,
# a Twitter thread about a rumour. Reading only the newest post rarely tells you whether something
# *changed*; you need the posts before it, and **when** they were written. Tseriotou et al.
# ("TempoFormer", 2024) read a **window** of the *w* most recent posts with one BERT:
#
# 1. the lower layers encode every post on its own (the *local* stack);
# 2. the upper two layers add a stream position to each post, and between them a **temporal rotary
#    attention** lets the posts' `[CLS]` vectors talk to each other, rotated by the *time gap*
#    to the current post (RoPE with position `log(1 + seconds)` instead of the token index);
# 3. a gate fuses the post-level and the stream-level `[CLS]` of the current post, and a small
#    head predicts its label, trained with a focal loss that up-weights rare classes.
#
# Our implementation starts the upper layers from the **pretrained** weights (the reference code
# left them random), never uses `time == 0` as padding (an explicit mask does that), and encodes
# each post of a batch **once** instead of once per window it appears in.
#
# By default this runs on the **planted world**: 120 diary timelines whose hidden mood switches
# (`IS`), escalates (`IE`) or stays (`O`); switches tend to follow long silences and escalations
# come in bursts. A parameter points it at RumourEval-2017 (stance switches, the paper's LRS data).
# Method page: `docs/methods/stream.md`. Full cross-validation: `tempo-analysis stream evaluate`.

# %%
import time

import numpy as np
import pandas as pd
from IPython.display import display

from tempo_analysis.data.specs import load_timelines
from tempo_analysis.evaluation.classification import aggregate, classification_scores
from tempo_analysis.figures import stream as figs
from tempo_analysis.notebook import cached, record_summary
from tempo_analysis.stream.classifier import TempoFormerClassifier, what_if
from tempo_analysis.stream.experiment import fit_and_score, notebook_defaults, recorded_ablation, split_timelines
from tempo_analysis.widgets.stream import timeline_viewer, what_if_panel

T0 = time.perf_counter()

# %% tags=["parameters"]
DATA = "world"  # "world", "rumoureval2017" (from shared/data), "rumoureval2017:DIR", "csv:FILE"
MAX_TIMELINES = None  # seeded subset of timelines (e.g. 80 for a quick RumourEval look)
WINDOW = 3  # posts per window (the paper: 5, 10 or 20; more context costs more time)
EPOCHS = 4  # TempoFormer training epochs
SEED = 0
BASELINES = ["random", "ffn_history", "bilstm"]  # also "post_encoder" (fine-tunes the encoder: slower)
ABLATIONS = ["vanilla_mha", "no_gate_norm"]  # also sequential_rope, no_s11, no_s10_s11, rotempoformer
RUN_ABLATIONS = False  # True: retrain each ablation here (~2 min each); False: show the recorded run
RECORD = True  # write key numbers to build/summary.json

# %% [markdown]
# The defaults above are `tempo_analysis.stream.experiment.notebook_defaults()` (a test checks that
# they agree, and that TempoFormer reaches macro-F1 ≥ 0.8 on the planted world with them).

# %%
defaults = notebook_defaults()
settings = dict(defaults["tempoformer"], window=WINDOW, epochs=EPOCHS, seed=SEED)
timelines = load_timelines(DATA, max_timelines=MAX_TIMELINES, seed=SEED)
names = timelines.label_names
print(timelines)
display(timelines.df.groupby("label").size().rename("posts").to_frame().T)

# %% [markdown]
# ## 1 · The data: posts over time
# Each row is one timeline; diamonds are changes. Hover a point to read the post. Notice how the
# gaps vary: seconds inside a burst, hours or days across a silence.

# %%
figs.timeline_plot(timelines, max_timelines=10).show()

# %% [markdown]
# ## 2 · Train TempoFormer
# One timeline-level split (fold 0 of 5: no timeline is in two of train / dev / test). The local
# stack is frozen and its output cached, so an epoch only runs the two upper layers; the dev set
# picks the best epoch. The embedded encoder is all-MiniLM-L6-v2 (6 layers: 4 local + 2 upper).

# %%
train, dev, test = split_timelines(timelines, defaults["folds"], defaults["fold"], SEED)
print(f"train {len(train.timeline_ids)} timelines / {len(train)} posts · dev {len(dev)} · test {len(test)}")
params = dict(data=DATA, max_timelines=MAX_TIMELINES, settings=settings)


def train_tempoformer():
    return TempoFormerClassifier(progress=False, **settings).fit(train, dev)


clf = cached("01_stream-tempoformer", params, train_tempoformer,
             save=lambda c, folder: c.save(folder), load=TempoFormerClassifier.load)

# %%
proba = clf.predict_proba(test)
run = classification_scores(test.label_codes(names), proba.argmax(-1), names)
results = {"tempoformer": {"summary": aggregate([dict(run, seed=SEED)], names)}}
print(f"TempoFormer test macro-F1 = {run['macro_f1']:.3f}  ·  per class: "
      + ", ".join(f"{n} {run['f1'][n]:.3f}" for n in names))
clf.visualize_confusion(test, proba=proba, title="TempoFormer on the test timelines").show()

# %% [markdown]
# ## 3 · Baselines and comparison
# The same split and scoring for: **random** (class priors), **FFN-History** (sentence vector of
# the current post and the window mean → 2-layer FFN), **BiLSTM** (over the window's sentence
# vectors). Neither of the last two sees the time gaps; the post-level fine-tuned encoder
# (`post_encoder`) sees only the current post.

# %%
for name in BASELINES:
    res = cached(f"01_stream-{name}", dict(params, model=name),
                 lambda: {k: v for k, v in fit_and_score(name, train, dev, test, window=WINDOW, seed=SEED,
                                                         progress=False).items() if k == "summary"})
    results[name] = res
figs.comparison_chart(results, names, title="test F1 by model (one split)").show()
if RECORD:
    record_summary({f"stream.{m}.macro_f1": r["summary"]["macro_f1"]["mean"] for m, r in results.items()},
                   notebook="01_stream_classification")

# %% [markdown]
# ## 4 · Ablations
# Each row removes one piece (paper Table 3) and is **retrained** at the same budget, split and seed
# as the full model above. Two more trainings would double this notebook's run time, so by default
# the ablation rows come from a recorded run of the same protocol (`docs/results/stream/`, made with
# `tempo-analysis stream evaluate --data world --ablation NAME --window 3 --max-folds 1 --epochs 4
# --freeze-local ...`; the exact settings are in each file). The full-model row is the model you
# just trained. Set `RUN_ABLATIONS = True` to retrain them here instead.

# %%
ablation_results = {"TempoFormer": results["tempoformer"]}
for ab in ABLATIONS:
    ab_settings = dict(settings, ablation=ab)
    if RUN_ABLATIONS:
        ablation_results[f"− {ab}"] = cached(
            f"01_stream-ablation-{ab}", dict(params, settings=ab_settings),
            lambda: {"summary": fit_and_score("tempoformer", train, dev, test, progress=False,
                                              **ab_settings)["summary"]})
        continue
    recorded = recorded_ablation(ab, settings=ab_settings, data=DATA, max_timelines=MAX_TIMELINES)
    if recorded is None:
        print(f"no recorded run of '{ab}' at these settings (set RUN_ABLATIONS = True to train it)")
    else:
        ablation_results[f"− {ab}"] = recorded
source = "retrained here" if RUN_ABLATIONS else "ablations from the recorded run"
figs.results_table(ablation_results, names, reference="TempoFormer",
                   title=f"ablations (w={WINDOW}, {EPOCHS} epochs, fold 0, seed {SEED}; {source}; test F1 %)").show()

# %% [markdown]
# ## 5 · One timeline at a time
# Pick a timeline: the lines are the predicted probabilities of each change class for every post
# (each prediction sees only that post's window), the triangles the true changes.

# %%
test_proba = proba
display(timeline_viewer(clf, test, test_proba))
clf.visualize_probabilities(test, test.timeline_ids[0], proba=test_proba).show()

# %% [markdown]
# ## 6 · What does the temporal attention look at?
# The rotary attention of both upper layers for the window of a true change in the test set.
# Rows are the posts asking (queries), columns the posts answered (keys), labelled by their gap to
# the current post.

# %%
change = test.df[test.df["label"].isin([n for n in names if n not in ("O", "no_switch")])]
post = change["post_id"].iloc[min(3, len(change) - 1)] if len(change) else test.df["post_id"].iloc[-1]
att = clf.temporal_attention(test, post)
print("window of", post, "→", dict(zip(names, np.round(att["proba"], 3))))
clf.visualize_attention(test, post, layer=0).show()
clf.visualize_attention(test, post, layer=-1).show()

# %% [markdown]
# ## 7 · What if?
# Choose a post, then **edit its text**, **drag its gap** to the previous post (log scale, from a
# second to four days) or **change the window size**: the bars show the new prediction. Try
# turning a burst reply into one that comes after a long silence, or adding "Out of nowhere,
# everything changed." The model is not retrained; only its input changes.

# %%
display(what_if_panel(clf, test))

# %% [markdown]
# The same, without widgets: the chosen change post with its real gap, after one day of silence,
# and read with smaller and larger windows.

# %%
rows = {"as posted": what_if(clf, test, post), "gap = 1 day": what_if(clf, test, post, gap_seconds=86400.0),
        "gap = 10 s": what_if(clf, test, post, gap_seconds=10.0)}
rows.update({f"window = {w}": what_if(clf, test, post, window=w) for w in (1, 2, 10)})
display(pd.DataFrame(rows, index=names).T.round(3))
print(f"notebook ran in {time.perf_counter() - T0:.0f} s")
