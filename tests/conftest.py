"""Tests read the development corpus in ``../shared`` through ``tests_support.shared_path``, which
skips with the reason when it is absent: the project must work for a user who has only the
repository."""
