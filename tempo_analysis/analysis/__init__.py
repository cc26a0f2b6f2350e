"""Method-specific analyses built on trained models."""
