"""SemEval-2020 Task 1, DWUG and NLTK two-era loaders, including their bad-input messages, and the
``--data`` spec loader (tempo_analysis.resolve.load_change_data) with the world rule."""
import gzip
import shutil
from pathlib import Path

import pytest

from tempo_analysis.data import DataError, PeriodCorpus, locations
from tempo_analysis.data.change import ChangeData
from tempo_analysis.data.loaders.dwug import find_stats_file, load_dwug
from tempo_analysis.data.loaders.nltk_corpora import frequent_targets, load_nltk_eras, read_brown
from tempo_analysis.data.loaders.semeval import load_semeval, strip_pos
from tempo_analysis.resolve import load_change_data

FIX = Path(__file__).parent / "fixtures"
SHARED = locations.shared_data_dir()          # $TEMPO_ANALYSIS_SHARED_DATA, else shared/data above the checkout
NLTK = SHARED / "nltk_data" / "corpora" if SHARED is not None else None


def write_semeval(root: Path, targets=("plane_nn", "tip_vb", "risk_nn")):
    for i, lines in enumerate([["the plane_nn of the table was smooth", "he tip_vb his hat", "no target here",
                                "a risk_nn was taken"],
                               ["the plane_nn landed", "we tip_vb the waiter", "tip_vb generously",
                                "more text without targets"]], 1):
        d = root / f"corpus{i}" / "lemma"
        d.mkdir(parents=True)
        with gzip.open(d / f"ccoha{i}.txt.gz", "wt", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
    (root / "targets.txt").write_text("\n".join(targets) + "\n")
    (root / "truth").mkdir()
    (root / "truth" / "graded.txt").write_text("plane_nn\t0.88\ntip_vb\t0.68\nrisk_nn\t0.05\n")
    (root / "truth" / "binary.txt").write_text("plane_nn\t1\ntip_vb\t1\nrisk_nn\t0\n")
    return root


def test_strip_pos():
    assert strip_pos("plane_nn") == ("plane", "nn")
    assert strip_pos("tip_vb") == ("tip", "vb")
    assert strip_pos("Abend") == ("Abend", None)
    assert strip_pos("well_known") == ("well_known", None)      # not a POS tag: kept


def test_semeval_layout_pos_suffixes_mapped(tmp_path):
    d = load_semeval(write_semeval(tmp_path))
    assert isinstance(d.corpus, PeriodCorpus) and d.corpus.periods == ["corpus1", "corpus2"]
    assert d.targets == ["plane", "tip", "risk"] and d.target_map["plane"] == "plane_nn"
    texts = d.corpus.df["text"].tolist()
    assert "the plane of the table was smooth" in texts and not any("_nn" in t or "_vb" in t for t in texts)
    assert "no target here" not in texts                         # keep="targets" default
    assert d.truth.set_index("word").loc["plane", "graded"] == pytest.approx(0.88)
    assert d.truth.set_index("word").loc["risk", "binary"] == 0
    u = d.corpus.find_usages("tip")
    assert {x.period for x in u} == {"corpus1", "corpus2"}
    assert [x.surface for x in u] == ["tip"] * 3
    # a target absent from one period is visible, not hidden: risk only in corpus1
    assert {x.period for x in d.corpus.find_usages("risk")} == {"corpus1"}
    everything = load_semeval(tmp_path, keep="all")
    assert "no target here" in everything.corpus.df["text"].tolist()


def test_semeval_bad_input(tmp_path):
    with pytest.raises(DataError, match="does not exist"):
        load_semeval(tmp_path / "nope")
    root = write_semeval(tmp_path / "a", targets=("plane_nn", "plane_vb"))
    with pytest.raises(DataError, match="pos='keep'"):
        load_semeval(root)
    (tmp_path / "b").mkdir()
    with pytest.raises(DataError, match="targets.txt"):
        load_semeval(tmp_path / "b")


def test_dwug_fixture_prefers_opt_stats():
    root = FIX / "dwug"
    assert find_stats_file(root).parts[-2] == "opt"
    d = load_dwug(root)
    assert d.targets == ["plane", "risk", "tip"]
    assert len(d.usages) == 24 and all(u.surface.lower() == u.word for u in d.usages)
    assert d.corpus.periods == ["1", "2"]
    t = d.truth.set_index("word")
    assert t.loc["plane", "graded"] == pytest.approx(0.88) and t.loc["risk", "graded"] == pytest.approx(0.05)
    assert t.loc["tip", "binary"] == 1


def _copy_dwug(tmp_path):
    dst = tmp_path / "dwug"
    shutil.copytree(FIX / "dwug", dst)
    return dst


def test_dwug_offsets_that_do_not_match_the_sentence(tmp_path):
    root = _copy_dwug(tmp_path)
    f = root / "data" / "plane_nn" / "uses.csv"
    lines = f.read_text().splitlines()
    cells = lines[1].split("\t")
    cells[7] = "41:46"                                   # shifted by one: cuts "plane" in half
    lines[1] = "\t".join(cells)
    f.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match="indexes_target_token.*not a whole word"):
        load_dwug(root)
    cells[7] = "400:405"                                 # out of range: skipped and counted, not fatal
    lines[1] = "\t".join(cells)
    f.write_text("\n".join(lines) + "\n")
    with pytest.warns(UserWarning, match="skipped 1 DWUG usage.*outside the context"):
        load_dwug(root)
    cells[7] = "forty"
    lines[1] = "\t".join(cells)
    f.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match="start:end"):
        load_dwug(root)


