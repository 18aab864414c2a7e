"""The OpenHands adapter on the real trajectories and outputs of ``../shared/corpus/openhands`` and
on hand-made event streams of each shape (event list, output records, flat events, pairs).

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
from sessions.formats import detect, swe_agent
from sessions.formats import openhands as oh
from sessions.models import EventKind, Session

CORPUS = "corpus/openhands"
TRAJS = f"{CORPUS}/tests__runtime__trajs__"
MULTI = f"{CORPUS}/multi_swe_bench_examples_output.jsonl"
RESOLVER = f"{CORPUS}/resolver_mock_output.jsonl"
# Actions that are no tool call: messages, the prompt, control, context requests.
NOT_CALLS = {"message", "system", "recall", "change_agent_state", "null", "condensation"}
NOT_RESULTS = {"null", "agent_state_changed", "recall"}


# With the corpus absent, the test of MULTI skips, saying why.
OWN_FILES = shared_files(f"{CORPUS}/*.json*") or [MULTI]
OTHER_FILES = other_formats_files(CORPUS)


def doc(data: Any, source: str = "runs/trajectory.json", jsonl: bool = False) -> Document:
    return Document(source, data, jsonl=jsonl)


def of(session: Session, kind: EventKind) -> list[Any]:
    return [e for e in session.events if e.kind is kind]


def histories(relative: str) -> list[list[dict[str, Any]]]:
    """The event lists of a real file, read here without the adapter."""
    text = shared_path(relative).read_text()
    if relative.endswith(".jsonl"):
        return [json.loads(line)["history"] for line in text.splitlines() if line.strip()]
    return [json.loads(text)]


def expected_calls(events: list[dict[str, Any]]) -> int:
    return sum(
        1
        for e in events
        if "action" in e
        and e["action"] not in NOT_CALLS
        and (e["action"] != "finish" or "tool_call_metadata" in e)
    )


def explicit_errors(events: list[dict[str, Any]]) -> int:
    def code(e: dict[str, Any]) -> Any:
        extras = e.get("extras") or {}
        return (extras.get("metadata") or {}).get("exit_code", e.get("exit_code"))

    return sum(
        1
        for e in events
        if e.get("observation") == "error"
        or (e.get("observation") == "run" and code(e) not in (None, 0, -1))
    )


# --- real files ---------------------------------------------------------------------------------


@pytest.mark.parametrize("relative", OWN_FILES)
def test_every_real_file_is_detected_and_keeps_every_call_and_result(relative: str) -> None:
    document = shared_document(relative)
    assert detect(document).name == "openhands"
    sessions = oh.parse(document)
    raw = histories(relative)
    assert len(sessions) == len(raw)
    for session, events in zip(sessions, raw, strict=True):
        assert len(session.tool_calls()) == expected_calls(events)
        results = [e for e in events if e.get("observation") not in (None, *NOT_RESULTS)]
        assert len(of(session, EventKind.TOOL_RESULT)) == len(results)
        explicit = [
            e for e in of(session, EventKind.TOOL_RESULT) if e.is_error and not e.error_inferred
        ]
        assert len(explicit) == explicit_errors(events)
        assert session.agent == "openhands" and session.format == "openhands"
        assert of(session, EventKind.USER), "the task is a user message"
        assert [e.index for e in session.events] == list(range(len(session.events)))


def test_wrong_initial_state_trajectory_counted_by_hand() -> None:
    # read /workspace, mv, read /workspace again, finish: three results, finish has none.
    session = only(oh.parse(shared_document(f"{TRAJS}wrong_initial_state.json")))
    calls = session.tool_calls()
    assert [c.name for c in calls] == [
        "str_replace_editor",
        "execute_bash",
        "str_replace_editor",
        "finish",
    ]
    assert calls[1].input == {
        "command": "mv /workspace/game_2048.py /workspace/2048.py",
        "is_input": "false",
    }
    assert calls[1].call_id == "toolu_01PuY3mXrE6fm3j52GscR4rj"
    moved = result_of(session, "toolu_01PuY3mXrE6fm3j52GscR4rj")
    assert moved is not None and not moved.is_error
    assert len(of(session, EventKind.TOOL_RESULT)) == 3
    assert [e.text[:30] for e in session.replies()] == [
        "I'll help you rename the file.",
        "Great, I found the file. Now I",
        "Let me verify that the file wa",
        "The file has been successfully",
    ]
    assert session.events[0].text == "Please rename game_2048.py to 2048.py"
    assert session.model == "claude-3-5-sonnet-20241022"
    assert session.started_at is not None and session.started_at.isoformat().startswith(
        "2025-01-27"
    )
    assert session.registered_tools is None  # this export has no system action with tools
    assert session.id == "tests__runtime__trajs__wrong_initial_state"


def test_gui_trajectory_skips_state_changes_and_a_still_running_server_is_no_error() -> None:
    session = only(oh.parse(shared_document(f"{TRAJS}basic_gui_mode.json")))
    assert len(of(session, EventKind.USER)) == 1 and len(session.tool_calls()) == 4
    server = result_of(session, "toolu_01DwihWr4ooPZS1CGTLAWrFP")  # exit code -1: still running
    assert server is not None and server.output.startswith("Serving HTTP on 0.0.0.0 port 8000")
    assert not server.is_error
    created = result_of(session, "toolu_01YYLXwwdBLwtMmjr5Sfsieg")
    assert created is not None
    assert created.output == "File created successfully at: /workspace/todo-app/index.html"


def test_chat_only_trajectory_gives_replies_and_a_finish_call() -> None:
    session = only(oh.parse(shared_document(f"{TRAJS}basic_interactions.json")))
    assert [e.kind for e in session.events] == [
        EventKind.USER,
        EventKind.ASSISTANT,
        EventKind.USER,
        EventKind.ASSISTANT,
        EventKind.USER,
        EventKind.TOOL_CALL,
    ]
    assert session.events[1].text == "1 + 1 equals 2."
    # The finish had no text: OpenHands' canned "All done!" message is not the model's.
    assert session.events[-1].name == "finish"


def test_evaluation_output_has_identity_tools_and_errors() -> None:
    sessions = oh.parse(shared_document(MULTI))
    assert [s.id for s in sessions] == [
        "ponylang__ponyc-4595",
        "ponylang__ponyc-4593",
        "ponylang__ponyc-4588",
    ]
    first = sessions[0]
    assert first.registered_tools is not None
    assert first.registered_tools.names == {"execute_bash", "think", "finish", "str_replace_editor"}
    assert all(c.name in first.registered_tools for s in sessions for c in s.tool_calls())
    assert (first.model, first.agent_version) == ("meta-llama/llama-4-maverick", "0.35.0")
    assert first.meta["agent_class"] == "CodeActAgent"
    assert first.events[0].kind is EventKind.SYSTEM
    assert first.events[0].text.startswith("You are OpenHands agent")
    assert sessions[2].meta["error"].startswith("RuntimeError: Agent reached maximum iteration")
    # By hand: event 29 of the second run is a validation error that answers no action.
    orphan = [e for e in of(sessions[1], EventKind.TOOL_RESULT) if e.call_id is None]
    assert len(orphan) == 1 and orphan[0].is_error and not orphan[0].error_inferred
    assert orphan[0].output.startswith("Parameter 'command' is expected to be one of")
    # The editor's refusals are plain observations starting "ERROR:" (by hand: 10 edits and one
    # view of the second run): inferred, and marked so.
    inferred = [e for e in of(sessions[1], EventKind.TOOL_RESULT) if e.error_inferred]
    refusals = [e for e in histories(MULTI)[1] if str(e.get("content")).startswith("ERROR:")]
    assert len(inferred) == len(refusals) == 11
    assert all(e.output.startswith("ERROR:") for e in inferred)


def test_think_keeps_its_thought_as_input_and_finish_its_message_as_reply() -> None:
    session = oh.parse(shared_document(MULTI))[0]
    think = next(c for c in session.tool_calls() if c.name == "think")
    assert think.input["thought"].startswith("Re-read the problem description")
    assert not any(e.text.startswith("Re-read the problem") for e in session.replies())
    final = session.replies()[-1]
    assert "has been addressed by modifying the `idseqsingle` rule" in final.text


def test_resolver_output_with_flat_events_pairs_results_in_order() -> None:
    sessions = oh.parse(shared_document(RESOLVER))
    assert [s.id for s in sessions] == ["neubig/pr-viewer#5", "neubig/pr-viewer#1"]
    first = sessions[0]
    steps = [
        (e.kind, e.call_id, e.name)
        for e in first.events
        if e.kind in (EventKind.TOOL_CALL, EventKind.TOOL_RESULT)
    ]
    assert steps == [
        (EventKind.TOOL_CALL, "step-1", "run"),
        (EventKind.TOOL_RESULT, "step-1", "run"),
        (EventKind.TOOL_CALL, "step-2", "run_ipython"),
        (EventKind.TOOL_RESULT, "step-2", "run_ipython"),
        (EventKind.TOOL_CALL, "step-3", "run"),
        (EventKind.TOOL_RESULT, "step-3", "run"),
    ]
    assert first.tool_calls()[0].input == {"command": "touch LICENSE"}
    assert len(first.replies()) == 4  # three thoughts and the finish
    assert first.events[0].kind is EventKind.USER
    assert first.model is None and first.registered_tools is None


# --- hand-made streams ----------------------------------------------------------------------------


def _call_meta(call_id: str, name: str, arguments: str, content: str = "") -> dict[str, Any]:
    call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
    message = {"role": "assistant", "content": content, "tool_calls": [call]}
    response = {"id": f"resp-{call_id}", "model": "gpt-4.1", "choices": [{"message": message}]}
    return {"function_name": name, "tool_call_id": call_id, "model_response": response}


def action(n: int, name: str, source: str = "agent", **fields: Any) -> dict[str, Any]:
    """An action event; ``args`` and any envelope field (``tool_call_metadata``) as given."""
    return {"id": n, "source": source, "action": name, **fields}


def observation(
    n: int, name: str, cause: int | None, content: str, **fields: Any
) -> dict[str, Any]:
    return {
        "id": n,
        "source": "agent",
        "observation": name,
        "cause": cause,
        "content": content,
        **fields,
    }


def exit_code(code: int) -> dict[str, Any]:
    return {"metadata": {"exit_code": code}}


TOOLS = [
    {"type": "function", "function": {"name": "execute_bash"}},
    {"type": "function", "function": {"name": "finish"}},
]
SYSTEM = {"content": "You are OpenHands.", "tools": TOOLS, "openhands_version": "0.40.0"}


def _stream() -> list[dict[str, Any]]:
    pytest_call = _call_meta("c1", "execute_bash", '{"command": "pytest"}', "Running them.")
    finish_call = _call_meta("c2", "finish", '{"message": "One test fails."}')
    return [
        action(0, "system", args=SYSTEM),
        action(
            1,
            "message",
            "user",
            args={"content": "Run the tests."},
            timestamp="2025-05-01T10:00:00",
        ),
        action(
            2,
            "run",
            tool_call_metadata=pytest_call,
            args={"command": "pytest", "thought": "Running them.", "blocking": False},
        ),
        observation(3, "run", 2, "1 failed", extras=exit_code(1), success=False),
        action(
            4,
            "finish",
            tool_call_metadata=finish_call,
            args={"final_thought": "One test fails.", "thought": ""},
        ),
    ]


def test_event_list_inline() -> None:
    session = only(oh.parse(doc(_stream())))
    assert [(e.kind, e.text or e.output or e.name) for e in session.events] == [
        (EventKind.SYSTEM, "You are OpenHands."),
        (EventKind.USER, "Run the tests."),
        (EventKind.ASSISTANT, "Running them."),
        (EventKind.TOOL_CALL, "execute_bash"),
        (EventKind.TOOL_RESULT, "1 failed"),
        (EventKind.ASSISTANT, "One test fails."),
        (EventKind.TOOL_CALL, "finish"),
    ]
    call, result = session.events[3], session.events[4]
    assert (call.call_id, call.input) == ("c1", {"command": "pytest"})
    assert (result.call_id, result.is_error, result.error_inferred) == ("c1", True, False)
    assert session.registered_tools is not None
    assert session.registered_tools.names == {"execute_bash", "finish"}
    assert (session.agent_version, session.model) == ("0.40.0", "gpt-4.1")
    assert session.started_at is not None and session.started_at.tzinfo is not None


def test_output_records_in_json_lines_skip_runs_without_history() -> None:
    lines = [
        {"instance_id": "a__b-1", "instruction": "Fix it.", "history": _stream()[2:4]},
        {"instance_id": "a__b-2", "history": None, "error": "runtime died"},
        {"instance_id": "a__b-1", "history": _stream()},
    ]
    raw = b"\n".join(orjson.dumps(line) for line in lines) + b"\n"
    document = parse_bytes("out/output.jsonl", raw)
    assert oh.sniff(document)
    sessions = oh.parse(document)
    assert [s.id for s in sessions] == ["a__b-1", "a__b-1#2"]
    # The first history holds no user message: the record's instruction is the task.
    assert sessions[0].events[0].kind is EventKind.USER
    assert sessions[0].events[0].text == "Fix it."


def test_flat_events_and_action_observation_pairs() -> None:
    run = {"action": "run", "command": "ls", "thought": "Look around.", "keep_prompt": True}
    listing = {"observation": "run", "content": "a.py", "command": "ls", "exit_code": 0}
    typo = {"action": "run", "command": "lss", "thought": ""}
    failed = {"observation": "run", "content": "bash: lss: command not found", "exit_code": 127}
    task = {"action": "message", "content": "List files.", "wait_for_response": False}
    question = {"action": "message", "content": "Which folder?", "wait_for_response": True}
    for history in (
        [task, run, listing, typo, failed, question],
        [[task, {"observation": "null"}], [run, listing], [typo, failed], [question, {}]],
    ):
        session = only(oh.parse(doc({"instance_id": "x", "history": history})))
        assert [(e.kind, e.call_id, e.is_error) for e in session.events] == [
            (EventKind.USER, None, False),
            (EventKind.ASSISTANT, None, False),
            (EventKind.TOOL_CALL, "step-1", False),
            (EventKind.TOOL_RESULT, "step-1", False),
            (EventKind.TOOL_CALL, "step-2", False),
            (EventKind.TOOL_RESULT, "step-2", True),
            (EventKind.ASSISTANT, None, False),
        ]
        assert session.tool_calls()[0].input == {"command": "ls"}


def test_a_response_with_several_calls_gives_its_text_once() -> None:
    meta = _call_meta("c1", "execute_bash", '{"command": "ls"}', "Two looks.")
    second = dict(meta, tool_call_id="c2")
    events = [
        action(1, "message", "user", args={"content": "Look."}),
        action(2, "run", tool_call_metadata=meta, args={"command": "ls", "thought": "Two looks."}),
        action(
            3, "run", tool_call_metadata=second, args={"command": "pwd", "thought": "Two looks."}
        ),
        observation(4, "run", 3, "/w", extras=exit_code(0)),
        observation(5, "run", 2, "a.py", extras=exit_code(0)),
    ]
    session = only(oh.parse(doc(events)))
    assert [e.text for e in session.replies()] == ["Two looks."]
    assert [(c.call_id, c.input) for c in session.tool_calls()] == [
        ("c1", {"command": "ls"}),
        ("c2", {"command": "pwd"}),  # no arguments in the response for c2: the action's own
    ]
    assert result_of(session, "c1").output == "a.py"  # type: ignore[union-attr]
    assert result_of(session, "c2").output == "/w"  # type: ignore[union-attr]


def test_untagged_actions_take_the_declared_tool_name_and_user_actions_are_marked() -> None:
    context = {"repo_instructions": "Use make."}
    events = [
        _stream()[0],
        action(1, "run", "user", args={"command": "make", "thought": ""}),
        observation(2, "run", 1, "ok", extras=exit_code(0)),
        observation(3, "recall", None, "Added context", extras=context),
        action(4, "edit", args={"path": "a.py", "command": "create"}),
        observation(5, "edit", 4, "ERROR:\nInvalid `path` parameter: a.py."),
    ]
    session = only(oh.parse(doc(events)))
    make, edit = session.tool_calls()
    assert (make.name, make.call_id, make.meta) == ("execute_bash", "event-1", {"source": "user"})
    assert edit.name == "edit"  # no declared editor tool: the action's own name
    recall = next(e for e in session.events if e.meta.get("recall"))
    assert recall.kind is EventKind.SYSTEM and recall.text == "Use make."
    refused = result_of(session, "event-4")
    assert refused is not None and refused.is_error and refused.error_inferred


# --- malformed input --------------------------------------------------------------------------


def test_records_without_any_history_are_malformed() -> None:
    data = [{"instance_id": "a", "history": []}, {"instance_id": "b", "history": None}]
    with pytest.raises(MalformedSessionError, match="'history'"):
        oh.parse(doc(data))


def test_a_list_of_non_events_is_malformed() -> None:
    data = [{"foo": 1}, {"bar": 2}]
    assert not oh.sniff(doc(data))
    with pytest.raises(MalformedSessionError, match="'action' or 'observation'"):
        oh.parse(doc(data))


def test_events_with_only_state_changes_hold_no_session() -> None:
    data = [{"id": 0, "source": "environment", "observation": "agent_state_changed", "extras": {}}]
    assert oh.sniff(doc(data))
    with pytest.raises(MalformedSessionError, match="no message or step"):
        oh.parse(doc(data))


def test_odd_values_among_events_are_skipped_with_a_warning() -> None:
    session = only(oh.parse(doc([*_stream(), "garbage", {"role": "user", "content": "x"}])))
    assert session.warnings == ["skipped 2 value(s) that are not OpenHands events"]


def test_a_cut_off_json_lines_file_is_sniffed_from_its_head_and_fails_in_parse() -> None:
    line = orjson.dumps({"instance_id": "a", "history": _stream()})
    document = parse_bytes("out/output.jsonl", (line + b"\n") * 6 + line[:40] + b"\n")
    assert oh.sniff(document)
    with pytest.raises(MalformedSessionError) as failure:
        oh.parse(document)
    assert failure.value.reason == "truncated"


# --- detection ------------------------------------------------------------------------------------


@pytest.mark.parametrize("relative", OTHER_FILES)
def test_sniff_claims_no_file_of_another_format(relative: str) -> None:
    assert not oh.sniff(shared_document(relative))


@pytest.mark.parametrize(
    "data",
    [
        {"messages": [{"role": "user", "content": "hi"}]},
        [{"role": "assistant", "content": "x", "action": "ls"}],
        [{"type": "computer_call", "action": {"type": "click"}}],
        {"trajectory": [{"action": "ls", "observation": "a", "thought": ""}]},
        {"history": [{"role": "assistant", "content": "x", "action": "ls", "thought": ""}]},
    ],
)
def test_sniff_rejects_chat_responses_and_swe_agent_shapes(data: Any) -> None:
    assert not oh.sniff(doc(data))


@pytest.mark.parametrize("relative", OWN_FILES)
def test_swe_agent_sniff_does_not_claim_openhands_files(relative: str) -> None:
    assert not swe_agent.sniff(shared_document(relative))
