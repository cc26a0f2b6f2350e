"""Thin ipywidgets wrappers around library calls; the logic lives elsewhere and is tested there."""
