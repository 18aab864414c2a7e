"""OpenAI Responses API item lists (FORMATS.md section 3.1), as the Agents SDK stores them too.

Accepted shapes: ``{request, items, final_response}`` (the item list of a run plus its config),
``{request, response}``, a Response object with ``output``, a bare array of items, and JSON
Lines of items (one session) or of the object shapes (one session a line). Tool calls correlate
by ``call_id``, never by the ``fc_`` item ``id``. Only ``mcp_call`` has an explicit error; other
tool outputs get the conservative text inference.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

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

FORMAT = "openai_responses"
# Item types only the Responses API writes; "message" alone is shared with Anthropic's response.
ITEM_TYPES = frozenset(
    {
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "reasoning",
        "mcp_call",
        "mcp_list_tools",
        "mcp_approval_request",
        "mcp_approval_response",
        "web_search_call",
        "file_search_call",
        "code_interpreter_call",
        "computer_call",
        "computer_call_output",
        "local_shell_call",
        "local_shell_call_output",
        "shell_call",
        "apply_patch_call",
        "image_generation_call",
        "item_reference",
        "compaction",
    }
)
_PART_TYPES = frozenset({"input_text", "output_text", "input_image", "input_file", "refusal"})
_ROLES = {
    "user": EventKind.USER,
    "system": EventKind.SYSTEM,
    "developer": EventKind.SYSTEM,
    "assistant": EventKind.ASSISTANT,
}


def _typed_message(item: dict[str, Any]) -> bool:
    content = item.get("content")
    return (
        item.get("type") == "message"
        and isinstance(content, list)
        and any(isinstance(p, dict) and name_of(p.get("type")) in _PART_TYPES for p in content)
    )


def looks_like_items(items: Any) -> bool:
    """A list of Responses items: typed (or role-only input messages), one of them unmistakable."""
    if not isinstance(items, list) or not items:
        return False
    for item in items:
        if not isinstance(item, dict) or "stop_reason" in item:
            return False
        if not isinstance(item.get("type"), str) and not isinstance(item.get("role"), str):
            return False
    return any(name_of(i.get("type")) in ITEM_TYPES or _typed_message(i) for i in items)


def _response_of(record: dict[str, Any]) -> dict[str, Any] | None:
    for key in ("final_response", "response"):
        value = record.get(key)
        if isinstance(value, dict) and (value.get("object") == "response" or "output" in value):
            return value
    if record.get("object") == "response" or looks_like_items(record.get("output")):
        return record
    return None


def _is_record(record: Any) -> bool:
    if not isinstance(record, dict):
        return False
    if looks_like_items(record.get("items")):
        return True
    response = _response_of(record)
    return response is not None and isinstance(response.get("output"), list)


def sniff(doc: Document) -> bool:
    data = doc.data
    if isinstance(data, dict):
        return _is_record(data)
    if not isinstance(data, list):
        return False
    return looks_like_items(data) or (bool(data) and all(_is_record(r) for r in data[:5]))


@adapter(FORMAT, sniff=sniff, priority=50)
def parse(doc: Document) -> list[Session]:
    stem = file_stem(doc.source)
    if isinstance(doc.data, list) and looks_like_items(doc.data):
        return [_session({"items": doc.data}, doc.source, stem)]
    items = records(doc)
    if not items or not any(_is_record(r) for r in items):
        raise MalformedSessionError(
            f"{doc.source}: no Responses 'items', 'output' or item list found for {FORMAT}"
        )
    single = isinstance(doc.data, dict)
    used: set[str] = set()
    sessions = []
    for index, record in enumerate(items):
        if _is_record(record):
            session = _session(record, doc.source, stem if single else f"{stem}#{index}")
            session.id = unique_id(session.id, used, None if single else index)
            sessions.append(session)
    return sessions


def _session(record: dict[str, Any], source: str, fallback_id: str) -> Session:
    request = obj(record.get("request")) or {}
    response = _response_of(record)
    configs = dicts(response, request, record)
    history = _history(record, request, response)
    log = EventLog()
    instructions = pick(configs, ("instructions",))
    if instructions:
        log.message(EventKind.SYSTEM, instructions, meta={"instructions": True})
    tool_names = _tool_names(configs, history)
    for item in history:
        _add_item(log, item)

    metadata = dicts(*(c.get("metadata") for c in configs))
    prompt = next((c["prompt"] for c in configs if isinstance(c.get("prompt"), dict)), None)
    prompt_version = None
    if prompt is not None and first_str(prompt.get("id")):
        version = first_str(prompt.get("version"))
        prompt_version = f"{prompt['id']}@{version}" if version else prompt["id"]
    session = Session(
        id=_session_id(configs, metadata) or fallback_id,
        source=source,
        format=FORMAT,
        events=log.events,
        agent=pick(metadata, AGENT_KEYS),
        # The app version a deploy changes; a stored prompt's id@version when the app sent none.
        agent_version=pick(metadata, VERSION_KEYS) or prompt_version,
        model=pick(configs, ("model",)),
        started_at=next(filter(None, (parse_time(c.get("created_at")) for c in configs)), None),
        registered_tools=registry(tool_names),
        sources=[source],
        warnings=log.warnings,
    )
    if prompt is not None:
        session.meta["prompt"] = {k: prompt.get(k) for k in ("id", "version") if k in prompt}
    if response is not None and response.get("status") in ("failed", "incomplete"):
        session.meta["response_status"] = response["status"]
        session.meta["response_error"] = response.get("error") or response.get("incomplete_details")
    session.reindex()
    return session


def _history(record: dict[str, Any], request: dict[str, Any], response: Any) -> list[Any]:
    """The run's items in order, the final response's output appended unless already there."""
    items = record.get("items")
    if not isinstance(items, list):
        given = request.get("input")
        if isinstance(given, str):
            items = [{"role": "user", "content": given}]
        else:
            items = given if isinstance(given, list) else []
    history = list(items)
    seen_ids = {i["id"] for i in history if isinstance(i, dict) and name_of(i.get("id"))}
    for item in seq((response or {}).get("output")):
        duplicate = isinstance(item, dict) and name_of(item.get("id")) in seen_ids
        if not duplicate and item not in history:
            history.append(item)
    return history


def _session_id(configs: list[dict[str, Any]], metadata: list[dict[str, Any]]) -> str | None:
    for config in configs:
        conversation = config.get("conversation")
        found = first_str(
            conversation.get("id") if isinstance(conversation, dict) else conversation
        )
        if found:
            return found
    return pick(configs, SESSION_KEYS) or pick(metadata, SESSION_KEYS)


def _tool_names(configs: list[dict[str, Any]], history: list[Any]) -> list[Any]:
    names: list[Any] = []
    unlisted: set[str] = set()
    for config in configs:
        for tool in seq(config.get("tools")):
            if not isinstance(tool, dict):
                continue
            if tool.get("type") == "mcp":
                allowed = tool.get("allowed_tools")
                if isinstance(allowed, list):
                    names.extend(allowed)
                else:
                    unlisted.add(str(tool.get("server_label")))
            elif tool.get("type") in BUILTIN_TOOLS and not tool.get("name"):
                names.append(BUILTIN_TOOLS[tool["type"]])  # `{"type": "shell"}`: its calls' name
            else:
                inner = tool.get("function")
                names.append(inner.get("name") if isinstance(inner, dict) else tool.get("name"))
    for item in history:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "mcp_list_tools":
            unlisted.discard(str(item.get("server_label")))
            names.extend(t.get("name") for t in seq(item.get("tools")) if isinstance(t, dict))
    # A declared MCP server whose tool list is not in the file: the calls it served are its tools.
    names.extend(
        i.get("name")
        for i in history
        if isinstance(i, dict)
        and i.get("type") == "mcp_call"
        and str(i.get("server_label")) in unlisted
    )
    return names


def _add_item(log: EventLog, item: Any) -> None:
    if not isinstance(item, dict):
        return
    kind = name_of(item.get("type")) or ("message" if "role" in item else None)
    if kind == "message" and name_of(item.get("role")) in _ROLES:
        meta = {"phase": item["phase"]} if isinstance(item.get("phase"), str) else {}
        log.message(_ROLES[item["role"]], _message_text(item.get("content")), meta=meta)
    elif kind in ("function_call", "custom_tool_call"):
        raw = item.get("arguments") if kind == "function_call" else item.get("input")
        # Custom tools take free text: only function arguments are JSON.
        value = parse_arguments(raw) if kind == "function_call" else raw
        log.call(item.get("call_id") or item.get("id"), item.get("name"), value)
    elif kind in _SHELL_CALLS:
        log.call(item.get("call_id") or item.get("id"), _SHELL_CALLS[kind], _shell_action(item))
    elif kind == "apply_patch_call":
        operation = item.get("operation")
        log.call(item.get("call_id") or item.get("id"), "apply_patch", _patch_input(operation))
    elif kind == "shell_call_output":
        _add_shell_outputs(log, item)
    elif kind == "apply_patch_call_output":
        failed = item.get("status") == "failed"
        text = json_text(item.get("output")) or ("failed" if failed else "")
        log.result(item.get("call_id") or item.get("id"), text, is_error=failed)
    elif kind in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
        output = item.get("output")
        text = text_of(output) if isinstance(output, list) else json_text(output)
        call_id = item.get("call_id") or item.get("id")
        shell = _shell_output(text)
        if shell is not None:  # Codex's shell tool: the output and its exit code, as JSON
            text, code = shell
            log.result(call_id, text, is_error=code != 0, meta={"exit_code": code})
            return
        exit_code = _plain_shell_code(text)
        if exit_code is not None:  # the same as plain text: `Exit code: 1\nWall time: ...`
            meta = {"exit_code": exit_code}
            log.result(call_id, text, is_error=exit_code != 0, meta=meta)
            return
        inferred = infer_error(text)
        log.result(call_id, text, is_error=inferred, error_inferred=inferred)
    elif kind == "mcp_call":
        meta = {"server_label": item.get("server_label")}
        log.call(
            item.get("id"), item.get("name"), parse_arguments(item.get("arguments")), meta=meta
        )
        error = item.get("error")
        failed = error not in (None, "") or item.get("status") == "failed"
        text = json_text(item.get("output")) or (json_text(error) if failed else "")
        log.result(item.get("id"), text, is_error=failed, meta=dict(meta))
    # reasoning, built-in tool calls and the rest carry nothing the detectors read.


# The built-in shell tools' calls, by item type, and the tool names they are read under.
_SHELL_CALLS = {"local_shell_call": "local_shell", "shell_call": "shell"}
# Built-in tools declared by type alone (`{"type": "shell"}`): their calls' names.
BUILTIN_TOOLS = {"local_shell": "local_shell", "shell": "shell", "apply_patch": "apply_patch"}


def _shell_action(item: dict[str, Any]) -> dict[str, Any]:
    """A shell call's input as a shell step: `local_shell_call`'s `action.command` (argv) or
    `shell_call`'s `action.commands`, as one command line, and its working directory."""
    action = item.get("action")
    action = action if isinstance(action, dict) else {}
    commands = action.get("command") if "command" in action else action.get("commands")
    if isinstance(commands, list):
        sep = " " if item.get("type") == "local_shell_call" else "\n"
        commands = sep.join(str(c) for c in commands)
    args: dict[str, Any] = {"command": commands if isinstance(commands, str) else ""}
    if isinstance(action.get("working_directory"), str):
        args["workdir"] = action["working_directory"]
    return args


