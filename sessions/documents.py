"""From raw bytes to a parsed ``Document``: gzip, JSON or JSON Lines.

Adapters never see bytes: they get the parsed JSON value and whether it came from JSON Lines.
A file that is neither is a ``MalformedSessionError`` whose message says where it broke.
"""

from __future__ import annotations

import gzip
import zlib
from dataclasses import dataclass
from typing import Any

import orjson

from sessions.errors import MalformedSessionError

GZIP_MAGIC = b"\x1f\x8b"


@dataclass(slots=True)
class Document:
    """One parsed file. ``data`` is the JSON value, or for JSON Lines the list of line values."""

    source: str
    data: Any
    jsonl: bool
    size: int = 0


def decompress(source: str, raw: bytes) -> bytes:
    if raw[:2] != GZIP_MAGIC:
        return raw
    try:
        return gzip.decompress(raw)
    except (OSError, EOFError, zlib.error) as exc:
        raise MalformedSessionError(
            f"{source}: gzip data is corrupt or truncated ({exc})", reason="bad_gzip"
        ) from exc


def parse_bytes(source: str, raw: bytes) -> Document:
    """Decode ``raw`` (optionally gzip-compressed) as JSON, else as JSON Lines.

    A `.jsonl`/`.ndjson` name means JSON Lines even when the file holds one line.
    """
    body = decompress(source, raw)
    size = len(body)
    stripped = body.strip()
    if not stripped:
        raise MalformedSessionError(f"{source}: file is empty", reason="empty")
    name = source.removesuffix(".gz")
    if not name.endswith((".jsonl", ".ndjson")):
        try:
            return Document(source, orjson.loads(stripped), jsonl=False, size=size)
        except orjson.JSONDecodeError as whole_error:
            if b"\n" not in stripped:
                raise MalformedSessionError(
                    f"{source}: not valid JSON ({whole_error})", reason="invalid_json"
                ) from whole_error
    lines: list[Any] = []
    raw_lines = stripped.split(b"\n")
    for number, line in enumerate(raw_lines, start=1):
        line = line.strip()
        if not line:
            continue
        try:
            lines.append(orjson.loads(line))
        except orjson.JSONDecodeError as exc:
            last = number == len(raw_lines)
            reason = "truncated" if last and lines else "invalid_json"
            what = "last line is cut off" if reason == "truncated" else f"line {number} is not JSON"
            raise MalformedSessionError(f"{source}: {what} ({exc})", reason=reason) from exc
    return Document(source, lines, jsonl=True, size=size)
