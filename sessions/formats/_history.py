"""Chat messages inside trace formats, and turning repeated history into one event list.

Every LLM span or run of a trace records the whole conversation so far, in OpenAI, OTel
``parts``, Anthropic-block or LangChain shapes. ``message_from`` reads them all into ``Msg``;
``replay`` emits each message once, in time order, merged with the tool steps the adapter adds.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sessions.formats._otlp import (
    Span,
    as_dict,
    as_list,
    json_value,
    parse_input,
    span_error,
    stamp,
)
from sessions.formats.common import infer_error, json_text, text_of
from sessions.models import Event, EventKind, ToolRegistry

ROLES = {"human": "user", "ai": "assistant", "model": "assistant", "function": "tool"}
_CALL_PARTS = ("tool_call", "tool_use", "function_call")
_RESULT_PARTS = ("tool_call_response", "tool_result", "function_call_output")
_SKIP_PARTS = ("reasoning", "thinking", "redacted_thinking")


@dataclass(slots=True)
class Msg:
    role: str
    text: str = ""
    calls: list[tuple[str | None, str, Any]] = field(default_factory=list)
    results: list[tuple[str | None, str]] = field(default_factory=list)

    def key(self) -> tuple[Any, ...]:
        calls = tuple((c[0], c[1], json_text(c[2])) for c in self.calls)
        return (self.role, self.text, calls, tuple(self.results))


def call_from(raw: Any) -> tuple[str | None, str, Any] | None:
    """An OpenAI ``{id, function: {name, arguments}}``, OTel part or LangChain ``{name, args}``."""
    if not isinstance(raw, dict):
        return None
    fn: dict[str, Any] = f if isinstance(f := raw.get("function"), dict) else raw
    name = fn.get("name")
    if not name:
        return None
    args = next((fn[k] for k in ("arguments", "args", "input") if fn.get(k) is not None), None)
    call_id = raw.get("id") or raw.get("call_id")
    return (str(call_id) if call_id else None, str(name), parse_input(args))


def message_from(raw: Any, role: str = "user") -> Msg | None:
    if isinstance(raw, str):
        return Msg(role, raw) if raw else None
    if isinstance(raw, list | tuple) and len(raw) == 2 and isinstance(raw[0], str):
        return message_from({"role": raw[0], "content": raw[1]}, role)  # ("user", "hi") form
    if not isinstance(raw, dict):
        return None
    if isinstance(raw.get("message"), dict) and "role" not in raw:  # gen_ai.choice, generations
        return message_from(raw["message"], "assistant")
    if isinstance(raw.get("kwargs"), dict) and raw.get("lc"):  # LangChain serialised message
        raw = {**raw["kwargs"], "role": _lc_role(raw)}
    role = str(raw.get("role") or _lc_role(raw) or role)
    msg = Msg(ROLES.get(role, role))
    texts: list[str] = []
    content = raw.get("content")
    parts = raw.get("parts") if isinstance(raw.get("parts"), list) else []
    for part in parts + (content if isinstance(content, list) else []):
        _add_part(msg, part, texts)
    if content is not None and not isinstance(content, list):
        texts.append(text_of(content))
    extra = as_list(as_dict(raw.get("additional_kwargs")).get("tool_calls"))
    for raw_call in as_list(raw.get("tool_calls")) or extra:
        call = call_from(raw_call)
        if call:
            msg.calls.append(call)
    text = "\n".join(t for t in texts if t)
    if msg.role == "tool" and not msg.results:
        call_id = raw.get("tool_call_id") or raw.get("id")
        msg.results.append((str(call_id) if call_id else None, text))
    else:
        msg.text = text
    return msg


def _lc_role(raw: dict[str, Any]) -> str | None:
    ids = raw.get("id")
    if isinstance(ids, list) and ids and isinstance(ids[-1], str):
        cls = ids[-1].removesuffix("MessageChunk").removesuffix("Message").lower()
        return ROLES.get(cls, cls)
    kind = raw.get("type")
    return ROLES.get(kind, kind) if kind in ("human", "ai", "tool", "system") else None


def _add_part(msg: Msg, part: Any, texts: list[str]) -> None:
    kind = part.get("type") if isinstance(part, dict) else None
    if kind in _CALL_PARTS and isinstance(part, dict):
        call = call_from(part)
        if call:
            msg.calls.append(call)
    elif kind in _RESULT_PARTS and isinstance(part, dict):
        # the OTel schema says ``response``; its own doc examples write ``result``
        value = next(
            (part[k] for k in ("response", "result", "content", "output") if k in part), None
        )
        call_id = part.get("id") or part.get("tool_use_id") or part.get("call_id")
        msg.results.append(
            (
                str(call_id) if call_id else None,
                text_of(value) if isinstance(value, list) else json_text(value),
            )
        )
    elif kind not in _SKIP_PARTS:
        texts.append(text_of(part))


def to_msgs(value: Any, role: str = "user") -> list[Msg]:
    """A message list, one message, ``{"messages": [...]}`` or a bare string (given ``role``)."""
    value = json_value(value)
    if isinstance(value, dict):
        inner = value.get("messages")
        if (
            isinstance(inner, list)
            and inner
            and isinstance(inner[0], list)
            and inner[0]
            and isinstance(inner[0][0], dict)
        ):
            inner = inner[-1]  # LangChain chat-model inputs are a batch of message lists
        value = inner if isinstance(inner, list) else [value]
    items = value if isinstance(value, list) else [value]
    msgs = (message_from(item, role) for item in items)
    return [m for m in msgs if m is not None]


def user_msgs(value: Any) -> list[Msg]:
    """The user turns of an agent's input: messages, a string, or ``{"input": "..."}``-like."""
    value = json_value(value)
    if isinstance(value, dict) and "messages" not in value:
        keys = ("input", "query", "question", "prompt", "content", "text")
        text = next((value[k] for k in keys if isinstance(value.get(k), str)), None)
        return [Msg("user", text)] if text else []
    return [m for m in to_msgs(value) if m.role == "user" and m.text]


