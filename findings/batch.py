"""One batch of a night: read its files, run the detectors, write its rows, return counts.

This is the body of the flow's per-batch task, kept free of Prefect so it can be called and
tested directly. It returns a ``BatchPartial``: small counts the flow merges, never the rows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import orjson

from detectors.models import Signal
from detectors.runner import DetectorSuite
from findings.metrics import Group, GroupCounts, merge_groups
from findings.sampling import SampleFrame, SamplingPlan
from findings.store import ResultsStore
from sessions.models import EventKind, Session
from sessions.reader import FileFailure, SessionReader
from sessions.storage import Store

MAX_FAILURES_LISTED = 200


@dataclass(slots=True)
class BatchPartial:
    """What one batch contributes to the manifest. Merged with ``+=``."""

    files: int = 0
    bytes: int = 0
    files_parsed: int = 0
    sessions: int = 0
    events: int = 0
    tool_calls: int = 0
    replies: int = 0
    sessions_without_tools: int = 0
    not_found_probes: int = 0
    failures_by_reason: Counter[str] = field(default_factory=Counter)
    signals_by_kind: Counter[str] = field(default_factory=Counter)
    formats: Counter[str] = field(default_factory=Counter)
    failures: list[dict[str, str]] = field(default_factory=list)
    groups: dict[Group, GroupCounts] = field(default_factory=dict)
    # The judge's best sample candidates from this batch (None when the judge is off).
    frame: SampleFrame | None = None

    def __iadd__(self, other: BatchPartial) -> BatchPartial:
        for name in (
            "files",
            "bytes",
            "files_parsed",
            "sessions",
            "events",
            "tool_calls",
            "replies",
            "sessions_without_tools",
            "not_found_probes",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.failures_by_reason.update(other.failures_by_reason)
        self.signals_by_kind.update(other.signals_by_kind)
        self.formats.update(other.formats)
        merge_groups(self.groups, other.groups)
        if other.frame is not None:
            if self.frame is None:
                self.frame = SampleFrame(other.frame.plan)
            self.frame += other.frame
        room = MAX_FAILURES_LISTED - len(self.failures)
        self.failures.extend(other.failures[: max(room, 0)])
        return self

    def to_dict(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "bytes": self.bytes,
            "files_parsed": self.files_parsed,
            "files_failed": sum(self.failures_by_reason.values()),
            "failed_by_reason": dict(sorted(self.failures_by_reason.items())),
            "sessions": self.sessions,
            "sessions_without_tool_list": self.sessions_without_tools,
            "not_found_probes": self.not_found_probes,
            "events": self.events,
            "tool_calls": self.tool_calls,
            "replies": self.replies,
            "formats": dict(sorted(self.formats.items())),
            "signals_by_kind": dict(sorted(self.signals_by_kind.items())),
            "failures": self.failures,
        }


def session_row(session: Session, signals: int, day: str, run_id: str) -> dict[str, Any]:
    kinds = Counter(e.kind for e in session.events)
    return {
        "date": day,
        "run_id": run_id,
        "session_id": session.id,
        "source": session.source,
        "format": session.format,
        "agent": session.agent,
        "agent_version": session.agent_version,
        "model": session.model,
        "started_at": session.started_at,
        "events": len(session.events),
        "tool_calls": kinds[EventKind.TOOL_CALL],
        "replies": sum(1 for e in session.events if e.kind is EventKind.ASSISTANT and e.text),
        "tools_source": session.registered_tools.source if session.registered_tools else None,
        "signals": signals,
        "warnings": session.warnings,
    }


def identity(session: Session, day: str, run_id: str) -> dict[str, Any]:
    """The columns every per-session table starts with."""
    return {
        "date": day,
        "run_id": run_id,
        "session_id": session.id,
        "source": session.source,
        "agent": session.agent,
        "agent_version": session.agent_version,
    }


def signal_row(signal: Signal, session: Session, day: str, run_id: str) -> dict[str, Any]:
    return {
        **identity(session, day, run_id),
        "kind": signal.kind,
        "value": signal.value,
        "severity": str(signal.severity),
        "events": signal.events,
        "explanation": signal.explanation,
        "detector": signal.detector,
        "detector_version": signal.detector_version,
        "params": orjson.dumps(signal.params, option=orjson.OPT_SORT_KEYS).decode(),
        "data": orjson.dumps(
            {k: v for k, v in signal.data.items() if k != "audit"}, option=orjson.OPT_SORT_KEYS
        ).decode(),
        "evidence": orjson.dumps(evidence(session, signal.events)).decode(),
    }


EXCERPT = 400


def evidence(session: Session, indices: Sequence[int]) -> list[dict[str, Any]]:
    """The cited events, excerpted, so a finding can show the exact turns without the session."""
    out = []
    for i in indices:
        if not 0 <= i < len(session.events):
            continue
        e = session.events[i]
        text = e.output if e.kind is EventKind.TOOL_RESULT else e.text
        if e.kind is EventKind.TOOL_CALL:
            text = e.input if isinstance(e.input, str) else orjson.dumps(e.input).decode()
        item: dict[str, Any] = {"index": i, "kind": str(e.kind), "text": _excerpt(text)}
        if e.name:
            item["name"] = e.name
        if e.is_error:
            item["is_error"] = True
        if e.subagent:
            item["subagent"] = e.subagent
        out.append(item)
    return out


def _excerpt(text: str) -> str:
    return text if len(text) <= EXCERPT else text[: EXCERPT - 1] + "…"


def audit_row(signal: Signal, session: Session, day: str, run_id: str) -> dict[str, Any] | None:
    audit = signal.data.get("audit")
    if not isinstance(audit, dict):
        return None
    return {
        **identity(session, day, run_id),
        "action": audit.get("action"),
        "event": signal.events[0] if signal.events else None,
        "score": audit.get("score"),
        "threshold": audit.get("threshold"),
        "per_kind_breakdown": orjson.dumps(audit.get("per_kind_breakdown", {})).decode(),
        "unsupported_sample": [str(x) for x in audit.get("unsupported_sample", [])],
        "response_excerpt": audit.get("response_excerpt"),
        "context_excerpt": audit.get("context_excerpt"),
    }


def analyse(
    reader: SessionReader, suite: DetectorSuite, files: Iterable[tuple[str, bytes | Exception]]
) -> tuple[list[tuple[Session, list[Signal]]], list[FileFailure], int]:
    """Parse one unit of files and run the detectors on each session."""
    result = reader.read_unit(files)
    return [(s, suite.run(s)) for s in result.sessions], result.failures, result.files_parsed


def run_batch(
    *,
    store: Store,
    results: ResultsStore,
    reader: SessionReader,
    suite: DetectorSuite,
    day: date,
    run_id: str,
    batch_no: int,
    units: Sequence[Sequence[tuple[str, int]]],
    read_concurrency: int = 8,
    sampling: SamplingPlan | None = None,
) -> BatchPartial:
    """Analyse ``units``; with a ``sampling`` plan, offer each session to the judge's sample."""
    partial = BatchPartial(frame=SampleFrame(sampling) if sampling else None)
    day_s = day.isoformat()
    session_rows: list[dict[str, Any]] = []
    signal_rows: list[dict[str, Any]] = []
    failure_rows: list[dict[str, Any]] = []
    audit_rows: list[dict[str, Any]] = []
    keys = [key for unit in units for key, _ in unit]
    partial.files = len(keys)
    partial.bytes = sum(size for unit in units for _, size in unit)
    # Reads stream in listing order with bounded concurrency; a unit is analysed as soon as
    # its last file has arrived, so only one unit's bytes are held at a time.
    contents = store.read_many(keys, max_workers=read_concurrency)
    for unit in units:
        files = [next(contents) for _ in unit]
        analysed, failures, parsed = analyse(reader, suite, files)
        partial.files_parsed += parsed
        for failure in failures:
            partial.failures_by_reason[failure.reason] += 1
            if len(partial.failures) < MAX_FAILURES_LISTED:
                partial.failures.append(
                    {"source": failure.source, "reason": failure.reason, "message": failure.message}
                )
            failure_rows.append(
                {
                    "date": day_s,
                    "run_id": run_id,
                    "source": failure.source,
                    "reason": failure.reason,
                    "message": failure.message,
                }
            )
        for session, signals in analysed:
            row = session_row(session, len(signals), day_s, run_id)
            session_rows.append(row)
            partial.sessions += 1
            partial.events += row["events"]
            partial.tool_calls += row["tool_calls"]
            partial.replies += row["replies"]
            partial.formats[session.format] += 1
            if session.registered_tools is None:
                partial.sessions_without_tools += 1
            partial.not_found_probes += int(session.meta.get("not_found_probes", 0))
            group = partial.groups.setdefault((session.agent, session.agent_version), GroupCounts())
            group.add_session(row["tool_calls"], row["replies"], (s.kind for s in signals))
            if partial.frame is not None:
                partial.frame.offer(
                    session.id, session.agent, session.agent_version, unit, bool(signals)
                )
            for signal in signals:
                partial.signals_by_kind[signal.kind] += 1
                signal_rows.append(signal_row(signal, session, day_s, run_id))
                audit = audit_row(signal, session, day_s, run_id)
                if audit is not None:
                    audit_rows.append(audit)
    results.write_part("sessions", day, run_id, batch_no, session_rows)
    results.write_part("signals", day, run_id, batch_no, signal_rows)
    results.write_part("failures", day, run_id, batch_no, failure_rows)
    results.write_part("audit", day, run_id, batch_no, audit_rows)
    return partial
