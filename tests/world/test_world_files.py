"""The committed world in data/world: regeneration is byte-identical, save/load round-trips, CLI."""

from __future__ import annotations

import filecmp
from pathlib import Path

import pandas as pd
import pytest

from tempo_analysis.world import FILES, WorldConfig, generate_world, load_world

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "data" / "world"


@pytest.fixture(scope="module")
def world():
    return generate_world(WorldConfig(seed=0))


def test_regenerating_default_world_gives_the_committed_bytes(world, tmp_path):
    assert COMMITTED.is_dir(), "data/world is missing: run `tempo-analysis world --out data/` and commit it"
    world.save(tmp_path)
    for name in FILES:
        new, old = tmp_path / name, COMMITTED / name
        assert old.is_file(), f"data/world/{name} is not committed"
        assert new.read_bytes() == old.read_bytes(), (
            f"data/world/{name} differs from a regeneration; run `tempo-analysis world --out data/`")


def test_committed_world_is_small():
    total = sum((COMMITTED / n).stat().st_size for n in FILES)
    assert total < 2 * 1024 * 1024


def test_files_are_plain_text_with_unix_newlines(world, tmp_path):
    world.save(tmp_path)
    for name in FILES:
        data = (tmp_path / name).read_bytes()
        assert b"\r" not in data and data.endswith(b"\n")
        data.decode("utf-8")


def test_save_load_round_trip(world, tmp_path):
    world.save(tmp_path / "world")
    back = load_world(tmp_path)            # the parent folder works too (data/ -> data/world/)
    assert back.config == world.config
    assert back.diffusion_truth == world.diffusion_truth
    for key, frame in world.frames.items():
        pd.testing.assert_frame_equal(back.frames[key], frame, obj=key)
    pd.testing.assert_frame_equal(back.timelines.df, world.timelines.df)
    pd.testing.assert_frame_equal(back.periods.df, world.periods.df)
    pd.testing.assert_frame_equal(back.social.df, world.social.df)
    pd.testing.assert_frame_equal(back.yearly.df, world.yearly.df)
    assert sorted(back.social.graph.edges) == sorted(world.social.graph.edges)
    assert back.periods.periods == ["old", "new"]
    # and saving what was loaded gives the same bytes again
    back.save(tmp_path / "again")
    for name in FILES:
        assert filecmp.cmp(tmp_path / "world" / name, tmp_path / "again" / name, shallow=False), name


def test_load_committed_world_matches_generated(world):
    back = load_world(ROOT / "data")
    assert back.summary() == world.summary()


def test_load_world_missing_folder_is_a_clear_error(tmp_path):
    from tempo_analysis.data.errors import DataPathError

    with pytest.raises(DataPathError, match="tempo-analysis world --out"):   # a DataError and a FileNotFoundError
        load_world(tmp_path)


def test_same_seed_same_world_different_seed_different(world):
    again = generate_world(WorldConfig(seed=0))
    other = generate_world(WorldConfig(seed=1))
    for key in world.frames:
        pd.testing.assert_frame_equal(again.frames[key], world.frames[key], obj=key)
    for key in ("timelines", "periods", "social_docs", "yearly"):
        assert not other.frames[key]["text"].equals(world.frames[key]["text"]), key


def test_world_seed_overrides_part_seeds():
    cfg = WorldConfig(seed=5).resolved()
    assert {cfg.stream.seed, cfg.change.seed, cfg.social.seed, cfg.yearly.seed} == {5}
    keep = WorldConfig(seed=None).resolved()
    assert keep.stream.seed == 0


def test_config_dict_round_trip_and_unknown_keys():
    cfg = WorldConfig(seed=3).resolved()
    assert WorldConfig.from_dict(cfg.to_dict()) == cfg
    with pytest.raises(ValueError, match="unknown key"):
        WorldConfig.from_dict({"seed": 0, "sreams": {}})


def test_summary_and_repr(world):
    s = world.summary()
    assert s["posts"] == len(world.timelines) and s["mode"] == "walk"
    assert "timelines" in repr(world)


def test_cli_writes_and_checks(tmp_path, capsys):
    from tempo_analysis.cli.world import main

    assert main(["--out", str(tmp_path), "--seed", "0"]) == 0
    for name in FILES:
        assert (tmp_path / "world" / name).read_bytes() == (COMMITTED / name).read_bytes()
    assert main(["--out", str(tmp_path), "--check"]) == 0
    assert main(["--out", str(tmp_path), "--check", "--mode", "flight"]) == 1
    assert "differs" in capsys.readouterr().out


def test_cli_registers_world_subcommand(tmp_path):
    import argparse

    from tempo_analysis.cli.world import register

    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["world", "--out", str(tmp_path), "--mode", "flight", "--speed", "3",
                              "--change-strength", "0.5"])
    assert args.func(args) == 0
    back = load_world(tmp_path)
    assert back.diffusion_truth["mode"] == "flight"
    assert back.config.social.speed == 3 and back.config.change.change_strength == 0.5


def test_console_script_dispatches_world(tmp_path):
    cli = pytest.importorskip("tempo_analysis.cli")
    assert cli.main(["world", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "world" / "config.json").is_file()
