#!/usr/bin/env python
"""Pair every notebooks/ notebook with its py:percent script, then clear the .ipynb outputs.

    python scripts/sync_notebooks.py            # all of notebooks/
    python scripts/sync_notebooks.py notebooks/00_overview.py

jupytext --sync makes the newer of NN_name.py / NN_name.ipynb the source of the cells (pairing
and filters come from notebooks/jupytext.toml); then outputs, execution counts and widget state are
removed from the .ipynb so commits stay small. tests/notebooks/test_execute.py checks the result.
"""
from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from jupytext.cli import jupytext as jupytext_cli

from notebook_exec import clear_outputs

from tempo_analysis.data.locations import project_root


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    folder = project_root() / "notebooks"
    paths = [Path(a) for a in args] or sorted(
        {p.with_suffix(".ipynb") for p in folder.glob("[0-9]*.py")} | set(folder.glob("*.ipynb"))
    )
    for path in paths:
        # sync from whichever file of the pair exists (and is newer)
        source = path if path.exists() else path.with_suffix(".py")
        jupytext_cli(["--sync", "--quiet", str(source)])
        ipynb = path.with_suffix(".ipynb")
        nb = nbformat.read(ipynb, as_version=4)
        before = nbformat.writes(nb)
        clear_outputs(nb)
        if nbformat.writes(nb) != before:
            nbformat.write(nb, ipynb)
        print(f"synced {ipynb.name} <-> {ipynb.with_suffix('.py').name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