def test_dwug_missing_column_and_folder(tmp_path):
    with pytest.raises(DataError, match="data/<lemma>/uses.csv"):
        load_dwug(tmp_path)
    root = _copy_dwug(tmp_path)
    f = root / "data" / "tip_vb" / "uses.csv"
    f.write_text(f.read_text().replace("indexes_target_token\t", "offsets\t", 1))
    with pytest.raises(DataError, match="indexes_target_token"):
        load_dwug(root)


@pytest.mark.realdata
def test_nltk_gutenberg_vs_brown():
    if NLTK is None or not (NLTK / "gutenberg").is_dir() or not (NLTK / "brown").is_dir():
        pytest.skip(f"NLTK corpora not found at {NLTK or 'shared/data/nltk_data/corpora'} (absent from the shared "
                    f"data folder, or no such folder here: set ${locations.ENV_SHARED_DATA}): real-data check skipped")
    brown = read_brown(NLTK / "brown")
    assert len(brown) > 40000 and not any("/at" in s for s in brown[:200])
    c = load_nltk_eras(NLTK, max_sentences_per_period=3000, seed=0)
    assert c.periods == ["gutenberg", "brown"]
    assert (c.df["period"].value_counts() == 3000).all()
    assert "house" in frequent_targets(c, ("house", "broadcast"), min_count=5)


def test_nltk_bad_folder(tmp_path):
    with pytest.raises(DataError, match="does not exist"):
        load_nltk_eras(tmp_path / "missing")
    (tmp_path / "gutenberg").mkdir()
    with pytest.raises(DataError, match="gutenberg"):
        load_nltk_eras(tmp_path)


def write_nltk(root: Path):
    """A tiny NLTK ``corpora`` folder: one Gutenberg book and one Brown file."""
    (root / "gutenberg").mkdir(parents=True)
    (root / "gutenberg" / "austen-emma.txt").write_text(
        "[Emma by Jane Austen 1816]\n\nThe cell of the old monk was cold. He walked to the house by night.\n")
    (root / "brown").mkdir()
    (root / "brown" / "ca01").write_text("The/at cell/nn phone/nn rang/vbd in/in the/at house/nn ./.\n")
    return root


def test_change_spec_world_reads_the_committed_world():
    data = load_change_data("world").data
    assert isinstance(data, ChangeData) and data.name == "world" and data.compared == ["old", "new"]
    assert len(data.usages) == int((data.corpus.df["probe"] == 0).sum()) and data.targets == data.truth["word"].tolist()
    assert {u.doc_id for u in data.usages} <= set(data.corpus.df["doc_id"])          # the sense-bearing usages
    probes = data.probe_part()
    assert len(probes.usages) == int((data.corpus.df["probe"] == 1).sum()) and probes.corpus is data.corpus


def test_change_spec_world_rule(tmp_path, monkeypatch):
    committed = load_change_data("world").data
    monkeypatch.setenv(locations.ENV_DATA, str(tmp_path))          # no world on disk: generated, with a warning
    with pytest.warns(UserWarning, match="generating the default world"):
        generated = load_change_data("world").data
    assert generated.targets == committed.targets and generated.usages == committed.usages
    (tmp_path / "world").mkdir()
    (tmp_path / "world" / "config.json").write_text("{}")           # a broken world raises, never regenerated
    with pytest.raises((FileNotFoundError, ValueError)):
        load_change_data("world")
    with pytest.raises(FileNotFoundError):
        load_change_data(f"world:{tmp_path / 'elsewhere'}")


