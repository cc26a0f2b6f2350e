"""Metrics and evaluation protocols."""
