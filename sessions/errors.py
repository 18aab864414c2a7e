"""The halluwatch exception tree.

    HalluwatchError                 anything halluwatch raises on purpose
    ├── ConfigError                 a bad run config or CLI argument: stop before any work (exit 2)
    ├── CredentialError             a missing or rejected credential: stop before any work (exit 2)
    ├── StorageError                object storage could not be listed or read
    ├── DeliveryError               an alert could not be delivered to a channel (retried, then
    │                               kept in the outbox for the next run)
    └── SessionError                one session file could not be turned into sessions
        ├── UnknownFormatError      no adapter recognises the file
        └── MalformedSessionError   the file is recognised but broken (invalid JSON, truncated, ...)

A ``SessionError`` is data, not a crash: the reader records it with its reason and the run goes
on. Messages name the offending value and, where there is one, the next step.
"""

from __future__ import annotations


class HalluwatchError(Exception):
    """Base class of every error halluwatch raises on purpose."""


class ConfigError(HalluwatchError):
    """The run config or a CLI argument is invalid."""


class CredentialError(HalluwatchError):
    """A credential is missing or was rejected."""


class StorageError(HalluwatchError):
    """Object storage could not be listed or read."""


class DeliveryError(HalluwatchError):
    """A channel did not accept an alert. ``retryable`` says whether trying again may help."""

    def __init__(self, message: str, *, retryable: bool = True) -> None:
        super().__init__(message)
        self.retryable = retryable


class SessionError(HalluwatchError):
    """One session file could not be turned into sessions.

    ``reason`` is a short, stable code the manifest counts by (``invalid_json``, ``truncated``,
    ``unknown_format``, ...); the message says what exactly was wrong.
    """

    reason = "session_error"

    def __init__(self, message: str, *, reason: str | None = None) -> None:
        super().__init__(message)
        if reason is not None:
            self.reason = reason


class UnknownFormatError(SessionError):
    reason = "unknown_format"


class MalformedSessionError(SessionError):
    reason = "malformed"
