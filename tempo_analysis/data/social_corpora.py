"""Social corpora: the ACL Anthology venue network and generic CSV input.

Every builder returns a :class:`tempo_analysis.data.SocialCorpus` (doc_id, unit, time, text +
a networkx graph over units), the input type of the social-diffusion method
(:mod:`tempo_analysis.diffusion`). ``--data`` strings reach these builders through
:func:`tempo_analysis.resolve.load_social`, which also serves the planted world's social part
(:func:`tempo_analysis.world.generate_social`).

ACL granularity (``acl_social_corpus``): a unit is a *venue family*, the Anthology's venue
acronym as ``load_acl_xml`` gives it: every volume of ACL in a year (long, short, demos, SRW,
findings are their own acronym "findings") is "acl"; EMNLP is "emnlp"; Computational Linguistics
is "cl". Old-style workshop proceedings (``W*`` files, up to 2019) are one family "ws"; from
2020 on the Anthology names each workshop (``2020.bionlp``), so those become their own units.
Documents are abstracts (papers without an abstract are dropped), time slices are years, and
two units are linked when the Jaccard overlap of their author sets (over the chosen years)
exceeds ``theta`` (the paper uses 0.01 for ArXiv subjects). Venues with fewer than ``min_papers``
abstracts are dropped. Both drops are counted in a warning and in ``corpus.df.attrs``
(``dropped_no_abstract``, ``dropped_venues`` {venue: abstracts}).
"""
from __future__ import annotations

import warnings
from itertools import combinations
from pathlib import Path

import networkx as nx
import pandas as pd

from tempo_analysis.data.errors import DataError
from tempo_analysis.data.loaders.acl_xml import load_acl_xml
from tempo_analysis.data.social import SocialCorpus


def author_jaccard_graph(papers: pd.DataFrame, theta: float = 0.01, unit_col: str = "venue") -> nx.Graph:
    """Units linked when |A ∩ B| / |A ∪ B| of their author sets is > theta; weight = the Jaccard value."""
    authors = {u: set(a for lst in grp["authors"] for a in lst) for u, grp in papers.groupby(unit_col)}
    g = nx.Graph()
    g.add_nodes_from(sorted(authors))
    for a, b in combinations(sorted(authors), 2):
        union = len(authors[a] | authors[b])
        jac = len(authors[a] & authors[b]) / union if union else 0.0
        if jac > theta:
            g.add_edge(a, b, weight=float(jac))
    return g


def acl_social_corpus(xml_dir_or_papers, years=range(2017, 2021), theta: float = 0.01, min_papers: int = 30,
                      max_docs_per_unit_slice: int | None = None, seed: int = 0, progress: bool = True) -> SocialCorpus:
    """ACL venues as social units, years as slices, abstracts as documents, author-Jaccard edges.

    xml_dir_or_papers: the Anthology XML folder, or a frame from ``load_acl_xml``.
    min_papers: keep venues with at least this many abstracts over the chosen years.
    max_docs_per_unit_slice: seeded sample per (venue, year) to bound CPU time (None = all).
    """
    if isinstance(xml_dir_or_papers, pd.DataFrame):
        papers = xml_dir_or_papers
    else:
        papers = load_acl_xml(xml_dir_or_papers, years=years, progress=progress)
    years = sorted(int(y) for y in years)
    in_years = papers["year"].isin(years)
    has_abstract = papers["abstract"].str.strip() != ""
    no_abstract = int((in_years & ~has_abstract).sum())
    papers = papers[in_years & has_abstract]
    counts = papers["venue"].value_counts()
    keep = sorted(counts[counts >= min_papers].index)
    small = {str(v): int(n) for v, n in sorted(counts[counts < min_papers].items())}
    if len(keep) < 2:
        raise DataError(f"acl_social_corpus: only {len(keep)} venue(s) have >= min_papers={min_papers} abstracts in "
                        f"years {years[0]}-{years[-1]}. Fix: lower min_papers or widen years.")
    papers = papers[papers["venue"].isin(keep)]
    missing = [y for y in years if y not in set(papers["year"])]
    if missing:
        raise DataError(f"acl_social_corpus: year(s) {missing} have no abstracts from the kept venues. "
                        "Fix: drop those years from `years` (the XML snapshot ends in mid 2021).")
    graph = author_jaccard_graph(papers, theta)
    if max_docs_per_unit_slice is not None:
        papers = (papers.sample(frac=1.0, random_state=seed)      # seeded shuffle, then the first n per group
                  .groupby(["venue", "year"], sort=False).head(max_docs_per_unit_slice))
    docs = pd.DataFrame({"doc_id": papers["paper_id"].to_numpy(), "unit": papers["venue"].to_numpy(),
                         "time": papers["year"].astype(int).to_numpy(), "text": papers["abstract"].to_numpy(),
                         "title": papers["title"].to_numpy()})
    corpus = SocialCorpus.from_frame(docs.sort_values(["time", "unit", "doc_id"]).reset_index(drop=True), graph,
                                     slices=years)
    if no_abstract or small:
        listed = ", ".join(f"{v} ({n})" for v, n in list(small.items())[:10]) + (", ..." if len(small) > 10 else "")
        warnings.warn(f"acl_social_corpus: dropped {no_abstract} paper(s) without an abstract and {sum(small.values())} "
                      f"abstract(s) of {len(small)} venue(s) with fewer than min_papers={min_papers} in years "
                      f"{years[0]}-{years[-1]}" + (f": {listed}" if small else "") + ". Fix: lower min_papers to keep "
                      "small venues", stacklevel=2)
    corpus.df.attrs.update({"dropped_no_abstract": no_abstract, "dropped_venues": small, "min_papers": min_papers})
    return corpus


def csv_social_corpus(docs: str | Path, edges: str | Path, **kwargs) -> SocialCorpus:
    """Generic input: a CSV with unit, time, text (+ optional doc_id) and an edge CSV (source, target[, weight])."""
    for p, what in ((docs, "documents CSV"), (edges, "edge-list CSV")):
        if not Path(p).is_file():
            raise FileNotFoundError(f"{what} {str(p)!r} does not exist; pass csv:DOCS.csv,EDGES.csv with real paths.")
    return SocialCorpus.from_csv(docs, edges, **kwargs)

