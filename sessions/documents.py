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

    For JSON Lines read from bytes, ``body`` keeps the bytes (a newline ends each line) and
    ``data`` is decoded on first use, so an adapter that can tell from the bytes that it will
    skip a line need not decode it, nor even copy it out of the body (``decode_line`` decodes
    one line). ``lines`` splits the body on first use (blank lines included). A line that is not
    JSON raises ``MalformedSessionError`` when it is decoded, with the message and reason it
    would have had if every line had been decoded up front.
    """

    __slots__ = ("_data", "_lines", "body", "jsonl", "size", "source")

    def __init__(
        self,
        source: str,
        data: Any = None,
        jsonl: bool = False,
        size: int = 0,
        *,
        body: bytes | None = None,
    ) -> None:
        self.source = source
        self.jsonl = jsonl
        self.size = size
        self.body = body
        self._lines: list[bytes] | None = None
        self._data = _UNDECODED if body is not None else data

    @property
    def lines(self) -> list[bytes] | None:
        """The raw lines of ``body`` (``None`` without one), split on first use."""
        if self._lines is None and self.body is not None:
            lines = self.body.split(b"\n")
            if self.body.endswith(b"\n"):
                lines.pop()  # the newline ends the last line; no empty line follows it
            self._lines = lines
        return self._lines

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
        """The line values of a JSON Lines document in order, decoded only as far as asked
        (without splitting the whole body: sniffing reads a few lines of a large file)."""
        if self._data is _UNDECODED and self.body is not None:
            body, start, index = self.body, 0, 0
            while start < len(body):
                end = body.find(b"\n", start)
                end = len(body) if end < 0 else end
                if line := body[start:end].strip():
                    yield self.decode_line(index, line)
                start, index = end + 1, index + 1
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
        # The usual JSON Lines file: stripping would only drop the final newline, so the body is
        # kept as it is (same lines as ``body.strip().split``).
        return Document(source, jsonl=True, size=size, body=body)
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
    return Document(source, jsonl=True, size=size, body=stripped)
