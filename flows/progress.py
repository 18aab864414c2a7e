"""Progress of a run: a bar in a terminal, plain log lines otherwise.

The CLI installs a reporter before the flow starts; the flow reports batches as they finish.
"""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from rich.progress import TaskID

log = logging.getLogger("halluwatch")


class Reporter(Protocol):
    def start(self, total: int, description: str) -> None: ...
    def advance(self, sessions: int) -> None: ...
    def stop(self) -> None: ...


class LogReporter:
    def __init__(self) -> None:
        self.total = self.done = self.sessions = 0

    def start(self, total: int, description: str) -> None:
        self.total = total
        log.info("%s: %d batches", description, total)

    def advance(self, sessions: int) -> None:
        self.done += 1
        self.sessions += sessions
        log.info("batch %d/%d done (%d sessions so far)", self.done, self.total, self.sessions)

    def stop(self) -> None:
        pass


class BarReporter:
    def __init__(self) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("batches, {task.fields[sessions]} sessions"),
            TimeElapsedColumn(),
            transient=False,
        )
        self.task: TaskID | None = None
        self.sessions = 0

    def start(self, total: int, description: str) -> None:
        self.progress.start()
        self.task = self.progress.add_task(description, total=total, sessions=0)

    def advance(self, sessions: int) -> None:
        self.sessions += sessions
        if self.task is not None:
            self.progress.update(self.task, advance=1, sessions=self.sessions)

    def stop(self) -> None:
        self.progress.stop()


_reporter: Reporter = LogReporter()


def install(interactive: bool | None = None) -> None:
    global _reporter
    if interactive is None:
        interactive = sys.stderr.isatty()
    _reporter = BarReporter() if interactive else LogReporter()


def reporter() -> Reporter:
    return _reporter
