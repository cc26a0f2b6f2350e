"""Loaders for real public dataset formats; each reads from any path."""
