"""``invented_id``: labelled cases, unit checks, the real corpus and a planted invention."""

from __future__ import annotations

import json
import time
from pathlib import Path

from labelled_cases import load_cases
from tests_support import shared_path

from detectors.invented_ids import InventedIdParams, invented_id
from sessions.models import Event, EventKind, Session
from sessions.reader import SessionReader

CASES = load_cases("invented_id.jsonl")
TAU = "corpus/openai_chat/tau_airline/gpt-4o-airline.dev.json"
# An example per-agent pattern (tau-bench reservation codes), deliberately not a default.
TAU_PARAMS = InventedIdParams(patterns={"reservation": r"\b[A-Z0-9]{6}\b"})


def test_cases_cover_both_formats_and_hard_negatives() -> None:
    assert len(CASES) >= 12
    assert {c.filename for c in CASES} == {"s.json", "s.jsonl"}
    assert sum(1 for c in CASES if not c.expected) >= 5


def _session(events: list[Event], meta: dict[str, object] | None = None) -> Session:
    session = Session(id="s", source="s", format="test", events=events, meta=dict(meta or {}))
    session.reindex()
    return session


def test_subagent_sees_its_prompt_and_signal_shape() -> None:
    prompt = {"prompt": "Refund charge ch_1AbCdEfGh23 for the user"}
    events = [
        Event(EventKind.USER, text="refund ch_1AbCdEfGh23"),
        Event(EventKind.TOOL_CALL, call_id="t1", name="Task", input=prompt),
        Event(
            EventKind.TOOL_CALL,
            call_id="t2",
            name="refund",
            input={"charge": "ch_1AbCdEfGh23"},
            subagent="a1",
        ),
        Event(
            EventKind.TOOL_CALL,
            call_id="t3",
            name="refund",
            input={"charge": "ch_9ZzZzZzZz99"},
            subagent="a1",
        ),
    ]
    signals = invented_id(_session(events, {"subagent_calls": {"a1": "t1"}}), InventedIdParams())
    assert [(s.value, s.events, str(s.severity)) for s in signals] == [
        ("ch_9ZzZzZzZz99", [3], "high")
    ]


def test_prefixes_are_configurable() -> None:
    events = [Event(EventKind.TOOL_CALL, call_id="t", name="x", input={"id": "ord_AB12CD34EF"})]
    assert invented_id(_session(events), InventedIdParams()) == []
    assert [s.value for s in invented_id(_session(events), InventedIdParams(prefixes=["ord"]))] == [
        "ord_AB12CD34EF"
    ]


def _claude_code_units(folder: Path) -> list[list[tuple[str, bytes]]]:
    groups: dict[str, list[Path]] = {}
    for path in sorted(folder.glob("*.jsonl")):
        groups.setdefault(path.name.split("__")[0].removesuffix(".jsonl"), []).append(path)
    return [[(p.name, p.read_bytes()) for p in paths] for paths in groups.values()]


def test_real_claude_code_corpus_is_clean_with_defaults() -> None:
    reader = SessionReader()
    sessions = [
        s
        for folder in ("spotter", "reliability")
        for unit in _claude_code_units(shared_path(f"corpus/claude_code/{folder}"))
        for s in reader.read_unit(unit).sessions
    ]
    assert len(sessions) > 10
    # The only UUIDs in tool inputs are session files the agent had listed first.
    assert [s for session in sessions for s in invented_id(session, InventedIdParams())] == []


def _tau_sessions() -> list[Session]:
    path = shared_path(TAU)
    return SessionReader().read_unit([(path.name, path.read_bytes())]).sessions


def test_real_tau_bench_is_clean_even_with_reservation_codes() -> None:
    sessions = _tau_sessions()
    assert len(sessions) == 100
    started = time.perf_counter()
    assert [s for session in sessions for s in invented_id(session, TAU_PARAMS)] == []
    assert time.perf_counter() - started < 5


def test_planted_inventions_are_caught() -> None:
    session = _tau_sessions()[0]
    events = [
        *session.events,
        Event(
            EventKind.TOOL_CALL,
            call_id="p1",
            name="cancel_reservation",
            input={"reservation_id": "QZ9W7X"},
        ),
        Event(
            EventKind.TOOL_CALL,
            call_id="p2",
            name="refund",
            input={"body": json.dumps({"customer": "cus_NeVeRsEeN42"})},
        ),
    ]
    session.events = events
    session.reindex()
    found = {s.value for s in invented_id(session, TAU_PARAMS)}
    assert found == {"QZ9W7X", "cus_NeVeRsEeN42"}
