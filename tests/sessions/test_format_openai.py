"""The OpenAI adapters (Chat Completions, Responses, Agents SDK traces) on the spec's examples,
the tau-bench airline trajectories and hand-made edge cases.

Expectations on real data are computed from the raw JSON in the test, not by the adapter.
"""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from tests_support import SHARED, only, result_of, shared_document, shared_example, shared_path

from sessions.documents import Document, parse_bytes
from sessions.errors import MalformedSessionError
from sessions.formats import anthropic_messages as anthropic
from sessions.formats import openai_agents as agents
from sessions.formats import openai_chat as chat
from sessions.formats import openai_responses as responses
from sessions.models import EventKind, Session

SNIFFS = {
    "openai_chat": chat.sniff,
    "openai_responses": responses.sniff,
    "openai_agents": agents.sniff,
    "anthropic_messages": anthropic.sniff,
}
OWN_FILES = {
    "openai_chat_completions.json": "openai_chat",
    "openai_responses.json": "openai_responses",
    "openai_agents_trace.json": "openai_agents",
    "anthropic_messages.json": "anthropic_messages",
}
TAU = "corpus/openai_chat/tau_airline/gpt-4o-airline.dev.json"
READ_ERROR_ID = "call_VSPygqKTWdrhaFErNvMV18Yl"
READ_OK_ID = "call_mszuSIzqtI65i1wAUOE8w5H4"
QUESTION = "What port does the app use? Check config.yaml."
REPLY = "config.yaml doesn't exist. settings.yaml sets the port: the app listens on 8080"


def doc(data: Any, source: str = "logs/run.json", jsonl: bool = False) -> Document:
    return Document(source, data, jsonl=jsonl)


def scenario(session: Session) -> list[tuple[Any, ...]]:
    """The spec's scenario as comparable tuples, system messages left out."""
    out: list[tuple[Any, ...]] = []
    for e in session.events:
        if e.kind is EventKind.USER or e.kind is EventKind.ASSISTANT:
            out.append((e.kind, e.text[: len(REPLY)]))
        elif e.kind is EventKind.TOOL_CALL:
            out.append((e.kind, e.call_id, e.name, e.input))
        elif e.kind is EventKind.TOOL_RESULT:
            out.append((e.kind, e.call_id, e.is_error))
    return out


def assert_indexed(session: Session) -> None:
    assert [e.index for e in session.events] == list(range(len(session.events)))


# --- sniff separation --------------------------------------------------------------------------


def _example_files() -> list[str]:
    root = SHARED / "formats" / "examples"
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


@pytest.mark.parametrize("name", _example_files() or ["openai_chat_completions.json"])
def test_each_sniff_claims_only_its_own_example(name: str) -> None:
    document = shared_example(name)
    claimed = {fmt for fmt, sniff in SNIFFS.items() if sniff(document)}
    expected = {OWN_FILES[name]} if name in OWN_FILES else set()
    assert claimed == expected


def test_openai_sniffs_do_not_claim_the_tau_bench_file_except_chat() -> None:
    document = shared_document(TAU)
    assert {fmt for fmt, sniff in SNIFFS.items() if sniff(document)} == {"openai_chat"}


# --- Chat Completions ----------------------------------------------------------------------------


def test_chat_example_gives_the_scenario_with_identity_and_tools() -> None:
    session = only(chat.parse(shared_example("openai_chat_completions.json")))
    assert scenario(session) == [
        (EventKind.USER, QUESTION),
        (EventKind.TOOL_CALL, READ_ERROR_ID, "read_file", {"path": "config.yaml"}),
        (EventKind.TOOL_RESULT, READ_ERROR_ID, True),
        (EventKind.TOOL_CALL, READ_OK_ID, "read_file", {"path": "settings.yaml"}),
        (EventKind.TOOL_RESULT, READ_OK_ID, False),
        (EventKind.ASSISTANT, REPLY),
    ]
    assert session.events[0].kind is EventKind.SYSTEM
    failed = result_of(session, READ_ERROR_ID)
    assert failed is not None and failed.error_inferred and "config.yaml" in failed.output
    assert session.id == "sess_7f3c2a1e"
    assert (session.agent, session.agent_version) == ("config-assistant", "1.4.2")
    assert session.model == "gpt-4.1-2025-04-14"
    assert session.started_at is not None and session.started_at.year == 2026
    assert session.registered_tools is not None
    assert session.registered_tools.names == {"read_file", "list_dir"}
    assert session.events[-1].meta["finish_reason"] == "stop"
    assert_indexed(session)


