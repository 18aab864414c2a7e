"""What the alerts stage works with: an ``Alert`` to send, and a ``Delivery`` record of sending it.

An alert is built from an anomaly or a finding of one day; everything in it that came from a
session has already passed the redactor. ``key`` names the thing alerted on (the same anomaly or
finding tomorrow has the same key), ``id`` one alert of it on one day (the idempotency key a
receiver uses to drop repeats).
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from datetime import date, datetime
from typing import Any, Literal

ItemType = Literal["anomaly", "finding", "canary", "run_failure", "test"]
DeliveryStatus = Literal["sent", "skipped_duplicate", "failed", "queued", "dry_run"]

SEVERITY_ORDER = ("low", "medium", "high", "critical")


@dataclass(frozen=True, slots=True)
class Example:
    """One example session, its cited events excerpted and redacted."""

    session_id: str
    agent_version: str | None
    value: str
    explanation: str
    events: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Alert:
    item_type: ItemType
    key: str  # finding id, or "anomaly:<metric>:<agent>:<version>"
    day: date
    severity: str  # one of SEVERITY_ORDER
    title: str
    summary: str  # one line: the headline figure and what it is compared with
    agent: str | None = None
    agent_version: str | None = None
    kind: str | None = None  # signal kind or metric name
    value: float | None = None  # today's rate, or affected sessions
    baseline: float | None = None
    lift: float | None = None
    p_value: float | None = None
    affected_sessions: int | None = None
    recommended_fix: str | None = None
    examples: list[Example] = field(default_factory=list)
    report_url: str | None = None
    team: str | None = None  # the owning team, from the config's agent -> team map

    @property
    def id(self) -> str:
        """The idempotency key: one alert of one item on one day."""
        raw = f"{self.item_type}|{self.key}|{self.day.isoformat()}"
        return hashlib.sha256(raw.encode()).hexdigest()[:24]

    @property
    def severity_rank(self) -> int:
        return SEVERITY_ORDER.index(self.severity) if self.severity in SEVERITY_ORDER else 1

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["day"] = self.day.isoformat()
        out["id"] = self.id
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Alert:
        """An alert as ``to_dict`` wrote it (how the outbox reads a failed delivery back)."""
        fields = {k: v for k, v in raw.items() if k not in ("id", "day", "examples")}
        examples = [Example(**example) for example in raw.get("examples", [])]
        return cls(day=date.fromisoformat(raw["day"]), examples=examples, **fields)


@dataclass(slots=True)
class Delivery:
    """One attempt to get one alert (or one digest) to one channel, as recorded with the run."""

    alert_ids: list[str]
    channel: str
    status: DeliveryStatus
    attempts: int = 0
    error: str | None = None
    at: datetime | None = None
    reason: str | None = None  # why it was skipped, queued or retried ("cooldown until ...")

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["at"] = self.at.isoformat() if self.at else None
        return out
