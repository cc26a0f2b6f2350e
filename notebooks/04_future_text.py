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
# | `freq` | an LSTM over the last *W* years of that feature, one LSTM shared by all tokens |
# | `context` | the same LSTM over per-year averaged contextual embeddings (embedded MiniLM) |
# | `context2` | the context bias, gated per position by the decoder state |
#
# By default this runs on the **planted world**: abstract-like documents, 2010–2021, where trend
# words follow planted curves (*transformer* and *pretraining* rise, *kernel* and *lexicon* fall).
# Train on 2010–2019, pick on 2020, test on 2021. The LM is a small GPT-2 trained from scratch on
# the training years (`future_text/model.py` wraps any tied causal LM; online you can pass `gpt2`).
# Everything below goes through one object, `FutureTextModel` (`future_text/pipeline.py`): `fit`,
# `score`, `generate`, `visualize_*`. Method page: `docs/methods/future_text.md`.

# %%
import torch
from IPython.display import display

from tempo_analysis.data.specs import load_yearly
from tempo_analysis.future_text.pipeline import FutureTextModel, GenerationSettings, default_settings
from tempo_analysis.future_text.splits import select_years
from tempo_analysis.notebook import cached, record_summary
from tempo_analysis.widgets.future_text import generation_explorer, trend_injector

# %% tags=["parameters"]
DATA = "world"  # "world"; "acl": the real ACL abstracts in shared/data (train 2003-2019, dev 2020, test 2021); "csv:FILE"
MAX_DOCS_PER_YEAR = None  # seeded subset per year (None; with "acl" on a CPU: 150)
FIRST_YEAR = None  # first training year (None; with "acl": the paper's 2003)
VARIANTS = ["baseline", "last-n", "freq-nolstm", "freq", "context", "context2"]
WORDS = ["transformer", "pretraining", "prompting", "kernel", "lexicon"]  # words to follow
N_TEXTS = 3  # generated texts per model (content METEOR and the side-by-side view)
SEED = 0
SETTINGS = {}  # overrides of default_settings(), e.g. {"finetune_steps": 120}
TORCH_THREADS = 1  # tiny models: one thread avoids thread overhead (and contention on a shared 2-core box)

# %%
torch.set_num_threads(TORCH_THREADS)
if DATA.split(":")[0] == "acl":  # the ACL setting on a CPU: the paper's years, a seeded subset
    MAX_DOCS_PER_YEAR = MAX_DOCS_PER_YEAR or 150
    FIRST_YEAR = FIRST_YEAR or 2003
frame, truth = load_yearly(DATA)
frame = select_years(frame, FIRST_YEAR, MAX_DOCS_PER_YEAR, SEED)
settings = default_settings(seed=SEED, **SETTINGS)
frame.groupby("year").size().rename("documents").to_frame().T

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
# ## Train the variants
# Every variant starts from the same small GPT-2 (trained on all training years) and is fine-tuned
# for the same number of steps, with early stopping on the dev year. The frequency and context
# models learn their LSTM (and bias scale) jointly with the LM. `last-n` expands to n = 1, 2, 3.

# %%
params = {"data": DATA, "first": FIRST_YEAR, "max_docs": MAX_DOCS_PER_YEAR, "variants": VARIANTS,
          "settings": settings.to_dict()}
future = cached("04_future_text", params, lambda: FutureTextModel(settings, variants=VARIANTS).fit(frame),
                save=lambda fitted, folder: fitted.save(folder), load=FutureTextModel.load)
print(f"{len(frame)} documents, {frame['year'].min()}-{frame['year'].max()}; train {future.train_years_[0]}-"
      f"{future.train_years_[-1]}, dev {future.dev_year_}, test {future.test_year_}; "
      f"BPE vocabulary {len(future.tokenizer_)}")
gen_settings = GenerationSettings(max_new_tokens=60, seed=SEED)
results = future.score(meteor_texts=N_TEXTS, generation=gen_settings)
future.visualize_results(title=f"Perplexity (dev {future.dev_year_}, test {future.test_year_}), content perplexity, "
                               "content METEOR (lower ppl is better, higher METEOR is better)").show()

# %%
future.visualize_metric("test_content_ppl").show()
record_summary(future.summary(), notebook="04_future_text")

# %% [markdown]
# Content perplexity counts only *content tokens* (word pieces longer than 4 characters that are
# not stopwords), where the temporal signal lives. Content METEOR compares each generated text
# with its best-matching real test-year text (exact and stem matches of content words).
#
# ## Frequency trends: actual, and each model's forecast for the test year
# Lines: a word's actual relative token frequency per year (the test year is the last point).
# Markers: the model's forecast for the test year, i.e. its average next-token probability for
# that word over the dev year's texts, written with the test year's bias.

# %%
future.visualize_trends(WORDS, models=("baseline", "freq", "context2")).show()

# %% [markdown]
# ## Generated texts: baseline against the temporal bias
# Same seed and decoding (beam 5 with top-k 50 / top-p 0.92 sampling, no repeated bigrams).
# Trending words are highlighted.

# %%
biased = "freq" if "freq" in future.models_ else next(k for k, m in future.models_.items() if m.bias is not None)
future.visualize_generations("baseline", biased, WORDS, n=N_TEXTS, settings=gen_settings).show()

# %% [markdown]
# ## What if…
# **…we wrote for another year, or trusted the forecast more?** Pick the target year and the bias
# strength α (0 = the plain LM inside the temporal model) and regenerate.

# %%
generation_explorer(future, "baseline", biased, WORDS, n=N_TEXTS, settings=gen_settings)

# %% [markdown]
# **…a word had been rising?** Make word *X* rise over the last years of the frequency history
# (its counts multiplied up to ×factor): the frequency model's forecast bias for the test year and
# its generations change. The LSTM is not retrained; it reads the new history.

# %%
freq_name = next((k for k in ("freq", "freq-nolstm") if k in future.models_), None)
if freq_name is not None:
    display(trend_injector(future, freq_name, [w for w in ("kernel", "lexicon") if w in WORDS] or WORDS[:1],
                           n=N_TEXTS, settings=gen_settings))

# %%
results.round(3)
