"""The one session model every format is normalised into.

A ``Session`` is a flat, ordered list of ``Event``s. Each event knows its index in the session,
so a signal can cite the exact turn it rests on. Sub-agent steps stay in their parent's list,
marked with the sub-agent they belong to. These are plain slotted dataclasses, not pydantic
models: a night can hold millions of events and they are built on the hot path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any


class EventKind(StrEnum):
    USER = "user_message"
    ASSISTANT = "assistant_message"
    TOOL_CALL = "tool_call"
    TOOL_RESULT = "tool_result"
    SYSTEM = "system_message"


@dataclass(slots=True)
class Event:
    """One step of a session.

    ``text`` holds the text of a message; ``output`` the text of a tool result. ``input`` is the
    tool call's input as an object, or the raw string when the format stored invalid JSON.
    ``is_error`` is the format's own error flag (or, for formats without one, a conservative
    inference, then ``error_inferred`` is set). ``subagent`` names the sub-agent a step belongs to
    (``None`` for the main agent). ``meta`` carries format details detectors may use, e.g.
    ``{"compaction": True}`` for a compaction summary or ``{"synthetic": True}`` for text the
    harness injected.
    """

    kind: EventKind
    index: int = -1
    text: str = ""
    call_id: str | None = None
    name: str | None = None
    input: Any = None
    output: str = ""
    is_error: bool = False
    error_inferred: bool = False
    subagent: str | None = None
    timestamp: datetime | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"index": self.index, "kind": str(self.kind)}
        for key in ("text", "call_id", "name", "input", "output", "subagent"):
            value = getattr(self, key)
            if value not in (None, ""):
                out[key] = value
        if self.is_error:
            out["is_error"] = True
            if self.error_inferred:
                out["error_inferred"] = True
        if self.timestamp is not None:
            out["timestamp"] = self.timestamp.isoformat()
        if self.meta:
            out["meta"] = self.meta
        return out


_MCP_TOOL = re.compile(r"^mcp__[A-Za-z0-9_:.-]+(__[A-Za-z0-9_.-]+)?$")


@dataclass(slots=True, frozen=True)
class ToolRegistry:
    """The tools an agent had registered in a session, and where that list came from.

    ``source`` is ``session`` (declared in the transcript), ``config`` (the run config's list for
    the agent) or ``claude_code_builtin`` (Claude Code's built-ins). ``allow_mcp`` accepts any
    ``mcp__<server>__<tool>`` name: MCP servers differ per user, so no built-in list knows them.
    """

    names: frozenset[str]
    source: str
    allow_mcp: bool = False

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        if name in self.names:
            return True
        return self.allow_mcp and bool(_MCP_TOOL.match(name))


@dataclass(slots=True)
class Session:
    """One agent session, normalised.

    ``registered_tools`` is ``None`` when neither the session, the run config nor a known harness
    says which tools the agent had; detectors that need the list then stay silent.
    ``sources`` lists every file the session was read from (a Claude Code session and its
    sub-agent files); ``source`` is the main one.
    """

    id: str
    source: str
    format: str
    events: list[Event] = field(default_factory=list)
    agent: str | None = None
    agent_version: str | None = None
    model: str | None = None
    started_at: datetime | None = None
    registered_tools: ToolRegistry | None = None
    sources: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)

    def reindex(self) -> None:
        for i, event in enumerate(self.events):
            event.index = i

    def tool_calls(self) -> list[Event]:
        return [e for e in self.events if e.kind is EventKind.TOOL_CALL]

    def replies(self) -> list[Event]:
        """Assistant messages with text, the main agent's and sub-agents' alike."""
        return [e for e in self.events if e.kind is EventKind.ASSISTANT and e.text]

    def results_by_call(self) -> dict[str, Event]:
        """Each tool call id's result (the first one, should a format repeat it)."""
        results: dict[str, Event] = {}
        for event in self.events:
            if event.kind is EventKind.TOOL_RESULT and event.call_id is not None:
                results.setdefault(event.call_id, event)
        return results
