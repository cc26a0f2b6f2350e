"""Abstract-like texts for the yearly (future-text) world, and the planted trend curves.

An abstract = an intro about a task, one sentence per trend word the document carries (a shared
frame, then a phrase that starts with the word: each holds its word exactly once, and no other
trend word, not even as a substring), one or two generic method sentences, and a result
sentence. `TRENDS[word] = (trend, curve)` where the curve maps x in [0, 1] (first year .. last
year) to the planted share of documents using the word. All trend words are longer than four characters, so they count as content words for the
future-text metrics.
"""

from __future__ import annotations

import math


def _logistic(lo: float, hi: float, mid: float, width: float):
    return lambda x: lo + (hi - lo) / (1.0 + math.exp(-(x - mid) / width))


def _bump(base: float, peak: float, centre: float, width: float):
    return lambda x: base + peak * math.exp(-(((x - centre) / width) ** 2))


def _flat(level: float):
    return lambda x: level


TRENDS = {
    "transformer": ("rise", _logistic(0.02, 0.60, 0.62, 0.10)),
    "pretraining": ("rise", _logistic(0.01, 0.45, 0.70, 0.08)),
    "prompting": ("rise", _logistic(0.00, 0.35, 0.85, 0.06)),
    "multilingual": ("rise", _logistic(0.06, 0.30, 0.50, 0.15)),
    "kernel": ("fall", _logistic(0.40, 0.03, 0.35, 0.10)),
    "lexicon": ("fall", _logistic(0.35, 0.05, 0.50, 0.12)),
    "handcrafted": ("fall", _logistic(0.30, 0.02, 0.45, 0.08)),
    "annotation": ("flat", _flat(0.25)),
    "baseline": ("flat", _flat(0.30)),
    "word2vec": ("burst", _bump(0.01, 0.40, 0.35, 0.20)),
    "crowdsourcing": ("burst", _bump(0.02, 0.35, 0.20, 0.15)),
}

# A trend sentence is a shared frame followed by one of the word's phrases, which starts with the
# word: "We rely on" + "kernel methods over syntactic structures." The frame does not say which
# word comes next, so the year alone decides it (the share of trend sentences that go on with each
# word follows the planted rates), and a model that raises a word's forecast bias writes it more
# often right there. Word-specific sentences ("We use a tree kernel ...") would settle the word
# several tokens earlier, where its bias cannot act.
TREND_FRAMES = [
    "Our approach builds on",
    "This work revisits",
    "We rely on",
    "We focus on",
    "Our system uses",
    "We study the role of",
]

TREND_PHRASES = {
    "transformer": [
        "transformer encoders fine-tuned on {dataset}.",
        "transformer models that capture long-range dependencies in {task}.",
        "transformer layers with relative position encodings.",
        "transformer representations distilled into a compact student model.",
    ],
    "pretraining": [
        "pretraining on large amounts of unlabeled text.",
        "pretraining adapted to the domain of {task}.",
        "pretraining objectives tailored to {task}.",
        "pretraining continued on {dataset}.",
    ],
    "prompting": [
        "prompting as an alternative to fine-tuning for {task}.",
        "prompting with a few examples.",
        "prompting that asks for step-by-step reasoning on {task}.",
        "prompting with automatically selected demonstrations.",
    ],
    "multilingual": [
        "multilingual models covering forty languages.",
        "multilingual encoders that transfer to unseen languages.",
        "multilingual benchmarks for {task}.",
        "multilingual representations aligned across scripts.",
    ],
    "kernel": [
        "kernel methods over syntactic structures.",
        "kernel functions that capture character-level similarity.",
        "kernel approximations that scale to large corpora.",
        "kernel machines that combine lexical and syntactic features.",
    ],
    "lexicon": [
        "lexicon entries induced from a few seed words.",
        "lexicon features built from {dataset}.",
        "lexicon coverage as the main bottleneck for {task}.",
        "lexicon expansion with distributional similarity.",
    ],
    "handcrafted": [
        "handcrafted features and a linear classifier.",
        "handcrafted rules for {task}.",
        "handcrafted patterns that detect the relations.",
        "handcrafted templates with high precision.",
    ],
    "annotation": [
        "annotation guidelines with agreement statistics.",
        "annotation carried out by trained linguists.",
        "annotation of {dataset} with high agreement.",
        "annotation disagreements that reveal ambiguous cases.",
    ],
    "baseline": [
        "baseline systems built on bag-of-words features.",
        "baseline results re-implemented from prior work.",
        "baseline models that ignore context beyond the sentence.",
        "baseline accuracy on {dataset}.",
    ],
    "word2vec": [
        "word2vec embeddings trained on {dataset}.",
        "word2vec vectors for {task}.",
        "word2vec extensions that learn sense-specific vectors.",
        "word2vec analogies and what they reveal.",
    ],
    "crowdsourcing": [
        "crowdsourcing labels on a paid platform.",
        "crowdsourcing with careful quality control.",
        "crowdsourcing judgments aggregated with a latent model.",
        "crowdsourcing interfaces released with the data.",
    ],
}


def trend_sentence(frame: str, phrase: str) -> str:
    """One trend sentence: the shared ``frame``, then the word's ``phrase``."""
    return f"{frame} {phrase}"


TASKS = ["sentiment analysis", "machine translation", "named entity recognition", "question answering",
         "text summarization", "dependency parsing", "relation extraction", "text classification",
         "coreference resolution", "dialogue generation", "semantic role labeling",
         "part-of-speech tagging"]
DATASETS = ["a new benchmark of news articles", "three public benchmarks", "a corpus of product reviews",
            "Wikipedia articles", "social media posts", "clinical notes", "parliamentary debates",
            "scientific papers", "customer support logs", "a news collection in twelve languages"]
DOMAINS = ["legal documents", "biomedical text", "tweets", "news", "dialogue", "historical texts",
           "student essays"]
NUMBERS = ["two", "three", "four", "five", "seven", "ten"]

INTROS = [
    "We study {task} in low-resource settings.",
    "This paper addresses {task} for {domain}.",
    "We present a new approach to {task}.",
    "{task} remains a challenging problem for current systems.",
    "We investigate how to improve {task} with limited labeled data.",
    "Recent work on {task} has focused on benchmark performance.",
    "We revisit {task} for {domain}.",
    "This work examines the robustness of {task} systems.",
]
METHODS = [
    "Our method combines a simple encoder with a task-specific decoder.",
    "We propose a joint model that shares parameters across subtasks.",
    "The approach requires no additional labeled data.",
    "We introduce a new training objective that penalizes inconsistent predictions.",
    "The system is trained end to end with stochastic gradient descent.",
    "We also release a cleaned version of the data.",
    "A small development set is used to tune all hyperparameters.",
    "The model is compact and runs on a single processor.",
]
RESULTS = [
    "Experiments on {dataset} show consistent improvements over strong systems.",
    "Results on {dataset} show gains of up to {number} points in F1.",
    "Our model achieves state-of-the-art accuracy on {dataset}.",
    "An error analysis reveals that most mistakes involve rare words.",
    "Human judges preferred our outputs in most cases.",
    "We find that performance depends strongly on domain shift.",
    "The improvements hold across {number} languages and domains.",
]
