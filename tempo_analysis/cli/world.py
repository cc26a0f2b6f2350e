"""`tempo-analysis world`: write the seeded planted-truth world to OUT/world/.

    tempo-analysis world --out data/                 # the committed default world
    tempo-analysis world --out /tmp/w --seed 3 --mode flight --speed 3 --change-strength 0.5
    tempo-analysis world --out data/ --check         # exit 1 if data/world differs from a regeneration
Also runnable as `python -m tempo_analysis.cli.world ...` (the same command, errors and exit codes).

OUT/world is replaced as a whole and atomically: a kill at any moment leaves the previous world
complete. A folder counts as a world folder when its config.json carries tempo-analysis's
format_version; any other non-empty OUT/world is refused unless --overwrite (its other files are kept).
"""

from __future__ import annotations

import argparse
import dataclasses
import filecmp
import math
import os
import shlex
import sys
import tempfile
from pathlib import Path

# the range ChangeWorldConfig.validate accepts for change_strength (tests/world keep the two in step)
CHANGE_STRENGTH_RANGE = (0.0, 1.5)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", required=True, help="folder to write into; files go to OUT/world/")
    p.add_argument("--seed", type=int, default=None, help="world seed (every part's seed), >= 0 (default: 0)")
    p.add_argument("--mode", choices=("walk", "flight"), default=None,
                   help="diffusion mode of the social world (default: walk)")
    p.add_argument("--speed", type=int, default=None, help="new adopters per slice (default: 3)")
    p.add_argument("--change-strength", type=float, default=None,
                   help="scales the planted sense changes, %g..%g (default: 1.0)" % CHANGE_STRENGTH_RANGE)
    p.add_argument("--overwrite", action="store_true",
                   help="write the world into an existing OUT/world folder that tempo-analysis did not write "
                        "(its other files are kept)")
    p.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 if OUT/world differs from what these options generate")
    from tempo_analysis.cli import add_preset_options

    add_preset_options(p, presets=())


def config_from_args(args: argparse.Namespace):
    """The WorldConfig these options describe."""
    from tempo_analysis.world import WorldConfig

    cfg = WorldConfig(seed=0 if args.seed is None else args.seed)
    if args.mode is not None or args.speed is not None:
        social = cfg.social
        if args.mode is not None:
            social = dataclasses.replace(social, mode=args.mode)
        if args.speed is not None:
            social = dataclasses.replace(social, speed=args.speed)
        cfg = dataclasses.replace(cfg, social=social)
    if args.change_strength is not None:
        cfg = dataclasses.replace(cfg, change=dataclasses.replace(cfg.change, change_strength=args.change_strength))
    return cfg


def command_line(args: argparse.Namespace) -> str:
    """The `tempo-analysis world` command that writes what `args` describe (the options given, quoted)."""
    parts = ["tempo-analysis", "world", "--out", str(args.out)]
    for flag, value in (("--seed", args.seed), ("--mode", args.mode), ("--speed", args.speed),
                        ("--change-strength", args.change_strength)):
        if value is not None:
            parts += [flag, repr(value) if isinstance(value, float) else str(value)]
    return shlex.join(parts)


def _parent_of(out: str) -> str:
    q = Path(os.path.normpath(out))
    return str(q.parent if q.name not in ("", ".", "..") else q.resolve().parent)


def check_args(args: argparse.Namespace) -> None:
    """Every check of the command line and of --out, before the world is generated (ms, no work lost)."""
    from tempo_analysis.cli import refuse_options, require_positive
    from tempo_analysis.outputs import OutputExistsError
    from tempo_analysis.world.world import check_world_folder, is_world_folder

    # 0 new adopters per slice: the sense never spreads past slice 0, so there is no diffusion to map
    require_positive(args, "--speed")
    require_positive(args, "--seed", least=0)
    lo, hi = CHANGE_STRENGTH_RANGE
    v = args.change_strength
    if v is not None and not (math.isfinite(v) and lo <= v <= hi):
        raise ValueError(f"--change-strength {v:g}: use a number from {lo:g} to {hi:g} "
                         f"(0 plants no change, 1 the default change).")
    refuse_options(args, ["--overwrite"], when=args.check, apply_to="writing a world",
                   here="--check (it writes nothing)", fix="drop --check")
    if is_world_folder(args.out):   # OUT/world would be nested in it, and loaders keep reading OUT itself
        raise OutputExistsError(f"--out {args.out!r} already is a world folder (its config.json was written by "
                                f"tempo-analysis), and the world goes to OUT/world/. Fix: pass its parent "
                                f"(--out {shlex.quote(_parent_of(args.out))}).")
    if not args.check:  # a file where the folder should be: refused before generating, naming the path
        target = Path(args.out) / "world"
        blocked = next((p for p in (target, *target.parents) if p.exists()), None)
        if blocked is not None and not blocked.is_dir():
            raise OutputExistsError(f"--out {args.out!r}: {str(blocked)!r} is a file, so {str(target)!r} cannot be "
                                    "created. Fix: pass a folder (the world goes to OUT/world/).")
        check_world_folder(target, overwrite=args.overwrite)


def run(args: argparse.Namespace) -> int:
    """Check the options and OUT/world, generate, then write (or with --check, compare)."""
    from tempo_analysis.world import FILES, generate_world

    check_args(args)
    target = Path(args.out) / "world"
    world = generate_world(config_from_args(args))
    if args.check:
        fix = f"Fix: run `{command_line(args)}` and commit the result."
        if not target.is_dir():
            print(f"{target}: missing (no world folder there). {fix}")
            return 1
        with tempfile.TemporaryDirectory() as tmp:
            fresh = Path(tmp) / "world"
            world.save(fresh)
            missing = [n for n in FILES if not (target / n).is_file()]
            differ = [n for n in FILES if n not in missing
                      and not filecmp.cmp(fresh / n, target / n, shallow=False)]
        if missing or differ:
            what = "; ".join(([f"missing {missing}"] if missing else [])
                             + ([f"differs from a regeneration in {differ}"] if differ else []))
            print(f"{target}: {what}. {fix}")
            return 1
        print(f"{target}: all {len(FILES)} files match a regeneration.")
        return 0
    paths = world.save(target, overwrite=args.overwrite)
    for name, path in paths.items():
        print(f"{path}  ({path.stat().st_size / 1024:.1f} KiB)")
    print(repr(world))
    return 0


def register(subparsers) -> argparse.ArgumentParser:
    """Add the `world` command to the `tempo-analysis` parser."""
    p = subparsers.add_parser("world", help="write the seeded planted-truth demo world",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(p)
    p.set_defaults(func=run)
    return p


def main(argv: list[str] | None = None) -> int:
    """`python -m tempo_analysis.cli.world ARGS`: exactly `tempo-analysis world ARGS` (the same error
    boundary: one line and exit 2 for bad input, exit 1 for an internal error, --debug for tracebacks)."""
    from tempo_analysis.cli import main as cli_main

    argv = list(sys.argv[1:] if argv is None else argv)
    return cli_main(["world", *argv])


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
