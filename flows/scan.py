"""`halluwatch scan`: analyse files or folders directly, without Prefect or object storage."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from detectors.models import Signal
from detectors.runner import DetectorSuite
from sessions.errors import ConfigError, HalluwatchError
from sessions.grouping import select
from sessions.models import EventKind, Session
from sessions.reader import FileFailure, SessionReader
from sessions.storage import ObjectInfo


@dataclass(slots=True)
class ScanLine:
    """One line of scan output: a session with its signals, or a file that failed."""

    source: str
    session: Session | None = None
    signals: tuple[Signal, ...] = ()
    failure: FileFailure | None = None

    def to_dict(self) -> dict[str, Any]:
        s = self.session
        return {
            "source": self.source,
            "session_id": s.id if s else None,
            "format": s.format if s else None,
            "agent": s.agent if s else None,
            "agent_version": s.agent_version if s else None,
            "model": s.model if s else None,
            "events": len(s.events) if s else 0,
            "tool_calls": sum(1 for e in s.events if e.kind is EventKind.TOOL_CALL) if s else 0,
            "tools_source": s.registered_tools.source if s and s.registered_tools else None,
            "signals": [signal.to_dict() for signal in self.signals],
            "error": f"{self.failure.reason}: {self.failure.message}" if self.failure else None,
        }


def discover(paths: Sequence[str], include: Sequence[str]) -> list[list[ObjectInfo]]:
    """The units to read under ``paths``: folders are walked and filtered, files taken as named."""
    objects: list[ObjectInfo] = []
    named: set[str] = set()
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for root, dirs, files in os.walk(path):
                dirs.sort()
                for name in sorted(files):
                    full = Path(root, name)
                    objects.append(ObjectInfo(full.as_posix(), full.stat().st_size))
        elif path.is_file():
            objects.append(ObjectInfo(path.as_posix(), path.stat().st_size))
            named.add(path.as_posix())
        else:
            raise ConfigError(f"{raw}: no such file or folder")
    selection = select(objects, include, frozenset(named))
    return [unit.objects for unit in selection.units]


def scan(paths: Sequence[str], reader: SessionReader, suite: DetectorSuite) -> Iterator[ScanLine]:
    """Yield one line per session (or per unreadable file), unit by unit."""
    for unit in discover(paths, reader.config.include):
        files: list[tuple[str, bytes | Exception]] = []
        for obj in unit:
            try:
                files.append((obj.key, Path(obj.key).read_bytes()))
            except OSError as exc:
                files.append((obj.key, HalluwatchError(f"{obj.key}: cannot read: {exc.strerror}")))
        result = reader.read_unit(files)
        for failure in result.failures:
            yield ScanLine(failure.source, failure=failure)
        for session in result.sessions:
            yield ScanLine(session.source, session, tuple(suite.run(session)))
