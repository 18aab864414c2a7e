"""The SWE-agent adapter on the real ``.traj`` files of ``../shared/corpus/swe_agent`` and on
hand-made runs of each shape (raw actions, function calls, history only, retry attempts).

Expectations on real files are counted from the raw JSON in the test, or by hand where named.
"""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from tests_support import (
    only,
    other_formats_files,
    result_of,
    shared_document,
    shared_files,
    shared_path,
)

from sessions.documents import Document, parse_bytes
from sessions.errors import MalformedSessionError
from sessions.formats import detect, openhands
from sessions.formats import swe_agent as swe
from sessions.models import EventKind, Session

CORPUS = "corpus/swe_agent"


def _named(ending: str) -> str:
    """The corpus file whose name ends with ``ending`` (a missing one makes its tests skip)."""
    found = shared_files(f"{CORPUS}/*{ending}")
    return found[0] if found else f"{CORPUS}/{ending}"


RAW = _named("default_from_url__t-0.00__p-0.95__c-3.00__install-1__swe-agent__test-repo-i1.traj")
CALLING = _named("6e44b9__sweagenttestrepo-1c2844.traj")
PYDICOM = _named("pydicom__pydicom-1458.traj")
BABY = _named("ctf__crypto__BabyEncryption.traj")
HISTORY_ONLY = _named("demonstrations__function_calling_simple.traj")
TRAJ_FILES = shared_files(f"{CORPUS}/*.traj") or [RAW]  # absent corpus: the test skips, saying why
OTHER_FILES = other_formats_files(CORPUS)


def doc(data: Any, source: str = "runs/abc.traj", jsonl: bool = False) -> Document:
    return Document(source, data, jsonl=jsonl)


def kinds(session: Session, kind: EventKind) -> list[Any]:
    return [e for e in session.events if e.kind is kind]


def steps(session: Session) -> list[tuple[Any, ...]]:
    return [
        (e.kind, e.call_id, e.name, e.input if e.kind is EventKind.TOOL_CALL else e.is_error)
        for e in session.events
        if e.kind in (EventKind.TOOL_CALL, EventKind.TOOL_RESULT)
    ]


# --- real files ---------------------------------------------------------------------------------


@pytest.mark.parametrize("relative", TRAJ_FILES)
def test_every_real_trajectory_is_detected_and_keeps_every_step(relative: str) -> None:
    document = shared_document(relative)
    raw = json.loads(shared_path(relative).read_text())
    assert detect(document).name == "swe_agent"
    session = only(swe.parse(document))
    trajectory = raw.get("trajectory") or []
    if trajectory:
        acted = [s for s in trajectory if s["action"].strip()]
        thoughts = [s for s in trajectory if s["thought"].strip()]
    else:  # history only: a step per model message
        acted = thoughts = [m for m in raw["history"] if m["role"] == "assistant"]
    assert len(kinds(session, EventKind.TOOL_CALL)) == len(acted) > 0
    assert len(kinds(session, EventKind.TOOL_RESULT)) == len(acted)
    assert len(session.replies()) == len(thoughts)
    results = session.results_by_call()
    assert all(c.call_id in results for c in session.tool_calls())
    assert session.events[0].kind is EventKind.SYSTEM
    assert sum(1 for e in session.events if e.kind is EventKind.USER) == 1
    assert session.agent == "swe-agent" and session.format == "swe_agent"
    assert [e.index for e in session.events] == list(range(len(session.events)))


