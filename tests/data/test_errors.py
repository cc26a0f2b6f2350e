"""The bad-input helpers of tempo_analysis/data/errors.py at their edges: how many offending rows a
message lists, and what each helper lets through."""
import pytest

from tempo_analysis.data.errors import DataError, data_error


def test_an_error_lists_five_offending_rows_then_counts_the_rest():
    five = str(data_error("text", "is empty", "fill it", rows=range(5)))
    assert "rows [0, 1, 2, 3, 4]" in five and "more" not in five
    six = str(data_error("text", "is empty", "fill it", rows=range(6)))
    assert "rows [0, 1, 2, 3, 4] (+1 more)" in six
    both = str(data_error("label", "is unknown", "use IS or IE", ids=["a"], rows=[3], id_name="post_id"))
    assert both.startswith("column 'label' at post_ids ['a'] / rows [3]: is unknown. Fix: use IS or IE")
    assert isinstance(data_error("x", "p", "f"), DataError) and str(data_error("x", "p", "f")) == "column 'x': p. Fix: f"


def test_an_empty_table_is_named_as_empty_whichever_way_the_parser_says_it(tmp_path):
    import pandas as pd

    from tempo_analysis.data.errors import read_error

    for err in (pd.errors.EmptyDataError("no data"), ValueError("No columns to parse from file")):
        assert "the file is empty" in str(read_error("f.csv", err, "posts file", "add a header"))
    assert "the file is empty" not in str(read_error("f.csv", ValueError("bad quote"), "posts file", "x"))


def test_an_unreadable_table_gets_the_general_fix_unless_the_caller_names_one(tmp_path):
    import pandas as pd

    from tempo_analysis.data.errors import read_frame

    empty = tmp_path / "posts.csv"
    empty.write_text("")
    with pytest.raises(DataError, match="Fix: check that it is a well-formed table with a header line, in UTF-8"):
        read_frame(pd.read_csv, empty)
    with pytest.raises(DataError, match="Fix: add the header"):
        read_frame(pd.read_csv, empty, fix="add the header")


def test_dates_and_numbers_sort_as_themselves():
    import datetime

    from tempo_analysis.data.errors import infer_label_order

    days = [datetime.date(2020, 5, 1), datetime.date(2019, 1, 1), datetime.date(2020, 5, 1)]
    assert infer_label_order(days, "period", "fix", "order=[...]") == [datetime.date(2019, 1, 1), datetime.date(2020, 5, 1)]
    assert infer_label_order([2001, 1999], "period", "fix", "order=[...]") == [1999, 2001]
    assert infer_label_order([], "period", "fix", "order=[...]") == []


def test_one_text_label_needs_no_order_so_it_is_not_warned_about():
    import warnings

    from tempo_analysis.data.errors import infer_label_order

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert infer_label_order(["late", "late"], "period", "fix", "order=[...]") == ["late"]
    with pytest.warns(UserWarning, match=r"ordered by first appearance \['late', 'early'\]"):
        assert infer_label_order(["late", "early"], "period", "fix", "order=[...]") == ["late", "early"]


def test_years_are_whole_numbers_within_the_range_both_ends_included():
    import numpy as np

    from tempo_analysis.data.errors import check_years

    check_years([1000, 2100, 2019.0, np.int64(1999), np.float32(2001)])          # whole numbers, ends included
    for bad in ("2019", True, 2019.5, None):
        with pytest.raises(DataError, match="not whole-number years"):
            check_years([2000, bad])
    with pytest.raises(DataError, match=r"years \[3001, 3002, 3003, 3004, 3005\] lie outside 1000-2100") as err:
        check_years([3006, 3005, 3004, 3003, 3002, 3001, 2000], where="years.csv")
    assert str(err.value).startswith("years.csv: column 'year' at rows [0, 1, 2, 3, 4] (+1 more)")
    check_years([999], year_range=(900, 999))
