"""From raw bytes to a parsed ``Document``: gzip, JSON or JSON Lines.

Adapters get the parsed JSON value and whether it came from JSON Lines; a JSON Lines document
also keeps its raw lines, decoded on demand, so an adapter may skip lines without decoding them.
A file that is neither is a ``MalformedSessionError`` whose message says where it broke.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator
from typing import Any

import orjson

from sessions.errors import MalformedSessionError

GZIP_MAGIC = b"\x1f\x8b"


_UNDECODED: Any = object()  # ``Document._data`` before a JSON Lines document is decoded


class Document:
    """One parsed file. ``data`` is the JSON value, or for JSON Lines the list of line values.

    For JSON Lines read from bytes, ``lines`` keeps the raw lines (``body.split(b"\\n")``, blank
    ones included) and ``data`` is decoded on first use, so an adapter that can tell from the
    bytes that it will skip a line need not decode it (``decode_line`` decodes one line). A line
    that is not JSON raises ``MalformedSessionError`` when it is decoded, with the message and
    reason it would have had if every line had been decoded up front.
    """

    __slots__ = ("_data", "jsonl", "lines", "size", "source")

    def __init__(
        self,
        source: str,
        data: Any = None,
        jsonl: bool = False,
        size: int = 0,
        *,
        lines: list[bytes] | None = None,
    ) -> None:
        self.source = source
        self.jsonl = jsonl
        self.size = size
        self.lines = lines
        self._data = _UNDECODED if lines is not None else data

    @property
    def data(self) -> Any:
        if self._data is _UNDECODED:
            decode = self.decode_line
            self._data = [
                decode(index, stripped)
                for index, line in enumerate(self.lines or ())
                if (stripped := line.strip())
            ]
        return self._data

    @data.setter
    def data(self, value: Any) -> None:
        self._data = value

    def head(self) -> Iterator[Any]:
        """The line values of a JSON Lines document in order, decoded only as far as asked."""
        if self._data is _UNDECODED and self.lines is not None:
            for index, line in enumerate(self.lines):
                if line := line.strip():
                    yield self.decode_line(index, line)
        elif isinstance(self._data, list):
            yield from self._data

    def decode_line(self, index: int, line: bytes) -> Any:
        """The value of ``lines[index]``, given stripped and non-blank as ``line``."""
        try:
            return orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raw_lines = self.lines or []
            number = index + 1
            last = number == len(raw_lines)
            earlier = any(previous.strip() for previous in raw_lines[:index])
            reason = "truncated" if last and earlier else "invalid_json"
            what = "last line is cut off" if reason == "truncated" else f"line {number} is not JSON"
            raise MalformedSessionError(f"{self.source}: {what} ({exc})", reason=reason) from exc

    def __repr__(self) -> str:
        return f"Document(source={self.source!r}, jsonl={self.jsonl!r}, size={self.size!r})"


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
    name = source.removesuffix(".gz")
    if (
        name.endswith((".jsonl", ".ndjson"))
        and body[-1:] == b"\n"
        and not body[:1].isspace()
        and not body[-2:-1].isspace()
    ):
        # The usual JSON Lines file: stripping would only drop the final newline, so split
        # without copying the whole body first (same lines as ``body.strip().split``).
        lines = body.split(b"\n")
        lines.pop()
        return Document(source, jsonl=True, size=size, lines=lines)
    stripped = body.strip()
    if not stripped:
        raise MalformedSessionError(f"{source}: file is empty", reason="empty")
    if not name.endswith((".jsonl", ".ndjson")):
        try:
            return Document(source, orjson.loads(stripped), jsonl=False, size=size)
        except orjson.JSONDecodeError as whole_error:
            if b"\n" not in stripped:
                raise MalformedSessionError(
                    f"{source}: not valid JSON ({whole_error})", reason="invalid_json"
                ) from whole_error
    # Lines are decoded lazily (see ``Document``); an invalid line raises when it is decoded.
    return Document(source, jsonl=True, size=size, lines=stripped.split(b"\n"))
