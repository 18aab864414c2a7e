"""OpenAI Chat Completions transcripts (FORMATS.md section 2), the generic fallback format.

Accepted shapes: an object with ``messages`` (or tau-bench's ``traj``); the logged
``{request, response}`` pair of the last turn; a JSON array or JSON Lines of such objects (one
session each); a bare array of messages (one session). The API has no error flag on tool
results, so errors are inferred from the text and marked as inferred.
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
    first_str,
    looks_anthropic,
    name_of,
    obj,
    pick,
    records,
    registry,
    seq,
    unique_id,
)
from sessions.formats.common import infer_error, json_text, parse_arguments, parse_time, text_of
from sessions.formats.registry import adapter
from sessions.models import EventKind, Session

FORMAT = "openai_chat"
_SNIFF_SAMPLE = 5
_ROLES = {"system": EventKind.SYSTEM, "developer": EventKind.SYSTEM, "user": EventKind.USER}


def messages_of(record: Any) -> list[Any] | None:
    """The message list of a session record, in its request wrapper or not."""
    if not isinstance(record, dict):
        return None
    for holder in (record, record.get("request")):
        if isinstance(holder, dict):
            for key in ("messages", "traj"):
                if isinstance(holder.get(key), list):
                    return holder[key]
    return None


def _is_message(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("role"), str) and "type" not in value


def sniff(doc: Document) -> bool:
    sample = records(doc)[:_SNIFF_SAMPLE]
    if not sample or any(looks_anthropic(r) for r in sample):
        return False
    if all(messages_of(r) is not None for r in sample):
        return True
    # A bare array of messages is one session; require a role only chat uses, or tool calls.
    return all(_is_message(r) for r in sample) and any(
        isinstance(r, dict)
        and (
            name_of(r.get("role")) in ("system", "developer", "tool", "function")
            or "tool_calls" in r
        )
        for r in records(doc)
    )


@adapter(FORMAT, sniff=sniff, priority=90)
def parse(doc: Document) -> list[Session]:
    stem = file_stem(doc.source)
    items = records(doc)
    if items and all(_is_message(r) for r in items):
        return [_session({"messages": items}, doc.source, stem)]
    if not any(messages_of(r) is not None for r in items):
        raise MalformedSessionError(
            f"{doc.source}: no 'messages' (or 'traj') list found for the {FORMAT} format"
        )
    single = isinstance(doc.data, dict)
    used: set[str] = set()
    sessions = []
    for index, record in enumerate(items):
        if messages_of(record) is None:
            continue  # one odd element in an array is skipped, not the whole file
        fallback = stem if single else _element_id(record, stem, index)
        session = _session(record, doc.source, fallback)
        session.id = unique_id(session.id, used, None if single else index)
        sessions.append(session)
    return sessions


def _element_id(record: dict[str, Any], stem: str, index: int) -> str:
    # tau-bench style: task and trial identify an element only within its file.
    task, trial = first_str(record.get("task_id")), first_str(record.get("trial"))
    if task is None:
        return f"{stem}#{index}"
    return f"{stem}#{task}-{trial}" if trial is not None else f"{stem}#{task}"


def _session(record: dict[str, Any], source: str, fallback_id: str) -> Session:
    request = obj(record.get("request")) or record
    response = obj(record.get("response"))
    if response is None and isinstance(record.get("choices"), list):
        response = record
    metadata = dicts(record.get("metadata"), request.get("metadata"))
    conversation = request.get("conversation") or record.get("conversation")
    conversation_id = conversation.get("id") if isinstance(conversation, dict) else None
    top = dicts(record, request)
    session_id = pick(top, ("id", "session_id")) or pick(metadata, SESSION_KEYS)
    session_id = session_id or first_str(
        conversation_id, conversation, record.get("conversation_id")
    )

    log = EventLog()
    history = list(messages_of(record) or [])
    final = _response_message(response)
    if final is not None and not (history and _same_message(history[-1], final[0])):
        history.append(final[0])
    for message in history:
        if isinstance(message, dict):
            _add_message(log, message)
    if final is not None and final[1] and log.events:
        last = log.events[-1]
        if last.kind is EventKind.ASSISTANT:
            last.meta["finish_reason"] = final[1]

    session = Session(
        id=session_id or fallback_id,
        source=source,
        format=FORMAT,
        events=log.events,
        agent=pick(metadata, AGENT_KEYS),
        agent_version=pick(metadata, VERSION_KEYS),
        model=pick(dicts(response, request, record), ("model",)),
        started_at=_started_at(record, request, response),
        registered_tools=registry(_tool_names(request)),
        sources=[source],
        warnings=log.warnings,
    )
    for key in ("task_id", "trial", "reward"):
        if isinstance(record.get(key), int | float | str):
            session.meta[key] = record[key]
    session.reindex()
    return session


def _response_message(response: dict[str, Any] | None) -> tuple[dict[str, Any], Any] | None:
    choices = response.get("choices") if response else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None
    message = choices[0].get("message")
    return (message, choices[0].get("finish_reason")) if isinstance(message, dict) else None


def _same_message(a: Any, b: dict[str, Any]) -> bool:
    """Whether the logged history already ends with the response's message (an echo)."""
    if not isinstance(a, dict) or a.get("role") != b.get("role"):
        return False
    ids = [[c.get("id") for c in seq(m.get("tool_calls")) if isinstance(c, dict)] for m in (a, b)]
    return text_of(a.get("content")) == text_of(b.get("content")) and ids[0] == ids[1]