def test_chat_wrapper_with_the_response_echoed_into_history_counts_each_call_once() -> None:
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "read_file", "arguments": '{"path": "a.txt"}'},
    }
    turn = {"role": "assistant", "content": None, "tool_calls": [call]}
    data = {
        "request": {"model": "gpt-4.1", "messages": [{"role": "user", "content": "read a"}, turn]},
        "response": {"model": "gpt-4.1", "choices": [{"message": dict(turn)}]},
    }
    session = only(chat.parse(doc(data)))
    assert [e.call_id for e in session.tool_calls()] == ["call_1"]
    assert len(session.events) == 2


def test_chat_tau_bench_one_session_per_element_and_every_tool_call_kept() -> None:
    raw = json.loads(shared_path(TAU).read_text())
    sessions = chat.parse(shared_document(TAU))
    assert len(sessions) == len(raw)
    assert len({s.id for s in sessions}) == len(sessions)
    expected_calls = sum(len(m.get("tool_calls") or []) for e in raw for m in e["traj"])
    assert expected_calls > 0
    assert sum(len(s.tool_calls()) for s in sessions) == expected_calls
    expected_errors = sum(
        1
        for e in raw
        for m in e["traj"]
        if m["role"] == "tool" and str(m["content"]).startswith("Error:")
    )
    assert sum(1 for s in sessions for e in s.events if e.is_error) == expected_errors > 0
    assert sessions[0].id.endswith(f"#{raw[0]['task_id']}-{raw[0]['trial']}")
    assert sessions[0].registered_tools is None  # tools.json is beside the file, not in it


def test_chat_tau_bench_reused_call_ids_still_pair_each_result_with_its_own_call() -> None:
    # tau-bench reuses call ids inside one trajectory; its tool messages name their tool.
    raw = json.loads(shared_path(TAU).read_text())
    sessions = chat.parse(shared_document(TAU))
    reused = 0
    for element, session in zip(raw, sessions, strict=True):
        ids = [c["id"] for m in element["traj"] for c in m.get("tool_calls") or []]
        reused += len(ids) - len(set(ids))
        tool_names = [m["name"] for m in element["traj"] if m["role"] == "tool"]
        results = [e for e in session.events if e.kind is EventKind.TOOL_RESULT]
        assert [r.name for r in results] == tool_names
        for result in results:
            call = next(c for c in session.tool_calls() if c.call_id == result.call_id)
            assert call.name == result.name and call.index < result.index
        assert len({c.call_id for c in session.tool_calls()}) == len(session.tool_calls())
    assert reused > 0


def test_chat_invalid_json_arguments_are_kept_raw() -> None:
    bad = '{"path": "config.yaml"'
    data = {
        "messages": [
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "read_file", "arguments": bad},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        ]
    }
    session = only(chat.parse(doc(data)))
    assert session.tool_calls()[0].input == bad
    assert result_of(session, "c1") is not None


def test_chat_custom_and_legacy_function_calls() -> None:
    data = {
        "functions": [{"name": "lookup"}],
        "tools": [{"type": "custom", "custom": {"name": "apply_patch"}}],
        "messages": [
            {
                "role": "assistant",
                "content": None,
                "function_call": {"name": "lookup", "arguments": '{"q": "x"}'},
            },
            {"role": "function", "name": "lookup", "content": "Error: no such key"},
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": "ct1",
                        "type": "custom",
                        "custom": {"name": "apply_patch", "input": "*** Begin"},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "ct1", "content": [{"type": "text", "text": "done"}]},
        ],
    }
    session = only(chat.parse(doc(data)))
    legacy, custom = session.tool_calls()
    assert (legacy.name, legacy.input) == ("lookup", {"q": "x"})
    legacy_result = result_of(session, legacy.call_id)
    assert legacy_result is not None and legacy_result.is_error and legacy_result.error_inferred
    assert (custom.name, custom.input) == ("apply_patch", "*** Begin")
    custom_result = result_of(session, "ct1")
    assert custom_result is not None and custom_result.output == "done"
    assert session.registered_tools is not None
    assert session.registered_tools.names == {"lookup", "apply_patch"}


