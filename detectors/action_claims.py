"""Being written: action_claims detector."""
