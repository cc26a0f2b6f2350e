"""`tempo-analysis world`: write the seeded planted-truth world to OUT/world/.

    tempo-analysis world --out data/                 # the committed default world
    tempo-analysis world --out /tmp/w --seed 3 --mode flight --speed 3 --change-strength 0.5
    tempo-analysis world --out data/ --check         # exit 1 if data/world differs from a regeneration
Also runnable as `python -m tempo_analysis.cli.world ...`.
"""

from __future__ import annotations

import argparse
import dataclasses
import filecmp
import sys
import tempfile
from pathlib import Path


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", required=True, help="folder to write into; files go to OUT/world/")
    p.add_argument("--seed", type=int, default=0, help="world seed (every part's seed; default 0)")
    p.add_argument("--mode", choices=("walk", "flight"), default=None,
                   help="diffusion mode of the social world (default: walk)")
    p.add_argument("--speed", type=int, default=None, help="new adopters per slice (default: 3)")
    p.add_argument("--change-strength", type=float, default=None,
                   help="scales the planted sense changes, 0..1.5 (default: 1.0)")
    p.add_argument("--overwrite", action="store_true",
                   help="write the world files into an existing OUT/world folder that tempo-analysis did not "
                        "write (its other files are left alone)")
    p.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 if OUT/world differs from what these options generate")


def config_from_args(args: argparse.Namespace):
    """The WorldConfig these options describe."""
    from tempo_analysis.world import WorldConfig

    cfg = WorldConfig(seed=args.seed)
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


def run(args: argparse.Namespace) -> int:
    """Generate, then write (or with --check, compare); prints one line per file."""
    from tempo_analysis.world import FILES, generate_world

    from tempo_analysis.cli import refuse_options, require_positive

    # 0 new adopters per slice: the sense never spreads past slice 0, so there is no diffusion to map
    require_positive(args, "--speed")
    refuse_options(args, ["--overwrite"], when=args.check, apply_to="writing a world",
                   here="--check (it writes nothing)", fix="drop --check")
    target = Path(args.out) / "world"
    if not args.check:  # a file where the folder should be: refused before generating, naming the path
        from tempo_analysis.outputs import OutputExistsError

        blocked = next((p for p in (target, *target.parents) if p.exists()), None)
        if blocked is not None and not blocked.is_dir():
            raise OutputExistsError(f"--out {args.out!r}: {str(blocked)!r} is a file, so {str(target)!r} cannot be "
                                    "created. Fix: pass a folder (the world goes to OUT/world/).")
    world = generate_world(config_from_args(args))
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            world.save(tmp)
            differ = [n for n in FILES if not (target / n).is_file()
                      or not filecmp.cmp(Path(tmp) / n, target / n, shallow=False)]
        if differ:
            print(f"{target}: differs from a regeneration in {differ}. Fix: run "
                  f"`tempo-analysis world --out {args.out}` (same options) and commit the result.")
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
    parser = argparse.ArgumentParser(prog="python -m tempo_analysis.cli.world", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run(args)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
