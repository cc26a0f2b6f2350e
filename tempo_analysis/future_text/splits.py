"""The year split of a yearly frame (train years, dev year, test year) and per-year subsets.

A yearly frame (``doc_id, year, text``) comes from :func:`tempo_analysis.resolve.load_yearly`
or :func:`tempo_analysis.data.yearly.yearly_frame`.
"""

from __future__ import annotations

import warnings

import pandas as pd

from tempo_analysis.data.errors import DataError


def split_years(frame: pd.DataFrame, dev_year: int, test_year: int, train_years=None):
    """(train, dev, test) frames; train = ``train_years`` (first, last) or every year before dev."""
    years = sorted(set(frame["year"]))
    for name, y in (("dev_year", dev_year), ("test_year", test_year)):
        if y not in years:
            raise DataError(f"column 'year': {name}={y} has no documents (years present: {years[0]}-{years[-1]}). "
                            f"Fix: pick a {name} with documents")
    if not dev_year < test_year:
        raise DataError(f"dev_year={dev_year} must come before test_year={test_year}")
    lo, hi = train_years if train_years is not None else (years[0], dev_year - 1)
    if hi >= dev_year:
        raise DataError(f"train_years=({lo}, {hi}) overlaps the dev year {dev_year}; end training before it")
    train = frame[(frame["year"] >= lo) & (frame["year"] <= hi)]
    if train["year"].nunique() < 2:
        raise DataError(f"train years ({lo}, {hi}) hold {train['year'].nunique()} year(s) with documents; "
                        "a temporal bias needs at least 2. Fix: widen train_years")
    cumulative = sorted(set(frame.attrs.get("cumulative_years") or ()) & set(train["year"]))
    if cumulative:
        warnings.warn(f"train years ({lo}, {hi}) include {cumulative}: in the ACL abstracts that year is the cumulative "
                      "bucket papers_2000.txt (every paper up to 2000, labelled 2000), not one year. Fix: start training "
                      "at 2003 as the paper does (--first-year 2003, or train_years=(2003, 2019): ACL_SPLIT)",
                      stacklevel=2)
    dev, test = frame[frame["year"] == dev_year], frame[frame["year"] == test_year]
    return train.reset_index(drop=True), dev.reset_index(drop=True), test.reset_index(drop=True)


def default_split(frame: pd.DataFrame) -> tuple[int, int]:
    """(dev_year, test_year): the ACL split 2020/2021 when present, else the last two years."""
    years = sorted(set(frame["year"]))
    if {2020, 2021} <= set(years) and years[-1] == 2021:
        return 2020, 2021
    if len(years) < 4:
        raise DataError(f"column 'year': {len(years)} distinct years; future-text needs >= 4 (2+ train, dev, test)")
    return years[-2], years[-1]


def complete_split(frame: pd.DataFrame, dev_year=None, test_year=None,
                   names: tuple[str, str] = ("dev_year", "test_year")) -> tuple[int, int]:
    """(dev_year, test_year) with a year given alone completed from the data: ``dev_year`` alone takes
    the next year with documents as the test year; ``test_year`` alone, the last year with documents
    before it as the dev year; neither, :func:`default_split`. ``names`` are the fields' names in
    errors (the CLI passes its flags)."""
    if dev_year is None and test_year is None:
        return default_split(frame)
    if dev_year is not None and test_year is not None:
        return dev_year, test_year
    years = sorted(set(frame["year"]))
    span = f"years present: {years[0]}-{years[-1]}"
    if dev_year is not None:
        later = [y for y in years if y > dev_year]
        if not later:
            raise DataError(f"{names[0]} {dev_year}: no later year with documents to test on ({span}). "
                            f"Fix: give an earlier {names[0]}, or {names[1]} too.")
        return dev_year, later[0]
    earlier = [y for y in years if y < test_year]
    if not earlier:
        raise DataError(f"{names[1]} {test_year}: no earlier year with documents for dev ({span}). "
                        f"Fix: give a later {names[1]}, or {names[0]} too.")
    return earlier[-1], test_year


def subsample_per_year(frame: pd.DataFrame, n: int | None, seed: int = 0) -> pd.DataFrame:
    """At most ``n`` documents per year (seeded); None keeps everything."""
    if n is None:
        return frame
    parts = [g.sample(n=min(n, len(g)), random_state=seed) for _, g in frame.groupby("year", sort=True)]
    return pd.concat(parts).sort_values(["year"], kind="stable").reset_index(drop=True)


def select_years(frame: pd.DataFrame, first_year: int | None = None, max_docs_per_year: int | None = None,
                 seed: int = 0) -> pd.DataFrame:
    """Drop the years before ``first_year`` (None keeps all), then keep at most ``max_docs_per_year``
    documents per year (seeded, :func:`subsample_per_year`)."""
    if first_year is not None:
        frame = frame[frame["year"] >= first_year]
    return subsample_per_year(frame, max_docs_per_year, seed)
