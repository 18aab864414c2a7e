"""SWE-agent trajectories (``<instance>.traj``): one JSON object per run.

``trajectory`` holds the executed steps (``thought``, ``action``, ``observation``); ``history`` the
model's messages: system prompt, demonstrations, the task, and in function-calling mode each
step's ``tool_calls`` with their ids. Steps are taken from ``trajectory``, which is complete where
``history`` is not (older versions save ``history`` before the last step, and demonstrations are
edited by hand), and each step borrows the call id and arguments of its ``history`` message, found
by its action text. A file with only ``history`` gives its steps from the messages.

In the default (raw action) mode an action is a shell line, so the call is named by its first
word (``open``, ``edit``, ``python``, ``submit``) and its text kept as ``{"command": ...}``; any
shell command is allowed, so no tool list exists and ``registered_tools`` stays unknown. In
function-calling mode the functions are the documented commands of ``replay_config``. Observations
carry no error flag: failures are inferred and marked so. A RetryAgent file holds its attempts;
the chosen one is at the top level, else each attempt is a session.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from sessions.documents import Document
from sessions.errors import MalformedSessionError
from sessions.formats._messages import file_stem, registry, seq
from sessions.formats.common import infer_error, lstrip_head, parse_arguments, text_of
from sessions.formats.registry import adapter
from sessions.models import Event, EventKind, Session, ToolRegistry

FORMAT = "swe_agent"
AGENT = "swe-agent"
# SWE-agent's stand-ins for a model (replaying a demonstration, a human at the keyboard).
_PSEUDO_MODELS = frozenset({"replay", "human", "human_thought", "instant_empty_submit"})
# The harness's own exits: older versions write them as the action, newer ones as the thought.
_EXIT_ACTION = re.compile(r"^exit_[a-z_]+$")
_EXIT_THOUGHT = re.compile(r"^Exit(?:ing)? due to ")
_COMMAND_DOC = re.compile(r"^([A-Za-z_][\w-]*):\n  docstring:", re.M)
# Failures the shell or SWE-agent's own commands report in words (there is no exit code).
_FAILED = re.compile(
    r"^(?:/bin/)?(?:ba)?sh: (?:line \d+: )?\S+: command not found|"
    r"^Your proposed edit has introduced new syntax error|"
    r"^Your bash command contained syntax errors and was NOT executed|"
    r"^(?:Interactive )?[Oo]peration '.*' is not supported by this environment|"
    r"^The command '.*' was cancelled because it took more than",
    re.S,
)


def _is_step(value: Any) -> bool:
    return isinstance(value, dict) and "action" in value and "observation" in value


def _looks_like_step(value: Any) -> bool:
    """A step as SWE-agent writes it, the model's ``thought`` or ``response`` included."""
    return _is_step(value) and ("thought" in value or "response" in value)


def _is_model_message(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and value.get("role") == "assistant"
        and isinstance(value.get("action"), str)
    )


def _is_run(data: Any) -> bool:
    if not isinstance(data, dict):
        return False
    steps, history = data.get("trajectory"), data.get("history")
    if isinstance(steps, list) and steps and _looks_like_step(steps[0]):
        return True
    return (
        isinstance(history, list)
        and all(isinstance(m, dict) and isinstance(m.get("role"), str) for m in history[:5])
        and any(_is_model_message(m) for m in history)
    )


def _runs(data: Any) -> list[dict[str, Any]]:
    if _is_run(data):
        return [data]
    attempts = data.get("attempts") if isinstance(data, dict) else None
    return [a for a in attempts if _is_run(a)] if isinstance(attempts, list) else []


def sniff(doc: Document) -> bool:
    return not doc.jsonl and bool(_runs(doc.data))


@adapter(FORMAT, sniff=sniff, priority=30)
def parse(doc: Document) -> list[Session]:
    runs = [] if doc.jsonl else _runs(doc.data)
    if not runs:
        raise MalformedSessionError(
            f"{doc.source}: no SWE-agent run found: expected an object with a 'trajectory' list "
            "of steps (action, observation) or a 'history' list of model messages"
        )
    stem = file_stem(doc.source)
    if runs[0] is doc.data:
        return [_session(runs[0], doc.source, stem)]
    return [_session(run, doc.source, f"{stem}#attempt{i}") for i, run in enumerate(runs)]


def _config(run: dict[str, Any]) -> dict[str, Any]:
    config = run.get("replay_config")
    if isinstance(config, str):  # SWE-agent 1.x stores the config as a JSON string
        try:
            config = orjson.loads(config)
        except orjson.JSONDecodeError:
            return {}
    return config if isinstance(config, dict) else {}


def _session(run: dict[str, Any], source: str, fallback_id: str) -> Session:
    config = _config(run)
    agent_config = _dict(config.get("agent"))
    info = _dict(run.get("info"))
    statement = _dict(config.get("problem_statement"))
    model = _dict(agent_config.get("model")).get("name")
    version = info.get("swe_agent_version")
    tools = _registry(agent_config)
    builder = _Builder(tools.names if tools is not None else frozenset())
    builder.add(run)
    session = Session(
        id=_text(statement.get("id")) or fallback_id,
        source=source,
        format=FORMAT,
        events=builder.events,
        agent=AGENT,
        agent_version=version if isinstance(version, str) and version else None,
        model=model if isinstance(model, str) and model not in _PSEUDO_MODELS else None,
        registered_tools=tools,
        sources=[source],
        warnings=builder.warnings,
    )
    for key in ("exit_status", "submission"):
        if isinstance(info.get(key), str):
            session.meta[key] = info[key]
    if not session.events:
        raise MalformedSessionError(f"{source}: the SWE-agent run has no messages and no steps")
    session.reindex()
    return session


