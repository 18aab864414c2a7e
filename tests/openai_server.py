"""A small OpenAI-compatible HTTP server on 127.0.0.1 for tests (not a fixture, not a mock).

    with openai_server(grader=grade) as server:       # grade(messages) -> dict | str
        client = openai.OpenAI(base_url=server.base_url, api_key="sk-test")
        server.script("not json", (429, {"retry-after-ms": "1"}, {"error": {...}}))
        ...
        server.chat_requests()      # the recorded POST /v1/chat/completions requests
        server.requests             # every request: Recorded(method, path, headers, body)

Endpoints: ``POST /v1/chat/completions``, ``POST /v1/files`` (multipart upload),
``GET /v1/files/{id}/content``, ``POST /v1/batches``, ``GET /v1/batches/{id}``,
``POST /v1/batches/{id}/cancel``. Anything else answers 404, and so do the file and batch
endpoints with ``batch_api=False`` (a server without the Batch API, like Ollama).

How a chat request is answered, first match wins:

1. ``server.script(*replies)`` queues replies, used once each in order. A reply is a ``str``
   (the assistant message content, ``finish_reason: "stop"``), a ``Completion`` (content,
   finish reason, refusal) or a ``(status, headers, body)`` tuple sent as is (a 429 with
   ``{"retry-after-ms": "1"}``, a 500, a 401); a ``dict`` body is sent as JSON.
2. The ``grader``: called with the request's ``messages``; a ``dict`` answer is sent as JSON
   content, a ``str`` as is.
3. Otherwise ``{"claims": [], "reason": "no grader"}``.

Every completion carries ``usage``: ``prompt_tokens`` = characters of all message contents // 4
and ``completion_tokens`` = characters of the content // 4 (at least 1 each), so token budgets
are predictable in tests.

Batches: ``POST /v1/batches`` reads the uploaded JSONL; the batch reports ``in_progress`` until
its ``batch_ready_after``-th retrieve (``None``: never), then answers each line like a chat
request (script, then grader) and reports ``completed`` with an ``output_file_id``. With
``batch_lines_done=N`` only the first N lines get an answer and the status is ``expired``
(the rest are missing, as when the completion window ends). A cancelled batch reports
``cancelled``.

Note on retry waits: the openai SDK honours ``retry-after-ms``/``Retry-After`` only when the
delay is above 0; ``Retry-After: 0`` falls back to its 0.5 s exponential backoff. Send
``retry-after-ms: 1`` to keep retries instant.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests_support import serving

Grader = Callable[[list[dict[str, Any]]], "dict[str, Any] | str"]


@dataclass
class Completion:
    """A scripted chat completion with a chosen finish reason or refusal."""

    content: str | None = None
    finish_reason: str = "stop"
    refusal: str | None = None


HttpReply = tuple[int, dict[str, str], "dict[str, Any] | bytes | str"]


@dataclass
class Recorded:
    """One request as the server saw it; ``body`` is parsed JSON when it was JSON, else bytes."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class _Batch:
    id: str
    input_file_id: str
    endpoint: str
    completion_window: str
    status: str = "in_progress"
    retrieves: int = 0
    output_file_id: str | None = None
    counts: dict[str, int] = field(default_factory=dict)


