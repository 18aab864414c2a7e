"""Helpers shared by tests (not fixtures)."""

from __future__ import annotations

import os
import shutil
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from socketserver import BaseServer
from typing import TypeVar

import pytest

from sessions.documents import Document, parse_bytes
from sessions.models import Event, EventKind, Session


def halluwatch_bin() -> str:
    """The installed `halluwatch` console script of the interpreter running the tests."""
    beside = Path(sys.executable).parent / "halluwatch"
    if beside.exists():
        return str(beside)
    found = shutil.which("halluwatch")
    if found is None:
        raise RuntimeError("the halluwatch console script is not installed: pip install -e .")
    return found


PREFECT_ENV = {
    "DO_NOT_TRACK": "1",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "PREFECT_LOGGING_LEVEL": "WARNING",
    "PREFECT_SERVER_LOGGING_LEVEL": "CRITICAL",
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
}


def cli_env(**extra: str) -> dict[str, str]:
    """This environment minus its Prefect settings, plus quiet defaults and ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env.update(PREFECT_ENV)
    env.update(extra)
    return env


REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("HALLUWATCH_SHARED", REPO.parent / "shared"))


def shared_path(relative: str) -> Path:
    """The path of ``relative`` under ``../shared``, or skip the test when it is absent."""
    path = SHARED / relative
    if not path.exists():
        pytest.skip(f"{path} is absent: the shared development corpus is not beside this checkout")
    return path


def shared_files(pattern: str) -> list[str]:
    """The paths under ``../shared`` matching ``pattern``, relative to it, sorted (none when
    it is absent: a test parametrised by them then falls back to a path that skips)."""
    return sorted(str(p.relative_to(SHARED)) for p in SHARED.glob(pattern))


def other_formats_files(own_folder: str) -> list[str]:
    """Every session file of the shared examples and corpus outside ``own_folder``: what a
    format's sniff must not claim."""
    found = shared_files("formats/examples/**/*.json*") + shared_files("corpus/**/*.json*")
    return [p for p in found if not p.startswith(own_folder)] or [
        "formats/examples/openai_chat_completions.json"
    ]


def shared_document(relative: str) -> Document:
    """The file ``relative`` under ``../shared`` read as the reader would (skips when absent)."""
    path = shared_path(relative)
    return parse_bytes(str(path), path.read_bytes())


def shared_example(name: str) -> Document:
    """The spec's example file ``name`` (``../shared/formats/examples``) as a Document."""
    return shared_document(f"formats/examples/{name}")


def only(sessions: list[Session]) -> Session:
    """The one session of ``sessions``, asserting there is exactly one."""
    assert len(sessions) == 1, [s.id for s in sessions]
    return sessions[0]


def result_of(session: Session, call_id: str | None) -> Event | None:
    """The tool result with ``call_id``, found by scanning the events (no adapter logic)."""
    return next(
        (e for e in session.events if e.kind is EventKind.TOOL_RESULT and e.call_id == call_id),
        None,
    )


S = TypeVar("S", bound=BaseServer)


@contextmanager
def serving(server: S) -> Iterator[S]:
    """Run a loopback server (``ThreadingHTTPServer`` and kin) in a thread for a ``with`` block."""
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def bash_step(call_id: str, command: str, output: str, is_error: bool = False) -> list[Event]:
    """A shell tool call and its result, as a coding agent's session holds them."""
    return [
        Event(EventKind.TOOL_CALL, call_id=call_id, name="Bash", input={"command": command}),
        Event(EventKind.TOOL_RESULT, call_id=call_id, output=output, is_error=is_error),
    ]


def assert_grounded_by_retrieval(session: Session, flagged: set[str]) -> None:
    """No faithfulness signal for ``session``'s replies; without its retrieval events the same
    replies are flagged for ``flagged``: it is the retrieved text that grounds them."""
    import copy

    from detectors.faithfulness import FaithfulnessParams, faithfulness

    assert faithfulness(session, FaithfulnessParams()) == []
    blind = copy.deepcopy(session)
    blind.events = [e for e in session.events if not e.meta.get("retrieval")]
    blind.reindex()
    assert {s.value for s in faithfulness(blind, FaithfulnessParams())} == flagged
