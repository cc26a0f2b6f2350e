"""Dates are never guessed: a column of numeric dates is read in one order, taken from the column as a
whole, or refused; a time of day without a date is refused (it would get today's date)."""
from __future__ import annotations

import pandas as pd
import pytest

from tempo_analysis.data import DataError, Timelines


def posts(stamps):
    return pd.DataFrame({"timeline_id": ["t"] * len(stamps), "post_id": [f"p{i}" for i in range(len(stamps))],
                         "text": ["hello"] * len(stamps), "timestamp": stamps})


def dates(stamps):
    return [str(t.date()) for t in Timelines.from_frame(posts(stamps)).df["timestamp"]]


def test_a_column_that_cannot_tell_day_from_month_is_refused():
    with pytest.raises(DataError, match=r"day-first or month-first.*ISO 8601"):
        Timelines.from_frame(posts(["03/02/2023", "04/02/2023"]))


def test_one_day_above_twelve_sets_the_order_for_the_whole_column():
    assert dates(["03/02/2023", "13/02/2023"]) == ["2023-02-03", "2023-02-13"]       # day-first
    assert dates(["02/03/2023", "02/13/2023"]) == ["2023-02-03", "2023-02-13"]       # month-first
    assert dates(["03.02.2023 09:00", "13.02.2023 10:00"]) == ["2023-02-03", "2023-02-13"]


def test_both_orders_in_one_column_are_refused():
    with pytest.raises(DataError, match="day-first and month-first in one column"):
        Timelines.from_frame(posts(["13/02/2023", "02/13/2023"]))


@pytest.mark.parametrize("value", ["9:00", "21:30:05", "9:00 pm"])
def test_a_time_without_a_date_is_refused(value):
    with pytest.raises(DataError, match="a time of day needs its date"):
        Timelines.from_frame(posts(["2023-02-03T08:00:00Z", value]))


def test_iso_dates_are_read_as_before():
    assert dates(["2023-02-03T08:00:00Z", "2023-02-13"]) == ["2023-02-03", "2023-02-13"]
