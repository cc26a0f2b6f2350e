"""The pseudoword benchmark's sources on tiny synthetic folders (no real data needed): a missing
source is named in a warning and recorded in the benchmark, and bytes that are not UTF-8 are counted
per file, instead of the benchmark silently changing with the folders a machine happens to have."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from tempo_analysis import resolve
from tempo_analysis.data.loaders.pseudoword import PseudowordConfig, build_pseudoword, read_sources

NOUNS = ("table", "river", "garden", "window", "apple", "engine", "island", "office")
TINY = dict(n_targets=2, control_share=0.5, min_count=1, max_count=1000, p_max=0.5)


def write_shared(root: Path, n_brown: int = 12, sources=("brown",)) -> Path:
    """A shared data folder: Brown files where every noun of NOUNS is in 3 sentences, plus ``sources``."""
    corpora = root / "nltk_data" / "corpora"
    (corpora / "brown").mkdir(parents=True)
    for i in range(n_brown):
        lines = [f"The/at {w}/nn near/in the/at road/nn was/bedz fine/jj ./." for w in NOUNS for _ in range(3)]
        (corpora / "brown" / f"ca{i + 1:02d}").write_text("\n".join(lines) + "\n")
    text = "The river ran past the old garden and the island. The engine of the mill was loud today."
    if "gutenberg" in sources:
        (corpora / "gutenberg").mkdir()
        (corpora / "gutenberg" / "austen-emma.txt").write_text(f"[Emma by Jane Austen 1816]\n\n{text}\n")
    for name in ("state_union", "inaugural"):
        if name in sources:
            (corpora / name).mkdir()
            (corpora / name / "1945-Truman.txt").write_text(text + "\n")
    if "acl" in sources:
        (root / "acl_abstracts_by_year").mkdir()
        (root / "acl_abstracts_by_year" / "papers_2005.txt").write_text(text + "\n")
    return root


def test_missing_sources_are_named_and_recorded_in_the_benchmark(tmp_path):
    root = write_shared(tmp_path, sources=("brown", "inaugural"))
    (root / "nltk_data" / "corpora" / "state_union").mkdir()           # there, but empty
    with pytest.warns(UserWarning, match=r"pseudoword: source\(s\) missing.*gutenberg \(.*gutenberg does not exist\); "
                                         r"state_union \(.*state_union has no \*\.txt files\); acl2005 \("
                                         r".*papers_2005\.txt does not exist\)") as seen:
        b = build_pseudoword(root, PseudowordConfig(**TINY))
    assert not any("inaugural (" in str(w.message) for w in seen)
    assert b.sources == {"brown": 12, "inaugural": 1}
    assert [m.split(" ")[0] for m in b.missing_sources] == ["gutenberg", "state_union", "acl2005"]
    assert b.notes[0] == "sources (documents): brown 12, inaugural 1"
    assert re.search(r"missing sources, built without them: gutenberg .*state_union .*acl2005", b.notes[1])


def test_every_source_present_gives_no_warning_and_acl_year_none_does_not_ask_for_acl(tmp_path, recwarn):
    root = write_shared(tmp_path, sources=("brown", "gutenberg", "state_union", "inaugural", "acl"))
    b = build_pseudoword(root, PseudowordConfig(**TINY))
    assert b.sources == {"brown": 12, "gutenberg": 1, "state_union": 1, "inaugural": 1, "acl2005": 1}
    assert b.missing_sources == [] and len(b.notes) == 1
    (root / "acl_abstracts_by_year" / "papers_2005.txt").unlink()
    read_sources(root, acl_year=None)
    assert not [str(w.message) for w in recwarn.list]


def test_the_change_spec_carries_the_sources_into_its_notes(tmp_path, monkeypatch):
    root = write_shared(tmp_path)
    monkeypatch.setattr(resolve, "PseudowordConfig", lambda **kw: PseudowordConfig(**{**TINY, **kw}))
    with pytest.warns(UserWarning, match="source\\(s\\) missing"):
        d = resolve.load_change_data(f"pseudoword:{root}").data
    assert "sources (documents): brown 12" in d.notes and any(n.startswith("missing sources") for n in d.notes)


def test_bytes_that_are_not_utf8_are_counted_per_file_and_the_text_is_unchanged(tmp_path):
    root = write_shared(tmp_path, sources=("brown", "gutenberg", "state_union", "inaugural", "acl"))
    speech = root / "nltk_data" / "corpora" / "inaugural" / "1945-Truman.txt"
    speech.write_bytes(b"The river ran past the caf\xe9 and the \x92old\x92 garden today.\n")
    info: dict = {}
    with pytest.warns(UserWarning, match=r"pseudoword sources: 3 byte sequence\(s\) that are not UTF-8 .* in 1 "
                                         r"file\(s\): inaugural/1945-Truman\.txt \(3\)"):
        docs, _ = read_sources(root, info=info)
    assert info["replaced"] == {"inaugural/1945-Truman.txt": 3}
    assert dict(docs)["inaugural-1945-Truman"] == ["The river ran past the caf\ufffd and the \ufffdold\ufffd garden today."]
    with pytest.warns(UserWarning, match="inaugural/1945-Truman"):
        b = build_pseudoword(root, PseudowordConfig(**TINY))
    assert b.replaced_characters == {"inaugural/1945-Truman.txt": 3}
    assert any("inaugural/1945-Truman.txt: 3" in n for n in b.notes)
