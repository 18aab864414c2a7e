"""OpenHands trajectories: the event stream of one conversation, bare or inside an output record.

Accepted shapes: a JSON array (or JSON Lines) of events, as the GUI's trajectory export and
``--save-trajectory-path`` write it; evaluation and resolver outputs, one record per JSON line
(or one object) with the events in ``history``. Events are actions (``action``: ``message``,
``run``, ``edit``, ``finish``...) and observations (``observation``) that name the action they
answer in ``cause``. Newer events keep their fields in ``args`` / ``extras`` and a
``tool_call_metadata`` with the function name, call id and the model response; older ones are
flat and carry neither, so results pair with the latest open call, and older evaluation outputs
store ``[action, observation]`` pairs.

Errors are explicit: an ``error`` observation, a command's non-zero ``exit_code``, a browser's
``error`` flag; other outputs (an editor's ``ERROR: ...``) are inferred and marked so. The tool
list is the ``system`` action's ``tools``.
"""

from __future__ import annotations

from itertools import islice
from typing import Any

from sessions.documents import Document
from sessions.errors import MalformedSessionError
from sessions.formats._history import tool_registry
from sessions.formats._messages import file_stem, records, unique_id
from sessions.formats.common import infer_error, json_text, parse_arguments, parse_time, text_of
from sessions.formats.registry import adapter
from sessions.models import Event, EventKind, Session, ToolRegistry

FORMAT = "openhands"
AGENT = "openhands"
# fmt: off
_ACTIONS = frozenset(
    {
        "message", "system", "run", "run_ipython", "read", "write", "edit", "browse",
        "browse_interactive", "delegate", "finish", "reject", "think", "recall", "mcp",
        "condensation", "condensation_request", "change_agent_state", "null", "push", "send_pr",
        "kill", "summarize", "add_task", "modify_task", "talk", "start", "pause", "resume",
        "stop", "search",
    }
)
_OBSERVATIONS = frozenset(
    {
        "run", "run_ipython", "read", "write", "edit", "browse", "delegate", "error", "null",
        "agent_state_changed", "user_rejected", "recall", "think", "mcp", "condense", "success",
        "chat", "message", "microagent", "workspace_context", "download", "loop_detection",
    }
)
# Control events: the agent's state, the UI's start/pause/stop, the request for context.
_QUIET = frozenset(
    {"null", "change_agent_state", "agent_state_changed", "recall", "start", "pause", "resume",
     "stop"}
)
_CONTEXT = frozenset({"recall", "microagent", "workspace_context"})  # what a recall returns
# Event fields about the event, not the action: the rest of a flat event is its arguments.
_ENVELOPE = frozenset(
    {"id", "timestamp", "source", "message", "action", "observation", "cause", "timeout",
     "tool_call_metadata", "llm_metrics", "success", "args", "extras", "content"}
)
# Arguments OpenHands adds for its own bookkeeping, not the model's.
_BOOKKEEPING = frozenset(
    {"thought", "is_input", "blocking", "hidden", "confirmation_state", "security_risk",
     "impl_source", "translated_ipython_code", "kernel_init_code", "keep_prompt", "is_confirmed",
     "action_risk", "is_static", "cwd", "wait_for_response", "image_urls", "images_urls"}
)
# fmt: on
# An action without tool_call_metadata is named by its tool in the declared list, if there.
_TOOLS_OF = {
    "run": ("execute_bash", "bash"),
    "run_ipython": ("execute_ipython_cell",),
    "read": ("str_replace_editor",),
    "edit": ("str_replace_editor", "edit_file"),
    "browse": ("web_read", "browser"),
    "browse_interactive": ("browser",),
    "think": ("think",),
    "finish": ("finish",),
}


def _kind(event: Any) -> tuple[str, str] | None:
    """``("action" | "observation", name)`` for an OpenHands event, else None."""
    if not isinstance(event, dict) or "role" in event or "type" in event:
        return None
    action, observation = event.get("action"), event.get("observation")
    if isinstance(action, str) and observation is None:
        return "action", action
    if isinstance(observation, str) and action is None:
        return "observation", observation
    return None


def _known(event: Any) -> bool:
    kind = _kind(event)
    return kind is not None and kind[1] in (_ACTIONS if kind[0] == "action" else _OBSERVATIONS)


def _flatten(items: list[Any]) -> list[Any]:
    """Events in order; an older output's ``[action, observation]`` pairs are unpacked."""
    out: list[Any] = []
    for item in items:
        if isinstance(item, list) and len(item) == 2 and all(isinstance(e, dict) for e in item):
            out.extend(item)
        else:
            out.append(item)
    return out


