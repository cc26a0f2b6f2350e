#!/usr/bin/env python
"""Execute the suite's notebooks headless and write executed copies, HTML and a summary.

    python scripts/run_notebooks.py                 # every lesson, notebooks/[0-9]*.ipynb -> build/
    python scripts/run_notebooks.py 00_overview     # just one (name, stem or path)
    python scripts/run_notebooks.py -p N_EPOCHS=1   # override parameters (all notebooks)

For each notebook: execute it with nbclient at its defaults (cwd = its folder, widget state not
stored, one time budget per notebook), write build/<name>.ipynb and build/<name>.html, and record
seconds and status in build/summary.json next to the key numbers the notebook itself recorded with
tempo_analysis.notebook.record_summary. Prints a table at the end; exits 1 if any notebook failed.
`make demo` runs this.
"""
from __future__ import annotations

import argparse
import ast
import copy
import os
import sys
from pathlib import Path

import nbformat

import notebook_exec as nbx

from tempo_analysis import notebook as nbk
from tempo_analysis.data.locations import project_root

DEFAULT_TIMEOUT = float(os.environ.get("TEMPO_ANALYSIS_NOTEBOOK_TIMEOUT", 1500))


def find_notebooks(names: list[str], folder: Path) -> list[Path]:
    """Resolve names ('00_overview', '00_overview.ipynb', a path) to .ipynb files in order."""
    if not names:
        found = sorted(folder.glob("[0-9]*.ipynb"))  # the lessons (as make site and make exercises), not Untitled.ipynb
        if not found:
            raise SystemExit(f"no notebooks ([0-9]*.ipynb) in {folder}")
        return found
    paths = []
    for name in names:
        candidates = [Path(name), folder / name, folder / f"{name}.ipynb"]
        path = next((p for p in candidates if p.is_file() and p.suffix == ".ipynb"), None)
        if path is None:
            raise SystemExit(f"notebook {name!r} not found (looked for {', '.join(map(str, candidates))})")
        paths.append(path)
    return paths


def parse_parameters(items: list[str]) -> dict:
    """-p NAME=VALUE pairs; VALUE is a Python literal if it parses as one, else a string."""
    params = {}
    for item in items:
        name, sep, raw = item.partition("=")
        if not sep or not name.isidentifier():
            raise SystemExit(f"-p {item!r}: write NAME=VALUE, e.g. -p N_EPOCHS=1")
        try:
            params[name] = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            params[name] = raw
    return params


def with_static_plotly(nb):
    """A copy of nb whose plotly outputs also carry text/html, so the HTML export shows them.

    Kernels in Jupyter emit plotly figures as application/vnd.plotly.v1+json, which JupyterLab
    renders with plotly's lab extension but nbconvert cannot. plotly.js is inlined once (the first
    figure), so the HTML works offline.
    """
    import plotly.io as pio

    nb = copy.deepcopy(nb)
    first = True
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if "application/vnd.plotly.v1+json" in data and "text/html" not in data:
                data["text/html"] = pio.to_html(
                    data["application/vnd.plotly.v1+json"],
                    include_plotlyjs=first,
                    full_html=False,
                    validate=False,
                )
                first = False
    return nb


def export_html(nb, path: Path) -> None:
    """Write nb as HTML (nbconvert's lab template)."""
    from nbconvert import HTMLExporter

    # nothing here needs require.js, and plotly.js misbehaves when it is on the page
    exporter = HTMLExporter(template_name="lab", require_js_url="data:text/javascript,")
    body, _ = exporter.from_notebook_node(with_static_plotly(nb))
    path.write_text(body, encoding="utf-8")


def format_values(values: dict, width: int = 100) -> str:
    """'a=0.71, b=3' truncated to width."""
    parts = []
    for key, value in values.items():
        parts.append(f"{key}={value:.4g}" if isinstance(value, float) else f"{key}={value}")
    text = ", ".join(parts) or "-"
    return text if len(text) <= width else text[: width - 3] + "..."


def print_table(rows: list[tuple[str, float, str, str]]) -> None:
    """notebook | seconds | status | key numbers."""
    header = ("notebook", "seconds", "status", "key numbers")
    table = [header] + [(n, f"{s:.1f}", st, v) for n, s, st, v in rows]
    widths = [max(len(r[i]) for r in table) for i in range(3)]
    for i, row in enumerate(table):
        print("  ".join(cell.ljust(w) for cell, w in zip(row[:3], widths)) + "  " + row[3])
        if i == 0:
            print("  ".join("-" * w for w in widths) + "  " + "-" * len(header[3]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", help="names or paths (default: all in --notebooks-dir)")
    parser.add_argument("--notebooks-dir", type=Path, default=project_root() / "notebooks")
    parser.add_argument("--out", type=Path, default=project_root() / "build")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per notebook")
    parser.add_argument("-p", "--parameter", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--no-html", action="store_true", help="skip the HTML export")
    args = parser.parse_args(argv)

    paths = find_notebooks(args.notebooks, args.notebooks_dir)
    params = parse_parameters(args.parameter)
    args.out.mkdir(parents=True, exist_ok=True)
    summary = (args.out / "summary.json").resolve()
    rows = []
    for path in paths:
        name = path.stem
        reason = nbk.missing_data_reason(name)
        if reason:
            print(f"[run_notebooks] {name}: skipped: {reason}", flush=True)
            rows.append((name, 0.0, "skipped", "-"))
            continue
        print(f"[run_notebooks] {name}: executing (budget {args.timeout:.0f} s) ...", flush=True)
        nbk.update_summary(name, {"status": "running"}, path=summary, replace=True)
        for old in (args.out / f"{name}.ipynb", args.out / f"{name}.html"):
            old.unlink(missing_ok=True)   # an interrupted run must not leave the last run's copies looking current
        run = nbx.execute_notebook(
            path, timeout=args.timeout, env={nbk.ENV_SUMMARY: str(summary)}, parameters=params
        )
        nbformat.write(run.nb, args.out / f"{name}.ipynb")
        if not args.no_html:
            export_html(run.nb, args.out / f"{name}.html")
        nbk.update_summary(
            name,
            {"seconds": round(run.seconds, 1), "status": run.status, "errors": run.errors,
             "parameters": {k: repr(v) for k, v in params.items()}},
            path=summary,
        )  # fmt: skip
        for error in run.errors:
            print(f"[run_notebooks] {name}: {error}", file=sys.stderr)
        values = nbk.read_summary(summary)["notebooks"][name].get("values", {})
        rows.append((name, run.seconds, run.status, format_values(values)))
        print(f"[run_notebooks] {name}: {run.status} in {run.seconds:.1f} s", flush=True)

    print()
    print_table(rows)
    print(f"\nexecuted notebooks and HTML in {args.out}/, key numbers in {summary}")
    return 0 if all(status in ("ok", "skipped") for _, _, status, _ in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