# --- replay ---------------------------------------------------------------------------------


@dataclass(slots=True)
class Batch:
    """Messages recorded at one point: ``fresh`` ones (an LLM's output) are new by definition;
    the others are history and only their not-yet-seen part is emitted."""

    time: int
    rank: int
    msgs: list[Msg]
    fresh: bool
    subagent: str | None = None
    calls: bool = True  # False where the trace has real tool steps: see ``replay``


class Timeline:
    """Events keyed by (time, rank): steps interleave by time, ties keep span order."""

    def __init__(self) -> None:
        self._items: list[tuple[tuple[int, int, int], Event]] = []

    def add(self, time: int, rank: int, event: Event) -> None:
        if event.timestamp is None:
            event.timestamp = stamp(time)
        self._items.append(((time, rank, len(self._items)), event))

    def events(self) -> list[Event]:
        return [event for _, event in sorted(self._items, key=lambda item: item[0])]


def replay(batches: Iterable[Batch], timeline: Timeline, *, calls: bool = True) -> None:
    """Emit each message once. A message counts as new when it occurs more often in a batch than
    it was emitted so far, so a user really repeating "continue" is kept. ``calls`` is False when
    the trace has real tool spans: the intents in messages would then duplicate them."""
    seen: dict[str | None, Counter[tuple[Any, ...]]] = {}
    for batch in sorted(batches, key=lambda b: (b.time, b.rank)):
        emitted = seen.setdefault(batch.subagent, Counter())
        local: Counter[tuple[Any, ...]] = Counter()
        for msg in batch.msgs:
            key = msg.key()
            local[key] += 1
            if not batch.fresh and local[key] <= emitted[key]:
                continue
            emitted[key] += 1
            for event in _events(msg, calls and batch.calls):
                event.subagent = batch.subagent
                timeline.add(batch.time, batch.rank, event)


def _events(msg: Msg, calls: bool) -> list[Event]:
    out: list[Event] = []
    if msg.text and msg.role in ("user", "assistant", "system"):
        kind = {"user": EventKind.USER, "assistant": EventKind.ASSISTANT}.get(msg.role)
        out.append(Event(kind or EventKind.SYSTEM, text=msg.text))
    if calls:
        for call_id, name, args in msg.calls:
            out.append(Event(EventKind.TOOL_CALL, call_id=call_id, name=name, input=args))
        for call_id, output in msg.results:
            # message parts carry no error flag: infer conservatively and say so
            failed = infer_error(output)
            out.append(
                Event(
                    EventKind.TOOL_RESULT,
                    call_id=call_id,
                    output=output,
                    is_error=failed,
                    error_inferred=failed,
                )
            )
    return out


class CallPool:
    """Tool calls the model asked for, so a tool step without an id gets its request's id."""

    def __init__(self) -> None:
        self._calls: list[tuple[str | None, str, Any]] = []
        self._used: set[int] = set()

    def add(self, msgs: Iterable[Msg]) -> None:
        for msg in msgs:
            self._calls.extend(msg.calls)

    def claim(self, call_id: str | None, name: str | None, args: Any) -> tuple[str | None, Any]:
        """Mark the matching request used; return its id and arguments (exact arguments first,
        then the first unused call of that name)."""
        free = [i for i in range(len(self._calls)) if i not in self._used]
        if call_id is not None:
            hits = [i for i in free if self._calls[i][0] == call_id]
        else:
            named = [i for i in free if self._calls[i][1] == name]
            hits = [i for i in named if self._calls[i][2] == args] or named
        if not hits:
            return call_id, args
        self._used.add(hits[0])
        found = self._calls[hits[0]]
        return found[0] or call_id, args if args not in (None, "", {}) else found[2]