def _is_events(value: Any) -> bool:
    if not isinstance(value, list) or not value:
        return False
    sample = _flatten(value[:8])
    return all(_kind(e) is not None for e in sample) and any(_known(e) for e in sample)


def sniff(doc: Document) -> bool:
    # Only the first lines of JSON Lines are decoded: a broken later line is parse's to report.
    sample = list(islice(doc.head(), 5)) if doc.jsonl else records(doc)[:5]
    if _is_events(sample):
        return True
    return (
        bool(sample)
        and all(isinstance(r, dict) and isinstance(r.get("history"), list | None) for r in sample)
        and any(_is_events(r.get("history")) for r in sample)
    )


@adapter(FORMAT, sniff=sniff, priority=30)
def parse(doc: Document) -> list[Session]:
    items = records(doc)
    stem = file_stem(doc.source)
    if not any(isinstance(r, dict) and "history" in r for r in items):
        if not any(_kind(e) is not None for e in _flatten(items)):
            raise MalformedSessionError(
                f"{doc.source}: no OpenHands events found: expected a list of events with "
                "'action' or 'observation', or output records with a 'history' list"
            )
        session = _session(_flatten(items), {}, doc.source, stem)
        if session is None:
            raise MalformedSessionError(
                f"{doc.source}: the OpenHands events hold no message or step"
            )
        return [session]
    sessions: list[Session] = []
    used: set[str] = set()
    single = isinstance(doc.data, dict)
    for index, record in enumerate(items):
        history = record.get("history") if isinstance(record, dict) else None
        if not isinstance(history, list) or not history:
            continue  # a failed run writes its record with no history: nothing to check
        fallback = stem if single else f"{stem}#{index}"
        session = _session(_flatten(history), record, doc.source, fallback)
        if session is None:
            continue
        session.id = unique_id(session.id, used, index)
        sessions.append(session)
    if not sessions:
        raise MalformedSessionError(
            f"{doc.source}: no OpenHands output record has a 'history' with a message or step"
        )
    return sessions


def _record_id(record: dict[str, Any]) -> str | None:
    instance = record.get("instance_id")
    if isinstance(instance, str) and instance:
        return instance
    issue = _dict(record.get("issue"))
    if all(issue.get(k) not in (None, "") for k in ("owner", "repo", "number")):
        return f"{issue['owner']}/{issue['repo']}#{issue['number']}"
    return None


def _session(
    events: list[Any], record: dict[str, Any], source: str, fallback_id: str
) -> Session | None:
    metadata = _dict(record.get("metadata"))
    builder = _Builder()
    for event in events:
        builder.add(event)
    instruction = record.get("instruction")
    if (
        isinstance(instruction, str)
        and instruction
        and not any(e.kind is EventKind.USER for e in builder.events)
    ):
        at = next((i for i, e in enumerate(builder.events) if e.kind is not EventKind.SYSTEM), 0)
        builder.events.insert(at, Event(EventKind.USER, text=instruction))
    if not builder.events:
        return None
    if builder.odd:
        builder.warnings.append(f"skipped {builder.odd} value(s) that are not OpenHands events")
    llm = _dict(metadata.get("llm_config"))
    started = [parse_time(e.get("timestamp")) for e in events[:3] if isinstance(e, dict)]
    session = Session(
        id=_record_id(record) or fallback_id,
        source=source,
        format=FORMAT,
        events=builder.events,
        agent=AGENT,
        agent_version=builder.version,
        model=builder.model or _str(llm.get("model")),
        started_at=next(filter(None, started), None) or parse_time(metadata.get("start_time")),
        registered_tools=builder.registry,
        sources=[source],
        warnings=builder.warnings,
    )
    agent_class = builder.agent_class or _str(metadata.get("agent_class"))
    if agent_class:
        session.meta["agent_class"] = agent_class
    if isinstance(record.get("error"), str):
        session.meta["error"] = record["error"]
    session.reindex()
    return session