def _patch_input(operation: Any) -> Any:
    """An `apply_patch_call`'s operation (`create_file`/`update_file`/`delete_file`, `path`,
    `diff`) as its input: its `path` where the file checks look for one."""
    if not isinstance(operation, dict):
        return operation
    return {"operation": operation.get("type"), **operation}


def _add_shell_outputs(log: EventLog, item: dict[str, Any]) -> None:
    """A `shell_call_output`: each command's stdout and stderr, failed when a command exited
    non-zero or timed out."""
    texts: list[str] = []
    code: int | None = None
    failed = False
    for part in seq(item.get("output")):
        if not isinstance(part, dict):
            continue
        texts += [t for t in (part.get("stdout"), part.get("stderr")) if isinstance(t, str) and t]
        outcome = part.get("outcome")
        if isinstance(outcome, dict):
            if outcome.get("type") == "timeout":
                failed = True
            exit_code = outcome.get("exit_code")
            if isinstance(exit_code, int) and not isinstance(exit_code, bool):
                code = exit_code
                failed = failed or exit_code != 0
    meta = {"exit_code": code} if code is not None else {}
    log.result(item.get("call_id") or item.get("id"), "\n".join(texts), is_error=failed, meta=meta)


def _shell_output(text: str) -> tuple[str, int] | None:
    """The command output and exit code of a Codex shell result, which the CLI writes as a JSON
    string (`{"output": "...", "metadata": {"exit_code": 1, "duration_seconds": 0.4}}`), or None
    for any other output."""
    if not text.startswith('{"output"'):
        return None
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    metadata = value.get("metadata") if isinstance(value, dict) else None
    code = metadata.get("exit_code") if isinstance(metadata, dict) else None
    if not isinstance(value.get("output"), str) or not isinstance(code, int) or code is True:
        return None
    return value["output"], code


# Codex's plain-text shell and patch results: a header of `Key: value` lines (`Chunk ID`, `Wall
# time`, `Exit code: 1` or `Process exited with code 1`, `Original token count`), then `Output:`.
_PLAIN_SHELL_HEAD = re.compile(
    r"\A(?:(?:Chunk ID|Wall time|Total output lines|Original token count): [^\n]*\n"
    r"|(?:Exit code: |Process exited with code )(?P<code>-?\d+)\n){1,6}Output:"
)


def _plain_shell_code(text: str) -> int | None:
    """The exit code in the header of a Codex plain-text result, or None for other output."""
    if text[:1] not in ("E", "C", "W", "P"):
        return None
    m = _PLAIN_SHELL_HEAD.match(text)
    return int(m.group("code")) if m and m.group("code") is not None else None


def _message_text(content: Any) -> str:
    if isinstance(content, list):
        parts = [
            p.get("refusal") if isinstance(p, dict) and p.get("type") == "refusal" else p
            for p in content
        ]
        return text_of([p for p in parts if p])
    return text_of(content)
