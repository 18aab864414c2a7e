"""`halluwatch scan`: analyse files or folders directly, without Prefect or object storage."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from detectors.judge import (
    Judge,
    JudgeConfig,
    JudgeSettings,
    MemoryCache,
    judge_items,
    judgement_signals,
    load_references,
    require_model,
)
from detectors.models import Signal
from detectors.runner import DetectorSuite
from flows.config import LoadedConfig
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


def scan(
    paths: Sequence[str],
    reader: SessionReader,
    suite: DetectorSuite,
    judge: Callable[[Session], list[Signal]] | None = None,
) -> Iterator[ScanLine]:
    """Yield one line per session (or per unreadable file), unit by unit.

    With ``judge``, each session's judged-claim signals follow its code-check signals.
    """
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
            signals = suite.run(session)
            if judge is not None:
                signals += judge(session)
            yield ScanLine(session.source, session, tuple(signals))


@dataclass(slots=True)
class ScanJudge:
    """The LLM judge for `scan --judge`: every session given is judged (no sampling: the user
    chose the files), its last replies as in the nightly run, identical replies judged once."""

    judge: Judge
    config: JudgeConfig
    references: dict[str, list[str]] = field(default_factory=dict)

    @classmethod
    def build(cls, loaded: LoadedConfig) -> ScanJudge:
        cfg = loaded.config.judge
        settings = JudgeSettings()
        require_model(cfg, settings, "--judge")
        judge = Judge(cfg, settings, cache=MemoryCache())
        return cls(judge, cfg, load_references(cfg, loaded.base))

    def signals(self, session: Session) -> list[Signal]:
        facts = self.references.get(session.agent or "", [])
        items = judge_items(session, self.config, facts)
        return [s for j in self.judge.judge(items) for s in judgement_signals(j)] if items else []

    def totals(self) -> dict[str, Any]:
        return {"status": "on", **self.judge.totals()}
