"""tempo_analysis.notebook.export_figure: standalone HTML files of a lesson's figures."""
import os
import re

import plotly.graph_objects as go
import pytest

from tempo_analysis import notebook as nbk


def _fig():
    return go.Figure(go.Scatter(x=[1, 2, 3], y=[3, 1, 2], name="spread"), layout={"title": "r-hat by slice"})


def test_writes_a_standalone_file_named_by_the_notebook_number(tmp_path, monkeypatch):
    monkeypatch.setenv(nbk.ENV_SUMMARY, str(tmp_path / "out" / "summary.json"))
    monkeypatch.delenv(nbk.ENV_FIGURES, raising=False)
    path = nbk.export_figure(_fig(), "diffusion_map", notebook="05_real_text")
    assert path == tmp_path / "out" / "figures" / "05_diffusion_map.html"
    html = path.read_text(encoding="utf-8")
    # plotly.js itself is in the file (no CDN link), so it opens offline
    assert not re.search(r"<script[^>]*\bsrc=[\"']?https?:", html) and "plotly.js v" in html
    assert len(html) > 1_000_000 and "r-hat by slice" in html and "spread" in html
    assert [p.name for p in path.parent.iterdir()] == [path.name], "no temporary file is left behind"


def test_a_figure_widget_and_the_env_folder(tmp_path, monkeypatch):
    monkeypatch.setenv(nbk.ENV_FIGURES, str(tmp_path / "figs"))
    monkeypatch.setenv(nbk.ENV_NOTEBOOK, "02_semantic_change.ipynb")
    first = nbk.export_figure(go.FigureWidget(_fig()), "ranking")
    assert first == tmp_path / "figs" / "02_ranking.html" and first.is_file()
    again = nbk.export_figure(go.Figure(go.Bar(x=["a"], y=[1], name="newer")), "ranking")
    assert again == first and "newer" in first.read_text(encoding="utf-8"), "a rerun replaces the file"


@pytest.mark.parametrize("name", ["", "../up", "a b", "x.html", "_hidden"])
def test_bad_names_are_refused_before_writing(tmp_path, name):
    with pytest.raises(ValueError, match="export_figure: name="):
        nbk.export_figure(_fig(), name, notebook="01_x", folder=tmp_path)
    assert os.listdir(tmp_path) == []


def test_not_a_figure_is_refused(tmp_path):
    with pytest.raises(TypeError, match="give a plotly Figure"):
        nbk.export_figure({"data": []}, "thing", notebook="01_x", folder=tmp_path)


def test_show_displays_the_figure_and_exports_it(tmp_path, monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj: shown.append(obj))
    monkeypatch.setenv(nbk.ENV_FIGURES, str(tmp_path))
    fig = go.FigureWidget(_fig())
    assert nbk.show(fig, "gaps", notebook="00_overview") is None
    assert shown == [fig], "the live widget itself is displayed"
    assert (tmp_path / "00_gaps.html").is_file()