def add_tool_step(
    timeline: Timeline,
    pool: CallPool,
    rank: int,
    who: str | None,
    *,
    call_at: int,
    result_at: int,
    given: Any,
    fallback_id: str,
    name: str,
    args: Any,
    output: str,
    failed: bool,
) -> None:
    """A trace's tool step as its TOOL_CALL at ``call_at`` and TOOL_RESULT at ``result_at``. The
    call id is the one ``given``, else the matching request's in ``pool`` (which also fills in
    missing arguments), else ``fallback_id``: a result must pair with its call."""
    call_id, args = pool.claim(str(given) if given else None, name, args)
    call_id = call_id or fallback_id
    timeline.add(
        call_at,
        rank,
        Event(EventKind.TOOL_CALL, call_id=call_id, name=name, input=args, subagent=who),
    )
    timeline.add(
        result_at,
        rank,
        Event(
            EventKind.TOOL_RESULT,
            call_id=call_id,
            name=name,
            output=output,
            is_error=failed,
            subagent=who,
        ),
    )


def add_span_tool(
    span: Span,
    rank: int,
    timeline: Timeline,
    pool: CallPool,
    who: str | None,
    *,
    name: str,
    given: Any,
    args: Any,
    result: Any,
) -> None:
    """The tool step of an OTLP tool span (see ``add_tool_step``), the span's own id the last
    resort; its output is ``result``, else the span's error message when it failed."""
    failed, message = span_error(span)
    add_tool_step(
        timeline,
        pool,
        rank,
        who,
        call_at=span.start,
        result_at=span.end,
        given=given,
        fallback_id=f"span:{span.span_id}",
        name=name,
        args=args,
        output=json_text(result) if result not in (None, "") else (message if failed else ""),
        failed=failed,
    )


def tool_registry(definitions: Iterable[Any]) -> ToolRegistry | None:
    """Names from OpenAI/OTel tool definitions (JSON strings or objects); None when none."""
    names: set[str] = set()
    for item in definitions:
        item = json_value(item)
        for tool in item if isinstance(item, list) else [item]:
            if isinstance(tool, str) and tool:
                names.add(tool)
            elif isinstance(tool, dict):
                fn: dict[str, Any] = f if isinstance(f := tool.get("function"), dict) else tool
                if isinstance(fn.get("name"), str) and fn["name"]:
                    names.add(fn["name"])
    return ToolRegistry(frozenset(names), "session") if names else None


def dedupe_calls(events: list[Event]) -> list[Event]:
    """One tool call and one result per call id (retried exports and overlapping files repeat
    spans); steps without an id are kept as they are."""
    seen: set[tuple[EventKind, str]] = set()
    out: list[Event] = []
    for event in events:
        if event.kind in (EventKind.TOOL_CALL, EventKind.TOOL_RESULT) and event.call_id:
            key = (event.kind, event.call_id)
            if key in seen:
                continue
            seen.add(key)
        out.append(event)
    return out


# --- retrieval ------------------------------------------------------------------------------

_DOC_KEYS = ("pageContent", "page_content", "content", "text")


def retrieved_text(value: Any) -> str:
    """The documents a retrieval step returned, as text: each document's content (``pageContent``
    / ``page_content`` / ``content`` / ``text``; LangChain's serialised ``Document`` too) with its
    ``metadata`` as JSON on the next line, documents joined by blank lines. A list of documents or
    strings, ``{"documents": [...]}`` or one document; anything else is its JSON text."""
    value = json_value(value)
    if value in (None, "", [], {}):
        return ""
    if isinstance(value, dict) and isinstance(value.get("documents"), list):
        docs: list[Any] = value["documents"]
    elif isinstance(value, list):
        docs = value
    elif isinstance(value, dict) and _doc_content(_unwrap_lc(value)) is not None:
        docs = [value]
    else:
        return json_text(value)
    return "\n\n".join(t for t in map(_document_text, docs) if t)


def _unwrap_lc(doc: dict[str, Any]) -> dict[str, Any]:
    kwargs = doc.get("kwargs")
    return kwargs if doc.get("lc") and isinstance(kwargs, dict) else doc


def _doc_content(doc: dict[str, Any]) -> str | None:
    for key in _DOC_KEYS:
        value = doc.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, list):
            return text_of(value)
    return None


def _document_text(doc: Any) -> str:
    doc = json_value(doc)
    if not isinstance(doc, dict):
        return json_text(doc)
    doc = _unwrap_lc(doc)
    content = _doc_content(doc)
    if content is None:
        return json_text(doc)
    metadata = json_value(doc.get("metadata"))
    meta = json_text(metadata) if metadata not in (None, "", {}) else ""
    return "\n".join(t for t in (content, meta) if t)


def add_retrieval(
    timeline: Timeline, time: int, rank: int, name: Any, text: str, who: str | None
) -> None:
    """A retrieval step as the context it gave the agent: a SYSTEM event (a retriever is not a
    tool the agent called, so tool checks must not see it), ``meta`` marking it retrieved."""
    if not text or text.isspace():
        return
    meta = {"retrieval": True, "name": str(name or "retriever")}
    timeline.add(time, rank, Event(EventKind.SYSTEM, text=text, subagent=who, meta=meta))
