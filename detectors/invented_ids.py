"""Being written: invented_ids detector."""
