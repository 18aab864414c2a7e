"""The Anthropic Messages adapter on the spec's example and hand-made edge cases, and its
separation from OpenAI Chat Completions files."""

from __future__ import annotations

from typing import Any

import pytest
from tests_support import only, result_of, shared_example

from sessions.documents import Document
from sessions.errors import MalformedSessionError
from sessions.formats import anthropic_messages as anthropic
from sessions.formats import openai_chat as chat
from sessions.models import EventKind

FIRST_ID = "toolu_01A09q90qw90lq917835lq9"
SECOND_ID = "toolu_01B7xKp2n3Qm4Rs5Tu6Vw7Xy"


def doc(data: Any, source: str = "logs/claude.json", jsonl: bool = False) -> Document:
    return Document(source, data, jsonl=jsonl)


def test_example_gives_the_scenario_with_explicit_error_flags() -> None:
    session = only(anthropic.parse(shared_example("anthropic_messages.json")))
    steps = [
        (e.kind, e.call_id, e.name, e.input, e.is_error)
        for e in session.events
        if e.kind in (EventKind.TOOL_CALL, EventKind.TOOL_RESULT)
    ]
    assert steps == [
        (EventKind.TOOL_CALL, FIRST_ID, "read_file", {"path": "config.yaml"}, False),
        (EventKind.TOOL_RESULT, FIRST_ID, "read_file", None, True),
        (EventKind.TOOL_CALL, SECOND_ID, "read_file", {"path": "settings.yaml"}, False),
        (EventKind.TOOL_RESULT, SECOND_ID, "read_file", None, False),
    ]
    kinds = [e.kind for e in session.events]
    assert kinds[:3] == [EventKind.SYSTEM, EventKind.USER, EventKind.ASSISTANT]
    assert session.events[1].text == "What port does the app use? Check config.yaml."
    final = session.events[-1]
    assert final.kind is EventKind.ASSISTANT and "listens on 8080" in final.text
    assert final.meta["stop_reason"] == "end_turn"
    failed = result_of(session, FIRST_ID)
    assert failed is not None and not failed.error_inferred  # the format's own flag
    ok = result_of(session, SECOND_ID)
    assert ok is not None and ok.output == "port: 8080\nhost: localhost\n"
    assert session.model == "claude-sonnet-4-5-20250929"
    assert session.id == "anthropic_messages" and session.agent is None
    assert session.registered_tools is not None and session.registered_tools.names == {"read_file"}
    assert [e.index for e in session.events] == list(range(len(session.events)))


def test_response_echoed_into_history_is_not_counted_twice() -> None:
    turn = [{"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "ls"}}]
    data = {
        "request": {
            "model": "m",
            "system": [{"type": "text", "text": "be brief"}],
            "messages": [
                {"role": "user", "content": "list"},
                {"role": "assistant", "content": turn},
            ],
        },
        "response": {
            "type": "message",
            "role": "assistant",
            "model": "m",
            "content": turn,
            "stop_reason": "tool_use",
        },
    }
    session = only(anthropic.parse(doc(data)))
    assert [e.call_id for e in session.tool_calls()] == ["toolu_1"]
    assert [e.kind for e in session.events] == [
        EventKind.SYSTEM,
        EventKind.USER,
        EventKind.TOOL_CALL,
    ]


def test_server_tools_and_their_error_results() -> None:
    data = {
        "model": "m",
        "tools": [
            {"type": "web_search_20250305", "name": "web_search"},
            {"name": "read_file", "input_schema": {"type": "object"}},
        ],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "search"}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "hmm", "signature": "x"},
                    {
                        "type": "server_tool_use",
                        "id": "srvtoolu_1",
                        "name": "web_search",
                        "input": {"query": "port"},
                    },
                    {
                        "type": "web_search_tool_result",
                        "tool_use_id": "srvtoolu_1",
                        "content": {
                            "type": "web_search_tool_result_error",
                            "error_code": "unavailable",
                        },
                    },
                    {"type": "text", "text": "Search failed."},
                ],
            },
        ],
    }
    session = only(anthropic.parse(doc(data)))
    assert [e.kind for e in session.events] == [
        EventKind.USER,
        EventKind.TOOL_CALL,
        EventKind.TOOL_RESULT,
        EventKind.ASSISTANT,
    ]
    result = result_of(session, "srvtoolu_1")
    assert result is not None and result.is_error and "unavailable" in result.output
    assert session.tool_calls()[0].meta["server_tool"] is True
    assert session.registered_tools is not None
    assert session.registered_tools.names == {"web_search", "read_file"}
    assert "hmm" not in " ".join(e.text for e in session.events)


def test_a_list_of_requests_gives_unique_session_ids() -> None:
    request = {"model": "m", "system": "s", "messages": [{"role": "user", "content": "hi"}]}
    data = [dict(request, session_id="a"), dict(request, session_id="a"), dict(request)]
    sessions = anthropic.parse(doc(data, "x/batch.json"))
    assert [s.id for s in sessions] == ["a", "a#1", "batch#2"]
    assert all(s.registered_tools is None for s in sessions)


def test_tool_use_with_string_input_is_parsed_or_kept_raw() -> None:
    data = {
        "system": "s",
        "messages": [
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "t1", "name": "f", "input": '{"a": 1}'},
                    {"type": "tool_use", "id": "t2", "name": "f", "input": '{"a": '},
                ],
            }
        ],
    }
    session = only(anthropic.parse(doc(data)))
    assert [c.input for c in session.tool_calls()] == [{"a": 1}, '{"a": ']


def test_sniff_separates_anthropic_from_openai_chat() -> None:
    anthropic_doc = shared_example("anthropic_messages.json")
    openai_doc = shared_example("openai_chat_completions.json")
    assert anthropic.sniff(anthropic_doc) and not chat.sniff(anthropic_doc)
    assert chat.sniff(openai_doc) and not anthropic.sniff(openai_doc)
    # Plain text turns alone are ambiguous; a top-level system prompt is Anthropic's.
    plain = {
        "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    }
    assert chat.sniff(doc(plain)) and not anthropic.sniff(doc(plain))
    with_system = dict(plain, system="be brief")
    assert anthropic.sniff(doc(with_system)) and not chat.sniff(doc(with_system))
    # A tool_result block anywhere marks a line of JSON Lines as Anthropic.
    line = {
        "messages": [
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}],
            }
        ]
    }
    assert anthropic.sniff(doc([line], jsonl=True)) and not chat.sniff(doc([line], jsonl=True))


def test_without_messages_is_malformed_with_the_missing_field_named() -> None:
    with pytest.raises(MalformedSessionError, match="messages"):
        anthropic.parse(doc({"request": {"model": "m"}, "response": {"type": "message"}}))
