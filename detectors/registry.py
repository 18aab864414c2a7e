"""The detector registry: small functions registered by name and version.

    @detector("unknown_tool", version=1, params=UnknownToolParams)
    def unknown_tool(session: Session, params: UnknownToolParams) -> list[Signal]: ...

A detector is pure: it reads one session and returns signals; it does no I/O. Bump ``version``
whenever its logic changes: stored signals carry it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from detectors.models import Signal
from sessions.errors import ConfigError
from sessions.models import Session


class DetectorParams(BaseModel):
    """Base of every detector's parameters: unknown keys are errors."""

    model_config = ConfigDict(extra="forbid", frozen=True)


P = TypeVar("P", bound=DetectorParams)
DetectorFn = Callable[[Session, Any], list[Signal]]


@dataclass(frozen=True, slots=True)
class Detector(Generic[P]):
    name: str
    version: int
    params_model: type[P]
    fn: Callable[[Session, P], list[Signal]]
    kinds: tuple[str, ...]

    def params(self, raw: dict[str, Any] | None = None, *, where: str = "") -> P:
        try:
            return self.params_model.model_validate(raw or {})
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or '(params)'}: {err['msg']}"
                for err in exc.errors()
            )
            raise ConfigError(f"{where or 'detectors.' + self.name}: {problems}") from None


_DETECTORS: dict[str, Detector[Any]] = {}


def detector(
    name: str, *, version: int, params: type[P], kinds: tuple[str, ...] | None = None
) -> Callable[[Callable[[Session, P], list[Signal]]], Callable[[Session, P], list[Signal]]]:
    def register(fn: Callable[[Session, P], list[Signal]]) -> Callable[[Session, P], list[Signal]]:
        if name in _DETECTORS:
            raise ValueError(f"detector {name!r} is registered twice")
        _DETECTORS[name] = Detector(name, version, params, fn, kinds or (name,))
        return fn

    return register


def registered() -> dict[str, Detector[Any]]:
    return dict(_DETECTORS)


def get_detector(name: str) -> Detector[Any]:
    try:
        return _DETECTORS[name]
    except KeyError:
        known = ", ".join(sorted(_DETECTORS))
        raise ConfigError(f"unknown detector {name!r}: known detectors are {known}") from None