def test_change_spec_folders_and_bad_specs(tmp_path, monkeypatch):
    d = load_change_data(f"semeval:{write_semeval(tmp_path / 'semeval')}", targets=["plane_nn"]).data
    assert d.name.startswith("semeval:") and d.targets == ["plane"] and d.truth is not None
    with pytest.raises(DataError, match="names no folder"):
        load_change_data("semeval")
    with pytest.raises(DataError, match="names no folder"):
        load_change_data("dwug")
    with pytest.raises(DataError, match=r"world\[:DIR\], semeval:DIR, dwug:DIR, nltk\[:DIR\]"):
        load_change_data("csv:x.csv")
    # nltk without a folder: shared/data/nltk_data/corpora
    write_nltk(tmp_path / "shared" / "nltk_data" / "corpora")
    monkeypatch.setenv(locations.ENV_SHARED_DATA, str(tmp_path / "shared"))
    d = load_change_data("nltk", targets=["cell", "house"]).data
    assert d.periods == ["gutenberg", "brown"] and d.targets == ["cell", "house"] and d.truth is None
    assert d.name == f"nltk:{tmp_path / 'shared' / 'nltk_data' / 'corpora'}"
    given = load_change_data(f"nltk:{tmp_path / 'shared' / 'nltk_data' / 'corpora'}", targets=["cell", "house"]).data
    assert given.corpus.df.equals(d.corpus.df)      # (no targets= here: no demo word is frequent, a DataError)