def _add_message(log: EventLog, message: dict[str, Any]) -> None:
    role = name_of(message.get("role"))
    when = parse_time(message.get("timestamp") or message.get("created_at"))
    if role in _ROLES:
        log.message(_ROLES[role], text_of(message.get("content")), timestamp=when)
    elif role == "assistant":
        refusal = message.get("refusal")
        text = text_of(message.get("content")) or (refusal if isinstance(refusal, str) else "")
        log.message(EventKind.ASSISTANT, text, timestamp=when)
        for call in seq(message.get("tool_calls")):
            if isinstance(call, dict):
                _add_call(log, call, when)
        legacy = message.get("function_call")
        if isinstance(legacy, dict):
            log.call(
                None, legacy.get("name"), parse_arguments(legacy.get("arguments")), timestamp=when
            )
    elif role in ("tool", "function"):
        content = message.get("content")
        output = text_of(content) if isinstance(content, list) else json_text(content)
        inferred = infer_error(output)
        call_id = message.get("tool_call_id") if role == "tool" else None
        log.result(
            call_id,
            output,
            is_error=inferred,
            error_inferred=inferred,
            name=message.get("name"),
            timestamp=when,
        )


def _add_call(log: EventLog, call: dict[str, Any], when: Any) -> None:
    if call.get("type") == "custom" or isinstance(call.get("custom"), dict):
        custom = obj(call.get("custom")) or {}
        # Custom tools take free text, not JSON: keep the input as written.
        log.call(call.get("id"), custom.get("name"), custom.get("input"), timestamp=when)
        return
    function = obj(call.get("function")) or {}
    log.call(
        call.get("id"),
        function.get("name"),
        parse_arguments(function.get("arguments")),
        timestamp=when,
    )


def _tool_names(request: dict[str, Any]) -> list[Any]:
    names: list[Any] = []
    for tool in seq(request.get("tools")):
        if isinstance(tool, dict):
            inner = tool.get("function") or tool.get("custom")
            names.append(inner.get("name") if isinstance(inner, dict) else tool.get("name"))
    for function in seq(request.get("functions")):
        if isinstance(function, dict):
            names.append(function.get("name"))
    return names


def _started_at(record: dict[str, Any], request: dict[str, Any], response: Any) -> Any:
    keys = ("started_at", "created_at", "created", "timestamp")
    for holder in dicts(record, request, response):
        for key in keys:
            when = parse_time(holder.get(key))
            if when is not None:
                return when
    return None
