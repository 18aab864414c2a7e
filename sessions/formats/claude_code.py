"""Claude Code transcripts: project JSONL (``~/.claude/projects``) and headless stream-json.

Spec: ``shared/formats/FORMATS.md`` section 1. What shapes the code:

- One streamed API response is written as several ``assistant`` lines sharing ``message.id``,
  and the results of parallel tool calls are written *between* those lines. We rebuild each
  response at the position of its first line, so every call of a response precedes its results,
  as it did on the wire.
- Events are one per text block, not one per response: a response can say something, call a
  tool, then say more, and a claim made before a call must stay distinguishable from one made
  after its result. ``meta["response"]`` (the ``message.id``) lets a detector regroup them.
- ``progress`` lines mirror sub-agent messages that the sub-agent file also holds. They tell us
  which call spawned which sub-agent, and their tool calls and results stand in for the
  sub-agent's own (``meta["mirrored"]``) until its file is linked, which replaces them: a main
  file read alone still holds the evidence of the work its sub-agents did. Their text never
  becomes events.
- Sub-agent and compaction files (``isSidechain`` lines with ``agentId``) parse as their own
  session; ``link_subagents`` folds them into the parent session read in the same group.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from itertools import islice
from pathlib import PurePath
from typing import Any

import orjson

from sessions.documents import Document
from sessions.formats.common import (
    json_text,
    lstrip_head,
    parse_arguments,
    parse_time,
    text_of,
)
from sessions.formats.registry import adapter
from sessions.models import Event, EventKind, Session, ToolRegistry

FORMAT = "claude_code"
AGENT = "claude-code"

_LINE_TYPES = frozenset(
    {
        "user",
        "assistant",
        "system",
        "summary",
        "progress",
        "file-history-snapshot",
        "queue-operation",
        "attachment",
        "pr-link",
        "agent-name",
        "custom-title",
        "last-prompt",
        "permission-mode",
        "ai-title",
        "agent-setting",
        "bridge-session",
        "worktree-state",
    }
)
_STREAM_TYPES = frozenset({"system", "assistant", "user", "result"})
_SNIFF_LINES = 50
_PROGRESS = b'"type":"progress"'
_PROGRESS_WITHIN = 4096  # a progress line's type comes before its data; later hits are not it
_NO_STAMP: Any = object()
_PLAIN_END = b'"}'  # how a progress line ends: a string member (uuid, timestamp) last
_AGENT_PROGRESS = b"agent_progress"
_TYPE = b'"type":"'
_BLANKS = frozenset(b" \t\r\n\x0b\x0c")  # what `bytes.strip` strips
_DATA_TYPE = _PROGRESS + b',"data":{"type":"'
# A tool-result line's `toolUseResult` repeats the result in structured form (a file's content,
# a command's stdout): about half the bytes of a project file. It is only needed when it is an
# error string or describes a spawned sub-agent, so long lines are decoded without it first.
_USER_LINE = b'"type":"user","message":'
_RESULT_KEY = b',"toolUseResult":'
_DEFER_FROM = 2048  # shorter lines are decoded whole: cutting would cost more than it saves
_PLAIN_MEMBER = re.compile(rb',"[^"\\{}\[\]]*":(?:"[^"\\{}\[\]]*"|true|false|null|-?\d+)')
_TOOL_USE_ERROR = "<tool_use_error>"
# Event kinds, bound once: looking up an enum member costs more than the test it is for.
_USER, _ASSISTANT, _SYSTEM = EventKind.USER, EventKind.ASSISTANT, EventKind.SYSTEM
_CALL, _RESULT = EventKind.TOOL_CALL, EventKind.TOOL_RESULT
_ABSENT: Any = object()
_NO_META: dict[str, Any] = {}  # `_context`'s meta for a main-agent line: never changed, only copied
_SPAWN_TOOLS = frozenset({"Task", "Agent"})  # Task was renamed Agent in CLI 2.1.63
_SYNTHETIC_MODEL = "<synthetic>"

# Text the harness writes into the user turn: slash commands and their output, shell-escape
# echoes, interruption markers, background-task reports. None of it is a request to the agent.
_SYNTHETIC_START = re.compile(
    r"^\s*(?:<command-(?:name|message|args)>|<local-command-|<bash-(?:input|stdout|stderr)>|"
    r"Caveat: The messages below|\[Request interrupted by user|<task-notification>)"
)
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)
_AGENT_ID_TEXT = re.compile(r"\bagentId: ([A-Za-z0-9_-]+)")


def sniff(doc: Document) -> bool:
    if not doc.jsonl or (doc.body is None and not isinstance(doc.data, list)):
        return False
    for line in islice(doc.head(), _SNIFF_LINES):
        if not isinstance(line, dict):
            continue
        if "messages" in line:  # OpenAI-chat JSONL: one conversation per line
            return False
        kind = line.get("type")
        envelope = "sessionId" in line or "leafUuid" in line or "parentUuid" in line
        if (kind in _LINE_TYPES and envelope) or (kind in _STREAM_TYPES and "session_id" in line):
            return True
    return False


def _agent_progress(raw: bytes, at: int, end: int) -> bool:
    """Whether the progress line in ``raw[:end]`` whose type is at ``at`` may be an
    ``agent_progress`` one. Hook and shell progress write their data's type first
    (`"data":{"type":"bash_progress","output":...`), which settles it without reading the output
    that follows; otherwise any mention of the type counts."""
    if raw.startswith(_DATA_TYPE, at):
        return raw.startswith(_AGENT_PROGRESS, at + len(_DATA_TYPE))
    return raw.find(_AGENT_PROGRESS, at, end) >= 0


# A progress line's usual first member: its parent's uuid (or null), with nothing nested.
_FIRST_MEMBER = re.compile(rb'\{"parentUuid":(?:"[^"\\{}\[\]\n]*"|null)')


def _run_end(body: bytes, end: int, final: int, key: bytes) -> int:
    """Where the run of usual progress lines right after the skipped one ending at ``end``
    ends: past each next line that opens with a plain first member and then ``key`` (the known
    segment, then a progress type with its data's type first), whose data is no agent's and
    whose last member is a plain string, as `_skip` would have found line by line (the segment
    holds no `"type":"`, `{` or `[`). Never past the last line, which is always decoded."""
    find, startswith, first_member = body.find, body.startswith, _FIRST_MEMBER.match
    after = len(key)
    while True:
        start = end + 1
        line_end = find(b"\n", start)
        if line_end < 0 or line_end >= final:
            return end
        first = first_member(body, start)
        if (
            first is None
            or not startswith(key, first.end())
            or startswith(_AGENT_PROGRESS, first.end() + after)
            or not body.endswith(_PLAIN_END, start, line_end)
        ):
            return end
        end = line_end


def _blocks(content: Any) -> list[Any]:
    if isinstance(content, list):
        return content
    return [] if content is None else [content]


def _is_result(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") == "tool_result"


def _is_synthetic_text(text: str) -> bool:
    if _SYNTHETIC_START.match(text):
        return True
    return "<system-reminder>" in text and not _REMINDER.sub("", text).strip()


class _Deferred:
    """A line's ``toolUseResult``, not decoded yet: where its value and its line lie in the
    file's bytes (nothing is copied: most are never decoded)."""

    __slots__ = ("body", "line", "value")

    def __init__(self, body: bytes, value: tuple[int, int], line: tuple[int, int]) -> None:
        self.body = body
        self.value = value
        self.line = line

    def is_string(self) -> bool:
        return self.body[self.value[0]] == 0x22

    def decode(self) -> Any:
        body, (start, end) = self.body, self.value
        try:
            return orjson.loads(body[start:end])
        except orjson.JSONDecodeError:  # more than one member was cut: read it from the line
            start, end = self.line
            return orjson.loads(body[start:end]).get("toolUseResult")


def _without_result(body: bytes, start: int, end: int, at: int) -> dict[str, Any] | None:
    """The long tool-result line ``body[start:end]`` decoded without its ``toolUseResult``
    (kept as a ``_Deferred``), or ``None`` when the line is not one, so it is decoded whole;
    ``at``: where the line's first `"type":"` is.

    The member is cut from its top-level key to the plain members that end the line
    (``,"sourceToolAssistantUUID":"..."}``). That the rest decodes proves the cut was at the top
    level: a cut inside a nested value or a string would leave it unbalanced. The line must hold
    one result and nothing else (all else read from a tool-result line is written before the
    cut), and the value is decoded whenever it is needed (``_Reader._tool_result``). The last
    line is always decoded whole, so a file cut off inside the value still fails as truncated.
    """
    if not body.startswith(_USER_LINE, at):
        at = body.find(_USER_LINE, start, min(end, start + _PROGRESS_WITHIN))
    cut = body.find(_RESULT_KEY, at, end) if at > start else -1
    if cut < 0 or body[end - 1] != 0x7D:
        return None
    pos = end - 1  # the final brace; the plain members before it are kept
    while (member := body.rfind(b',"', cut + 1, pos)) > 0 and _PLAIN_MEMBER.fullmatch(
        body, member, pos
    ):
        pos = member
    try:
        line = orjson.loads(body[start:cut] + body[pos:end])
    except orjson.JSONDecodeError:
        return None
    message = line.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not (isinstance(content, list) and len(content) == 1 and _is_result(content[0])):
        return None
    line["toolUseResult"] = _Deferred(body, (cut + len(_RESULT_KEY), pos), (start, end))
    return line


class _Reader:
    """State for one file: lines arrive in order, responses are regrouped by ``message.id``."""

    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.items: list[list[Event]] = []  # each item: one line's or one response's events
        self.responses: dict[tuple[str, Any], list[Event]] = {}
        self.session_id: str | None = None
        self.version: str | None = None
        self.model: str | None = None
        self.init_model: str | None = None
        self.started_at: datetime | None = None
        self.tools: set[str] | None = None
        self.deferred: set[str] = set()
        self.spawn_calls: dict[str, str] = {}  # agentId -> spawning call_id
        self.spawn_types: dict[str, str | None] = {}  # spawning call_id -> subagent_type
        self.agent_types: dict[str, str] = {}  # agentId -> agentType from the tool result
        self.seen_uuids: set[str] = set()
        self.session_ids: set[str] = set()
        self.main_lines = self.side_lines = self.odd_lines = 0
        self.agent_id: str | None = None
        self.result: dict[str, Any] | None = None
        self.sid_key: bytes | None = None  # `,"sessionId":"<session_id>"` as the lines write it
        self.stamp_value: Any = _NO_STAMP  # the timestamp value last parsed, and its time
        self.stamp: datetime | None = None
        self.ready = False  # identity complete: progress lines may be skipped undecoded
        self.segment = b"\xff"  # see `_known_session` (never matches before it is learnt)

    def read(self) -> Session:
        handlers: dict[str, Callable[[dict[str, Any]], None]] = {
            "user": self._user,
            "assistant": self._assistant,
            "system": self._system,
            "attachment": self._attachment,
            "progress": self._progress,
        }
        doc = self.doc
        body = doc.body
        if body is None:
            for line in doc.data:
                self._line(line, handlers)
            return self._session()
        # Lines are found in the body and only copied out when decoded: most lines of a
        # project file are progress lines, skipped on their bytes where they lie.
        size, find = len(body), body.find
        final = size - 1 if body.endswith(b"\n") else size  # where the last line ends
        loads, skip, take = orjson.loads, self._skip, self._line  # bound once for every line
        view = memoryview(body)  # a line is decoded where it lies, not copied out first
        segment = self.segment
        end = -1
        while end < final:
            start = end + 1
            end = find(b"\n", start)
            if end < 0:
                end = size
            window = start + _PROGRESS_WITHIN
            # The line's first `"type":"`: a line whose first is no progress line's type is
            # decoded (a progress line's plain members come first; see `_skip`).
            at = find(_TYPE, start, end if end < window else window)
            progress = at > start and end != final and body.startswith(_PROGRESS, at)
            if progress:
                # `_skip`, inline for the usual progress line: the members between its first
                # and its type as the last skipped one wrote them (the session id among them).
                cut = at - len(segment)
                if (
                    cut > start
                    and body.startswith(segment, cut)
                    and find(b"{", start + 1, cut) < 0
                    and find(b"[", start + 1, cut) < 0
                    and body.endswith(_PLAIN_END, start, end)
                    and not _agent_progress(body, at, end)
                ):
                    # Progress lines come in runs (a tool call's hooks): the rest of the run
                    # is told apart with fewer looks, the segment being known.
                    end = _run_end(body, end, final, segment + _DATA_TYPE)
                    continue
            last = end == final
            if body[start] != 0x7B or body[end - 1] != 0x7D:  # blanks around it, or no object
                while start < end and body[start] in _BLANKS:
                    start += 1
                while end > start and body[end - 1] in _BLANKS:
                    end -= 1
                if start == end:
                    continue
            if progress:
                raw = body[start:end]
                found = raw.find(_PROGRESS, 0, _PROGRESS_WITHIN)
                if found > 0 and skip(raw, found):
                    segment = self.segment
                    continue
            value = (
                _without_result(body, start, end, at)
                if end - start > _DEFER_FROM and not last
                else None
            )
            if value is None:
                try:
                    value = loads(view[start:end])
                except orjson.JSONDecodeError:
                    # Raises with the document's message (which names the line).
                    value = doc.decode_line(body.count(b"\n", 0, start), body[start:end])
            take(value, handlers)
        return self._session()

    def _line(self, line: Any, handlers: dict[str, Callable[[dict[str, Any]], None]]) -> None:
        if not isinstance(line, dict):
            self.odd_lines += 1
            return
        uuid = line.get("uuid")
        if isinstance(uuid, str):
            seen = self.seen_uuids
            if uuid in seen:  # a line written twice (resume, retry) counts once
                return
            seen.add(uuid)
        if self.ready:  # `_identity` once the identity is known, inline: most lines come after
            sid = line.get("sessionId") or line.get("session_id")
            if sid != self.session_id and isinstance(sid, str) and sid:  # the known one is in
                self.session_ids.add(sid)
        else:
            self._identity(line)
        kind = line.get("type")
        handler = handlers.get(kind) if isinstance(kind, str) else None
        if handler is not None:
            handler(line)
        elif kind == "result":  # stream-json: the run's outcome, read once all lines are in
            self.result = line

    def _skip(self, raw: bytes, at: int) -> bool:
        """Whether ``raw`` is a progress line that would change nothing, told from its bytes.

        Most lines of a project file are ``progress`` lines; only ``agent_progress`` ones say
        something (which call spawned which sub-agent). The others make no event, so once the
        identity is known they are skipped undecoded when their bytes show a top-level
        ``"type":"progress"`` (at ``at``), the known ``sessionId`` and a top-level string as the
        last member. Anything less clear-cut is decoded as usual (the last line always is, so a
        cut-off file still fails as truncated).
        """
        # Top level: nothing before the key opens a nested value.
        if not self.ready or raw[at - 1] not in (0x2C, 0x7B):
            return False
        if raw.find(b"{", 1, at) >= 0 or raw.find(b"[", 1, at) >= 0:
            return False
        if not self._known_session(raw, at):
            return False
        return raw.endswith(_PLAIN_END) and not _agent_progress(raw, at, len(raw))

    def _known_session(self, raw: bytes, at: int) -> bool:
        """Whether the known ``sessionId`` is written before ``at``. A progress line usually
        repeats the last one's bytes after its first member (its parentUuid differs), so those
        are compared at once, and only searched when they differ."""
        segment = self.segment
        cut = at - len(segment)
        if cut > 0 and raw[cut:at] == segment:  # the segment holds the session id
            return True
        if self.sid_key is None or raw.find(self.sid_key, 0, at) < 0:
            return False
        comma = raw.find(b",", 1, at)  # where the first member ends
        if comma > 0 and raw.find(self.sid_key, comma, at) >= 0:
            self.segment = raw[comma:at]
        return True

    def _identity(self, line: dict[str, Any]) -> None:
        sid = line.get("sessionId") or line.get("session_id")
        if self.ready:  # session id, version and start known: only the ids seen can grow
            if isinstance(sid, str) and sid:
                self.session_ids.add(sid)
            return
        if isinstance(sid, str) and sid:
            if self.session_id is None:
                self.session_id = sid
                self.sid_key = b',"sessionId":' + orjson.dumps(sid)
            self.session_ids.add(sid)
        version = line.get("version") or line.get("claude_code_version")
        if self.version is None and isinstance(version, str):
            self.version = version
        if self.started_at is None:
            self.started_at = self._time(line)
        ready = self.sid_key is not None and self.version is not None
        self.ready = ready and self.started_at is not None

    def _time(self, line: dict[str, Any]) -> datetime | None:
        """``parse_time`` of the line's timestamp, parsed once for all events of the line."""
        value = line.get("timestamp")
        if value is not self.stamp_value:
            stamp: datetime | None
            if value.__class__ is str and value[-1:] == "Z":  # the usual form, without a call
                try:
                    stamp = datetime.fromisoformat(value)
                except ValueError:
                    stamp = parse_time(value)  # which tells the odd forms apart
            else:
                stamp = parse_time(value)
            self.stamp_value, self.stamp = value, stamp
        return self.stamp

    def _context(self, line: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
        """The sub-agent a line belongs to, and the meta every event of the line carries."""
        agent = line.get("agentId")
        if line.get("isSidechain") and isinstance(agent, str):
            self.side_lines += 1
            self.agent_id = self.agent_id or agent
            # A compaction fork re-reads the conversation to summarise it: nothing in it is new.
            return agent, ({"compaction": True} if agent.startswith("acompact") else {})
        self.main_lines += 1
        parent = line.get("parent_tool_use_id")  # stream-json marks sub-agent messages this way
        return (parent if isinstance(parent, str) else None), _NO_META

    def _event(
        self,
        kind: EventKind,
        line: dict[str, Any],
        subagent: str | None,
        meta: dict[str, Any],
        **fields: Any,
    ) -> Event:
        return Event(
            kind,
            subagent=subagent,
            timestamp=self._time(line),
            meta=meta,
            **fields,
        )

    def _user(self, line: dict[str, Any]) -> None:
        subagent, base = self._context(line)
        message = line.get("message")
        content = message.get("content") if isinstance(message, dict) else message
        events: list[Event] = []
        if isinstance(content, str):  # a plain prompt: its text, no results
            text = content
        else:
            blocks = _blocks(content)
            if len(blocks) == 1 and _is_result(blocks[0]):  # the usual line: one result alone
                results, text = blocks, ""
            else:
                results = [block for block in blocks if _is_result(block)]
                rest = [block for block in blocks if not _is_result(block)]
                text = text_of(rest) if rest else ""
            if results:
                # The line-level toolUseResult describes the line's only result; with several
                # it would be a guess which one it belongs to.
                extra = None
                if len(results) == 1:
                    extra = line.get("toolUseResult", _ABSENT)
                    if extra is _ABSENT:  # the stream-json name, only looked up when needed
                        extra = line.get("tool_use_result")
                when = self._time(line)
                for block in results:
                    events.append(self._tool_result(block, extra, when, subagent, dict(base)))
        if text and not text.isspace():
            meta = dict(base)
            origin = line.get("origin")
            if line.get("isCompactSummary"):
                meta.update(synthetic=True, compaction=True)
            elif (
                base
                or line.get("isMeta")
                or _is_synthetic_text(text)
                or (isinstance(origin, dict) and origin.get("kind") == "task-notification")
            ):
                meta["synthetic"] = True
            events.append(self._event(_USER, line, subagent, meta, text=text))
        if events:
            self.items.append(events)

    def _tool_result(
        self,
        block: dict[str, Any],
        extra: Any,
        when: datetime | None,
        subagent: str | None,
        meta: dict[str, Any],
    ) -> Event:
        """The event of a ``tool_result`` block; ``meta`` becomes the event's own."""
        call_id = block.get("tool_use_id")
        if not isinstance(call_id, str):
            call_id = None
        if extra.__class__ is _Deferred and (
            extra.is_string() or (call_id is not None and call_id in self.spawn_types)
        ):
            extra = extra.decode()  # a string (an error?) or a sub-agent's description
        content = block.get("content")
        if isinstance(content, str):
            output = content
        else:
            output = text_of(content) or ("" if content in (None, "", []) else json_text(content))
        is_error = (
            block.get("is_error") is True
            or output.startswith(_TOOL_USE_ERROR)
            or (
                output[:1].isspace()
                and lstrip_head(output, len(_TOOL_USE_ERROR)) == _TOOL_USE_ERROR
            )
            or (isinstance(extra, str) and extra.startswith("Error:"))
        )
        if call_id is not None and call_id in self.spawn_types:
            self._note_spawn(call_id, extra, output)
        # Positional: kind, index, text, call_id, name, input, output, is_error, error_inferred,
        # subagent, timestamp, meta.
        return Event(
            _RESULT, -1, "", call_id, None, None, output, is_error, False,
            subagent, when, meta,
        )  # fmt: skip

    def _note_spawn(self, call_id: str, extra: Any, output: str) -> None:
        agent = extra.get("agentId") if isinstance(extra, dict) else None
        if not isinstance(agent, str):
            found = _AGENT_ID_TEXT.search(output)  # "agentId: <id> (use SendMessage ...)"
            agent = found.group(1) if found else None
        if agent:
            self.spawn_calls.setdefault(agent, call_id)
            kind = extra.get("agentType") if isinstance(extra, dict) else None
            if isinstance(kind, str):
                self.agent_types[agent] = kind

    def _assistant(self, line: dict[str, Any]) -> None:
        subagent, base = self._context(line)
        message = line.get("message")
        message = message if isinstance(message, dict) else {"content": message}
        model = message.get("model")
        failed = bool(line.get("isApiErrorMessage") or line.get("error"))  # error: stream-json
        if failed or model == _SYNTHETIC_MODEL:
            # Written by the CLI, not the model (API failures, "No response requested."):
            # not a reply the agent can be held to.
            meta = {**base, "synthetic": True}
            if failed:
                meta["api_error"] = True
            text = text_of(message.get("content")) or json_text(line.get("error"))
            self.items.append([self._event(_SYSTEM, line, subagent, meta, text=text)])
            return
        if self.model is None and isinstance(model, str) and model:
            self.model = model
        msg_id = message.get("id")
        if isinstance(msg_id, str):
            key = (msg_id, line.get("requestId"))
            group = self.responses.get(key)
            if group is None:
                group = self.responses[key] = []
                self.items.append(group)
            meta = {**base, "response": msg_id} if base else {"response": msg_id}
        else:
            group = []
            self.items.append(group)
            meta = dict(base)
        when = self._time(line)
        content = message.get("content")
        blocks = content if content.__class__ is list else _blocks(content)
        last = len(blocks) - 1
        for i, block in enumerate(blocks):
            # Each event its own meta: the last block may take the template itself.
            event = self._assistant_block(block, when, subagent, meta if i == last else meta.copy())
            if event is not None:
                group.append(event)

    def _assistant_block(
        self, block: Any, when: datetime | None, subagent: str | None, meta: dict[str, Any]
    ) -> Event | None:
        if isinstance(block, str):
            block = {"type": "text", "text": block}
        if not isinstance(block, dict):
            return None
        kind = block.get("type")
        if kind == "text":
            text = block.get("text")
            if not isinstance(text, str):
                text = text_of(block)
            if not text or text.isspace():
                return None
            return Event(
                _ASSISTANT, -1, text, None, None, None, "", False, False,
                subagent, when, meta,
            )  # fmt: skip
        if kind in ("tool_use", "server_tool_use"):
            call_id = block.get("id")
            call_id = call_id if isinstance(call_id, str) else None
            name = block.get("name")
            tool_input = parse_arguments(block.get("input"))
            if name in _SPAWN_TOOLS and call_id:
                stype = tool_input.get("subagent_type") if isinstance(tool_input, dict) else None
                self.spawn_types[call_id] = stype if isinstance(stype, str) else None
            if kind == "server_tool_use":
                meta = {**meta, "server_tool": True}
            return Event(
                _CALL, -1, "", call_id, name if isinstance(name, str) else None,
                tool_input, "", False, False, subagent, when, meta,
            )  # fmt: skip
        if isinstance(kind, str) and kind.endswith("_tool_result") and "tool_use_id" in block:
            # Server tools (web search) return their result inside the assistant message.
            return self._tool_result(block, None, when, subagent, meta)
        return None  # thinking, redacted_thinking, images: not replies

    def _system(self, line: dict[str, Any]) -> None:
        subtype = line.get("subtype")
        if subtype == "init":
            tools = line.get("tools")
            if isinstance(tools, list):
                self.tools = {t for t in tools if isinstance(t, str)}
            model = line.get("model")
            self.init_model = model if isinstance(model, str) else None
        elif subtype in ("api_error", "compact_boundary"):
            subagent, base = self._context(line)
            if subtype == "api_error":
                meta = {**base, "synthetic": True, "api_error": True}
                text = text_of(line.get("content")) or json_text(line.get("error"))
            else:  # marks where the context was replaced by a summary
                meta = {**base, "compaction": True, "boundary": True}
                text = text_of(line.get("content")) or "Conversation compacted"
            self.items.append([self._event(_SYSTEM, line, subagent, meta, text=text)])

    def _attachment(self, line: dict[str, Any]) -> None:
        attachment = line.get("attachment")
        if isinstance(attachment, dict) and attachment.get("type") == "deferred_tools_delta":
            # Removed tools were still registered when earlier calls used them: keep the union.
            for key in ("addedNames", "readdedNames"):
                names = attachment.get(key)
                if isinstance(names, list):
                    self.deferred.update(n for n in names if isinstance(n, str))

    def _progress(self, line: dict[str, Any]) -> None:
        data = line.get("data")
        if isinstance(data, dict) and data.get("type") == "agent_progress":
            agent, call_id = data.get("agentId"), line.get("parentToolUseID")
            if isinstance(agent, str) and isinstance(call_id, str):
                self.spawn_calls.setdefault(agent, call_id)
            message = data.get("message")
            if isinstance(message, dict):
                self._mirrored(message, agent if isinstance(agent, str) else call_id)

    def _mirrored(self, message: dict[str, Any], subagent: Any) -> None:
        """The tool calls and results of a sub-agent's message an ``agent_progress`` line
        mirrors: the sub-agent's evidence when its own file is not read with the session (when
        it is, `_unique_calls` keeps its file's copies, placed first). Its text is not kept: it
        would repeat the file's."""
        inner = message.get("message")
        content = inner.get("content") if isinstance(inner, dict) else None
        if not isinstance(content, list) or not isinstance(subagent, str):
            return
        kind, when = message.get("type"), self._time(message)
        events: list[Event] = []
        for block in content:
            if not isinstance(block, dict):
                continue
            if kind == "assistant" and block.get("type") == "tool_use":
                event = self._assistant_block(block, when, subagent, {"mirrored": True})
                if event is not None:
                    events.append(event)
            elif kind == "user" and _is_result(block):
                events.append(self._tool_result(block, None, when, subagent, {"mirrored": True}))
        if events:
            self.items.append(events)

    def _final_result(self, events: list[Event]) -> None:
        line = self.result or {}
        subtype, reply = str(line.get("subtype") or ""), line.get("result")
        if subtype.startswith("error"):
            errors = line.get("errors")
            text = text_of(errors) if isinstance(errors, list) else json_text(reply)
            meta = {"synthetic": True, "result_subtype": subtype}
            events.append(Event(_SYSTEM, text=text or subtype, meta=meta))
            return
        if not isinstance(reply, str) or not reply.strip():
            return
        main = [e for e in events if e.kind is _ASSISTANT and e.subagent is None]
        if main:  # the result repeats the last response's text, whole or its last block
            last = main[-1]
            response = last.meta.get("response")
            tail = [e.text for e in main if response and e.meta.get("response") == response]
            if reply.strip() in (last.text.strip(), "\n".join(tail).strip(), "".join(tail).strip()):
                return
        events.append(Event(_ASSISTANT, text=reply, meta={"final_result": True}))

    def _session(self) -> Session:
        events = _unique_calls([event for item in self.items for event in item])
        self._final_result(events)
        source = self.doc.source
        sid = self.session_id or PurePath(source).name.split(".")[0]
        session = Session(
            id=sid,
            source=source,
            format=FORMAT,
            events=events,
            agent=AGENT,
            agent_version=self.version,
            model=self.model or self.init_model,
            started_at=self.started_at,
            sources=[source],
        )
        if self.tools is not None:
            names = frozenset(self.tools | self.deferred)
            session.registered_tools = ToolRegistry(names, "session", allow_mcp=False)
        elif self.deferred:
            session.meta["deferred_tools"] = sorted(self.deferred)
        if self.side_lines and not self.main_lines and self.agent_id:
            session.id = f"{sid}:{self.agent_id}"  # never collides with the parent session
            session.meta.update(
                sidechain=True,
                agent_id=self.agent_id,
                parent_session_id=sid,
                compaction=self.agent_id.startswith("acompact"),
            )
        if self.spawn_calls:
            session.meta["subagent_calls"] = dict(self.spawn_calls)
            types = {
                a: self.agent_types.get(a) or self.spawn_types.get(c)
                for a, c in self.spawn_calls.items()
            }
            session.meta["subagent_types"] = {a: t for a, t in types.items() if t}
        if self.odd_lines:
            session.warnings.append(f"skipped {self.odd_lines} line(s) that are not JSON objects")
        if len(self.session_ids) > 1:
            session.warnings.append(f"lines name {len(self.session_ids)} session ids; kept {sid}")
        session.reindex()
        return session


def link_subagents(sessions: list[Session]) -> list[Session]:
    """Fold each sub-agent / compaction session into the main session with the same id."""
    mains: dict[str, Session] = {}
    for session in sessions:
        if session.format == FORMAT and not session.meta.get("sidechain"):
            mains.setdefault(session.id, session)
    out: list[Session] = []
    children: dict[str, list[Session]] = {}
    for session in sessions:
        parent = None
        if session.format == FORMAT and session.meta.get("sidechain"):
            parent = mains.get(session.meta.get("parent_session_id", ""))
        if parent is None:
            out.append(session)
        else:
            children.setdefault(parent.id, []).append(session)
    for parent_id, kids in children.items():
        _merge(mains[parent_id], kids)
    return out


_EPOCH = datetime.min.replace(tzinfo=UTC)


def _anchor(kid: Session) -> datetime | None:
    stamps = [e.timestamp for e in kid.events if e.timestamp is not None]
    if not stamps:
        return None
    # A compaction fork starts with re-injected old reminders; it ends right before the
    # parent's compact_boundary, so its last line is the one that places it.
    return stamps[-1] if kid.meta.get("compaction") else stamps[0]


def _merge(parent: Session, kids: list[Session]) -> None:
    # The progress lines' copies of a sub-agent's calls give way to its own file.
    kid_ids = {kid.meta.get("agent_id") for kid in kids}
    if any(e.subagent in kid_ids and e.meta.get("mirrored") for e in parent.events):
        parent.events = [
            e for e in parent.events if not (e.subagent in kid_ids and e.meta.get("mirrored"))
        ]
    calls = {e.call_id: i for i, e in enumerate(parent.events) if e.kind is _CALL and e.call_id}
    spawns: dict[str, str] = parent.meta.get("subagent_calls", {})
    types: dict[str, str] = parent.meta.get("subagent_types", {})
    keys: list[datetime] | None = None  # built when a kid is first placed by time
    slots: dict[int, list[tuple[datetime, Session]]] = {}
    for kid in kids:
        agent = kid.meta.get("agent_id", "")
        anchor = _anchor(kid)
        call_id = spawns.get(agent)
        if call_id in calls:
            position = calls[call_id] + 1  # right after the call that spawned it
        elif anchor is None:
            position = len(parent.events)
        else:
            keys = _running_max(parent.events) if keys is None else keys
            position = bisect_right(keys, anchor)
        slots.setdefault(position, []).append((anchor or _EPOCH, kid))
        if types.get(agent):
            for event in kid.events:
                event.meta["subagent_type"] = types[agent]
    # Each slot's kids (by their anchors) go right before the parent event at that position.
    merged: list[Event] = []
    done = 0
    for position in sorted(slots):
        merged += parent.events[done:position]
        for _, kid in sorted(slots[position], key=lambda pair: pair[0]):
            merged += kid.events
        done = position
    merged += parent.events[done:]
    parent.events = _unique_calls(merged)
    parent.reindex()
    for kid in kids:
        parent.sources.extend(s for s in kid.sources if s not in parent.sources)
        parent.warnings.extend(f"{kid.meta.get('agent_id')}: {w}" for w in kid.warnings)
    linked = parent.meta.setdefault("linked_subagents", [])
    linked.extend(kid.meta.get("agent_id") for kid in kids)


def _running_max(events: list[Event]) -> list[datetime]:
    """Each event's latest timestamp so far: sorted, so bisect works on slightly unordered
    stamps."""
    keys, latest = [], _EPOCH
    for event in events:
        if event.timestamp is not None and event.timestamp > latest:
            latest = event.timestamp
        keys.append(latest)
    return keys


def _unique_calls(events: list[Event]) -> list[Event]:
    """Each tool call and each tool result once, even if two files both hold it."""
    calls: set[str] = set()  # the call ids seen, of calls and of results apart
    results: set[str] = set()
    out: list[Event] = []
    for event in events:
        call_id = event.call_id
        if call_id:
            kind = event.kind
            ids = calls if kind is _CALL else results if kind is _RESULT else None
            if ids is not None:
                if call_id in ids:
                    continue
                ids.add(call_id)
        out.append(event)
    return out


@adapter(FORMAT, sniff=sniff, priority=10, link=link_subagents)
def parse(doc: Document) -> Iterable[Session]:
    if doc.body is None and not isinstance(doc.data, list):
        return []
    return [_Reader(doc).read()]