def test_semeval_frequencies_divide_by_the_whole_period_not_the_kept_sentences(tmp_path):
    """keep="targets" keeps only target-bearing sentences; a target's relative frequency is still per
    sentence of the whole period (one target's rise must not move another's score)."""
    import numpy as np

    from tempo_analysis.semantic_change.baselines import frequency_change

    periods = [["alpha one", "beta two"] + [f"filler {i}" for i in range(8)],                  # 10 sentences
               ["alpha one"] + [f"beta {i}" for i in range(5)] + [f"filler {i}" for i in range(4)]]
    for i, lines in enumerate(periods, 1):
        d = tmp_path / f"corpus{i}" / "lemma"
        d.mkdir(parents=True)
        with gzip.open(d / f"c{i}.txt.gz", "wt", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
    (tmp_path / "targets.txt").write_text("alpha\nbeta\n")
    raw = load_semeval(tmp_path)
    assert len(raw.corpus) == 2 + 6 and raw.period_sizes == {"corpus1": 10.0, "corpus2": 10.0}
    out = frequency_change(load_change_data(f"semeval:{tmp_path}").data).set_index("word")
    assert out.loc["alpha", "score"] == pytest.approx(0.0)                    # 1 in 10 in both periods
    assert out.loc["beta", "score"] == pytest.approx(np.log2(5.5 / 1.5))
    sampled = load_semeval(tmp_path, max_sentences_per_period=1, seed=0)      # 1 of 2 and 1 of 6 kept
    assert sampled.period_sizes == {"corpus1": 5.0, "corpus2": pytest.approx(10 / 6)}


def test_nltk_bytes_that_are_not_utf8_are_replaced_counted_and_named(tmp_path):
    """The text stays what errors="replace" reads, and the load names the file and the count (it was silent)."""
    root = write_nltk(tmp_path)
    book = root / "gutenberg" / "austen-emma.txt"
    book.write_bytes(book.read_bytes().replace(b"old monk", b"old caf\xe9 monk \xff"))
    with pytest.warns(UserWarning, match=r"2 byte sequence\(s\) that are not UTF-8 .* gutenberg/austen-emma\.txt \(2\)"):
        c = load_nltk_eras(root)
    assert c.df.attrs["replaced_characters"] == {"gutenberg/austen-emma.txt": 2}
    assert "The cell of the old caf\ufffd monk \ufffd was cold." in c.df["text"].tolist()
    with pytest.warns(UserWarning, match=r"austen-emma\.txt \(2\)"):
        d = load_change_data(f"nltk:{root}", targets=["cell"]).data
    assert any("austen-emma.txt: 2" in n for n in d.notes)


def write_nltk_house(root: Path, n_old: int = 15, n_new: int = 15):
    """Gutenberg and Brown with ``house`` in n_old / n_new sentences and ``car`` in 3 Brown sentences."""
    (root / "gutenberg").mkdir(parents=True)
    book = "\n\n".join(f"The old house number {i} stood on the hill." for i in range(n_old))
    (root / "gutenberg" / "austen-emma.txt").write_text(f"[Emma by Jane Austen 1816]\n\n{book}\n")
    (root / "brown").mkdir()
    lines = [f"The/at house/nn number/nn {i}/cd stood/vbd there/rb ./." for i in range(n_new)]
    lines += ["The/at red/jj car/nn stood/vbd there/rb ./."] * 3
    (root / "brown" / "ca01").write_text("\n".join(lines) + "\n")
    return root


def test_nltk_demo_targets_name_the_dropped_words_and_refuse_an_empty_list(tmp_path):
    """--data nltk ranks the DEMO_WORDS frequent in both eras: the others are named with their counts (a
    warning and a note), and no word left is a DataError naming the fix (it was an empty ranking)."""
    root = write_nltk_house(tmp_path / "a")
    with pytest.warns(UserWarning, match=r"nltk targets: 23 of 24 target word\(s\) occur in fewer than min_count=15 "
                                         r"sentences.*car \(gutenberg 0, brown 3\)"):
        d = load_change_data(f"nltk:{root}").data
    assert d.targets == ["house"] and any("car (gutenberg 0, brown 3)" in n for n in d.notes)
    few = write_nltk_house(tmp_path / "b", n_old=14)
    with pytest.raises(DataError, match=r"none of the 24 word\(s\) occurs in at least min_count=15.*house "
                                        r"\(gutenberg 14, brown 15\).*larger max_sentences_per_period"):
        load_change_data(f"nltk:{few}")
    with pytest.raises(DataError, match=r"max_sentences_per_period=5 keeps too few sentences"):
        load_change_data(f"nltk:{root}", max_sentences_per_period=5)
    assert load_change_data(f"nltk:{few}", targets=["house"]).data.targets == ["house"]     # given words: no filter
    with pytest.warns(UserWarning, match=r"frequent_targets: 1 of 2 .*car \(gutenberg 0, brown 3\)"):
        assert frequent_targets(load_nltk_eras(root), ("house", "car"), min_count=3) == ["house"]


@pytest.mark.parametrize("kind", ["world", "nltk", "semeval", "dwug"])
def test_change_specs_with_a_second_folder_are_refused(kind, tmp_path):
    """``semeval:/a,/b`` read /a and ignored /b, silently; every one-folder spec now refuses it."""
    with pytest.raises(DataError, match=rf"--data '{kind}:{tmp_path},{tmp_path}': give one folder; .*Fix: give "
                                        rf"one folder, e\.g\. {kind}:"):
        load_change_data(f"{kind}:{tmp_path},{tmp_path}")


def _usage_corpus(probe=None):
    import pandas as pd

    df = pd.DataFrame({"period": ["old", "old", "new", "new"], "text": ["a cell", "the cell", "a cell", "cell on"],
                       "word": ["cell"] * 4, "start": [2, 4, 2, 0], "end": [6, 8, 6, 4]})
    if probe is not None:
        df["probe"] = probe
    return PeriodCorpus.from_frame(df, order=["old", "new"])


def test_usage_corpora_rank_the_unmarked_rows_and_the_probe_part_the_marked_ones():
    import pandas as pd

    from tempo_analysis.data.errors import DataError

    truth = pd.DataFrame({"word": ["cell"], "graded": [0.5]})
    for probe in (None, [0, 0, 0, 0]):                       # no probe column, or no row marked: every row
        data = ChangeData.from_usage_corpus("u", _usage_corpus(probe), truth)
        assert [u.text for u in data.usages] == ["a cell", "the cell", "a cell", "cell on"]
        with pytest.raises(DataError, match="no probe sentences"):
            data.probe_part()
    marked = ChangeData.from_usage_corpus("u", _usage_corpus([1, 0, 1, 0]), truth)
    assert [(u.period, u.text) for u in marked.usages] == [("old", "the cell"), ("new", "cell on")]
    probes = marked.probe_part()
    assert [(u.period, u.text) for u in probes.usages] == [("old", "a cell"), ("new", "a cell")]
    assert probes.name == "u:probes" and probes.corpus is marked.corpus
    with pytest.raises(ValueError, match="part="):
        ChangeData.from_usage_corpus("u", _usage_corpus([1, 0, 1, 0]), truth, part="all")


def test_sentences_per_period_reads_the_loaders_sizes_where_given_else_the_corpus():
    data = ChangeData("u", _usage_corpus(), ["cell"])
    assert data.sentences_per_period() == {"old": 2.0, "new": 2.0}
    data.period_sizes = {"old": 100}
    assert data.sentences_per_period() == {"old": 100.0, "new": 2.0}


def test_a_byte_order_mark_is_not_part_of_the_first_target_or_truth_word(tmp_path):
    root = write_semeval(tmp_path)
    for name in ("targets.txt", "truth/graded.txt", "truth/binary.txt"):
        f = root / name
        f.write_bytes(b"\xef\xbb\xbf" + f.read_bytes())          # as Notepad saves UTF-8
    d = load_semeval(root)
    assert d.targets == ["plane", "tip", "risk"] and d.target_map["plane"] == "plane_nn"
    assert d.truth.set_index("word").loc["plane", "graded"] == pytest.approx(0.88)
