"""Plotly figures: pure functions that return ``plotly.graph_objects.Figure`` and never call ``.show()``."""
