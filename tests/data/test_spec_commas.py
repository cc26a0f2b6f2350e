"""A file or folder whose name holds a comma can be given in a data spec: a path that exists as a whole
is one part, before the spec is split on commas (``csv:comma,name.csv``)."""
from __future__ import annotations

from tempo_analysis.cli import main
from tempo_analysis.data import specs

USAGES = {"csv": "csv:FILE", "acl": "acl:A,B"}


def test_a_path_with_a_comma_that_exists_is_one_part(tmp_path):
    path = tmp_path / "comma,name.csv"
    path.write_text("x\n")
    assert specs.parse_spec(f"csv:{path}", USAGES).parts == (str(path),)


def test_two_files_split_at_the_comma_between_them_even_when_one_name_holds_a_comma(tmp_path):
    docs, edges = tmp_path / "my,docs.csv", tmp_path / "edges.csv"
    docs.write_text("x\n")
    edges.write_text("x\n")
    assert specs.parse_spec(f"csv:{docs},{edges}", USAGES).parts == (str(docs), str(edges))
    assert specs.parse_spec(f"csv:{docs}, {edges}", USAGES).parts == (str(docs), str(edges))


def test_parts_that_do_not_exist_still_split_on_commas(tmp_path):
    assert specs.parse_spec("acl:A, B", USAGES).parts == ("A", "B")
    assert specs.parse_spec(f"csv:{tmp_path}/no,such.csv", USAGES).parts == (f"{tmp_path}/no", "such.csv")
    assert specs.parse_spec("csv:a.csv,,", USAGES).parts == ("a.csv",)


def test_the_cli_reads_a_file_named_with_a_comma(tmp_path, monkeypatch, capsys):
    """`stream evaluate --data csv:DIR/comma,name.csv` reads the file (it used to look for DIR/comma)."""
    path = tmp_path / "comma,name.csv"
    path.write_text("timeline_id,post_id,timestamp,text,label\nt1,a,2017-01-01,one,O\nt1,b,2017-01-02,two,IS\n"
                    "t2,c,2017-01-03,three,O\nt2,d,2017-01-04,four,IS\n")
    seen = {}

    def cross_validate(make, tl, **kwargs):
        seen["posts"] = len(tl)
        raise ValueError("stop here")

    monkeypatch.setattr("tempo_analysis.evaluation.classification.cross_validate", cross_validate)
    rc = main(["stream", "evaluate", "--baseline", "random", "--data", f"csv:{path}", "--out", str(tmp_path / "r.json")])
    assert rc == 2 and "stop here" in capsys.readouterr().err
    assert seen == {"posts": 4}
