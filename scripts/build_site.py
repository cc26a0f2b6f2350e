#!/usr/bin/env python
"""Build a static site of the executed notebooks: build/site/index.html and one page per lesson.

    python scripts/build_site.py                   # executed notebooks from build/ -> build/site/
    python scripts/build_site.py --executed DIR --out DIR

`make site` runs this after `make demo`: it reads the executed copies that `make demo` wrote
(build/<name>.ipynb) and executes, headless, any notebook that has none newer than its source
(with the lesson cache that `make site` passes, and make demo's time budget). A copy whose run
failed (its status in summary.json, or an error in one of its cells) is never published: the
script stops with exit 1 and names it, before writing any page. Every plotly figure
stays interactive (plotly.js is inlined once per page, so the site works offline); widgets are
shown as their static fallback. A student without Python can read the lessons there.
"""
from __future__ import annotations

import argparse
import html
import re
import sys
from pathlib import Path

import nbformat

import notebook_exec as nbx
from run_notebooks import DEFAULT_TIMEOUT, export_html

from tempo_analysis import notebook as nbk
from tempo_analysis.data.locations import project_root

STYLE = """
<style>
  .ta-nav { font: 15px/1.4 system-ui, sans-serif; padding: 10px 24px; background: #1f2937; color: #f9fafb; }
  .ta-nav a { color: #93c5fd; margin-right: 18px; text-decoration: none; }
  .ta-nav a.ta-here { color: #fff; font-weight: 600; }
  body.ta-index { font: 16px/1.5 system-ui, sans-serif; max-width: 860px; margin: 0 auto; padding: 0 24px 48px; }
  .ta-card { border: 1px solid #e5e7eb; border-radius: 8px; padding: 14px 18px; margin: 14px 0; }
  .ta-card h2 { margin: 0 0 6px; font-size: 20px; }
</style>
"""


def title_and_blurb(nb) -> tuple[str, str]:
    """The notebook's first markdown heading and the first paragraph after it (plain text)."""
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        lines = cell.source.strip().splitlines()
        if lines and lines[0].startswith("#"):
            title = lines[0].lstrip("#").strip()
            rest = "\n".join(lines[1:]).strip().split("\n\n")[0]
            return title, re.sub(r"[*_`]", "", rest).strip()
    return "", ""


def nav(pages: list[tuple[str, str]], here: str) -> str:
    links = [f'<a href="index.html"{" class=ta-here" if here == "index" else ""}>tempo_analysis lessons</a>']
    links += [f'<a href="{name}.html"{" class=ta-here" if name == here else ""}>{html.escape(title)}</a>'
              for name, title in pages]
    return f'<nav class="ta-nav">{"".join(links)}</nav>'


def write_page(nb, path: Path, nav_html: str) -> None:
    export_html(nb, path)
    text = path.read_text(encoding="utf-8")
    text = text.replace("</head>", STYLE + "</head>", 1)
    text = re.sub(r"(<body[^>]*>)", lambda m: m.group(1) + nav_html, text, count=1)
    path.write_text(text, encoding="utf-8")


def write_index(cards: list[tuple[str, str, str]], path: Path, nav_html: str) -> None:
    items = "".join(
        f'<div class="ta-card"><h2><a href="{name}.html">{html.escape(title)}</a></h2>'
        f"<p>{html.escape(blurb)}</p></div>"
        for name, title, blurb in cards
    )
    path.write_text(
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>tempo_analysis lessons</title>"
        f"{STYLE}</head><body class='ta-index'>{nav_html}<h1>tempo_analysis: temporal NLP lessons</h1>"
        "<p>Each lesson is a notebook of the suite, executed on the planted-truth demo world with the "
        "embedded models. The figures are interactive (hover, zoom); the widgets are live only in "
        "JupyterLab (<code>make lab</code>) or the app (<code>make app</code>).</p>"
        f"{items}</body></html>",
        encoding="utf-8",
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notebooks-dir", type=Path, default=project_root() / "notebooks")
    parser.add_argument("--executed", type=Path, default=project_root() / "build",
                        help="folder with executed copies (make demo's output)")
    parser.add_argument("--out", type=Path, default=project_root() / "build" / "site")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per notebook executed here")
    args = parser.parse_args(argv)

    sources = sorted(args.notebooks_dir.glob("[0-9]*.ipynb"))
    if not sources:
        print(f"build_site: no notebooks in {args.notebooks_dir}", file=sys.stderr)
        return 2
    executed = {}
    runs = nbk.read_summary(args.executed / "summary.json")["notebooks"] if (args.executed / "summary.json").is_file() else {}
    for src in sources:
        reason = nbk.missing_data_reason(src.stem)
        if reason:
            print(f"[build_site] {src.stem}: left out: {reason}", flush=True)
            continue
        copy = args.executed / src.name
        if copy.is_file() and copy.stat().st_mtime >= src.stat().st_mtime:
            nb = nbformat.read(copy, as_version=4)
            status = runs.get(src.stem, {}).get("status", "ok")
            errors = nbx.notebook_errors(nb)
            if status not in ("ok", "interactive") or errors:
                print(f"[build_site] {src.stem}: its executed copy {copy} did not run cleanly (status {status!r}"
                      f"{'; ' + '; '.join(errors[:3]) if errors else ''}), so it is not published. Fix: rerun it "
                      f"(make demo NOTEBOOKS={src.stem}) and then make site. Nothing was written to {args.out}.",
                      file=sys.stderr)
                return 1
            executed[src.stem] = nb
            continue
        print(f"[build_site] {src.stem}: no executed copy newer than the notebook; executing ...", flush=True)
        run = nbx.execute_notebook(src, timeout=args.timeout)
        if run.status != "ok":
            print(f"[build_site] {src.stem}: {run.status}: {'; '.join(run.errors)}. Nothing was written to "
                  f"{args.out}.", file=sys.stderr)
            return 1
        executed[src.stem] = run.nb
    args.out.mkdir(parents=True, exist_ok=True)
    titles = {name: title_and_blurb(nb) for name, nb in executed.items()}
    pages = [(name, titles[name][0] or name) for name in executed]
    for name, nb in executed.items():
        write_page(nb, args.out / f"{name}.html", nav(pages, name))
        print(f"{args.out / (name + '.html')}")
    write_index([(n, t or n, b) for n, (t, b) in titles.items()], args.out / "index.html", nav(pages, "index"))
    print(f"{args.out / 'index.html'}: {len(pages)} lessons")
    return 0


if __name__ == "__main__":
    sys.exit(main())
