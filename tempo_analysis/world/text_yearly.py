"""Abstract-like texts for the yearly (future-text) world, and the planted trend curves.

An abstract = an intro about a task, one sentence per trend word the document carries (each
holds its word exactly once, and no other trend word, not even as a substring), one or two
generic method sentences, and a result sentence. `TRENDS[word] = (trend, curve)` where the
curve maps x in [0, 1] (first year .. last year) to the planted share of documents using the
word. All trend words are longer than four characters, so they count as content words for the
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

TREND_SENTENCES = {
    "transformer": [
        "We fine-tune a transformer encoder on {dataset}.",
        "Our transformer model captures long-range dependencies in {task}.",
        "A transformer with relative position encodings outperforms recurrent models.",
        "We analyze what each layer of the transformer learns about syntax.",
        "Replacing the recurrent encoder with a transformer reduces training time.",
        "We distill a large transformer into a compact student model.",
    ],
    "pretraining": [
        "Large-scale pretraining on unlabeled text gives strong initial representations.",
        "We show that domain-adaptive pretraining helps {task}.",
        "The benefits of pretraining shrink as labeled data grows.",
        "We propose a pretraining objective tailored to {task}.",
        "Continued pretraining on {dataset} improves robustness.",
        "Our analysis separates the effects of pretraining and fine-tuning.",
    ],
    "prompting": [
        "We study prompting as an alternative to fine-tuning for {task}.",
        "Simple prompting with a few examples rivals supervised systems.",
        "We find that prompting is sensitive to the wording of instructions.",
        "Chain-of-thought prompting improves reasoning on {task}.",
        "Our prompting strategy selects demonstrations automatically.",
        "We compare prompting with parameter-efficient tuning.",
    ],
    "multilingual": [
        "We train a single multilingual model covering forty languages.",
        "Our multilingual encoder transfers to unseen languages.",
        "We build a multilingual benchmark for {task}.",
        "A multilingual setup helps the lowest-resource languages most.",
        "We analyze how multilingual representations align across scripts.",
        "The multilingual model outperforms monolingual counterparts on {dataset}.",
    ],
    "kernel": [
        "We use a tree kernel to compare syntactic structures.",
        "A string kernel captures character-level similarity.",
        "The kernel method scales poorly to large corpora.",
        "We design a graph kernel for {task}.",
        "Our kernel combines lexical and syntactic features.",
        "An efficient approximation makes the kernel tractable.",
    ],
    "lexicon": [
        "We build a sentiment lexicon from a few seed words.",
        "A domain lexicon is induced from {dataset}.",
        "Features from a hand-built lexicon improve recall.",
        "The lexicon covers ten thousand entries with polarity scores.",
        "We expand the lexicon with distributional similarity.",
        "Coverage of the lexicon is the main bottleneck for {task}.",
    ],
    "handcrafted": [
        "Our system relies on handcrafted features and a linear classifier.",
        "We engineer handcrafted rules for {task}.",
        "A set of handcrafted patterns detects the relations.",
        "We compare learned and handcrafted features.",
        "The handcrafted templates achieve high precision.",
        "Adding handcrafted cues from {dataset} helps.",
    ],
    "annotation": [
        "We describe the annotation guidelines and agreement statistics.",
        "The annotation was carried out by trained linguists.",
        "We release the annotation scheme with the corpus.",
        "An annotation study on {dataset} shows high agreement.",
        "Disagreements in the annotation reveal genuinely ambiguous cases.",
        "The annotation took three months to complete.",
    ],
    "baseline": [
        "A strong baseline built on bag-of-words features is hard to beat.",
        "We re-implement a competitive baseline for comparison.",
        "The baseline ignores context beyond the sentence.",
        "Even a simple baseline reaches high accuracy on {dataset}.",
        "We report the baseline results from prior work.",
        "Our baseline uses the same training data.",
    ],
    "word2vec": [
        "We initialize the model with word2vec embeddings trained on {dataset}.",
        "Vectors from word2vec capture useful similarity for {task}.",
        "We compare word2vec with count-based vectors.",
        "Our extension of word2vec learns sense-specific vectors.",
        "Training word2vec on in-domain text improves {task}.",
        "We analyze analogies solved by word2vec.",
    ],
    "crowdsourcing": [
        "We collect labels through crowdsourcing on a paid platform.",
        "Quality control is essential when crowdsourcing labels.",
        "We show that crowdsourcing yields labels as good as experts.",
        "Our crowdsourcing design rewards careful workers.",
        "Aggregating crowdsourcing judgments with a latent model reduces noise.",
        "We release the crowdsourcing interface and the collected data.",
    ],
}

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
