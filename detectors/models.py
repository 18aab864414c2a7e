"""``Signal``: one piece of evidence that an agent may have made something up."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Severity(StrEnum):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    CRITICAL = "critical"


@dataclass(slots=True)
class Signal:
    """What a detector saw, citing the exact events it rests on.

    ``value`` is the thing itself (the tool name, the identifier, the claim sentence).
    ``detector``/``detector_version``/``params`` are stamped by the runner, so every stored row
    says which logic produced it and a rate change can be traced to a detector change.
    """

    kind: str
    value: str
    events: list[int]
    explanation: str
    severity: Severity = Severity.MEDIUM
    detector: str = ""
    detector_version: int = 0
    params: dict[str, Any] = field(default_factory=dict)
    # Detector-specific evidence that does not fit `value` (e.g. the faithfulness audit record).
    data: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "value": self.value,
            "detector": self.detector,
            "detector_version": self.detector_version,
            "severity": str(self.severity),
            "events": list(self.events),
            "explanation": self.explanation,
        }
