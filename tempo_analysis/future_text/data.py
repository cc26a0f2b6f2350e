"""Yearly text for future-text generation: (year, text) rows from the world, ACL, or a CSV.

Every source becomes one validated frame ``doc_id, year (int), text`` (``yearly_frame``).
``load_yearly(spec)`` understands the CLI's ``--data`` values:

- ``world`` / ``world:DIR``: the planted-truth world's yearly documents (``world.yearly``, a
  PeriodCorpus with int years; ``world.trend_truth`` holds the planted rates);
- ``acl:ABSTRACTS_DIR,XML_DIR``: ACL abstracts by year, gaps filled from the Anthology XML;
- ``csv:FILE``: any CSV with ``year`` and ``text`` columns (generic input).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from tempo_analysis.data.errors import DataError, require_columns


def yearly_frame(df: pd.DataFrame, year_col: str = "year", text_col: str = "text") -> pd.DataFrame:
    """Validate (year, text) rows: integer years, string texts; blank texts are dropped with a warning."""
    require_columns(df, [year_col, text_col], "yearly text")
    years = pd.to_numeric(df[year_col], errors="coerce")
    bad = df.index[years.isna() | (years != years.round())].tolist()
    if bad:
        raise DataError(f"column '{year_col}' at rows {bad[:5]}: year must be an integer (e.g. 2019). "
                        "Fix: convert dates to years or drop those rows")
    text = df[text_col].astype("string")
    blank = text.isna() | (text.str.strip() == "")
    if blank.any():
        warnings.warn(f"yearly text: dropping {int(blank.sum())} row(s) with an empty '{text_col}' "
                      f"(rows {df.index[blank].tolist()[:5]})", stacklevel=2)
    out = pd.DataFrame({
        "doc_id": (df["doc_id"].astype(str) if "doc_id" in df.columns else pd.Series(np.arange(len(df))).astype(str).values),
        "year": years.astype(int).values,
        "text": text.astype(str).values,
    })[~blank.values]
    if out.empty:
        raise DataError(f"column '{text_col}': no non-empty texts. Fix: give at least one (year, text) row")
    return out.sort_values("year", kind="stable").reset_index(drop=True)


def world_yearly(world) -> pd.DataFrame:
    """The planted world's yearly documents (``world.yearly`` PeriodCorpus, periods are int years)."""
    df = world.yearly.df
    return yearly_frame(pd.DataFrame({"doc_id": df["doc_id"], "year": df["period"].astype(int), "text": df["text"]}))


def load_world_yearly(path=None):
    """(frame, trend_truth) from the committed world (``data/world``) or ``path``.

    When no world is on disk and no ``path`` was given, the default world's yearly part is
    generated in memory (seeded, the same documents ``tempo-analysis world`` writes), with a warning.
    """
    from tempo_analysis.world import YearlyWorldConfig, generate_yearly, load_world

    try:
        world = load_world(path)
    except FileNotFoundError:
        if path is not None:
            raise
        warnings.warn("no planted world on disk (run `tempo-analysis world --out data/`); generating the "
                      "default yearly world in memory", stacklevel=2)
        corpus, truth = generate_yearly(YearlyWorldConfig())
        df = corpus.df
        return yearly_frame(pd.DataFrame({"doc_id": df["doc_id"], "year": df["period"].astype(int),
                                          "text": df["text"]})), truth
    return world_yearly(world), world.trend_truth


def load_yearly(spec: str, progress: bool = False):
    """(frame, trend_truth or None) for a ``--data`` spec (module docstring)."""
    kind, _, arg = spec.partition(":")
    if kind == "world":
        return load_world_yearly(arg or None)
    if kind == "acl":
        from tempo_analysis.data.loaders.acl_abstracts import load_acl_abstracts

        parts = [p for p in arg.split(",") if p]
        if not 1 <= len(parts) <= 2:
            raise DataError(f"--data {spec!r}: use acl:ABSTRACTS_DIR,XML_DIR (XML_DIR fills 2018, 2020, 2021)")
        df = load_acl_abstracts(parts[0], parts[1] if len(parts) > 1 else None, progress=progress)
        return yearly_frame(df), None
    if kind == "csv":
        if not arg:
            raise DataError("--data csv: give a file, e.g. csv:my_texts.csv (columns year, text)")
        return yearly_frame(pd.read_csv(arg)), None
    raise DataError(f"--data {spec!r}: use world, world:DIR, acl:ABSTRACTS_DIR,XML_DIR or csv:FILE")


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


def subsample_per_year(frame: pd.DataFrame, n: int | None, seed: int = 0) -> pd.DataFrame:
    """At most ``n`` documents per year (seeded); None keeps everything."""
    if n is None:
        return frame
    parts = [g.sample(n=min(n, len(g)), random_state=seed) for _, g in frame.groupby("year", sort=True)]
    return pd.concat(parts).sort_values(["year"], kind="stable").reset_index(drop=True)