def test_chat_json_lines_give_one_session_a_line_with_unique_ids() -> None:
    lines = [
        {"session_id": "s1", "messages": [{"role": "user", "content": "a"}]},
        {"session_id": "s1", "messages": [{"role": "user", "content": "b"}]},
        {
            "messages": [{"role": "user", "content": "c"}],
            "metadata": {"agent": "bot", "version": "7"},
        },
    ]
    sessions = chat.parse(doc(lines, "day/2026/chats.jsonl.gz", jsonl=True))
    assert [s.events[0].text for s in sessions] == ["a", "b", "c"]
    assert sessions[0].id == "s1"
    assert len({s.id for s in sessions}) == 3
    assert sessions[2].id == "chats#2"
    assert (sessions[2].agent, sessions[2].agent_version) == ("bot", "7")
    assert all(s.registered_tools is None for s in sessions)


def test_chat_without_messages_is_malformed_with_the_missing_field_named() -> None:
    with pytest.raises(MalformedSessionError, match="messages"):
        chat.parse(doc({"model": "gpt-4.1", "choices": []}))


def test_chat_empty_tools_list_means_unknown_tools() -> None:
    data = {"tools": [], "messages": [{"role": "user", "content": "hi"}]}
    assert only(chat.parse(doc(data))).registered_tools is None


# --- Responses -----------------------------------------------------------------------------------


def test_responses_example_gives_the_scenario_once() -> None:
    session = only(responses.parse(shared_example("openai_responses.json")))
    assert scenario(session) == [
        (EventKind.USER, QUESTION),
        (EventKind.TOOL_CALL, READ_ERROR_ID, "read_file", {"path": "config.yaml"}),
        (EventKind.TOOL_RESULT, READ_ERROR_ID, True),
        (EventKind.TOOL_CALL, READ_OK_ID, "read_file", {"path": "settings.yaml"}),
        (EventKind.TOOL_RESULT, READ_OK_ID, False),
        (EventKind.ASSISTANT, REPLY),
    ]
    assert session.id == "conv_689667905b048191b4740501625afd940c7533ace33a2dab"
    assert session.model == "gpt-5-2025-08-07"
    assert (session.agent, session.agent_version) == ("Config Assistant", "1.4.2")
    assert session.meta["prompt"]["version"] == "3"
    assert session.registered_tools is not None and "read_file" in session.registered_tools
    assert session.replies()[-1].meta["phase"] == "final_answer"
    assert_indexed(session)


def test_responses_object_with_mcp_calls_reasoning_and_builtins() -> None:
    data = {
        "id": "resp_1",
        "object": "response",
        "model": "gpt-5",
        "metadata": {"session_id": "chat-9"},
        "prompt": {"id": "pmpt_1", "version": "4"},
        "tools": [{"type": "mcp", "server_label": "db"}, {"type": "web_search"}],
        "output": [
            {
                "type": "mcp_list_tools",
                "id": "mcpl_1",
                "server_label": "db",
                "tools": [{"name": "query", "input_schema": {}}],
            },
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {"type": "web_search_call", "id": "ws_1", "status": "completed"},
            {
                "type": "mcp_call",
                "id": "mcp_1",
                "server_label": "db",
                "name": "query",
                "arguments": '{"sql": "select 1"}',
                "output": None,
                "error": "relation does not exist",
                "status": "failed",
            },
            {
                "type": "mcp_call",
                "id": "mcp_2",
                "server_label": "db",
                "name": "query",
                "arguments": "{}",
                "output": "1 row",
                "error": None,
                "status": "completed",
            },
        ],
    }
    session = only(responses.parse(doc(data)))
    assert [e.kind for e in session.events] == [EventKind.TOOL_CALL, EventKind.TOOL_RESULT] * 2
    failed, ok = result_of(session, "mcp_1"), result_of(session, "mcp_2")
    assert failed is not None and failed.is_error and not failed.error_inferred
    assert "relation does not exist" in failed.output
    assert ok is not None and not ok.is_error and ok.output == "1 row"
    assert session.registered_tools is not None and session.registered_tools.names == {"query"}
    assert (session.id, session.agent_version) == ("chat-9", "pmpt_1@4")


