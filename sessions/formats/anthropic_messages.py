"""Anthropic Messages API transcripts (FORMATS.md section 4).

Accepted shapes: the logged ``{request, response}`` pair of the last turn, a bare request
``{model, system, messages, tools}``, and a JSON array or JSON Lines of either (one session
each). Tool results carry an explicit ``is_error``; server tools report failures as a
``*_tool_result_error`` content object. The API has no session id: a logger's own ``id`` /
``session_id`` / ``metadata`` is used when present, else the file name.
"""

from __future__ import annotations

from typing import Any

from sessions.documents import Document
from sessions.errors import MalformedSessionError
from sessions.formats._messages import (
    AGENT_KEYS,
    SESSION_KEYS,
    VERSION_KEYS,
    EventLog,
    dicts,
    file_stem,
    looks_anthropic,
    name_of,
    obj,
    pick,
    records,
    registry,
    seq,
    unique_id,
)
from sessions.formats.common import json_text, parse_arguments, parse_time, text_of
from sessions.formats.registry import adapter
from sessions.models import EventKind, Session

FORMAT = "anthropic_messages"
_CALLS = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})
_SKIPPED = frozenset({"thinking", "redacted_thinking"})  # reasoning, not claims or actions


def _request(record: Any) -> dict[str, Any] | None:
    if not isinstance(record, dict):
        return None
    request = obj(record.get("request")) or record
    return request if isinstance(request.get("messages"), list) else None


def _openai_marks(request: dict[str, Any], record: dict[str, Any]) -> bool:
    """Marks only OpenAI chat has: roles Anthropic rejects, tool_calls, ``choices``."""
    response = record.get("response")
    if isinstance(response, dict) and "choices" in response:
        return True
    return any(
        isinstance(m, dict)
        and (
            name_of(m.get("role")) in ("system", "developer", "tool", "function")
            or "tool_calls" in m
        )
        for m in request["messages"]
    )


def sniff(doc: Document) -> bool:
    sample = records(doc)[:5]
    if not sample:
        return False
    for record in sample:
        request = _request(record)
        if request is None or _openai_marks(request, record) or not looks_anthropic(record):
            return False
    return True


@adapter(FORMAT, sniff=sniff, priority=50)
def parse(doc: Document) -> list[Session]:
    stem = file_stem(doc.source)
    items = records(doc)
    if not any(_request(r) is not None for r in items):
        raise MalformedSessionError(
            f"{doc.source}: no request with a 'messages' list found for the {FORMAT} format"
        )
    single = isinstance(doc.data, dict)
    used: set[str] = set()
    sessions = []
    for index, record in enumerate(items):
        if _request(record) is None:
            continue
        session = _session(record, doc.source, stem if single else f"{stem}#{index}")
        session.id = unique_id(session.id, used, None if single else index)
        sessions.append(session)
    return sessions


def _session(record: dict[str, Any], source: str, fallback_id: str) -> Session:
    request = _request(record) or {}
    response = obj(record.get("response"))
    log = EventLog()
    system = request.get("system")
    log.message(EventKind.SYSTEM, text_of(system))
    history = [m for m in request["messages"] if isinstance(m, dict)]
    if response is not None and isinstance(response.get("content"), list):
        reply = {"role": "assistant", "content": response["content"]}
        if not (history and _same(history[-1], reply)):
            history.append(reply)
    for message in history:
        _add_message(log, message)
    last = log.events[-1] if log.events else None
    stop_reason = response.get("stop_reason") if response is not None else None
    if stop_reason and last is not None and last.kind is EventKind.ASSISTANT:
        last.meta["stop_reason"] = stop_reason

    metadata = dicts(record.get("metadata"), request.get("metadata"))
    top = dicts(record, request)
    session = Session(
        id=pick(top, ("id", "session_id")) or pick(metadata, SESSION_KEYS) or fallback_id,
        source=source,
        format=FORMAT,
        events=log.events,
        agent=pick(metadata, AGENT_KEYS),
        agent_version=pick(metadata, VERSION_KEYS),
        model=pick(dicts(response, request), ("model",)),
        started_at=next(
            filter(None, (parse_time(h.get(k)) for h in top for k in ("created_at", "timestamp"))),
            None,
        ),
        registered_tools=registry(_tool_names(request, history)),
        sources=[source],
        warnings=log.warnings,
    )
    session.reindex()
    return session


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return a.get("role") == b.get("role") and a.get("content") == b.get("content")


def _add_message(log: EventLog, message: dict[str, Any]) -> None:
    role = message.get("role")
    kind = EventKind.ASSISTANT if role == "assistant" else EventKind.USER
    content = message.get("content")
    if not isinstance(content, list):
        log.message(kind, text_of(content))
        return
    texts: list[str] = []
    for block in content:
        if not isinstance(block, dict):
            texts.append(text_of(block))
            continue
        block_type = str(block.get("type"))
        if block_type in _SKIPPED:
            continue
        if (
            block_type in _CALLS
            or block_type.endswith("_tool_result")
            or block_type == "tool_result"
        ):
            # Keep text and tool steps in the order the blocks give them.
            log.message(kind, "\n".join(t for t in texts if t))
            texts = []
            _add_tool_block(log, block, block_type)
        else:
            texts.append(text_of(block))
    log.message(kind, "\n".join(t for t in texts if t))


def _add_tool_block(log: EventLog, block: dict[str, Any], block_type: str) -> None:
    if block_type in _CALLS:
        value = block.get("input")
        meta = {"server_tool": True} if block_type == "server_tool_use" else {}
        if block.get("server_name"):
            meta["server_name"] = block["server_name"]
        log.call(block.get("id"), block.get("name"), parse_arguments(value), meta=meta)
        return
    content = block.get("content")
    error_object = isinstance(content, dict) and str(content.get("type", "")).endswith("_error")
    output = text_of(content) if isinstance(content, list | str) else json_text(content)
    if block_type not in ("tool_result", "mcp_tool_result") and isinstance(content, list):
        output = json_text(content)  # server tool results are structured (search hits, ...)
    log.result(
        block.get("tool_use_id"), output, is_error=bool(block.get("is_error")) or error_object
    )


def _tool_names(request: dict[str, Any], history: list[dict[str, Any]]) -> list[Any]:
    names: list[Any] = [t.get("name") for t in seq(request.get("tools")) if isinstance(t, dict)]
    if isinstance(request.get("mcp_servers"), list):
        # The MCP connector lists servers, not their tools: calls to them are registered tools.
        names.extend(
            block.get("name")
            for m in history
            for block in seq(m.get("content"))
            if isinstance(block, dict) and block.get("type") == "mcp_tool_use"
        )
    return names
