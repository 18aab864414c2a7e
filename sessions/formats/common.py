"""Small decoding helpers every adapter needs: arguments, text, timestamps, inferred errors."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import orjson

# Type tuples bound once: `str | bytes` in a call builds a union object each time.
_TEXT = (str, bytes)


def parse_arguments(value: Any) -> Any:
    """Best-effort JSON decoding of tool arguments: invalid JSON is kept as the raw string."""
    if not isinstance(value, _TEXT):
        return value
    text = value.strip() if isinstance(value, str) else value.decode("utf-8", "replace").strip()
    if not text:
        return {}
    if text[0] not in "{[":
        return value
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return value


def text_of(content: Any) -> str:
    """The text of a message content: a string, a list of text parts/blocks, or anything else."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [text_of_part(part) for part in content]
        return "\n".join(p for p in parts if p)
    if isinstance(content, dict):
        return text_of_part(content)
    return orjson.dumps(content).decode()


def text_of_part(part: Any) -> str:
    if isinstance(part, str):
        return part
    if not isinstance(part, dict):
        return "" if part is None else str(part)
    for key in ("text", "content", "output_text", "value"):
        value = part.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, list):
            return text_of(value)
    kind = part.get("type")
    if kind in ("image", "input_image", "image_url", "blob", "document", "input_file"):
        return f"[{kind}]"
    return ""


def json_text(value: Any) -> str:
    """A tool output as text: strings as they are, anything else as compact JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return str(value)


def parse_time(value: Any) -> datetime | None:
    """ISO-8601 strings, epoch seconds/milliseconds/nanoseconds (numbers or digit strings)."""
    if value is None or value == "":
        return None
    if value.__class__ is str and value[-1] == "Z":  # the common "...Z" form, no copy
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            pass  # whitespace, odd forms: the general path below decides
    if isinstance(value, str) and not value.strip().lstrip("-").isdigit():
        text = value.strip().replace("Z", "+00:00")
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            return None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    if number <= 0:
        return None
    for scale in (1, 1e3, 1e6, 1e9):
        seconds = number / scale
        if seconds < 1e11:
            try:
                return datetime.fromtimestamp(seconds, tz=UTC)
            except (OverflowError, OSError, ValueError):
                return None
    return None


# Conservative: only text that starts like an error report, or a JSON object with an error key.
_ERROR_START = re.compile(
    r"^\s*(?:<tool_use_error>|error\b|exception\b|traceback \(most recent call last\)|"
    r"[A-Za-z_.]*(?:Error|Exception)\s*:|an error occurred while (?:running|parsing) the tool)",
    re.IGNORECASE,
)


def lstrip_head(text: str, size: int) -> str:
    """``text.lstrip()[:size]``, without copying a long text whole (a file view starts blank)."""
    head = text[: 64 + size]
    stripped = head.lstrip()
    if len(head) - len(stripped) <= 64:  # the blanks end in the head, which holds what follows
        return stripped[:size]
    return text.lstrip()[:size]


def infer_error(output: str) -> bool:
    """Whether a tool output from a format without an error flag reads as an error report."""
    if not output:
        return False
    if _ERROR_START.match(output):
        return True
    head = lstrip_head(output, 1)
    if head == "{":
        try:
            value = orjson.loads(output)
        except orjson.JSONDecodeError:
            return False
        return isinstance(value, dict) and value.get("error") not in (None, "", False)
    return False


_SHELLS = frozenset({"bash", "sh", "zsh", "/bin/bash", "/bin/sh", "/bin/zsh", "/usr/bin/bash"})


def argv_command(argv: list[str]) -> str:
    """A command given as argv (Codex's `["bash", "-lc", "ls config/"]`): the script a shell is
    asked to run, else the words joined."""
    if len(argv) == 3 and argv[0] in _SHELLS and argv[1] in ("-c", "-lc", "-ic", "-l"):
        return argv[2]
    return " ".join(argv)
