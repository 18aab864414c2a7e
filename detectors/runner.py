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
    registered detector runs with its defaults unless disabled. Unknown names and unknown
    parameters are ``ConfigError``s, raised here, before any session is read.
    """

    def __init__(self, config: dict[str, dict[str, Any]] | None = None) -> None:
        config = config or {}
        for name in config:
            get_detector(name)  # raises with the known names
        self.detectors: list[ConfiguredDetector] = []
        for name, det in sorted(registered().items()):
            raw = dict(config.get(name) or {})
            enabled = raw.pop("enabled", True)
            if not isinstance(enabled, bool):
                raise ConfigError(
                    f"detectors.{name}.enabled must be true or false, not {enabled!r}"
                )
            if enabled:
                params = det.params(raw)
                self.detectors.append(
                    ConfiguredDetector(det, params, params.model_dump(mode="json"))
                )

    def describe(self) -> list[dict[str, Any]]:
        return [
            {"name": c.detector.name, "version": c.detector.version, "params": c.params_dict}
            for c in self.detectors
        ]

    def run(self, session: Session) -> list[Signal]:
        """All signals for ``session``. A detector that fails is recorded on the session."""
        signals: list[Signal] = []
        for configured in self.detectors:
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