def test_responses_bare_item_list_custom_calls_and_raw_arguments() -> None:
    items = [
        {"role": "user", "content": "patch it"},
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_a",
            "name": "f",
            "arguments": "{not json",
        },
        {
            "type": "function_call_output",
            "call_id": "call_a",
            "output": "Traceback (most recent call last):\n  boom",
        },
        {"type": "custom_tool_call", "call_id": "call_b", "name": "apply_patch", "input": "diff"},
        {
            "type": "custom_tool_call_output",
            "call_id": "call_b",
            "output": [{"type": "input_text", "text": "applied"}],
        },
    ]
    document = doc(items, "x/items.json")
    assert responses.sniff(document) and not chat.sniff(document)
    session = only(responses.parse(document))
    first, second = session.tool_calls()
    assert (first.call_id, first.input) == ("call_a", "{not json")
    assert (second.call_id, second.input) == ("call_b", "diff")
    result_a, result_b = result_of(session, "call_a"), result_of(session, "call_b")
    assert result_a is not None and result_a.is_error and result_a.error_inferred
    assert result_b is not None and result_b.output == "applied" and not result_b.is_error
    assert session.id == "items" and session.registered_tools is None


def test_responses_codex_shell_output_is_read_with_its_exit_code() -> None:
    wrapped = {"output": "E   assert 1 == 2\n1 failed, 23 passed", "metadata": {"exit_code": 1}}
    items = [
        {"role": "user", "content": "fix it"},
        {
            "type": "function_call",
            "call_id": "call_a",
            "name": "shell",
            "arguments": '{"command": ["bash", "-lc", "pytest -q"]}',
        },
        {"type": "function_call_output", "call_id": "call_a", "output": json.dumps(wrapped)},
        {"type": "function_call", "call_id": "call_b", "name": "shell", "arguments": "{}"},
        # Not the shell tool's shape (no exit code): kept as written.
        {"type": "function_call_output", "call_id": "call_b", "output": '{"output": "x"}'},
    ]
    session = only(responses.parse(doc(items, "x/rollout.json")))
    failed, other = result_of(session, "call_a"), result_of(session, "call_b")
    assert failed is not None and failed.output == "E   assert 1 == 2\n1 failed, 23 passed"
    assert failed.is_error and not failed.error_inferred and failed.meta["exit_code"] == 1
    assert other is not None and other.output == '{"output": "x"}' and not other.is_error


def test_responses_built_in_shell_and_patch_calls_are_tool_steps() -> None:
    """`local_shell_call`, `shell_call` and `apply_patch_call` (tools declared by type alone)
    are read as calls of `local_shell`, `shell` and `apply_patch`, their outputs as results: a
    shell step's exit code or timeout fails it, a patch's `failed` status fails it."""
    request = {"tools": [{"type": "local_shell"}, {"type": "shell"}, {"type": "apply_patch"}]}
    action = {"type": "exec", "command": ["bash", "-lc", "pytest -q"], "working_directory": "/r"}
    items = [
        {"type": "message", "role": "user", "content": "fix the tests"},
        {"type": "local_shell_call", "id": "lsh_1", "call_id": "call_1", "action": action},
        {"type": "local_shell_call_output", "id": "call_1", "output": "1 failed, 3 passed"},
        {
            "type": "apply_patch_call",
            "call_id": "call_2",
            "operation": {"type": "update_file", "path": "src/app.py", "diff": "@@\n-a\n+b"},
        },
        {"type": "apply_patch_call_output", "call_id": "call_2", "status": "failed"},
        {"type": "shell_call", "call_id": "call_3", "action": {"commands": ["npm run lint"]}},
        {
            "type": "shell_call_output",
            "call_id": "call_3",
            "output": [
                {"stdout": "", "stderr": "2 problems", "outcome": {"type": "exit", "exit_code": 1}}
            ],
        },
        {"type": "shell_call", "call_id": "call_4", "action": {"commands": ["sleep 999"]}},
        {
            "type": "shell_call_output",
            "call_id": "call_4",
            "output": [{"outcome": {"type": "timeout"}}],
        },
    ]
    session = only(responses.parse(doc({"request": request, "items": items}, "x/codex.json")))
    assert session.registered_tools is not None
    assert session.registered_tools.names == {"local_shell", "shell", "apply_patch"}
    calls = session.tool_calls()
    assert [(c.name, c.call_id) for c in calls] == [
        ("local_shell", "call_1"),
        ("apply_patch", "call_2"),
        ("shell", "call_3"),
        ("shell", "call_4"),
    ]
    assert calls[0].input == {"command": "bash -lc pytest -q", "workdir": "/r"}
    assert calls[1].input["path"] == "src/app.py"
    outputs = [result_of(session, f"call_{n}") for n in range(1, 5)]
    assert [(r.output, r.is_error) for r in outputs if r is not None] == [
        ("1 failed, 3 passed", False),
        ("failed", True),
        ("2 problems", True),
        ("", True),
    ]
    assert outputs[2] is not None and outputs[2].meta["exit_code"] == 1


