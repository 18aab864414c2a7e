"""OpenAI Agents SDK trace/span export (FORMATS.md section 3.3).

The ``BackendSpanExporter`` batch ``{"data": [trace, span, ...]}``, a bare array of those
objects, or JSON Lines of either. Traces sharing a ``group_id`` (one conversation over several
runs) are one session. ``function`` spans have no call id, so the span id stands in for it; the
span's ``error`` is the explicit error flag. Messages exist only in ``generation`` spans (Chat
Completions models); with the default Responses model the trace holds tool spans only.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from typing import Any

from sessions.documents import Document
from sessions.errors import MalformedSessionError
from sessions.formats._messages import (
    AGENT_KEYS,
    VERSION_KEYS,
    dicts,
    file_stem,
    first_str,
    name_of,
    obj,
    pick,
    records,
    registry,
    seq,
)
from sessions.formats.common import json_text, parse_arguments, parse_time, text_of
from sessions.formats.registry import adapter
from sessions.models import Event, EventKind, Session

FORMAT = "openai_agents"
_OBJECTS = frozenset({"trace", "trace.span"})
_ROLES = {
    "user": EventKind.USER,
    "system": EventKind.SYSTEM,
    "developer": EventKind.SYSTEM,
    "assistant": EventKind.ASSISTANT,
}
_EARLY = datetime.min.replace(tzinfo=UTC)
_MAX_DEPTH = 64  # parent chains are shallow; the bound only guards against a cycle in bad data


def _elements(doc: Document) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for value in records(doc):
        if isinstance(value, dict) and isinstance(value.get("data"), list):
            out.extend(v for v in value["data"] if isinstance(v, dict))
        elif isinstance(value, dict):
            out.append(value)
    return out


def sniff(doc: Document) -> bool:
    sample = _elements(doc)[:20]
    return bool(sample) and all(name_of(e.get("object")) in _OBJECTS for e in sample)


@adapter(FORMAT, sniff=sniff, priority=20)
def parse(doc: Document) -> list[Session]:
    traces: dict[str, dict[str, Any]] = {}
    spans: dict[str, list[dict[str, Any]]] = {}
    seen_spans: set[Any] = set()
    for element in _elements(doc):
        if element.get("object") == "trace" and isinstance(element.get("id"), str):
            traces.setdefault(element["id"], element)
            spans.setdefault(element["id"], [])
        elif element.get("object") == "trace.span":
            span_id = first_str(element.get("id"))
            if span_id is not None and span_id in seen_spans:
                continue  # an exporter retry can write the same span twice
            seen_spans.add(span_id)
            spans.setdefault(str(element.get("trace_id") or ""), []).append(element)
    if not spans:
        raise MalformedSessionError(f"{doc.source}: no 'trace' or 'trace.span' objects in 'data'")
    groups: dict[str, list[str]] = {}
    for trace_id in spans:
        group = first_str(traces.get(trace_id, {}).get("group_id"))
        groups.setdefault(group or trace_id or file_stem(doc.source), []).append(trace_id)
    return [
        _session(sid, ids, [(traces.get(t, {}), spans[t]) for t in ids], doc.source)
        for sid, ids in groups.items()
    ]


Part = tuple[dict[str, Any], list[dict[str, Any]]]  # a trace object ({} if absent), its spans


def _session(session_id: str, trace_ids: list[str], parts: list[Part], source: str) -> Session:
    all_spans = [s for _, trace_spans in parts for s in trace_spans]
    by_id = {s["id"]: s for s in all_spans if isinstance(s.get("id"), str)}
    ordered = sorted(all_spans, key=lambda s: parse_time(s.get("started_at")) or _EARLY)
    keyed: list[tuple[datetime, int, Event]] = []
    tools: list[Any] = []
    agents: list[str] = []
    models: list[str] = []
    seen: Counter[tuple[str, str]] = Counter()
    kinds: Counter[str] = Counter()
    start = min((parse_time(s.get("started_at")) for s in ordered), default=None, key=_key)

    def add(event: Event, fallback: datetime | None) -> None:
        keyed.append((event.timestamp or fallback or start or _EARLY, len(keyed), event))

    for span in ordered:
        data = obj(span.get("span_data")) or {}
        kind = str(data.get("type"))
        kinds[kind] += 1
        subagent = _subagent(span, by_id)
        if kind == "agent":
            tools.extend(seq(data.get("tools")))
            if isinstance(data.get("name"), str) and _subagent(span, by_id, own=True) is None:
                agents.append(data["name"])
        elif kind == "mcp_tools":
            tools.extend(seq(data.get("result")))
        elif kind == "function":
            for event in _tool_events(span, data, len(keyed), subagent):
                add(event, None)
        elif kind == "generation":
            if isinstance(data.get("model"), str):
                models.append(data["model"])
            # Each generation's input repeats the history: only messages not seen yet are new,
            # and they came in when the agent run they belong to started.
            run_start = _run_start(span, by_id)
            for event in _new_messages(data.get("input"), seen, subagent, run_start):
                add(event, run_start)
            end = parse_time(span.get("ended_at"))
            for event in _new_messages(data.get("output"), seen, subagent, end):
                add(event, end)

    keyed.sort(key=lambda k: (k[0], k[1]))
    traces = [t for t, _ in parts if t]
    metadata = dicts(*(t.get("metadata") for t in traces))
    session = Session(
        id=session_id,
        source=source,
        format=FORMAT,
        events=[event for _, _, event in keyed],
        agent=agents[0] if agents else pick(metadata, AGENT_KEYS),
        agent_version=pick(metadata, VERSION_KEYS),
        model=models[0] if models else None,
        started_at=start,
        registered_tools=registry(tools),
        sources=[source],
    )
    session.meta["trace_ids"] = trace_ids
    workflows = sorted(
        {t["workflow_name"] for t in traces if isinstance(t.get("workflow_name"), str)}
    )
    if workflows:
        session.meta["workflow_names"] = workflows
    if kinds["response"] and not kinds["generation"]:
        session.warnings.append(
            "the trace has 'response' spans only: user and assistant messages are not in it"
        )
    session.reindex()
    return session


def _key(value: datetime | None) -> datetime:
    return value or datetime.max.replace(tzinfo=UTC)


def _tool_events(
    span: dict[str, Any], data: dict[str, Any], n: int, subagent: str | None
) -> list[Event]:
    call_id = first_str(span.get("id")) or f"span-{n}"
    name = data.get("name") if isinstance(data.get("name"), str) else None
    meta: dict[str, Any] = {"synthetic_call_id": True}
    if data.get("mcp_data"):
        meta["mcp_data"] = data["mcp_data"]
    error = span.get("error")
    result_meta = dict(meta)
    if isinstance(error, dict) and error.get("message"):
        result_meta["error_message"] = error["message"]
    started = parse_time(span.get("started_at"))
    return [
        Event(
            EventKind.TOOL_CALL,
            call_id=call_id,
            name=name,
            input=parse_arguments(data.get("input")),
            subagent=subagent,
            timestamp=started,
            meta=meta,
        ),
        Event(
            EventKind.TOOL_RESULT,
            call_id=call_id,
            name=name,
            output=json_text(data.get("output")),
            is_error=error is not None,
            subagent=subagent,
            timestamp=parse_time(span.get("ended_at")) or started,
            meta=result_meta,
        ),
    ]


def _new_messages(
    value: Any, seen: Counter[tuple[str, str]], subagent: str | None, when: datetime | None
) -> list[Event]:
    """Text messages of a generation's input/output not already counted in the session."""
    here: Counter[tuple[str, str]] = Counter()
    events = []
    for message in value if isinstance(value, list) else []:
        if not isinstance(message, dict) or name_of(message.get("role")) not in _ROLES:
            continue
        key = (message["role"], text_of(message.get("content")))
        if not key[1]:
            continue  # tool-call-only turns: the function spans carry those
        here[key] += 1
        if here[key] > seen[key]:
            seen[key] += 1
            events.append(Event(_ROLES[key[0]], text=key[1], subagent=subagent, timestamp=when))
    return events


def _ancestors(span: dict[str, Any], by_id: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    chain: list[dict[str, Any]] = []
    current = by_id.get(name_of(span.get("parent_id")) or "")
    while current is not None and len(chain) < _MAX_DEPTH:
        chain.append(current)
        current = by_id.get(name_of(current.get("parent_id")) or "")
    return chain


def _subagent(
    span: dict[str, Any], by_id: dict[str, dict[str, Any]], own: bool = False
) -> str | None:
    """The agent a span belongs to when that agent runs as a tool of another (agent.as_tool).

    With ``own`` the span itself is an agent span and the question is about it.
    """
    owner: str | None = None
    chain = ([span] if own else []) + _ancestors(span, by_id)
    for node in chain:
        data = obj(node.get("span_data")) or {}
        if data.get("type") == "agent" and owner is None:
            owner = str(data.get("name"))
        elif data.get("type") == "function" and owner is not None:
            return owner
    return None


def _run_start(span: dict[str, Any], by_id: dict[str, dict[str, Any]]) -> datetime | None:
    for node in _ancestors(span, by_id):
        data = obj(node.get("span_data")) or {}
        if data.get("type") == "agent":
            return parse_time(node.get("started_at"))
    return parse_time(span.get("started_at"))