class OpenAIServer(ThreadingHTTPServer):
    """The server; see the module docstring. Use ``openai_server()`` to run one."""

    daemon_threads = True

    def __init__(
        self,
        grader: Grader | None = None,
        *,
        batch_ready_after: int | None = 2,
        batch_lines_done: int | None = None,
        batch_api: bool = True,
    ) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.batch_api = batch_api
        self.grader = grader
        self.batch_ready_after = batch_ready_after
        self.batch_lines_done = batch_lines_done
        self.requests: list[Recorded] = []
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, _Batch] = {}
        self._queue: list[Any] = []
        self._ids = itertools.count(1)
        self.lock = threading.RLock()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def script(self, *replies: Any) -> None:
        """Queue chat replies (see the module docstring), used before the grader."""
        with self.lock:
            self._queue.extend(replies)

    def chat_requests(self) -> list[Recorded]:
        return [r for r in self.requests if r.path == "/v1/chat/completions"]

    def paths(self) -> list[str]:
        return [f"{r.method} {r.path}" for r in self.requests]

    def new_id(self, prefix: str) -> str:
        return f"{prefix}-{next(self._ids)}"

    # -- answering --------------------------------------------------------------------------

    def chat_reply(self, body: dict[str, Any]) -> HttpReply:
        with self.lock:
            scripted = self._queue.pop(0) if self._queue else None
        if isinstance(scripted, tuple):
            return scripted
        messages = body.get("messages") or []
        if isinstance(scripted, Completion):
            completion = scripted
        elif isinstance(scripted, str):
            completion = Completion(scripted)
        elif self.grader is not None:
            graded = self.grader(messages)
            completion = Completion(graded if isinstance(graded, str) else json.dumps(graded))
        else:
            completion = Completion(json.dumps({"claims": [], "reason": "no grader"}))
        return 200, {}, self.completion_json(body, messages, completion)

    def completion_json(
        self, body: dict[str, Any], messages: list[dict[str, Any]], completion: Completion
    ) -> dict[str, Any]:
        sent = sum(len(str(m.get("content") or "")) for m in messages)
        content = completion.content or ""
        usage = {"prompt_tokens": max(1, sent // 4), "completion_tokens": max(1, len(content) // 4)}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        message = {
            "role": "assistant",
            "content": completion.content,
            "refusal": completion.refusal,
        }
        return {
            "id": self.new_id("chatcmpl"),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "unknown"),
            "choices": [
                {"index": 0, "message": message, "finish_reason": completion.finish_reason}
            ],
            "usage": usage,
        }

    def upload(self, headers: dict[str, str], raw: bytes) -> HttpReply:
        head = f"Content-Type: {headers.get('content-type', '')}\r\n\r\n".encode()
        form = BytesParser(policy=HTTP).parsebytes(head + raw)
        fields: dict[str, bytes] = {}
        filename = "upload"
        for part in form.iter_parts():
            name = part.get_param("name", header="content-disposition")
            payload = part.get_payload(decode=True)
            if isinstance(name, str) and isinstance(payload, bytes):
                fields[name] = payload
                filename = part.get_filename() or filename
        if "file" not in fields:
            return 400, {}, {"error": {"message": "no file field in the upload"}}
        file_id = self.new_id("file")
        with self.lock:
            self.files[file_id] = fields["file"]
        purpose = fields.get("purpose", b"").decode()
        return 200, {}, self.file_json(file_id, filename, purpose)

    def file_json(self, file_id: str, filename: str, purpose: str) -> dict[str, Any]:
        return {
            "id": file_id,
            "object": "file",
            "bytes": len(self.files[file_id]),
            "created_at": int(time.time()),
            "filename": filename,
            "purpose": purpose,
            "status": "processed",
        }

    def create_batch(self, body: dict[str, Any]) -> HttpReply:
        if body.get("input_file_id") not in self.files:
            return 404, {}, {"error": {"message": f"no file {body.get('input_file_id')}"}}
        batch = _Batch(
            self.new_id("batch"),
            body["input_file_id"],
            body.get("endpoint", ""),
            body.get("completion_window", ""),
        )
        with self.lock:
            self.batches[batch.id] = batch
        return 200, {}, self.batch_json(batch)

    def retrieve_batch(self, batch_id: str) -> HttpReply:
        batch = self.batches.get(batch_id)
        if batch is None:
            return 404, {}, {"error": {"message": f"no batch {batch_id}"}}
        batch.retrieves += 1
        ready = self.batch_ready_after
        if batch.status == "in_progress" and ready is not None and batch.retrieves >= ready:
            self.finish_batch(batch)
        return 200, {}, self.batch_json(batch)

    def cancel_batch(self, batch_id: str) -> HttpReply:
        batch = self.batches.get(batch_id)
        if batch is None:
            return 404, {}, {"error": {"message": f"no batch {batch_id}"}}
        if batch.status == "in_progress":
            batch.status = "cancelled"
        return 200, {}, self.batch_json(batch)

    def finish_batch(self, batch: _Batch) -> None:
        lines = [json.loads(x) for x in self.files[batch.input_file_id].splitlines() if x.strip()]
        done = lines if self.batch_lines_done is None else lines[: self.batch_lines_done]
        out = []
        for line in done:
            status, _, body = self.chat_reply(line["body"])
            error = None if status == 200 else {"code": str(status), "message": "failed"}
            response = {"status_code": status, "request_id": self.new_id("req"), "body": body}
            out.append({"id": self.new_id("batch_req"), "custom_id": line["custom_id"],
                        "response": response, "error": error})  # fmt: skip
        file_id = self.new_id("file")
        with self.lock:
            self.files[file_id] = "".join(json.dumps(x) + "\n" for x in out).encode()
        batch.output_file_id = file_id
        batch.status = "completed" if len(done) == len(lines) else "expired"
        batch.counts = {"total": len(lines), "completed": len(done), "failed": 0}

    def batch_json(self, batch: _Batch) -> dict[str, Any]:
        return {
            "id": batch.id,
            "object": "batch",
            "endpoint": batch.endpoint,
            "input_file_id": batch.input_file_id,
            "completion_window": batch.completion_window,
            "status": batch.status,
            "output_file_id": batch.output_file_id,
            "error_file_id": None,
            "created_at": int(time.time()),
            "request_counts": batch.counts or None,
        }