def test_responses_json_lines_of_items_are_one_session() -> None:
    lines = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        {
            "type": "message",
            "role": "assistant",
            "id": "msg_1",
            "content": [{"type": "output_text", "text": "hello"}],
        },
    ]
    session = only(responses.parse(doc(lines, "s.jsonl", jsonl=True)))
    assert [(e.kind, e.text) for e in session.events] == [
        (EventKind.USER, "hi"),
        (EventKind.ASSISTANT, "hello"),
    ]


def test_responses_without_items_is_malformed() -> None:
    with pytest.raises(MalformedSessionError, match="items"):
        responses.parse(doc({"object": "response"}))


# --- Agents SDK traces ---------------------------------------------------------------------------


def test_agents_example_gives_tool_steps_with_span_ids_and_explicit_errors() -> None:
    document = shared_example("openai_agents_trace.json")
    raw = document.data["data"]
    functions = [s for s in raw if s.get("span_data", {}).get("type") == "function"]
    session = only(agents.parse(document))
    assert scenario(session)[1:5] == [
        (EventKind.TOOL_CALL, functions[0]["id"], "read_file", {"path": "config.yaml"}),
        (EventKind.TOOL_RESULT, functions[0]["id"], True),
        (EventKind.TOOL_CALL, functions[1]["id"], "read_file", {"path": "settings.yaml"}),
        (EventKind.TOOL_RESULT, functions[1]["id"], False),
    ]
    # The example's generation span holds "..." placeholders: the user turn comes first, the
    # reply last, whatever their span's time.
    assert session.events[0].kind is EventKind.USER
    assert session.events[-1].kind is EventKind.ASSISTANT
    failed = result_of(session, functions[0]["id"])
    assert failed is not None and not failed.error_inferred
    assert failed.meta["error_message"] == "Error running tool (non-fatal)"
    assert session.id == "sess_7f3c2a1e"
    assert (session.agent, session.agent_version, session.model) == (
        "Config Assistant",
        "1.4.2",
        "gpt-4.1",
    )
    assert session.registered_tools is not None and session.registered_tools.names == {"read_file"}
    assert_indexed(session)


def _span(
    span_id: str,
    trace: str,
    start: str,
    data: dict[str, Any],
    parent: str | None = None,
    error: Any = None,
) -> dict[str, Any]:
    return {
        "object": "trace.span",
        "id": span_id,
        "trace_id": trace,
        "parent_id": parent,
        "started_at": f"2026-04-01T10:00:{start}+00:00",
        "ended_at": f"2026-04-01T10:00:{start}+00:00",
        "span_data": data,
        "error": error,
    }


