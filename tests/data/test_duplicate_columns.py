"""A table with one column name twice is refused, naming the column: pandas would rename the second
one ``label.1`` and the first would be read silently."""
from __future__ import annotations

import pytest

from tempo_analysis.data import DataError, Timelines
from tempo_analysis.data.errors import read_frame


def test_two_label_columns_are_refused(tmp_path):
    f = tmp_path / "posts.csv"
    f.write_text("timeline_id,post_id,timestamp,text,label,label\nt,p1,2020-01-01,hi,a,b\nt,p2,2020-01-02,yo,a,b\n")
    with pytest.raises(DataError, match=r"column name\(s\) more than once: 'label'"):
        Timelines.from_csv(f)


def test_two_text_columns_in_a_tab_file_are_refused(tmp_path):
    import pandas as pd

    f = tmp_path / "x.tsv"
    f.write_text("text\tunit\ttext\nhello\tu\tworld\n")
    with pytest.raises(DataError, match="'text'"):
        read_frame(pd.read_csv, f, sep="\t")


def test_a_real_column_named_like_a_renamed_one_is_fine(tmp_path):
    import pandas as pd

    f = tmp_path / "ok.csv"
    f.write_text("score,score.1\n1,2\n")
    assert list(read_frame(pd.read_csv, f).columns) == ["score", "score.1"]