def test_raw_action_run_names_each_call_by_its_first_word() -> None:
    # Counted by hand: find_file, open, edit, python, submit; one demonstration before the task.
    session = only(swe.parse(shared_document(RAW)))
    assert [c.name for c in session.tool_calls()] == [
        "find_file",
        "open",
        "edit",
        "python",
        "submit",
    ]
    assert session.tool_calls()[2].input == {
        "command": "edit 4:4\ndef division(a: float, b: float) -> float:\nend_of_edit"
    }
    assert [c.call_id for c in session.tool_calls()] == [f"step-{i}" for i in range(1, 6)]
    assert len(session.replies()) == 5
    assert session.replies()[0].text.startswith("The issue indicates that there is a syntax error")
    demo = session.events[1]
    assert demo.kind is EventKind.SYSTEM and demo.meta == {"demonstration": True}
    assert session.events[2].kind is EventKind.USER
    assert "SyntaxError: invalid syntax" in session.events[2].text
    final = result_of(session, "step-5")
    assert final is not None and final.output.startswith("\ndiff --git a/tests/missing_colon.py")
    # Any shell command is allowed in raw mode: no tool list, so unknown_tool stays silent.
    assert session.registered_tools is None and session.model is None
    assert session.meta["exit_status"] == "submitted"


def test_function_calling_run_keeps_call_ids_arguments_and_the_declared_functions() -> None:
    session = only(swe.parse(shared_document(CALLING)))
    find, view = "call_fJuazlMUN5fQDQ73G6XSpYpx", "call_OhmPHGZp0XJ6JRnNkQaYcBMs"
    path = "/SWE-agent__test-repo/tests/missing_colon.py"
    assert steps(session)[:4] == [
        (EventKind.TOOL_CALL, find, "find_file", {"file_name": "missing_colon.py"}),
        (EventKind.TOOL_RESULT, find, "find_file", False),
        (EventKind.TOOL_CALL, view, "open", {"path": path}),
        (EventKind.TOOL_RESULT, view, "open", False),
    ]
    calls = session.tool_calls()
    assert [c.name for c in calls] == ["find_file", "open", "edit", "bash", "submit"]
    assert calls[3].input == {"command": "python3 /SWE-agent__test-repo/tests/missing_colon.py"}
    # The history was saved before the last step: `submit` keeps its rendered action.
    assert (calls[4].call_id, calls[4].input) == ("step-5", {"command": "submit"})
    assert session.id == "SWE-agent__test-repo-i1" and session.model == "gpt-4o"
    assert session.registered_tools is not None
    documented = "bash goto open create scroll_up scroll_down find_file search_dir search_file"
    assert session.registered_tools.names == {*documented.split(), "edit", "insert", "submit"}
    assert all(c.name in session.registered_tools for c in calls)


def test_observation_failures_are_inferred_and_marked() -> None:
    # By hand: step 3 is a Traceback, steps 6-8 are edits SWE-agent refused for syntax errors.
    session = only(swe.parse(shared_document(PYDICOM)))
    failed = [e for e in kinds(session, EventKind.TOOL_RESULT) if e.is_error]
    assert [e.call_id for e in failed] == ["step-3", "step-6", "step-7", "step-8"]
    assert all(e.error_inferred for e in failed)
    assert failed[1].output.startswith("Your proposed edit has introduced new syntax error(s)")


def test_a_step_missing_from_the_history_is_kept_from_the_trajectory() -> None:
    # The demonstration has 16 steps, its history 15 model messages; two thoughts are empty.
    session = only(swe.parse(shared_document(BABY)))
    assert len(session.tool_calls()) == 16 and len(session.replies()) == 14
    assert session.tool_calls()[8].input["command"].startswith("edit 2:2 decrypt.py")
    assert not any(c.meta.get("not_executed") for c in session.tool_calls())


def test_history_only_file_gives_steps_from_the_messages() -> None:
    session = only(swe.parse(shared_document(HISTORY_ONLY)))
    calls = session.tool_calls()
    assert [c.name for c in calls] == ["find_file", "open", "edit", "bash", "submit"]
    assert calls[0].call_id == "call_PbWErNIge3YTrli3fiVvmIid"
    result = result_of(session, "call_5O339epJ3rKjEal3Kuvpj9bM")
    assert result is not None and result.output.startswith("8.2")
    assert session.registered_tools is None  # no config in the file declares the functions


# --- hand-made runs -------------------------------------------------------------------------------


def _step(thought: str, action: str, observation: str) -> dict[str, Any]:
    return {"thought": thought, "action": action, "observation": observation, "response": ""}


