"""``Finding``: one recurring failure mode of one agent, as the team reads and acts on it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Any

from detectors.models import Severity


@dataclass(frozen=True, slots=True)
class Finding:
    """A failure mode seen on ``day``, across sessions and agent versions.

    ``id`` is a short hash of ``signature`` (which names the failure mode, never the version or
    the day), so the same failure tomorrow has the same id and carries ``first_seen`` and
    ``trend``. ``affected_sessions`` is the total; ``session_ids`` lists at most the first 100
    of them in sorted order. ``affected_share`` is ``None`` when the day's session count of the
    agent is unknown. ``trend`` is ``[{"date", "sessions"}]``, oldest first, ending with ``day``.
    """

    id: str
    day: date
    signature: dict[str, Any]
    title: str
    kind: str
    agent: str | None
    severity: Severity
    affected_sessions: int
    affected_share: float | None
    signals: int
    first_seen: date
    recommended_fix: str
    agent_versions: dict[str, int] = field(default_factory=dict)
    session_ids: list[str] = field(default_factory=list)
    trend: list[dict[str, Any]] = field(default_factory=list)
    examples: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "day": self.day.isoformat(),
            "signature": dict(self.signature),
            "title": self.title,
            "kind": self.kind,
            "agent": self.agent,
            "severity": str(self.severity),
            "affected_sessions": self.affected_sessions,
            "affected_share": self.affected_share,
            "signals": self.signals,
            "first_seen": self.first_seen.isoformat(),
            "recommended_fix": self.recommended_fix,
            "agent_versions": dict(self.agent_versions),
            "session_ids": list(self.session_ids),
            "trend": [dict(point) for point in self.trend],
            "examples": [dict(example) for example in self.examples],
        }

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Finding:
        """A finding as ``to_dict`` wrote it (how earlier days' findings are read back)."""
        return cls(
            id=raw["id"],
            day=date.fromisoformat(raw["day"]),
            signature=dict(raw["signature"]),
            title=raw["title"],
            kind=raw["kind"],
            agent=raw["agent"],
            severity=Severity(raw["severity"]),
            affected_sessions=int(raw["affected_sessions"]),
            affected_share=raw["affected_share"],
            signals=int(raw["signals"]),
            first_seen=date.fromisoformat(raw["first_seen"]),
            recommended_fix=raw["recommended_fix"],
            agent_versions=dict(raw.get("agent_versions", {})),
            session_ids=list(raw.get("session_ids", [])),
            trend=[dict(point) for point in raw.get("trend", [])],
            examples=[dict(example) for example in raw.get("examples", [])],
        )
