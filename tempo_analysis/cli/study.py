"""`tempo-analysis study`: rerun one lesson's headline computation once per seed.

    tempo-analysis study 02 --seeds 3 4 5 6 7 --out study_02.json
    tempo-analysis study 03_social_diffusion --seeds 3 4 --out study_03.json

Each seed regenerates the lesson's planted world with that seed, in memory (``data/`` is never
read or written), and is also the model seed; the lesson's settings are the notebook's. The file
holds one row per seed with the lesson's numbers (the names of ``tempo_analysis.study.KEYS``), the
settings, the seconds, the code version and the machine. It is rewritten after each seed, so a
stopped run keeps the seeds it finished. A row holds when it reaches what the lesson claims
(``tempo_analysis.study.HOLDS``); the command prints, per claim, at how many seeds it holds.
"""
from __future__ import annotations

import argparse
import json


def add_arguments(p: argparse.ArgumentParser) -> None:
    from tempo_analysis.cli import add_output_options, add_preset_options, add_progress_option

    p.add_argument("notebook", help="the lesson: 01, 02, 03 or 04, or the notebook's name (02_semantic_change)")
    p.add_argument("--seeds", type=int, nargs="+", required=True,
                   help="world and model seeds, non-negative integers, each once (e.g. --seeds 3 4 5 6 7)")
    p.add_argument("--out", required=True, help="the JSON file to write (one row per seed)")
    add_output_options(p)
    add_progress_option(p)
    add_preset_options(p, presets=(), fixed="notebook")


def check_args(args: argparse.Namespace):
    """Every check before any work: the lesson, the seeds and the output file. Returns (lesson, out)."""
    from tempo_analysis.cli import require_distinct
    from tempo_analysis.outputs import prepare_output_file
    from tempo_analysis.study import lesson_id

    lesson = lesson_id(args.notebook)
    bad = [s for s in args.seeds if s < 0]
    if bad:
        raise ValueError(f"--seeds {bad[0]}: give non-negative integers (world and model seeds).")
    require_distinct(args, "--seeds")
    return lesson, prepare_output_file(args.out, overwrite=args.overwrite, kind="study")


def run(args: argparse.Namespace) -> int:
    from tempo_analysis.cli import wants_progress
    from tempo_analysis.outputs import stamp, write_file_atomic
    from tempo_analysis.study import holds, run_study

    lesson, out = check_args(args)

    def write(study: dict) -> None:
        write_file_atomic(out, json.dumps(stamp(study, "study"), indent=2) + "\n")

    study = run_study(lesson, args.seeds, progress=wants_progress(args), on_row=write)
    for row in holds(study).itertuples():
        print(f"{row.criterion}: holds at {row.held} of {row.of} seeds ({row.seeds})")
    print(f"wrote {out}")
    return 0


def register(subparsers) -> argparse.ArgumentParser:
    """Add the `study` command to the `tempo-analysis` parser."""
    p = subparsers.add_parser("study", help="rerun a lesson's headline once per seed (a seed study)",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(p)
    p.set_defaults(func=run)
    return p
