"""Models, one file per method (and its baselines in a sibling file)."""