def _registry(agent_config: dict[str, Any]) -> ToolRegistry | None:
    """The documented commands, which are the model's functions in function-calling mode only:
    in raw action mode the model may run any shell command besides them."""
    tools = _dict(agent_config.get("tools"))
    if _dict(tools.get("parse_function")).get("type") != "function_calling":
        return None
    docs = tools.get("command_docs")
    return registry(_COMMAND_DOC.findall(docs)) if isinstance(docs, str) else None


class _Builder:
    def __init__(self, functions: frozenset[str]) -> None:
        self.functions = functions  # the model's functions, in function-calling mode
        self.events: list[Event] = []
        self.warnings: list[str] = []
        self.steps = 0

    def add(self, run: dict[str, Any]) -> None:
        history = [m for m in seq(run.get("history")) if isinstance(m, dict)]
        # The model's first own message ends the prompt (demonstrations may hold model messages).
        first = next(
            (i for i, m in enumerate(history) if _is_model_message(m) and not _demo(m)), None
        )
        prompt, rest = (history, []) if first is None else (history[:first], history[first:])
        for message in prompt:
            self._prompt(message)
        steps = seq(run.get("trajectory"))
        if steps:
            self._from_trajectory(steps, rest)
        else:
            self._from_history(rest)
        odd = sum(1 for s in steps if not _is_step(s))
        if odd:
            self.warnings.append(f"skipped {odd} trajectory step(s) without action/observation")

    def _prompt(self, message: dict[str, Any]) -> None:
        text = text_of(message.get("content"))
        if not text:
            return
        if _demo(message):
            # A worked example the harness shows the model: prompt, not the user's task.
            self.events.append(Event(EventKind.SYSTEM, text=text, meta={"demonstration": True}))
        elif message.get("role") == "system":
            self.events.append(Event(EventKind.SYSTEM, text=text))
        else:
            self.events.append(Event(EventKind.USER, text=text))

    def _from_trajectory(self, steps: list[Any], messages: list[dict[str, Any]]) -> None:
        model = [m for m in messages if _is_model_message(m) and not _demo(m)]
        cursor = 0
        for index, step in enumerate(steps):
            if not _is_step(step):
                continue
            action = _text(step.get("action"))
            match = None
            for k in range(cursor, len(model)):
                if model[k]["action"].strip() == action.strip():
                    match, cursor = model[k], k + 1
                    break
            thought = step["thought"] if isinstance(step.get("thought"), str) else None
            # Requeried outputs (format errors, blocked or malformed commands) are saved in the
            # trajectory but never enter the history, and their commands never ran. The last
            # step is left out: older versions save the history before it.
            unrun = (
                bool(model)
                and match is None
                and index < len(steps) - 1
                and not _text(step.get("observation")).strip()
            )
            self._step(
                thought if thought is not None else text_of(step.get("response")),
                action,
                _text(step.get("observation")),
                seq(match.get("tool_calls")) if match else [],
                unrun=unrun,
            )

    def _from_history(self, messages: list[dict[str, Any]]) -> None:
        pending: dict[str, Any] | None = None
        outputs: list[str] = []
        for message in [*messages, None]:
            if message is not None and not (_is_model_message(message) and not _demo(message)):
                outputs.append(text_of(message.get("content")))
                continue
            if pending is not None:
                thought = pending.get("thought")
                self._step(
                    thought if isinstance(thought, str) else text_of(pending.get("content")),
                    pending["action"],
                    "\n".join(o for o in outputs if o),
                    seq(pending.get("tool_calls")),
                )
            pending, outputs = message, []

    def _step(
        self, thought: str, action: str, output: str, calls: list[Any], *, unrun: bool = False
    ) -> None:
        command = action.strip()
        if _EXIT_ACTION.match(command) or (not command and _EXIT_THOUGHT.match(thought)):
            text = thought.strip() or output.strip() or command
            self.events.append(
                Event(EventKind.SYSTEM, text=text, meta={"synthetic": True, "exit": command})
            )
            return
        if thought.strip():
            self.events.append(Event(EventKind.ASSISTANT, text=thought.strip()))
        if not command:
            return  # the model's output held no action (a format error): only its text counts
        self.steps += 1
        call_id, name, value = _call(calls, command, self.steps, self.functions)
        meta: dict[str, Any] = {"action": command} if calls else {}
        if unrun:
            meta["not_executed"] = True
        self.events.append(
            Event(EventKind.TOOL_CALL, call_id=call_id, name=name, input=value, meta=meta)
        )
        failed = unrun or infer_error(output) or bool(_FAILED.match(lstrip_head(output, 200)))
        self.events.append(
            Event(
                EventKind.TOOL_RESULT,
                call_id=call_id,
                name=name,
                output=output,
                is_error=failed,
                error_inferred=failed,
            )
        )


def _call(
    calls: list[Any], command: str, step: int, functions: frozenset[str]
) -> tuple[str, str, Any]:
    """The step's call id, tool name and input: the function call the model made, else the raw
    action named by its first word. A step of a function-calling run that its history lacks
    (the last one, in older versions) keeps only the rendered action: a first word that is no
    function was a ``bash`` call."""
    for raw in calls:
        function = _dict(raw.get("function")) if isinstance(raw, dict) else {}
        name = function.get("name")
        if isinstance(name, str) and name:
            call_id = raw.get("id")
            given = call_id if isinstance(call_id, str) and call_id else f"step-{step}"
            return given, name, parse_arguments(function.get("arguments"))
    word = command.split(maxsplit=1)[0]
    if functions and word not in functions and "bash" in functions:
        word = "bash"
    return f"step-{step}", word, {"command": command}


def _demo(message: dict[str, Any]) -> bool:
    return bool(message.get("is_demo")) or message.get("message_type") == "demonstration"


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""
