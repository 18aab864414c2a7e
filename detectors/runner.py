"""Run the configured detectors over a session, stamping each signal with its provenance."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from detectors.models import Signal
from detectors.registry import Detector, get_detector, registered
from sessions.errors import ConfigError
from sessions.models import Session


@dataclass(frozen=True, slots=True)
class ConfiguredDetector:
    detector: Detector[Any]
    params: BaseModel
    params_dict: dict[str, Any]


class DetectorSuite:
    """The enabled detectors with validated parameters.

    ``config`` maps a detector name to its parameters plus an optional ``enabled`` flag; every
    registered detector runs with its defaults unless disabled. ``agent_overrides`` maps an agent
    to the same shape, merged key by key over ``config`` for that agent's sessions. Unknown names
    and unknown parameters are ``ConfigError``s, raised here, before any session is read.
    """

    def __init__(
        self,
        config: dict[str, dict[str, Any]] | None = None,
        agent_overrides: dict[str, dict[str, dict[str, Any]]] | None = None,
    ) -> None:
        self.config = config or {}
        self.detectors = self._configure(self.config, "detectors")
        self.by_agent = {
            agent: self._configure(self._merge(overrides), f"agents.{agent}.detectors")
            for agent, overrides in (agent_overrides or {}).items()
        }

    def _merge(self, overrides: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        merged = {name: dict(params or {}) for name, params in self.config.items()}
        for name, params in overrides.items():
            merged.setdefault(name, {}).update(params or {})
        return merged

    @staticmethod
    def _configure(config: dict[str, dict[str, Any]], where: str) -> list[ConfiguredDetector]:
        for name in config:
            get_detector(name)  # raises with the known names
        configured: list[ConfiguredDetector] = []
        for name, det in sorted(registered().items()):
            raw = dict(config.get(name) or {})
            enabled = raw.pop("enabled", True)
            if not isinstance(enabled, bool):
                raise ConfigError(f"{where}.{name}.enabled must be true or false, not {enabled!r}")
            if enabled:
                params = det.params(raw, where=f"{where}.{name}")
                configured.append(ConfiguredDetector(det, params, params.model_dump(mode="json")))
        return configured

    def describe(self) -> list[dict[str, Any]]:
        return [
            {"name": c.detector.name, "version": c.detector.version, "params": c.params_dict}
            for c in self.detectors
        ]

    def run(self, session: Session) -> list[Signal]:
        """All signals for ``session``. A detector that fails is recorded on the session."""
        signals: list[Signal] = []
        for configured in self.by_agent.get(session.agent or "", self.detectors):
            det = configured.detector
            try:
                found = det.fn(session, configured.params)
            except Exception as exc:  # one detector bug must not lose the other checks
                session.warnings.append(f"detector {det.name} failed: {type(exc).__name__}: {exc}")
                continue
            for signal in found:
                signal.detector = det.name
                signal.detector_version = det.version
                signal.params = configured.params_dict
            signals.extend(found)
        return signals
