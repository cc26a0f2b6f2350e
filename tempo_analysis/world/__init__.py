"""The seeded planted-truth world: small demo corpora whose right answers are known.

    from tempo_analysis.world import generate_world, load_world, WorldConfig
    world = generate_world(WorldConfig(seed=0))   # in memory, ~1 s
    world.timelines        # Timelines, labels "O" / "IS" (switch) / "IE" (escalation)
    world.periods          # PeriodCorpus, "old" < "new"; world.change_truth (graded, binary, ...)
    world.social           # SocialCorpus; world.diffusion_truth (mode walk|flight, first_slice, ...)
    world.yearly           # PeriodCorpus of int years; world.trend_truth (rate per word and year)
    world.save("data/world"); load_world("data")  # CSV/JSON round trip, deterministic bytes

Each part has its own generator and config of "what if" knobs:
`generate_timelines(StreamWorldConfig(...))`, `generate_change_corpus(ChangeWorldConfig(...))`,
`generate_social(SocialWorldConfig(...))`, `generate_yearly(YearlyWorldConfig(...))`; the last
three return (corpus, truth). The committed copy lives in data/world/ (see data/README.md) and
is written by `tempo-analysis world --out data/`.
"""

from .change import change_frames, generate_change_corpus
from .config import (ChangeWorldConfig, SocialWorldConfig, StreamWorldConfig, WorldConfig,
                     YearlyWorldConfig)
from .social import generate_social, social_frames, walk_share
from .stream import generate_timelines, timelines_frames
from .world import FILES, World, generate_world, load_world, resolve_world_dir
from .yearly import generate_yearly, yearly_frames

__all__ = [
    "WorldConfig", "StreamWorldConfig", "ChangeWorldConfig", "SocialWorldConfig", "YearlyWorldConfig",
    "World", "generate_world", "load_world", "resolve_world_dir", "FILES",
    "generate_timelines", "generate_change_corpus", "generate_social", "generate_yearly",
    "timelines_frames", "change_frames", "social_frames", "yearly_frames", "walk_share",
]
