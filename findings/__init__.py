"""findings package."""
