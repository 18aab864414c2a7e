"""Being written: not_found detector."""
