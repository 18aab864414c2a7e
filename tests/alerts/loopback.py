"""Real protocol peers on 127.0.0.1 for the channel tests, and alerts to send (not fixtures)."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests_support import serving

from alerts.models import Alert, Example


def make_alert(**overrides: Any) -> Alert:
    fields: dict[str, Any] = {
        "item_type": "anomaly",
        "key": "anomaly:invented_id_rate:support-bot:v7",
        "day": date(2026, 11, 29),
        "severity": "high",
        "title": "support-bot v7 invents order ids",
        "summary": "invented_id rate 4.1% today against a 0.6% baseline (6.8x)",
        "agent": "support-bot",
        "agent_version": "v7",
        "kind": "invented_id_rate",
        "value": 0.041,
        "baseline": 0.006,
        "lift": 6.83,
        "p_value": 1.2e-9,
        "affected_sessions": 37,
        "recommended_fix": "Make the order lookup tool mandatory before quoting an order id.",
        "examples": [
            Example("sess-001", "v7", "Your order ORD-99812 has shipped.", "no tool returned it"),
            Example("sess-002", "v7", "Refund RF-1234 is approved.", "RF-1234 never looked up"),
        ],
        "report_url": "https://reports.example.com/2026-11-29/support-bot",
        "team": "support",
    }
    fields.update(overrides)
    return Alert(**fields)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Reply:
    status: int = 200
    body: bytes = b"ok"
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class PeerServer(ThreadingHTTPServer):
    """Records every request; answers from a per-path queue of replies, then the default."""

    daemon_threads = True

    def __init__(self, default: dict[str, Reply]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.default = default
        self.queued: dict[str, list[Reply]] = {}
        self.received: list[Received] = []
        self.lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def queue(self, path: str, *replies: Reply) -> None:
        self.queued.setdefault(path, []).extend(replies)

    def reply_for(self, request: Received) -> Reply:
        with self.lock:
            self.received.append(request)
            queue = self.queued.get(request.path)
            if queue:
                return queue.pop(0)
        return self.default.get(request.path, Reply(404, b"no_service"))


class _Handler(BaseHTTPRequestHandler):
    server: PeerServer

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        request = Received(
            "POST", self.path, {k.lower(): v for k, v in self.headers.items()},
            self.rfile.read(length),
        )  # fmt: skip
        reply = self.server.reply_for(request)
        self.send_response(reply.status)
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(reply.body)))
        self.end_headers()
        self.wfile.write(reply.body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def peer(default: dict[str, Reply]) -> Iterator[PeerServer]:
    with serving(PeerServer(default)) as server:
        yield server


class SleepRecorder:
    """Stands in for time.sleep: records the delays asked for, sleeps not at all."""

    def __init__(self) -> None:
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)
