"""tempo_analysis.figures.text: the hover text and gap words every figure module uses."""
import math

import pandas as pd
import pytest

from tempo_analysis.figures import overview, stream
from tempo_analysis.figures.text import duration, hover_text


def test_hover_text_wraps_at_the_width_without_breaking_words():
    text = "one two three four five six seven eight nine ten"
    assert hover_text(text, width=9) == "one two<br>three<br>four five<br>six seven<br>eight<br>nine ten"
    assert hover_text("abc def", width=7) == "abc def"          # exactly the width fits on one line
    assert hover_text("abc defg", width=7) == "abc<br>defg"
    assert hover_text("supercalifragilistic is long", width=5) == "supercalifragilistic<br>is<br>long"
    assert hover_text("well-known fact", width=6) == "well-known<br>fact"  # no break at the hyphen
    assert hover_text("a b c", width=1) == "a<br>b<br>c"
    line = "abcd " * 11 + "abc"                                      # 58 characters
    assert hover_text(line + " e") == line + " e"                    # the default width, 60: one line
    assert hover_text(line + " ef") == line + "<br>ef"


def test_hover_text_cuts_long_text_with_an_ellipsis():
    text = " ".join(["word"] * 100)                               # 499 characters
    cut = hover_text(text, width=1000, max_chars=20)
    assert cut == "word word word word…" and len(cut) == 20
    assert hover_text("a" * 20, max_chars=20) == "a" * 20          # at the limit: kept whole
    assert hover_text("a" * 21, max_chars=20) == "a" * 19 + "…"
    assert hover_text(text, width=1000, max_chars=None) == text    # None: no limit
    assert len(hover_text(text, width=1000)) == 400                 # the default limit
    assert hover_text("a" * 500) == "a" * 399 + "…"
    assert hover_text("abc", max_chars=1) == "…"                    # the smallest limit


def test_hover_text_of_nothing_and_of_any_whitespace():
    assert hover_text(None) == hover_text(float("nan")) == hover_text("  \n ") == ""
    assert hover_text("a\n\tb   c") == "a b c"
    assert hover_text(42) == "42"
    with pytest.raises(ValueError, match="width=0"):
        hover_text("x", width=0)
    with pytest.raises(ValueError, match="max_chars=0"):
        hover_text("x", max_chars=0)


def test_hover_text_shows_markup_as_text_and_reads_entities_once():
    # plotly reads hover text as HTML: a post's own "<b>" must not turn bold, "&" must stay "&"
    assert hover_text("a <b>bold</b> claim") == "a &lt;b&gt;bold&lt;/b&gt; claim"
    assert hover_text("Q&A on x<y") == "Q&amp;A on x&lt;y"
    # tweets carry entities already: read once, so the reader sees "&", not "&amp;"
    assert hover_text("Q&amp;A &lt;3") == hover_text("Q&A <3") == "Q&amp;A &lt;3"
    # widths and the cut count what the reader sees, not the escapes
    assert hover_text("a&b c&d", width=3) == "a&amp;b<br>c&amp;d"
    assert hover_text("<<<<<", max_chars=4) == "&lt;&lt;&lt;…"


@pytest.mark.parametrize("seconds, words", [
    (0, "0 s"), (12.4, "12 s"), (59.6, "60 s"), (60, "1.0 min"), (300, "5.0 min"), (3599, "60.0 min"),
    (3600, "1.0 h"), (3 * 3600 + 720, "3.2 h"), (86399, "24.0 h"), (86400, "1.0 d"), (2.1 * 86400, "2.1 d"),
])
def test_duration_uses_the_largest_unit_the_gap_reaches(seconds, words):
    assert duration(seconds) == words


def test_duration_of_no_gap_and_of_a_negative_one():
    assert duration(None) == duration(math.nan) == duration(float("inf")) == ""
    with pytest.raises(ValueError, match="negative"):
        duration(-1.0)


def test_the_overview_hover_says_first_post_and_the_gap():
    t0 = pd.Timestamp("2024-01-01 00:00", tz="UTC")
    df = pd.DataFrame({"timeline_id": ["t", "t"], "post_id": ["p0", "p1"],
                       "timestamp": [t0, t0 + pd.Timedelta(hours=3)], "text": ["x " * 200, "short"],
                       "label": ["O", "IS"]})
    fig = overview.timelines_figure(df).to_dict()
    hovers = [h for t in fig["data"] if t["mode"] == "markers" for h in t["hovertext"]]
    first, second = sorted(hovers, key=lambda h: "p1" in h)
    assert "gap first post" in first and "gap 3.0 h" in second
    assert first.endswith("…") and len(first.split("<br><br>")[1].replace("<br>", " ")) == 240


def test_the_attention_heatmap_labels_keys_by_their_gap_to_the_current_post():
    att = {"attention": [[[[0.5, 0.5], [0.2, 0.8]]]], "gaps": [90.0, 0.0]}
    fig = stream.attention_heatmap(att, texts=["an older post", "the current post"]).to_dict()
    assert list(fig["data"][0]["x"]) == ["0: −1.5 min", "1: now"]
    assert fig["data"][0]["text"][0] == ["an older post", "the current post"]
