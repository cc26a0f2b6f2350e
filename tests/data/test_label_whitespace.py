"""'IS' and 'IS ' are one class: labels are stripped, with a warning that counts them."""
from __future__ import annotations

import pandas as pd
import pytest

from tempo_analysis.data import DataError, Timelines
from tempo_analysis.data.timelines import LabelWhitespaceWarning


def posts(labels):
    n = len(labels)
    return pd.DataFrame({"timeline_id": ["t"] * n, "post_id": [f"p{i}" for i in range(n)], "text": ["x"] * n,
                         "timestamp": [f"2020-01-0{i + 1}" for i in range(n)], "label": labels})


def test_padded_labels_are_stripped_and_counted():
    with pytest.warns(LabelWhitespaceWarning, match=r"2 label\(s\) had spaces.*'IS '"):
        tl = Timelines.from_frame(posts(["IS", "IS ", " IE", "IE"]))
    assert sorted(tl.label_names) == ["IE", "IS"]
    assert tl.df["label"].tolist() == ["IS", "IS", "IE", "IE"]


def test_a_label_of_spaces_only_is_refused():
    with pytest.raises(DataError, match="labels made only of spaces"), pytest.warns(LabelWhitespaceWarning):
        Timelines.from_frame(posts(["IS", "  "]))
