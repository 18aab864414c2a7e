"""Reading agent sessions: storage, formats, the one session model."""
