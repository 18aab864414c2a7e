"""The console channel: the message printed (to stderr when built from a config) or appended to
a file: for dry runs, local use, and a record a person can read when no other channel is set up."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from alerts.models import Alert
from alerts.render import Renderer
from sessions.errors import DeliveryError


class ConsoleChannel:
    def __init__(
        self,
        name: str,
        *,
        renderer: Renderer,
        path: Path | None = None,
        stream: TextIO | None = None,
    ) -> None:
        self.name = name
        self.renderer = renderer
        self.path = path
        self.stream = stream

    def __repr__(self) -> str:
        return f"ConsoleChannel(name={self.name!r}, path={self.path!r})"

    def send(self, alerts: Sequence[Alert]) -> None:
        text = self.renderer.console(alerts)
        if not text.endswith("\n"):
            text += "\n"
        if self.path is None:
            (self.stream or sys.stdout).write(text)
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as out:
                out.write(text)
        except OSError as exc:
            raise DeliveryError(
                f"console channel {self.name!r}: cannot append to {self.path}: {exc.strerror}",
                retryable=False,
            ) from None