def test_agents_traces_of_one_group_are_one_session_in_time_order() -> None:
    user1, user2 = {"role": "user", "content": "first"}, {"role": "user", "content": "second"}
    reply1 = {"role": "assistant", "content": "one"}
    data = [
        {"object": "trace", "id": "trace_a", "group_id": "conv-1", "metadata": {"version": "2"}},
        {"object": "trace", "id": "trace_b", "group_id": "conv-1"},
        {"object": "trace", "id": "trace_c"},
        # exported out of order, as the exporter writes spans when they end
        _span(
            "s_gen2",
            "trace_b",
            "21",
            {"type": "generation", "model": "m", "input": [user1, reply1, user2], "output": []},
            parent="s_ag2",
        ),
        _span("s_ag2", "trace_b", "20", {"type": "agent", "name": "Bot", "tools": ["g"]}),
        _span(
            "s_fn",
            "trace_a",
            "12",
            {"type": "function", "name": "g", "input": "{bad", "output": "x"},
            parent="s_ag1",
        ),
        _span(
            "s_gen1",
            "trace_a",
            "11",
            {"type": "generation", "model": "m", "input": [user1], "output": [reply1]},
            parent="s_ag1",
        ),
        _span("s_ag1", "trace_a", "10", {"type": "agent", "name": "Bot", "tools": ["g"]}),
        _span("s_resp", "trace_c", "30", {"type": "response", "response_id": "resp_1"}),
    ]
    sessions = {s.id: s for s in agents.parse(doc({"data": data}))}
    assert set(sessions) == {"conv-1", "trace_c"}
    conv = sessions["conv-1"]
    assert [(e.kind, e.text or e.call_id) for e in conv.events] == [
        (EventKind.USER, "first"),
        (EventKind.ASSISTANT, "one"),
        (EventKind.TOOL_CALL, "s_fn"),
        (EventKind.TOOL_RESULT, "s_fn"),
        (EventKind.USER, "second"),
    ]
    assert conv.tool_calls()[0].input == "{bad"
    assert conv.agent_version == "2" and conv.started_at is not None
    assert sessions["trace_c"].warnings and not sessions["trace_c"].events


def test_agents_sniff_accepts_a_bare_list_and_parse_needs_spans() -> None:
    assert agents.sniff(doc([{"object": "trace", "id": "trace_x"}]))
    assert not agents.sniff(doc({"data": [{"id": 1}]}))
    with pytest.raises(MalformedSessionError, match="trace"):
        agents.parse(doc({"data": []}))


def test_documents_round_trip_through_bytes() -> None:
    # The adapters see what parse_bytes makes of real bytes, JSON Lines included.
    raw = b"\n".join(
        orjson.dumps({"messages": [{"role": "user", "content": str(i)}]}) for i in range(3)
    )
    document = parse_bytes("a/b.jsonl", raw)
    assert document.jsonl and chat.sniff(document)
    assert [s.id for s in chat.parse(document)] == ["b#0", "b#1", "b#2"]


ODD_SHAPES: list[Any] = [
    {"messages": "not a list"},
    {"messages": [None, 3, {"role": ["x"]}, {"role": "tool", "content": {"a": 1}}]},
    {"messages": [{"role": "assistant", "tool_calls": [None, {"function": "x"}]}]},
    {"request": {"messages": []}, "response": {"choices": [None]}},
    {"items": [{"type": "function_call", "call_id": {}, "arguments": 5}]},
    {"object": "response", "output": [{"type": "mcp_call", "error": {"code": 1}}], "tools": 3},
    {"data": [{"object": "trace.span", "id": [1], "parent_id": {}, "span_data": None}]},
    {"system": 1, "messages": [{"role": "user", "content": [{"type": "tool_result"}]}]},
    [1, "x", None],
    "text",
]


@pytest.mark.parametrize("data", ODD_SHAPES)
def test_odd_shapes_give_sessions_or_a_malformed_error_never_a_crash(data: Any) -> None:
    outcomes = []
    for parse in (chat.parse, responses.parse, agents.parse, anthropic.parse):
        try:
            sessions = list(parse(doc(data)))
        except MalformedSessionError as exc:
            outcomes.append(str(exc))
            continue
        for session in sessions:
            assert [e.index for e in session.events] == list(range(len(session.events)))
        outcomes.append(sessions)
    assert len(outcomes) == 4


def test_codex_plain_text_results_carry_their_exit_code() -> None:
    from sessions.formats.openai_responses import _plain_shell_code

    assert (
        _plain_shell_code("Exit code: 1\nWall time: 0 seconds\nOutput:\nverification failed") == 1
    )
    header = "Chunk ID: 7bb595\nWall time: 0.41 seconds\nProcess exited with code 2\n"
    assert _plain_shell_code(header + "Original token count: 50\nOutput:\ngo: x") == 2
    assert _plain_shell_code("Exit code: 0\nWall time: 1 seconds\nOutput:\nok") == 0
    assert _plain_shell_code("Error: tool failed") is None
    assert _plain_shell_code("Exit code: 1 is what the docs say") is None