SYSTEM = {"role": "system", "content": "You are an autonomous programmer.", "agent": "main"}
TASK = {"role": "user", "content": "Fix the failing test.", "agent": "main"}


def test_raw_run_inline() -> None:
    data = {
        "history": [SYSTEM, TASK],
        "trajectory": [
            _step("Let me run the tests.\n\n", "pytest -q\n", "2 passed\n"),
            _step("", "tre .\n", "bash: tre: command not found\n"),
            _step("Done.", "submit\n", "diff --git a/x b/x\n"),
        ],
        "info": {"exit_status": "submitted"},
    }
    session = only(swe.parse(doc(data)))
    assert [(e.kind, e.text or e.output) for e in session.events[:3]] == [
        (EventKind.SYSTEM, "You are an autonomous programmer."),
        (EventKind.USER, "Fix the failing test."),
        (EventKind.ASSISTANT, "Let me run the tests."),
    ]
    assert steps(session) == [
        (EventKind.TOOL_CALL, "step-1", "pytest", {"command": "pytest -q"}),
        (EventKind.TOOL_RESULT, "step-1", "pytest", False),
        (EventKind.TOOL_CALL, "step-2", "tre", {"command": "tre ."}),
        (EventKind.TOOL_RESULT, "step-2", "tre", True),
        (EventKind.TOOL_CALL, "step-3", "submit", {"command": "submit"}),
        (EventKind.TOOL_RESULT, "step-3", "submit", False),
    ]
    assert session.id == "abc" and session.started_at is None


def test_function_calling_config_as_a_json_string_declares_the_functions() -> None:
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "bash", "arguments": '{"command": "ls"}'},
    }
    config = {
        "agent": {
            "model": {"name": "claude-sonnet-4"},
            "tools": {
                "parse_function": {"type": "function_calling"},
                "command_docs": "bash:\n  docstring: run it\n\nsubmit:\n  docstring: done\n",
            },
        },
        "problem_statement": {"id": "repo__issue-7"},
    }
    data = {
        "replay_config": json.dumps(config),
        "history": [
            SYSTEM,
            TASK,
            {
                "role": "assistant",
                "content": "Listing.",
                "thought": "Listing.",
                "action": "ls",
                "tool_calls": [call],
            },
            {"role": "tool", "content": "a.py", "tool_call_ids": ["call_1"]},
        ],
        "trajectory": [
            _step("Listing.", "ls", "a.py"),
            _step("", "rm -rf build", ""),
            _step("", "rm -r build", ""),
        ],
        "info": {"swe_agent_version": "1.1.0"},
    }
    session = only(swe.parse(doc(data)))
    assert steps(session)[:2] == [
        (EventKind.TOOL_CALL, "call_1", "bash", {"command": "ls"}),
        (EventKind.TOOL_RESULT, "call_1", "bash", False),
    ]
    # A step the history lacks, with no output: a requeried (blocked) command that never ran.
    # The last step is not judged so: older versions save the history before it.
    unrun, last = session.tool_calls()[1:]
    assert (unrun.name, unrun.meta["not_executed"]) == ("bash", True)
    failed = result_of(session, unrun.call_id)
    assert failed is not None and failed.is_error and failed.error_inferred
    assert "not_executed" not in last.meta
    assert not session.events[-1].is_error
    assert session.registered_tools is not None
    assert session.registered_tools.names == {"bash", "submit"}
    assert (session.id, session.model, session.agent_version) == (
        "repo__issue-7",
        "claude-sonnet-4",
        "1.1.0",
    )


def test_harness_exits_are_system_notes_not_replies_or_calls() -> None:
    old = {"trajectory": [_step("", "exit_cost", "Exited (autosubmitted)")]}
    new = {"trajectory": [_step("Exit due to cost limit", "", "Exited (autosubmitted)")]}
    for data in (old, new):
        session = only(swe.parse(doc(data)))
        [event] = session.events
        assert event.kind is EventKind.SYSTEM and event.meta["synthetic"]
        assert not session.tool_calls() and not session.replies()


