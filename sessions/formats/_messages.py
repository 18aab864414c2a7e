"""Shared plumbing of the message-log adapters: the event log, ids, identity, tools.

Private to ``openai_chat``, ``openai_responses``, ``openai_agents``, ``anthropic_messages``,
``swe_agent`` and ``openhands``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sessions.documents import Document
from sessions.models import Event, EventKind, ToolRegistry

AGENT_KEYS = ("agent", "agent_name")
VERSION_KEYS = ("app_version", "prompt_version", "version")
SESSION_KEYS = ("session_id", "sessionId", "conversation_id", "thread_id")
# Content blocks only the Anthropic Messages API has: their presence means the file is not ours.
ANTHROPIC_BLOCKS = frozenset(
    {
        "tool_use",
        "tool_result",
        "server_tool_use",
        "thinking",
        "redacted_thinking",
        "mcp_tool_use",
        "mcp_tool_result",
    }
)


class EventLog:
    """Builds one session's events, pairing results with calls by call id.

    Two things make a plain append wrong. A ``{request, response}`` log may repeat the last turn
    (the response echoed into the history), so a call whose id is still open with the same name
    and input is an echo and is dropped; a result identical to the one already recorded likewise.
    And some harnesses reuse call ids within one transcript (tau-bench does, for calls with
    different names and inputs), so a reused id gets a ``#n`` suffix and the original id in
    ``meta``, and each result goes to the oldest open call with its id.
    """

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.warnings: list[str] = []
        self._ids: dict[str, list[str]] = {}  # id as written -> ids given, in call order
        self._calls: dict[str, Event] = {}
        self._results: dict[str, Event] = {}
        self._synthetic = 0

    def message(self, kind: EventKind, text: str, **fields: Any) -> Event | None:
        if not text:
            return None
        event = Event(kind, text=text, **fields)
        self.events.append(event)
        return event

    def call(self, call_id: Any, name: Any, value: Any, **fields: Any) -> Event | None:
        name = name if isinstance(name, str) else None
        if not isinstance(call_id, str) or not call_id:
            # Legacy function calls carry no id; results are then paired by name.
            self._synthetic += 1
            call_id = f"synthetic-{self._synthetic}"
            fields.setdefault("meta", {})["synthetic_call_id"] = True
        given = self._ids.setdefault(call_id, [])
        for previous in given:
            prior = self._calls[previous]
            if previous not in self._results and prior.name == name and prior.input == value:
                return None
        event_id = call_id
        if given:
            event_id = f"{call_id}#{len(given) + 1}"
            fields.setdefault("meta", {})["original_call_id"] = call_id
            self.warnings.append(f"call id {call_id} is reused; later calls are renamed {event_id}")
        given.append(event_id)
        event = Event(EventKind.TOOL_CALL, call_id=event_id, name=name, input=value, **fields)
        self._calls[event_id] = event
        self.events.append(event)
        return event

    def result(
        self, call_id: Any, output: str, *, is_error: bool = False, name: Any = None, **fields: Any
    ) -> Event | None:
        event_id = self._pair(call_id, name)
        earlier = self._results.get(event_id) if event_id else None
        if earlier is not None and earlier.output == output and earlier.is_error == is_error:
            return None
        call = self._calls.get(event_id) if event_id else None
        if not isinstance(name, str):
            name = call.name if call is not None else None
        event = Event(
            EventKind.TOOL_RESULT,
            call_id=event_id,
            name=name,
            output=output,
            is_error=is_error,
            **fields,
        )
        if event_id is not None:
            self._results.setdefault(event_id, event)
        self.events.append(event)
        return event

    def _pair(self, call_id: Any, name: Any) -> str | None:
        if isinstance(call_id, str) and call_id:
            given = self._ids.get(call_id)
            if not given:
                return call_id
            return next((g for g in given if g not in self._results), given[-1])
        # No id (legacy ``function`` role): the latest open call of that name.
        for event in reversed(self.events):
            is_open = event.call_id not in self._results
            if event.kind is EventKind.TOOL_CALL and event.name == name and is_open:
                return event.call_id
        return None


def records(doc: Document) -> list[Any]:
    """The top-level values of a document: the object itself, or a list's / JSONL's elements."""
    data = doc.data
    return list(data) if isinstance(data, list) else [data]


def file_stem(source: str) -> str:
    name = source.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
    for suffix in (".gz", ".jsonl", ".json", ".ndjson", ".traj"):
        name = name.removesuffix(suffix)
    return name or source


def unique_id(candidate: str, used: set[str], index: int | None) -> str:
    """``candidate``, or a suffixed variant when the file already yielded a session with it."""
    chosen = candidate
    if chosen in used and index is not None:
        chosen = f"{candidate}#{index}"
    n = 2
    while chosen in used:
        chosen = f"{candidate}#{n}"
        n += 1
    used.add(chosen)
    return chosen


def first_str(*values: Any) -> str | None:
    for value in values:
        if isinstance(value, str) and value.strip():
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
    return None


def obj(value: Any) -> dict[str, Any] | None:
    """``value`` when it is a JSON object, else ``None`` (for ``obj(x) or default``)."""
    return value if isinstance(value, dict) else None


def seq(value: Any) -> list[Any]:
    """``value`` when it is a JSON array, else an empty list: odd shapes iterate as nothing."""
    return value if isinstance(value, list) else []


def name_of(value: Any) -> str | None:
    """``value`` when it is a string, so set and dict look-ups never see an unhashable value."""
    return value if isinstance(value, str) else None


def dicts(*values: Any) -> list[dict[str, Any]]:
    return [v for v in values if isinstance(v, dict)]


def pick(sources: Iterable[dict[str, Any]], keys: Iterable[str]) -> str | None:
    """The first non-empty string under any of ``keys``, key order first, then source order."""
    sources = list(sources)
    for key in keys:
        found = first_str(*(s.get(key) for s in sources))
        if found is not None:
            return found
    return None


def registry(names: Iterable[Any]) -> ToolRegistry | None:
    """The declared tool names as a registry, or ``None`` when none are declared.

    An empty declared list is treated as unknown: the APIs reject an empty ``tools`` array, so
    an empty list in a log means the logger dropped it, and claiming "no tools" would make every
    call look invented.
    """
    found = frozenset(n for n in names if isinstance(n, str) and n)
    if not found:
        return None
    return ToolRegistry(found, "session")


def looks_anthropic(record: Any) -> bool:
    """Whether a record carries a mark only the Anthropic Messages API uses."""
    if not isinstance(record, dict):
        return False
    request = obj(record.get("request")) or record
    response = record.get("response")
    reply = response if isinstance(response, dict) and "choices" not in response else {}
    if reply.get("type") == "message" or "stop_reason" in reply:
        return True
    if isinstance(request.get("system"), str | list):
        return True
    tools = request.get("tools")
    if isinstance(tools, list) and any(isinstance(t, dict) and "input_schema" in t for t in tools):
        return True
    for message in seq(request.get("messages")):
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else []:
            kind = block.get("type") if isinstance(block, dict) else None
            if isinstance(kind, str) and (
                kind in ANTHROPIC_BLOCKS or kind.endswith("_tool_result")
            ):
                return True
    return False
