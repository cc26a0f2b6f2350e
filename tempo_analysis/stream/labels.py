"""The labels every stream classifier trains on and early-stops on, checked in one place.

`training_labels(train)` gives the label names and one code per post (-1 = unlabelled) and refuses
training timelines with nothing to learn from; `dev_is_usable(dev, names)` says whether a dev split
was given and refuses one in which no post is labelled (early stopping and the best epoch are read
from the dev labels, so such a split would otherwise fail deep inside training).
"""

from __future__ import annotations

import numpy as np

from tempo_analysis.data.errors import data_error


def training_labels(train) -> tuple[list[str], np.ndarray]:
    """(label names, codes per post) of the training timelines; -1 marks an unlabelled post."""
    if not train.label_names:
        raise data_error("label", "the training timelines have no labels",
                         "pass Timelines with a 'label' column (one label per post, blank = unlabelled)")
    names = list(train.label_names)
    codes = train.label_codes(names)
    if (codes >= 0).sum() == 0:
        raise data_error("label", "every training post is unlabelled; nothing to learn from",
                         "pass training timelines whose 'label' column is filled for at least one post")
    return names, codes


def dev_is_usable(dev, names: list[str]) -> bool:
    """False when no dev split is given (None or no posts); True when it has a labelled post."""
    if dev is None or not len(dev):
        return False
    if not dev.has_labelled_post(names):
        raise data_error("label", "dev timelines have no labelled post, so they cannot choose the best epoch",
                         "fill their 'label' column, or pass dev=None to train for the full epochs")
    return True