class _Handler(BaseHTTPRequestHandler):
    server: OpenAIServer
    protocol_version = "HTTP/1.1"  # keep-alive, as the SDK's connection pool expects
    # Headers and body go out in one write: written separately, Nagle's algorithm and delayed
    # ACKs cost ~40 ms a request on a kept-alive connection.
    wbufsize = -1
    disable_nagle_algorithm = True

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks: list[bytes] = []
            while True:
                size = int(self.rfile.readline().strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length", "0")))

    def _handle(self, method: str) -> None:
        raw = self._body() if method == "POST" else b""
        headers = {k.lower(): v for k, v in self.headers.items()}
        try:
            body: Any = (
                json.loads(raw) if raw and "json" in headers.get("content-type", "") else raw
            )
        except json.JSONDecodeError:
            body = raw
        with self.server.lock:
            self.server.requests.append(Recorded(method, self.path, headers, body))
        self._send(*self._route(method, self.path, headers, body))

    def _route(self, method: str, path: str, headers: dict[str, str], body: Any) -> HttpReply:
        server = self.server
        parts = path.split("?")[0].strip("/").split("/")
        if method == "POST" and path == "/v1/chat/completions":
            return server.chat_reply(body if isinstance(body, dict) else {})
        if not server.batch_api:
            return 404, {}, {"error": {"message": f"no route {method} {path}"}}
        if method == "POST" and path == "/v1/files":
            return server.upload(headers, body if isinstance(body, bytes) else b"")
        if method == "POST" and path == "/v1/batches":
            return server.create_batch(body if isinstance(body, dict) else {})
        if method == "GET" and len(parts) == 3 and parts[1] == "batches":
            return server.retrieve_batch(parts[2])
        if method == "POST" and len(parts) == 4 and parts[1] == "batches" and parts[3] == "cancel":
            return server.cancel_batch(parts[2])
        if method == "GET" and len(parts) == 4 and parts[1] == "files" and parts[3] == "content":
            content = server.files.get(parts[2])
            if content is None:
                return 404, {}, {"error": {"message": f"no file {parts[2]}"}}
            return 200, {"Content-Type": "application/octet-stream"}, content
        return 404, {}, {"error": {"message": f"no route {method} {path}"}}

    def _send(self, status: int, headers: dict[str, str], body: Any) -> None:
        if isinstance(body, bytes):
            data = body
        elif isinstance(body, str):
            data = body.encode()
        else:
            data = json.dumps(body).encode()
            headers = {"Content-Type": "application/json", **headers}
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        self._handle("POST")

    def do_GET(self) -> None:
        self._handle("GET")

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def openai_server(
    grader: Grader | None = None,
    *,
    batch_ready_after: int | None = 2,
    batch_lines_done: int | None = None,
    batch_api: bool = True,
) -> Iterator[OpenAIServer]:
    """Run an ``OpenAIServer`` in a thread for the ``with`` block."""
    server = OpenAIServer(
        grader,
        batch_ready_after=batch_ready_after,
        batch_lines_done=batch_lines_done,
        batch_api=batch_api,
    )
    with serving(server):
        yield server
