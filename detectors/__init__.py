"""Code checks over one session at a time. Importing this package registers every detector."""

from detectors import (  # noqa: F401  (imported to register the detectors)
    action_claims,
    faithfulness,
    invented_ids,
    not_found,
    unknown_tool,
)
from detectors.models import Severity, Signal
from detectors.registry import Detector, DetectorParams, detector, get_detector, registered

__all__ = [
    "Detector",
    "DetectorParams",
    "Severity",
    "Signal",
    "detector",
    "get_detector",
    "registered",
]
