"""ACL Anthology XML loader: one row per paper (id, year, venue, volume, authors, title, abstract).

Reads the Anthology's published XML (one file per collection, e.g. ``P18.xml``, ``2020.acl.xml``)
from any folder. Two id schemes exist in the data:

- old-style collections ``P18``, ``W18``, ``J04`` ...: the letter names the venue family
  (P = ACL, D = EMNLP, W = workshops, ...; table ``OLD_VENUES`` below), the digits the year.
- new-style collections ``2020.acl``, ``2021.bionlp`` ...: the part after the year is the venue.

``venue`` is always a lower-case venue acronym ("acl", "emnlp", "ws", "bionlp", ...). That is
the *venue-family* granularity: every volume of ACL 2018 (long, short, demos, SRW) is "acl".
``volume_id`` keeps the finer level ("P18-1", "2020.acl-main") for users who want it.

Ids: ``paper_id`` is the paper's ``<url>`` (the Anthology id). A few volumes reuse another volume's
url ids (AMTA 2006: volumes ``panel1`` and ``panel2`` both number their papers ``2006.amta-panels.N``);
a later paper whose url id is taken then gets the id built from its XML ids, collection-volume.paper
(``2006.amta-panel2.1``), and is kept. Only a true duplicate, the same collection, volume and paper
read twice (e.g. a copy of a file), is dropped; a warning gives both counts
(``df.attrs["renamed_ids"]``, ``df.attrs["dropped_duplicates"]``). XML files whose root is not
``<collection>`` are skipped with a warning naming them (``df.attrs["skipped_files"]``).
"""
from __future__ import annotations

import re
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Iterable

import pandas as pd
from tqdm.auto import tqdm

from tempo_analysis.data.errors import DataError, DataPathError

COLUMNS = ["paper_id", "year", "venue", "volume_id", "authors", "title", "abstract"]

# Old-style Anthology letters -> venue family acronym (https://aclanthology.org/info/ids/).
OLD_VENUES = {
    "A": "anlp", "C": "coling", "D": "emnlp", "E": "eacl", "F": "jeptalnrecital", "H": "hlt",
    "I": "ijcnlp", "J": "cl", "K": "conll", "L": "lrec", "M": "muc", "N": "naacl", "O": "rocling",
    "P": "acl", "Q": "tacl", "R": "ranlp", "S": "semeval", "T": "tinlap", "U": "alta",
    "W": "ws", "X": "coling", "Y": "paclic",
}

_OLD_ID = re.compile(r"^([A-Z])(\d{2})$")
_NEW_ID = re.compile(r"^(\d{4})\.([a-z0-9\-]+)$", re.IGNORECASE)


def _text(el) -> str:
    """All text under an element (titles carry <fixed-case>, abstracts <tex-math>), whitespace-normalised."""
    if el is None:
        return ""
    return " ".join("".join(el.itertext()).split())


def _person(el) -> str:
    """'First Last' from <author><first/><last/></author> (either part may be missing)."""
    first, last = _text(el.find("first")), _text(el.find("last"))
    return " ".join(p for p in (first, last) if p)


def parse_collection_id(collection_id: str) -> tuple[str, int | None]:
    """(venue acronym, year from the id or None) for 'P18' -> ('acl', 2018), '2020.acl' -> ('acl', 2020)."""
    m = _NEW_ID.match(collection_id)
    if m:
        return m.group(2).lower(), int(m.group(1))
    m = _OLD_ID.match(collection_id)
    if m:
        yy = int(m.group(2))
        return OLD_VENUES.get(m.group(1), m.group(1).lower()), (1900 + yy if yy >= 50 else 2000 + yy)
    return collection_id.lower(), None


def _paper_id(collection: str, volume: str, paper: str, url: str) -> str:
    """The Anthology id: the paper's <url> when it is an id, otherwise rebuilt from the XML ids."""
    if url and not url.startswith("http"):
        return url
    if _NEW_ID.match(collection):
        return f"{collection}-{volume}.{paper}"
    if collection.startswith("W"):  # workshops: 2-digit volume + 2-digit paper
        return f"{collection}-{int(volume):02d}{int(paper):02d}" if volume.isdigit() and paper.isdigit() \
            else f"{collection}-{volume}{paper}"
    return f"{collection}-{volume}{int(paper):03d}" if paper.isdigit() else f"{collection}-{volume}{paper}"


def _volume_id(collection: str, volume: str) -> str:
    return f"{collection}-{volume}"


def parse_acl_xml_file(path: str | Path, years: set[int] | None = None) -> list[dict]:
    """Rows (dicts with COLUMNS) for every <paper> in one Anthology XML file ([] for an XML file whose
    root is not <collection>; :func:`load_acl_xml` counts and names those)."""
    rows = read_collection(path, years)
    return [{k: r[k] for k in COLUMNS} for r in rows] if rows is not None else []