class _Builder:
    """Turns events into session events, pairing each observation with the call it answers."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.warnings: list[str] = []
        self.registry: ToolRegistry | None = None
        self.model: str | None = None
        self.version: str | None = None
        self.agent_class: str | None = None
        self._by_event: dict[str, Event] = {}  # action event id -> its call
        self._by_call: dict[str, Event] = {}  # call id -> its call
        self._open: list[Event] = []  # calls without a result, for flat events without ids
        self._answered: set[int] = set()
        self._spoken: set[str] = set()  # model responses whose text is already an event
        self.odd = 0  # values that are not events

    def add(self, event: Any) -> None:
        kind = _kind(event)
        if kind is None:
            self.odd += 1
            return
        if kind[0] == "action":
            self._action(event, kind[1])
        else:
            self._observation(event, kind[1])

    # --- actions ---------------------------------------------------------------------------

    def _action(self, event: dict[str, Any], name: str) -> None:
        args = _args(event)
        when = parse_time(event.get("timestamp"))
        source = _source(event, name, args)
        metadata = _dict(event.get("tool_call_metadata"))
        response = _dict(metadata.get("model_response"))
        self.model = self.model or _str(response.get("model"))
        if name == "system":
            self._system(event, args, when)
        elif name == "message":
            text = text_of(args.get("content")) or _str(event.get("message")) or ""
            kind = {"user": EventKind.USER, "agent": EventKind.ASSISTANT}.get(source)
            meta = {} if kind else {"synthetic": True}
            self._add(Event(kind or EventKind.SYSTEM, text=text, timestamp=when, meta=meta))
        elif name == "condensation":
            summary = _str(args.get("summary"))
            meta = {"synthetic": True, "compaction": True}
            self._add(Event(EventKind.SYSTEM, text=summary or "", timestamp=when, meta=meta))
        elif name in _QUIET:
            return
        elif name in ("finish", "reject"):
            outputs = _dict(args.get("outputs"))
            parts = [_str(args.get("thought")), _str(args.get("final_thought"))]
            parts += [_str(outputs.get("reason")), _str(outputs.get("content"))]
            text = "\n\n".join(dict.fromkeys(p.strip() for p in parts if p and p.strip()))
            self._add(Event(EventKind.ASSISTANT, text=text, timestamp=when))
            if metadata:  # a real function call (older agents finished with a tag)
                self._call(event, name, args, metadata, response, when, source)
        else:
            if source == "agent":
                self._reply(name, args, response, when)
            self._call(event, name, args, metadata, response, when, source)

    def _system(self, event: dict[str, Any], args: dict[str, Any], when: Any) -> None:
        text = text_of(args.get("content")) or _str(event.get("message")) or ""
        self._add(Event(EventKind.SYSTEM, text=text, timestamp=when))
        self.registry = tool_registry([args.get("tools")]) or self.registry
        self.version = self.version or _str(args.get("openhands_version"))
        self.agent_class = self.agent_class or _str(args.get("agent_class"))

    def _reply(self, name: str, args: dict[str, Any], response: dict[str, Any], when: Any) -> None:
        """The text the model wrote with a call. ``think`` keeps its thought as the call's input
        (it is reasoning, not a reply), so only the response's own text counts there."""
        response_id = _str(response.get("id"))
        if response_id in self._spoken:
            return  # a response with several calls: its text is already an event
        if name == "think":
            text = text_of(_message(response).get("content")) if response else ""
        else:
            text = _str(args.get("thought")) or ""
        if text.strip():
            self._add(Event(EventKind.ASSISTANT, text=text.strip(), timestamp=when))
            if response_id:
                self._spoken.add(response_id)

    def _call(
        self,
        event: dict[str, Any],
        name: str,
        args: dict[str, Any],
        metadata: dict[str, Any],
        response: dict[str, Any],
        when: Any,
        source: str,
    ) -> None:
        call_id = _str(metadata.get("tool_call_id"))
        event_id = event.get("id")
        if call_id is None:
            call_id = f"event-{event_id}" if event_id is not None else f"step-{len(self._open) + 1}"
        value = _arguments(response, call_id)
        if value is None:
            value = {k: v for k, v in args.items() if k not in _BOOKKEEPING and v is not None}
        meta = {} if source == "agent" else {"source": source}
        call = Event(
            EventKind.TOOL_CALL,
            call_id=call_id,
            name=_str(metadata.get("function_name")) or self._tool_name(name),
            input=value,
            timestamp=when,
            meta=meta,
        )
        self.events.append(call)
        if event_id is not None:
            self._by_event[str(event_id)] = call
        self._by_call.setdefault(call_id, call)
        self._open.append(call)

    def _tool_name(self, action: str) -> str:
        names = self.registry.names if self.registry is not None else frozenset()
        return next((t for t in _TOOLS_OF.get(action, ()) if t in names), action)

    # --- observations ----------------------------------------------------------------------

    def _observation(self, event: dict[str, Any], name: str) -> None:
        extras = _extras(event)
        when = parse_time(event.get("timestamp"))
        if name == "chat":  # the user's words, in the oldest event streams
            text = _output(event, extras)
            self._add(Event(EventKind.USER, text=text, timestamp=when))
            return
        if name in _CONTEXT:
            text = _recall_text(extras)
            meta = {"synthetic": True, "recall": True}
            self._add(Event(EventKind.SYSTEM, text=text, timestamp=when, meta=meta))
            return
        if name in _QUIET or name == "message":  # an old type that answers no call
            return
        call = self._answering(event)
        output = _output(event, extras)
        explicit = _explicit_error(event, name, extras)
        failed = infer_error(output) if explicit is None else explicit
        self.events.append(
            Event(
                EventKind.TOOL_RESULT,
                call_id=call.call_id if call is not None else None,
                name=call.name if call is not None else None,
                output=output,
                is_error=failed,
                error_inferred=failed and explicit is None,
                timestamp=when,
                meta={} if call is not None else {"observation": name},
            )
        )

    def _answering(self, event: dict[str, Any]) -> Event | None:
        cause = event.get("cause")
        call = self._by_event.get(str(cause)) if cause is not None else None
        if call is None:
            call_id = _str(_dict(event.get("tool_call_metadata")).get("tool_call_id"))
            call = self._by_call.get(call_id) if call_id else None
        if call is None and cause is None and "id" not in event:
            # Flat events have no ids: an observation answers the latest open call.
            call = next((c for c in reversed(self._open) if id(c) not in self._answered), None)
        if call is not None:
            self._answered.add(id(call))
        return call

    def _add(self, event: Event) -> None:
        if event.text:
            self.events.append(event)


