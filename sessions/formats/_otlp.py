"""Shared decoding for the trace formats: OTLP values and spans, chat messages, span trees.

OTel GenAI and OpenInference both arrive as OTLP JSON or flattened span dicts; all four trace
formats carry OpenAI-style messages and repeat the chat history in every LLM step. Decoding that
once here keeps the adapters small and makes them agree on ordering and deduplication.
"""

from __future__ import annotations

import ast
import base64
import binascii
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson

from sessions.formats.common import parse_arguments, parse_time


def field_of(raw: dict[str, Any], *names: str) -> Any:
    """The first present key: OTLP JSON is lowerCamelCase, proto-name dumps are snake_case."""
    for name in names:
        if raw.get(name) is not None:
            return raw[name]
    return None


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def any_value(value: Any) -> Any:
    """Decode an OTLP AnyValue; anything that is not one (a flat attribute value) passes as is."""
    if not isinstance(value, dict):
        return value
    if not value:
        return None
    if len(value) != 1:
        return value
    key, raw = next(iter(value.items()))
    kind = key.replace("_", "").lower()
    if kind == "stringvalue":
        return raw
    if kind == "intvalue":  # 64-bit ints are decimal strings in OTLP JSON
        try:
            return int(raw)
        except (TypeError, ValueError):
            return raw
    if kind == "doublevalue":
        try:
            return float(raw)
        except (TypeError, ValueError):
            return raw
    if kind == "boolvalue":
        return raw if isinstance(raw, bool) else str(raw).lower() == "true"
    if kind == "arrayvalue":
        return [any_value(v) for v in as_list(as_dict(raw).get("values"))]
    if kind == "kvlistvalue":
        return attributes(as_list(as_dict(raw).get("values")))
    if kind == "bytesvalue":
        try:
            return base64.b64decode(raw).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, TypeError, ValueError):
            return raw
    return value


def attributes(raw: Any, *, flatten: bool = False) -> dict[str, Any]:
    """OTLP ``[{key, value}]`` lists or flat dicts as one dict; ``flatten`` turns Phoenix-style
    nested dicts (``{"llm": {"model_name": ...}}``) into the dotted keys the conventions name."""
    out: dict[str, Any] = {}
    if isinstance(raw, list):
        for item in raw:
            if isinstance(item, dict) and isinstance(item.get("key"), str):
                out[item["key"]] = any_value(item.get("value"))
    elif isinstance(raw, dict):
        for key, value in raw.items():
            if flatten:
                _flatten(str(key), any_value(value), out)
            else:
                out[str(key)] = any_value(value)
    return out


def _flatten(prefix: str, value: Any, out: dict[str, Any]) -> None:
    if isinstance(value, dict) and value:
        for key, inner in value.items():
            _flatten(f"{prefix}.{key}", inner, out)
    elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        for i, inner in enumerate(value):
            _flatten(f"{prefix}.{i}", inner, out)
    else:
        out[prefix] = value


def json_value(value: Any) -> Any:
    """Content attributes may be JSON strings or structured values: return the structure."""
    if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
    return value


def parse_input(value: Any) -> Any:
    """Tool input as an object; Python-repr dicts (LangChain, Traceloop) are read as literals."""
    parsed = parse_arguments(value)
    if isinstance(parsed, str) and parsed.lstrip()[:1] in ("{", "["):
        try:
            literal = ast.literal_eval(parsed.strip())
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return parsed
        if isinstance(literal, dict | list):
            return literal
    return parsed


def nanos(value: Any) -> int:
    """Epoch nanoseconds from OTLP ``*UnixNano`` (string or number) or an ISO timestamp."""
    if isinstance(value, int | float) or (isinstance(value, str) and value.strip().isdigit()):
        number = int(value)
        while 0 < number < 10**17:  # seconds, ms or µs: scale up to ns
            number *= 1000
        return number
    when = parse_time(value)
    return _ns(when) if when else 0


def _ns(when: datetime) -> int:
    return (when - datetime(1970, 1, 1, tzinfo=UTC)) // _MICRO * 1000


_MICRO = datetime(1970, 1, 1, 0, 0, 0, 1, tzinfo=UTC) - datetime(1970, 1, 1, tzinfo=UTC)


def stamp(ns: int) -> datetime | None:
    return datetime.fromtimestamp(ns / 1e9, tz=UTC) if ns > 0 else None


