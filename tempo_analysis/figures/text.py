"""Text in hovers and tick labels: a post or sentence wrapped for a hover, a time gap in words.

Every figure module uses these two, so a long post reads the same in every notebook's hovers, and
a gap is written the same way on a heatmap's ticks as in the overview's hover.
"""
from __future__ import annotations

import html
import math
import textwrap

ELLIPSIS = "…"
_UNITS = (("d", 86400.0), ("h", 3600.0), ("min", 60.0))


def hover_text(text, width: int = 60, max_chars: int | None = 400) -> str:
    """``text`` for a plotly hover: lines of at most ``width`` characters joined by ``<br>``.

    Longer text is cut to ``max_chars`` characters ending in "…" (None keeps it all), so a long
    document does not fill the plot. Words are not broken (a longer word gets a line of its own);
    None, NaN and blank text give "".

    The text is shown as written, never as markup: HTML entities in it (``&amp;``, as tweets carry)
    are read first, then ``&``, ``<`` and ``>`` are escaped for plotly, which reads hover text as a
    small HTML subset. So "a <b> tag" shows its angle brackets and "Q&amp;A" shows "Q&A". Widths
    and the cut count the characters a reader sees, not the escapes.
    """
    if width < 1:
        raise ValueError(f"hover_text: width={width}; give at least 1 character per line")
    if max_chars is not None and max_chars < 1:
        raise ValueError(f"hover_text: max_chars={max_chars}; give at least 1, or None for no limit")
    if text is None or (isinstance(text, float) and math.isnan(text)):
        return ""
    text = " ".join(html.unescape(str(text)).split())
    if max_chars is not None and len(text) > max_chars:
        text = text[: max_chars - 1].rstrip() + ELLIPSIS
    lines = textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False)
    return "<br>".join(html.escape(line, quote=False) for line in lines)


def duration(seconds) -> str:
    """A time gap in words: "12 s", "5.0 min", "3.2 h", "2.1 d" (the largest unit it reaches).

    None or NaN (no previous post) gives "". A negative gap is refused: gaps here run forward.
    """
    if seconds is None or not math.isfinite(float(seconds)):
        return ""
    seconds = float(seconds)
    if seconds < 0:
        raise ValueError(f"duration: seconds={seconds:g} is negative; a gap is the time since the previous post")
    for unit, size in _UNITS:
        if seconds >= size:
            return f"{seconds / size:.1f} {unit}"
    return f"{seconds:.0f} s"