def test_demonstrations_in_history_are_prompt_not_steps() -> None:
    demo = [
        {"role": "user", "content": "demo task", "is_demo": True},
        {
            "role": "assistant",
            "content": "demo",
            "thought": "demo",
            "action": "ls",
            "is_demo": True,
        },
    ]
    history = [
        SYSTEM,
        *demo,
        TASK,
        {"role": "assistant", "content": "Look.", "thought": "Look.", "action": "cat a.py"},
        {"role": "user", "content": "print(1)"},
    ]
    session = only(swe.parse(doc({"history": history})))
    assert [e.kind for e in session.events] == [
        EventKind.SYSTEM,
        EventKind.SYSTEM,
        EventKind.SYSTEM,
        EventKind.USER,
        EventKind.ASSISTANT,
        EventKind.TOOL_CALL,
        EventKind.TOOL_RESULT,
    ]
    assert [e.meta.get("demonstration") for e in session.events[1:3]] == [True, True]
    assert session.tool_calls()[0].input == {"command": "cat a.py"}


def test_retry_agent_attempts_are_sessions_when_none_was_chosen() -> None:
    attempt = {
        "trajectory": [_step("Try.", "ls", "a.py")],
        "replay_config": {"agent": {"model": {"name": "replay"}}},
    }
    sessions = swe.parse(doc({"attempts": [attempt, attempt]}))
    assert [s.id for s in sessions] == ["abc#attempt0", "abc#attempt1"]
    assert sessions[0].model is None  # "replay" is SWE-agent's stand-in, not a model


def test_documents_round_trip_through_bytes() -> None:
    raw = orjson.dumps({"trajectory": [_step("Go.", "ls", "a")]})
    document = parse_bytes("out/run-1.traj", raw)
    assert swe.sniff(document)
    assert only(swe.parse(document)).id == "run-1"


# --- malformed input --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [
        {"info": {"exit_status": "submitted"}},
        {"trajectory": [], "history": []},
        {"trajectory": "not a list"},
        [{"action": "ls", "observation": "a"}],
    ],
)
def test_without_steps_or_messages_is_malformed_with_the_fields_named(data: Any) -> None:
    assert not swe.sniff(doc(data))
    with pytest.raises(MalformedSessionError, match="'trajectory'"):
        swe.parse(doc(data))


def test_odd_steps_are_skipped_with_a_warning() -> None:
    data = {"trajectory": [_step("Go.", "ls", "a"), "garbage", {"action": "pwd"}]}
    session = only(swe.parse(doc(data)))
    assert len(session.tool_calls()) == 1
    assert session.warnings == ["skipped 2 trajectory step(s) without action/observation"]


def test_json_lines_are_never_claimed() -> None:
    line = {"trajectory": [_step("Go.", "ls", "a")]}
    document = doc([line], source="runs/a.jsonl", jsonl=True)
    assert not swe.sniff(document)
    with pytest.raises(MalformedSessionError):
        swe.parse(document)


# --- detection ------------------------------------------------------------------------------------


@pytest.mark.parametrize("relative", OTHER_FILES)
def test_sniff_claims_no_file_of_another_format(relative: str) -> None:
    assert not swe.sniff(shared_document(relative))


@pytest.mark.parametrize(
    "data",
    [
        {"messages": [{"role": "user", "content": "hi"}]},
        {"history": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]},
        [{"id": 1, "source": "agent", "action": "run", "args": {"command": "ls"}}],
        {"history": [{"id": 1, "source": "user", "action": "message", "args": {"content": "x"}}]},
    ],
)
def test_sniff_rejects_chat_and_openhands_shapes(data: Any) -> None:
    assert not swe.sniff(doc(data))


@pytest.mark.parametrize("relative", TRAJ_FILES)
def test_openhands_sniff_does_not_claim_swe_agent_files(relative: str) -> None:
    assert not openhands.sniff(shared_document(relative))