def indexed(attrs: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """Group flattened ``<prefix>.<i>.<rest>`` keys into one ``{rest: value}`` dict per index."""
    groups: dict[int, dict[str, Any]] = {}
    start = prefix + "."
    for key, value in attrs.items():
        if key.startswith(start):
            head, _, rest = key[len(start) :].partition(".")
            if head.isdigit() and rest:
                groups.setdefault(int(head), {})[rest] = value
    return [groups[i] for i in sorted(groups)]


# --- spans ---------------------------------------------------------------------------------


@dataclass(slots=True)
class SpanEvent:
    name: str
    time: int
    attrs: dict[str, Any]


@dataclass(slots=True)
class Span:
    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start: int
    end: int
    attrs: dict[str, Any]
    resource: dict[str, Any]
    events: list[SpanEvent]
    status: str  # ERROR, OK or UNSET, whatever the encoding (2, STATUS_CODE_ERROR, "ERROR")
    status_message: str
    order: int
    raw: dict[str, Any] = field(repr=False, default_factory=dict)


def span_from(raw: dict[str, Any], resource: dict[str, Any], order: int, flatten: bool) -> Span:
    """One span from OTLP JSON, a proto-name dump or a Phoenix/OpenInference flat span dict."""
    context: dict[str, Any] = c if isinstance(c := raw.get("context"), dict) else {}
    events = []
    for event in as_list(raw.get("events")):
        if isinstance(event, dict):
            when = nanos(field_of(event, "timeUnixNano", "time_unix_nano", "timestamp"))
            events.append(
                SpanEvent(
                    str(event.get("name") or ""),
                    when,
                    attributes(event.get("attributes"), flatten=flatten),
                )
            )
    status, message = _status(raw)
    start = nanos(field_of(raw, "startTimeUnixNano", "start_time_unix_nano", "start_time"))
    end = nanos(field_of(raw, "endTimeUnixNano", "end_time_unix_nano", "end_time")) or start
    parent = field_of(raw, "parentSpanId", "parent_span_id", "parent_id", "parentId")
    return Span(
        trace_id=str(field_of(raw, "traceId", "trace_id") or context.get("trace_id") or ""),
        span_id=str(field_of(raw, "spanId", "span_id") or context.get("span_id") or order),
        parent_id=str(parent) if parent else None,
        name=str(raw.get("name") or ""),
        start=start,
        end=end,
        attrs=attributes(raw.get("attributes"), flatten=flatten),
        resource=resource,
        events=events,
        status=status,
        status_message=message,
        order=order,
        raw=raw,
    )


def _status(raw: dict[str, Any]) -> tuple[str, str]:
    status = raw.get("status")
    code: Any = None
    message: Any = None
    if isinstance(status, dict):
        code = field_of(status, "code", "status_code", "statusCode")
        message = field_of(status, "message", "description")
    elif isinstance(status, str | int):
        code = status
    if code is None:
        code = field_of(raw, "status_code", "statusCode")
    message = message or field_of(raw, "status_message", "statusMessage")
    text = str(code).upper() if code is not None else ""
    if text in ("2", "ERROR", "STATUS_CODE_ERROR"):
        return "ERROR", str(message or "")
    return ("OK" if text in ("1", "OK", "STATUS_CODE_OK") else "UNSET"), str(message or "")


def otlp_requests(data: Any) -> list[dict[str, Any]]:
    """The ``ExportTraceServiceRequest`` objects of a file (one, or one per JSON line)."""
    items = data if isinstance(data, list) else [data]
    return [
        item
        for item in items
        if isinstance(item, dict)
        and isinstance(field_of(item, "resourceSpans", "resource_spans"), list)
    ]


def otlp_spans(data: Any, *, flatten: bool = False) -> list[Span]:
    spans: list[Span] = []
    for request in otlp_requests(data):
        for rs in field_of(request, "resourceSpans", "resource_spans"):
            if not isinstance(rs, dict):
                continue
            resource = attributes(as_dict(rs.get("resource")).get("attributes"))
            scopes = field_of(rs, "scopeSpans", "scope_spans", "instrumentationLibrarySpans")
            for scope in as_list(scopes):
                for raw in as_list(as_dict(scope).get("spans")):
                    if isinstance(raw, dict):
                        spans.append(span_from(raw, resource, len(spans), flatten))
    return spans


def span_error(span: Span) -> tuple[bool, str]:
    """Status ERROR or an ``error.type`` attribute; the message from the status, else the
    ``exception`` event, else the error type itself."""
    error_type = span.attrs.get("error.type")
    if span.status != "ERROR" and error_type in (None, ""):
        return False, ""
    exc = next((e.attrs for e in span.events if e.name == "exception"), {})
    message = span.status_message or exc.get("exception.message") or error_type or "error"
    return True, str(message)


def group_sessions(
    spans: list[Span], keys: tuple[str, ...], fallback: str
) -> list[tuple[str, list[Span]]]:
    """Spans per session: a trace's first conversation id (any span may carry it), else the
    trace id; traces sharing a conversation id are one session. Spans come back in time order."""
    traces: dict[str, list[Span]] = {}
    for span in spans:
        traces.setdefault(span.trace_id, []).append(span)
    sessions: dict[str, list[Span]] = {}
    for trace_id, members in traces.items():
        conv = next((s.attrs[k] for s in members for k in keys if s.attrs.get(k)), None)
        sessions.setdefault(str(conv or trace_id or fallback), []).extend(members)
    return [(sid, sorted(m, key=lambda s: (s.start, s.order))) for sid, m in sessions.items()]


def nearest(node: str | None, parent: dict[str, str | None], label: dict[str, str]) -> str | None:
    """The label of the closest labelled node at or above ``node`` (e.g. the agent span a step
    runs under); cycles in broken exports stop the walk."""
    seen: set[str] = set()
    while node is not None and node not in seen:
        if node in label:
            return label[node]
        seen.add(node)
        node = parent.get(node)
    return None


def first_attr(spans: list[Span], *keys: str) -> str | None:
    """The first non-empty value of the first key any span carries (keys in preference order)."""
    for key in keys:
        for span in spans:
            value = span.attrs.get(key)
            if value not in (None, ""):
                return str(value)
    return None


def resource_attr(spans: list[Span], key: str) -> str | None:
    return next((str(s.resource[key]) for s in spans if s.resource.get(key)), None)


def subtree_end(spans: list[Span]) -> dict[str, int]:
    """Each span's latest end over itself and its descendants: an agent's reply belongs after
    everything it ran, even when the exporter gave the agent span a short or missing end."""
    parent = {s.span_id: s.parent_id for s in spans}
    ends = {s.span_id: s.end for s in spans}
    for span in spans:
        node, seen = span.parent_id, set()
        while node is not None and node in ends and node not in seen:
            seen.add(node)
            ends[node] = max(ends[node], span.end)
            node = parent[node]
    return ends