def _source(event: dict[str, Any], name: str, args: dict[str, Any]) -> str:
    source = event.get("source")
    if isinstance(source, str):
        return source
    if name != "message":
        return "agent"
    # Flat events name no source: the agent's messages wait for the user, the user's do not.
    return "agent" if args.get("wait_for_response") is True else "user"


def _args(event: dict[str, Any]) -> dict[str, Any]:
    args = event.get("args")
    if isinstance(args, dict):
        return args
    return {k: v for k, v in event.items() if k not in _ENVELOPE or k == "content"}


def _extras(event: dict[str, Any]) -> dict[str, Any]:
    extras = event.get("extras")
    if isinstance(extras, dict):
        return extras
    return {k: v for k, v in event.items() if k not in _ENVELOPE}


def _message(response: dict[str, Any]) -> dict[str, Any]:
    choices = response.get("choices")
    first = choices[0] if isinstance(choices, list) and choices else None
    return _dict(_dict(first).get("message"))


def _arguments(response: dict[str, Any], call_id: str) -> Any:
    """The arguments the model gave call ``call_id``, as written in its response."""
    for call in _message(response).get("tool_calls") or []:
        if isinstance(call, dict) and call.get("id") == call_id:
            return parse_arguments(_dict(call.get("function")).get("arguments"))
    return None


def _output(event: dict[str, Any], extras: dict[str, Any]) -> str:
    # The editor's text the model saw; `content` then holds a diff (OpenHands before ~0.30).
    shown = extras.get("formatted_output_and_error")
    if isinstance(shown, str) and shown:
        return shown
    content = event.get("content")
    if isinstance(content, str | list):
        return text_of(content)
    return json_text(content) if content is not None else _str(event.get("message")) or ""


def _explicit_error(event: dict[str, Any], name: str, extras: dict[str, Any]) -> bool | None:
    """The format's own verdict on an observation, or None when it gives none."""
    if name in ("error", "user_rejected"):
        return True
    metadata = _dict(extras.get("metadata"))
    for code in (metadata.get("exit_code"), extras.get("exit_code")):
        if isinstance(code, int) and not isinstance(code, bool):
            # -1: still running after the soft timeout (a server, a watcher), not a failure;
            # OpenHands then sets `success: false` all the same.
            return None if code == -1 else code != 0
    if event.get("success") is False or extras.get("error") is True:
        return True
    return None


def _recall_text(extras: dict[str, Any]) -> str:
    parts = [_str(extras.get(k)) for k in ("repo_instructions", "additional_agent_instructions")]
    parts += [_str(_dict(k).get("content")) for k in extras.get("microagent_knowledge") or []]
    return "\n\n".join(p for p in parts if p and p.strip())


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
