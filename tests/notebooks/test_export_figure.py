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


@pytest.fixture
def _no_name(monkeypatch):
    """A kernel that nothing names (Voila, nbconvert): no env, no Jupyter session, no set_notebook."""
    for var in (nbk.ENV_NOTEBOOK, "JPY_SESSION_NAME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(nbk, "_current_notebook", None)


def test_without_a_name_the_export_says_how_to_give_one(tmp_path, _no_name):
    with pytest.raises(ValueError, match=r"set_notebook\('00_overview'\)"):
        nbk.export_figure(_fig(), "gaps", folder=tmp_path)
    assert os.listdir(tmp_path) == []


def test_set_notebook_names_the_figures_and_the_summary_where_no_server_does(tmp_path, monkeypatch, _no_name):
    monkeypatch.setattr("IPython.display.display", lambda obj: None)
    monkeypatch.setenv(nbk.ENV_FIGURES, str(tmp_path / "figs"))
    monkeypatch.setenv(nbk.ENV_SUMMARY, str(tmp_path / "summary.json"))
    assert nbk.set_notebook("03_social_diffusion.ipynb") == "03_social_diffusion"
    nbk.show(_fig(), "diffusion_map")
    assert (tmp_path / "figs" / "03_diffusion_map.html").is_file()
    nbk.record_summary({"diffusion.n": 1})
    assert "03_social_diffusion" in nbk.read_summary(tmp_path / "summary.json")["notebooks"]
    # an explicit name still wins
    assert nbk.export_figure(_fig(), "x", notebook="04_future_text").name == "04_x.html"


@pytest.mark.parametrize("name", ["", "a b", "../03", None])
def test_set_notebook_refuses_what_is_not_a_notebook_name(name, _no_name):
    with pytest.raises(ValueError, match="set_notebook: name="):
        nbk.set_notebook(name)
    assert nbk._current_notebook is None


def test_show_still_shows_a_figure_it_cannot_write_and_says_so(tmp_path, monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj: shown.append(obj))
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(nbk.ENV_FIGURES, str(blocker / "figs"))  # cannot be created
    fig = _fig()
    with pytest.warns(UserWarning, match=r"'gaps' is shown but was not exported.*TEMPO_ANALYSIS_FIGURES"):
        nbk.show(fig, "gaps", notebook="00_overview")
    assert shown == [fig]