def read_collection(path: str | Path, years: set[int] | None = None) -> list[dict] | None:
    """Rows for every <paper> of one collection file, each with COLUMNS and ``xml_id`` (the id built from
    the XML ids, collection-volume.paper: the fallback when a url id is taken); None when the file's root
    is not <collection> (not an Anthology collection, e.g. a stray XML file)."""
    path = Path(path)
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as err:
        raise DataError(f"acl_xml: {path} is not well-formed XML ({err}); remove or fix that file.") from err
    if root.tag != "collection":
        return None
    collection = root.get("id") or path.stem
    venue, id_year = parse_collection_id(collection)
    rows = []
    for vol in root.iter("volume"):
        vol_key = vol.get("id", "")
        meta = vol.find("meta")
        year_txt = _text(meta.find("year")) if meta is not None else ""
        vol_year = int(year_txt[:4]) if year_txt[:4].isdigit() else id_year
        for paper in vol.iter("paper"):
            p_year_txt = _text(paper.find("year"))  # rare per-paper override
            year = int(p_year_txt[:4]) if p_year_txt[:4].isdigit() else vol_year
            if year is None or (years is not None and year not in years):
                continue
            rows.append({
                "paper_id": _paper_id(collection, vol_key, paper.get("id", ""), _text(paper.find("url"))),
                "xml_id": _paper_id(collection, vol_key, paper.get("id", ""), ""),
                "year": int(year),
                "venue": venue,
                "volume_id": _volume_id(collection, vol_key),
                "authors": [a for a in (_person(el) for el in paper.findall("author")) if a],
                "title": _text(paper.find("title")),
                "abstract": _text(paper.find("abstract")),
            })
    return rows


def unique_paper_ids(rows: list[dict]) -> tuple[list[dict], dict[str, str], int]:
    """(rows, renamed, dropped): ``rows`` (from :func:`read_collection`, in reading order) with unique
    ``paper_id``s. A row whose url id an earlier row already has gets its ``xml_id`` instead (``renamed``:
    {new id: url id}); a row whose XML position (``xml_id``) was already read, or whose fallback id is
    taken too, is a true duplicate and is dropped (counted in ``dropped``)."""
    seen_ids: set[str] = set()
    seen_xml: set[str] = set()
    out, renamed, dropped = [], {}, 0
    for r in rows:
        if r["xml_id"] in seen_xml:
            dropped += 1
            continue
        if r["paper_id"] in seen_ids:
            if r["xml_id"] in seen_ids:
                dropped += 1
                continue
            renamed[r["xml_id"]] = r["paper_id"]
            r = {**r, "paper_id": r["xml_id"]}
        seen_ids.add(r["paper_id"])
        seen_xml.add(r["xml_id"])
        out.append(r)
    return out, renamed, dropped


def read_collections(files: list[Path], years: set[int] | None, *, who: str, desc: str = "ACL XML",
                     progress: bool = True) -> tuple[list[dict], list[str]]:
    """(the paper rows of every collection file in ``files`` (of ``years``; None: all), the names of the
    files whose root is not <collection>): those are named in one warning (``who`` starts it)."""
    rows: list[dict] = []
    skipped: list[str] = []
    for f in tqdm(files, desc=desc, disable=not progress):
        got = read_collection(f, years)
        if got is None:
            skipped.append(f.name)
        else:
            rows.extend(got)
    if skipped:
        folder = str(Path(files[0]).parent) if files else ""
        warnings.warn(f"{who}: skipped {len(skipped)} XML file(s) in {folder!r} whose root element is not "
                      f"<collection> (not Anthology collections): {skipped[:10]}. Fix: remove them, or use the "
                      "Anthology's data/xml files", stacklevel=3)
    return rows, skipped


def load_acl_xml(xml_dir: str | Path, years: Iterable[int] | None = None, progress: bool = True) -> pd.DataFrame:
    """Load every ``*.xml`` collection under ``xml_dir`` into one paper table.

    Columns: paper_id (str), year (int), venue (str, lower-case acronym: see module doc),
    volume_id (str), authors (list[str], "First Last"), title (str), abstract (str, "" when the
    paper has none). ``years`` keeps only papers from those years (e.g. ``range(2010, 2021)``).
    Sorted by (year, paper_id). A paper whose url id another volume already uses gets the id built from
    its XML ids (collection-volume.paper); a true duplicate (the same paper read twice) keeps the first
    file's row. Both counts, and the XML files skipped because their root is not <collection>, are named
    in a warning and kept in ``df.attrs`` (``renamed_ids``, ``dropped_duplicates``, ``skipped_files``).
    """
    xml_dir = Path(xml_dir)
    if not xml_dir.is_dir():
        raise DataPathError(
            f"acl_xml: xml_dir {str(xml_dir)!r} is not a folder; pass the folder holding the Anthology "
            "XML files (e.g. ../shared/data/acl_anthology_xml/xml)."
        )
    files = sorted(p for p in xml_dir.glob("*.xml") if p.is_file())
    if not files:
        raise DataError(f"acl_xml: no *.xml files in {str(xml_dir)!r}; pass the Anthology 'xml' folder.")
    year_set = None if years is None else {int(y) for y in years}
    rows, skipped = read_collections(files, year_set, who="acl_xml", progress=progress)
    rows, renamed, dropped = unique_paper_ids(rows)
    df = pd.DataFrame(rows, columns=COLUMNS)
    if df.empty:
        where = f" for years {sorted(year_set)}" if year_set else ""
        raise DataError(f"acl_xml: found no <paper> entries in {str(xml_dir)!r}{where}; check the folder and `years`.")
    if renamed or dropped:
        first = next(iter(renamed.items()), None)
        what = f" (first: {first[1]!r} -> {first[0]!r})" if first else ""
        warnings.warn(f"acl_xml: {len(renamed)} paper(s) reuse a url id of an earlier volume and were given the id "
                      f"built from their XML ids, collection-volume.paper{what}; {dropped} true duplicate(s) (the same "
                      "collection, volume and paper read again) were dropped, first occurrence kept", stacklevel=2)
    df["year"] = df["year"].astype(int)
    df = df.sort_values(["year", "paper_id"], kind="stable").reset_index(drop=True)
    df.attrs.update({"renamed_ids": renamed, "dropped_duplicates": dropped, "skipped_files": skipped})
    return df
