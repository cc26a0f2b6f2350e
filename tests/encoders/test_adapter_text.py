"""The MLM adapter's training text is disjoint from every evaluation the project reports.

The rule (``encoder_mlm.ADAPTER_TEXT``) is checked against the settings the evaluations read their
text with, so moving an evaluation onto the adapter's text (or the adapter onto an evaluation's)
fails here; the shipped asset must say it was trained under that rule; and, with the shared data
present, no abstract the adapter reads is one an evaluation reads.
"""
from pathlib import Path

import pytest

from tempo_analysis.data.loaders.acl_abstracts import ACL_SPLIT
from tempo_analysis.data.loaders.pseudoword import PseudowordConfig, read_sources
from tempo_analysis.data.locations import shared_data_dir
from tempo_analysis.encoder_mlm import ADAPTER_TEXT, ASSET, adapter_text_rule, general_text, load_adapter


def _years(first_last):
    return set(range(first_last[0], first_last[1] + 1))


def evaluation_acl_years() -> dict[str, set[int]]:
    """ACL years each reported evaluation reads, from the settings the library runs them with."""
    from tempo_analysis import real_text
    from tempo_analysis.cli.diffusion import ACL_DEFAULTS, _years as parse_years

    return {
        "pseudoword benchmark": {PseudowordConfig().acl_year},
        "diffusion on ACL (CLI default)": set(parse_years(ACL_DEFAULTS["years"])),
        "future text dev and test": {ACL_SPLIT["dev"], ACL_SPLIT["test"]},
        "lesson 05 semantic change": set().union(*(_years(v) for v in real_text.PERIODS.values())),
        "lesson 05 diffusion": set(real_text.SPREAD_YEARS),
    }


def test_the_adapters_acl_years_are_read_by_no_evaluation():
    ours = set(ADAPTER_TEXT["acl_years"])
    assert ours, "the adapter trains on some ACL years"
    for what, years in evaluation_acl_years().items():
        assert not ours & years, f"{what} reads ACL {sorted(ours & years)}, which the adapter trains on"


def _shared_tree(root: Path) -> Path:
    """Every source the shared data folder holds, one small file each, in the original formats."""
    corpora = root / "nltk_data" / "corpora"
    for name in ("gutenberg", "inaugural", "state_union"):
        (corpora / name).mkdir(parents=True)
        (corpora / name / "a.txt").write_text(f"[{name} 1900]\n\nThe {name} text has a sentence here.\n")
    (corpora / "switchboard").mkdir()
    (corpora / "switchboard" / "transcript").write_text("A.1: well i think so too\n")
    (corpora / "brown").mkdir()
    (corpora / "brown" / "ca01").write_text("\tThe/at dog/nn ran/vbd home/nn ./.\n")
    (root / "acl_abstracts_by_year").mkdir()
    for year in range(2000, 2022):
        (root / "acl_abstracts_by_year" / f"papers_{year}.txt").write_text(f"We study parsing in {year}.\n")
    return root


def test_the_adapter_reads_no_source_the_pseudoword_benchmark_or_the_brown_figure_reads(tmp_path):
    root = _shared_tree(tmp_path)
    ours = {source for source, _ in general_text(root)}
    info = {}
    read_sources(root, PseudowordConfig().acl_year, info=info)
    theirs = set(info["sources"]) | {"brown"}                     # brown: the held-out masked-LM figure
    assert "gutenberg" in theirs and f"acl{PseudowordConfig().acl_year}" in theirs
    assert ours == {"switchboard"} | {f"acl{y}" for y in ADAPTER_TEXT["acl_years"]}
    assert not ours & theirs


def test_the_shipped_adapter_was_trained_under_the_rule():
    _, _, meta = load_adapter(ASSET)
    assert meta.get("text") == adapter_text_rule(), (
        "the shipped adapter's recorded training text is not ADAPTER_TEXT; retrain it with "
        "scripts/train_mlm_adapter.py")
    assert meta.get("held_out") == "brown (evaluation)"


def test_no_abstract_the_adapter_reads_is_in_an_evaluation_year():
    root = shared_data_dir()
    folder = root / "acl_abstracts_by_year" if root is not None else None
    if folder is None or not folder.is_dir():
        pytest.skip("needs ../shared/data/acl_abstracts_by_year (the shared data folder is absent)")

    def abstracts(year):
        f = folder / f"papers_{year}.txt"
        return {" ".join(line.split()) for line in f.read_text(encoding="utf-8", errors="replace").splitlines()
                if line.strip()} if f.is_file() else set()

    ours = set().union(*(abstracts(y) for y in ADAPTER_TEXT["acl_years"]))
    assert len(ours) > 10_000
    for years in evaluation_acl_years().values():
        for y in years:
            assert not ours & abstracts(y), f"ACL {y} shares abstracts with the adapter's text"
