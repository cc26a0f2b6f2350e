"""ACL abstracts by year (the future-language-modeling paper's corpus), gaps filled from the Anthology XML.

Input: a folder of ``papers_YYYY.txt`` files, one abstract per line (UTF-8), as published with
the paper. ``papers_2000.txt`` holds everything up to 2000 and is labelled 2000: a cumulative
bucket, not one year (``df.attrs["cumulative_years"] == [2000]``; the future-text split warns when
its training years include it; the paper trains from 2003, ``ACL_SPLIT``). The published
files lack 2018, 2020 and 2021: those years are taken from the ACL Anthology XML
(``load_acl_xml``'s ``abstract`` column) when ``xml_dir`` is given.

Cleaning (nothing silent: counts are in ``df.attrs`` and a warning names them):
- whitespace is collapsed; blank lines are skipped (they are not abstracts); abstracts shorter
  than ``min_chars`` are dropped;
- duplicate abstracts (same text after lower-casing and whitespace collapsing) keep their first
  occurrence, i.e. the earliest year (the XML fill often repeats a published file's abstract);
- XML papers of the filled years without an abstract are not documents (``dropped_no_abstract``);
- bytes that are not UTF-8 are replaced by U+FFFD (``replaced_characters``, per file).

Returns a DataFrame ``doc_id, year, text, source`` (source "file" or "xml"), sorted by year.
The paper's split is ``ACL_SPLIT``: train 2003-2019, dev 2020, test 2021.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Iterable

import pandas as pd

from tempo_analysis.data.errors import YEAR_RANGE, DataError, DataPathError
from tempo_analysis.data.loaders.text_files import read_text_counting, warn_replaced

ACL_SPLIT = {"train": (2003, 2019), "dev": 2020, "test": 2021}
MISSING_YEARS = (2018, 2020, 2021)
CUMULATIVE_YEARS = (2000,)      # papers_2000.txt: every paper up to 2000, labelled 2000
_FILE = re.compile(r"^papers_(\d{4})\.txt$")


def _norm(text: str) -> str:
    return " ".join(str(text).split())


def abstract_files(abstracts_dir) -> dict[int, Path]:
    """{year: path} for every ``papers_YYYY.txt`` in the folder."""
    folder = Path(abstracts_dir)
    if not folder.is_dir():
        raise DataPathError(f"acl_abstracts: abstracts_dir {str(folder)!r} is not a folder; pass the folder "
                                "holding papers_YYYY.txt (e.g. ../shared/data/acl_abstracts_by_year)")
    files = {int(m.group(1)): p for p in folder.iterdir() if (m := _FILE.match(p.name))}
    if not files:
        raise DataError(f"acl_abstracts: no papers_YYYY.txt files in {str(folder)!r}; pass the abstracts folder")
    odd = sorted(files[y].name for y in files if not YEAR_RANGE[0] <= y <= YEAR_RANGE[1])
    if odd:
        raise DataError(f"acl_abstracts: file(s) {odd[:5]} in {str(folder)!r} name years outside "
                        f"{YEAR_RANGE[0]}-{YEAR_RANGE[1]} (a typo?). Fix: rename them to papers_YYYY.txt with the right year.")
    return files


def _xml_abstracts(xml_dir, years: set[int], progress: bool) -> tuple[pd.DataFrame, int]:
    """(abstracts for ``years`` from the Anthology XML, papers of those years without an abstract);
    reads only collections whose id names such a year. Ids as :func:`load_acl_xml` gives them."""
    from tempo_analysis.data.loaders.acl_xml import parse_collection_id, read_collections, unique_paper_ids

    folder = Path(xml_dir)
    if not folder.is_dir():
        raise DataPathError(f"acl_abstracts: xml_dir {str(folder)!r} is not a folder; pass the Anthology "
                                "'xml' folder (e.g. ../shared/data/acl_anthology_xml/xml)")
    files = [p for p in sorted(folder.glob("*.xml")) if parse_collection_id(p.stem)[1] in years | {None}]
    rows = read_collections(files, years, who="acl_abstracts", desc="ACL XML (missing years)", progress=progress)[0]
    rows = unique_paper_ids(rows)[0]
    no_abstract = sum(not r["abstract"] for r in rows)
    rows = [r for r in rows if r["abstract"]]
    return pd.DataFrame({"doc_id": [r["paper_id"] for r in rows], "year": [int(r["year"]) for r in rows],
                         "text": [r["abstract"] for r in rows]}), no_abstract


def load_acl_abstracts(abstracts_dir, xml_dir=None, years: Iterable[int] | None = None,
                       fill_years: Iterable[int] = MISSING_YEARS, min_chars: int = 50, dedupe: bool = True,
                       progress: bool = True) -> pd.DataFrame:
    """Yearly ACL abstracts: published files plus ``fill_years`` from the XML (see module docstring)."""
    files = abstract_files(abstracts_dir)
    want = None if years is None else {int(y) for y in years}
    fill = {int(y) for y in fill_years} - set(files)
    if want is not None:
        fill &= want
    frames, replaced, no_abstract = [], {}, 0
    for year, path in sorted(files.items()):
        if want is not None and year not in want:
            continue
        lines = [x for x in (_norm(x) for x in read_text_counting(path, replaced).split("\n")) if x]
        frames.append(pd.DataFrame({"doc_id": [f"{year}-{i:05d}" for i in range(len(lines))], "year": year,
                                    "text": lines, "source": "file"}))
    if fill:
        if xml_dir is None:
            warnings.warn(f"acl_abstracts: year(s) {sorted(fill)} have no papers_YYYY.txt and no xml_dir was "
                          "given, so they are absent. Pass xml_dir (the Anthology XML folder) to fill them.",
                          stacklevel=2)
        else:
            xml, no_abstract = _xml_abstracts(xml_dir, fill, progress)
            got = set(xml["year"])
            if fill - got:
                warnings.warn(f"acl_abstracts: the XML has no abstracts for year(s) {sorted(fill - got)}", stacklevel=2)
            frames.append(xml.assign(text=xml["text"].map(_norm), source="xml"))
    if not frames:
        raise DataError(f"acl_abstracts: no abstracts for years {sorted(want or [])}; files cover "
                        f"{min(files)}-{max(files)}. Fix: choose years in that range (or give xml_dir)")
    df = pd.concat(frames, ignore_index=True).sort_values(["year", "source", "doc_id"], kind="stable")
    n0 = len(df)
    df = df[df["text"].str.len() >= min_chars]
    short = n0 - len(df)
    dups = 0
    if dedupe:
        key = df["text"].str.lower()
        keep = ~key.duplicated(keep="first")
        dups = int((~keep).sum())
        df = df[keep]
    df = df.reset_index(drop=True)
    read_years = {y for y in files if want is None or y in want}
    df.attrs.update({"dropped_short": short, "dropped_duplicates": dups, "filled_years": sorted(fill),
                     "dropped_no_abstract": no_abstract,
                     "cumulative_years": sorted(set(CUMULATIVE_YEARS) & read_years & set(df["year"])),
                     "replaced_characters": warn_replaced(replaced, "acl_abstracts")})
    if short or dups or no_abstract:
        parts = [f"{short} short (< {min_chars} chars)", f"{dups} duplicate abstracts (first occurrence kept)"]
        if no_abstract:
            parts.append(f"{no_abstract} XML paper(s) of year(s) {sorted(fill)} that have no abstract")
        warnings.warn(f"acl_abstracts: dropped {', '.join(parts[:-1])} and {parts[-1]}", stacklevel=2)
    return df
