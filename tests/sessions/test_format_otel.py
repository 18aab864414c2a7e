"""OTel GenAI in OTLP JSON: the shared example, structured vs JSON-string content, the rebuild from
chat history, retrieval spans, and the older conventions (span events, deprecated and flattened
attributes)."""

from __future__ import annotations

import base64
import copy
from typing import Any

import orjson
import pytest
from tests_support import assert_grounded_by_retrieval, shared_example, shared_path

from sessions.documents import Document, parse_bytes
from sessions.errors import MalformedSessionError
from sessions.formats import otel_genai
from sessions.formats._otlp import any_value
from sessions.models import Event, EventKind, Session

CONFIG_ID = "call_VSPygqKTWdrhaFErNvMV18Yl"
SETTINGS_ID = "call_mszuSIzqtI65i1wAUOE8w5H4"
QUESTION = "What port does the app use? Check config.yaml."
REPLY = (
    "config.yaml doesn't exist. settings.yaml sets the port: the app listens on 8080 "
    "(host localhost)."
)


def example() -> dict[str, Any]:
    return orjson.loads(shared_path("formats/examples/otel_genai_otlp.json").read_bytes())


def doc_of(data: Any, *, jsonl: bool = False) -> Document:
    return Document("mem://trace.json", data, jsonl=jsonl)


def any_of(value: Any) -> dict[str, Any]:
    """Python value -> OTLP AnyValue, structured (arrays and kvlists), ints as decimal strings."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, list):
        return {"arrayValue": {"values": [any_of(v) for v in value]}}
    if isinstance(value, dict):
        pairs = [{"key": k, "value": any_of(v)} for k, v in value.items()]
        return {"kvlistValue": {"values": pairs}}
    return {"stringValue": value}


def span(span_id: str, start: int, attrs: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "traceId": extra.pop("trace_id", "ab" * 16),
        "spanId": span_id,
        "name": extra.pop("name", "chat gpt-4o"),
        "startTimeUnixNano": str(1_775_000_000_000_000_000 + start * 1_000_000),
        "endTimeUnixNano": str(1_775_000_000_000_000_000 + (start + 5) * 1_000_000),
        "attributes": [{"key": k, "value": any_of(v)} for k, v in attrs.items()],
        **extra,
    }


def otlp(*spans: dict[str, Any], resource: dict[str, Any] | None = None) -> dict[str, Any]:
    attrs = [{"key": k, "value": any_of(v)} for k, v in (resource or {}).items()]
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": attrs},
                "scopeSpans": [{"scope": {"name": "t"}, "spans": list(spans)}],
            }
        ]
    }


def scenario(events: list[Any]) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for e in events:
        if e.kind in (EventKind.USER, EventKind.ASSISTANT):
            out.append((e.kind, e.text))
        elif e.kind is EventKind.TOOL_CALL:
            out.append((e.kind, e.call_id, e.name, e.input))
        elif e.kind is EventKind.TOOL_RESULT:
            out.append((e.kind, e.call_id, e.is_error, e.output))
    return out


def test_example_gives_the_scenario_with_identity_and_tools() -> None:
    doc = shared_example("otel_genai_otlp.json")
    assert otel_genai.sniff(doc)
    [session] = otel_genai.parse(doc)
    assert scenario(session.events) == [
        (EventKind.USER, QUESTION),
        (EventKind.TOOL_CALL, CONFIG_ID, "read_file", {"path": "config.yaml"}),
        (
            EventKind.TOOL_RESULT,
            CONFIG_ID,
            True,
            "[Errno 2] No such file or directory: 'config.yaml'",
        ),
        (EventKind.TOOL_CALL, SETTINGS_ID, "read_file", {"path": "settings.yaml"}),
        (EventKind.TOOL_RESULT, SETTINGS_ID, False, "port: 8080\nhost: localhost\n"),
        (EventKind.ASSISTANT, REPLY),
    ]
    assert [e.index for e in session.events] == list(range(7))
    # The system instructions are context too (the scenario above leaves them out).
    assert [e.text for e in session.events if e.kind is EventKind.SYSTEM] == [
        "You are a config assistant. Use tools to inspect files."
    ]
    assert not _first_result(session).error_inferred
    assert session.id == "sess_7f3c2a1e"
    assert (session.agent, session.agent_version) == ("Config Assistant", "1.4.2")
    assert session.model == "gpt-4.1-2025-04-14"
    assert session.registered_tools is not None
    assert session.registered_tools.names == frozenset({"read_file"})
    assert session.started_at is not None and session.started_at.isoformat().startswith(
        "2026-04-01T13:13:31.823"
    )
    assert session.format == "otel_genai" and session.meta["provider"] == "openai"


def test_without_tool_spans_calls_are_rebuilt_from_chat_history_once() -> None:
    data = example()
    spans = data["resourceSpans"][0]["scopeSpans"][0]["spans"]
    spans[:] = [s for s in spans if not s["name"].startswith("execute_tool")]
    [session] = otel_genai.parse(doc_of(data))
    assert scenario(session.events) == [
        (EventKind.USER, QUESTION),
        (EventKind.TOOL_CALL, CONFIG_ID, "read_file", {"path": "config.yaml"}),
        (
            EventKind.TOOL_RESULT,
            CONFIG_ID,
            True,
            "Error: FileNotFoundError: [Errno 2] No such file or directory: 'config.yaml'",
        ),
        (EventKind.TOOL_CALL, SETTINGS_ID, "read_file", {"path": "settings.yaml"}),
        (EventKind.TOOL_RESULT, SETTINGS_ID, False, "port: 8080\nhost: localhost\n"),
        (EventKind.ASSISTANT, REPLY),
    ]
    # message parts carry no error flag: the failure is inferred from the text, and says so
    assert _first_result(session).error_inferred


def _first_result(session: Session) -> Event:
    return next(e for e in session.events if e.kind is EventKind.TOOL_RESULT)


def test_structured_content_and_result_key_match_json_string_form() -> None:
    user = {"role": "user", "parts": [{"type": "text", "content": "weather in Paris?"}]}
    call = {
        "role": "assistant",
        "parts": [
            {"type": "tool_call", "id": "c1", "name": "get_weather", "arguments": {"city": "Paris"}}
        ],
    }
    # the registry docs' examples write ``result``; the schema says ``response``
    result = {
        "role": "tool",
        "parts": [{"type": "tool_call_response", "id": "c1", "result": "rainy, 57F"}],
    }
    answer = {
        "role": "assistant",
        "parts": [{"type": "text", "content": "It is rainy."}],
        "finish_reason": "stop",
    }
    tools = [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}]

    def build(encode: Any) -> Document:
        first = {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "gpt-4o",
            "gen_ai.input.messages": encode([user]),
            "gen_ai.output.messages": encode([call]),
            "gen_ai.tool.definitions": encode(tools),
            "gen_ai.conversation.id": "conv-9",
        }
        second = {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "gpt-4o",
            "gen_ai.input.messages": encode([user, call, result]),
            "gen_ai.output.messages": encode([answer]),
        }
        return doc_of(otlp(span("01" * 8, 0, first), span("02" * 8, 10, second)))

    structured = otel_genai.parse(build(lambda v: v))
    as_strings = otel_genai.parse(build(lambda v: orjson.dumps(v).decode()))
    for [session] in (structured, as_strings):
        assert session.id == "conv-9" and session.model == "gpt-4o"
        assert session.registered_tools is not None
        assert "get_weather" in session.registered_tools
        assert scenario(session.events) == [
            (EventKind.USER, "weather in Paris?"),
            (EventKind.TOOL_CALL, "c1", "get_weather", {"city": "Paris"}),
            (EventKind.TOOL_RESULT, "c1", False, "rainy, 57F"),
            (EventKind.ASSISTANT, "It is rainy."),
        ]


def test_legacy_span_events_and_gen_ai_system() -> None:
    def event(name: str, body: dict[str, Any]) -> dict[str, Any]:
        return {
            "name": name,
            "timeUnixNano": "1775000000001000000",
            "attributes": [
                {"key": "gen_ai.system", "value": {"stringValue": "openai"}},
                {
                    "key": "gen_ai.event.content",
                    "value": {"stringValue": orjson.dumps(body).decode()},
                },
            ],
        }

    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "read_file", "arguments": '{"path": "a.txt"}'},
    }
    first = span(
        "01" * 8,
        0,
        {"gen_ai.system": "openai", "gen_ai.request.model": "gpt-4o"},
        events=[
            event("gen_ai.user.message", {"content": "open a.txt"}),
            event(
                "gen_ai.choice",
                {"index": 0, "finish_reason": "tool_calls", "message": {"tool_calls": [call]}},
            ),
        ],
    )
    tool = span(
        "02" * 8,
        10,
        {"gen_ai.tool.name": "read_file", "gen_ai.tool.call.id": "call_1"},
        name="execute_tool read_file",
        status={"code": "STATUS_CODE_ERROR"},
        events=[
            {
                "name": "exception",
                "attributes": [
                    {"key": "exception.message", "value": {"stringValue": "a.txt: not found"}}
                ],
            }
        ],
    )
    second = span(
        "03" * 8,
        20,
        {"gen_ai.system": "openai", "gen_ai.response.model": "gpt-4o-x"},
        events=[
            event("gen_ai.user.message", {"content": "open a.txt"}),
            event("gen_ai.assistant.message", {"tool_calls": [call]}),
            event("gen_ai.tool.message", {"id": "call_1", "content": "not found"}),
            event("gen_ai.choice", {"message": {"content": "a.txt is missing."}}),
        ],
    )
    [session] = otel_genai.parse(doc_of(otlp(first, tool, second)))
    assert scenario(session.events) == [
        (EventKind.USER, "open a.txt"),
        # the arguments come from the model's request when the tool span lacks them
        (EventKind.TOOL_CALL, "call_1", "read_file", {"path": "a.txt"}),
        (EventKind.TOOL_RESULT, "call_1", True, "a.txt: not found"),
        (EventKind.ASSISTANT, "a.txt is missing."),
    ]
    assert session.id == "ab" * 16  # no conversation id: the trace id
    assert session.model == "gpt-4o-x" and session.meta["provider"] == "openai"
    assert session.registered_tools is None


def test_flattened_openllmetry_attributes_and_error_type_only() -> None:
    llm = {
        "gen_ai.system": "openai",
        "llm.request.type": "chat",
        "gen_ai.request.model": "gpt-4.1",
        "llm.request.functions.0.name": "read_file",
        "llm.request.functions.1.name": "list_dir",
        "gen_ai.prompt.0.role": "user",
        "gen_ai.prompt.0.content": QUESTION,
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.tool_calls.0.id": CONFIG_ID,
        "gen_ai.completion.0.tool_calls.0.name": "read_file",
        "gen_ai.completion.0.tool_calls.0.arguments": '{"path":"config.yaml"}',
        "traceloop.association.properties.session_id": "sess_7f3c2a1e",
    }
    final = {
        "gen_ai.system": "openai",
        "gen_ai.request.model": "gpt-4.1",
        "gen_ai.prompt.0.role": "user",
        "gen_ai.prompt.0.content": QUESTION,
        "gen_ai.prompt.1.role": "assistant",
        "gen_ai.prompt.1.tool_calls.0.id": CONFIG_ID,
        "gen_ai.prompt.1.tool_calls.0.name": "read_file",
        "gen_ai.prompt.1.tool_calls.0.arguments": '{"path":"config.yaml"}',
        "gen_ai.prompt.2.role": "tool",
        "gen_ai.prompt.2.tool_call_id": CONFIG_ID,
        "gen_ai.prompt.2.content": "Error: FileNotFoundError: config.yaml",
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.content": "No config.yaml.",
    }
    [session] = otel_genai.parse(doc_of(otlp(span("01" * 8, 0, llm), span("02" * 8, 10, final))))
    assert scenario(session.events) == [
        (EventKind.USER, QUESTION),
        (EventKind.TOOL_CALL, CONFIG_ID, "read_file", {"path": "config.yaml"}),
        (EventKind.TOOL_RESULT, CONFIG_ID, True, "Error: FileNotFoundError: config.yaml"),
        (EventKind.ASSISTANT, "No config.yaml."),
    ]
    assert session.id == "sess_7f3c2a1e"
    assert session.registered_tools is not None
    assert session.registered_tools.names == frozenset({"read_file", "list_dir"})

    failing = span(
        "03" * 8,
        0,
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "fetch",
            "gen_ai.tool.call.id": "t9",
            "error.type": "timeout",
        },
    )
    [session] = otel_genai.parse(doc_of(otlp(failing)))
    assert scenario(session.events) == [
        (EventKind.TOOL_CALL, "t9", "fetch", None),  # arguments not recorded: unknown
        (EventKind.TOOL_RESULT, "t9", True, "timeout"),
    ]


def test_deprecated_whole_prompt_and_completion_attributes() -> None:
    attrs = {
        "gen_ai.system": "openai",
        "gen_ai.request.model": "gpt-4",
        "gen_ai.prompt": orjson.dumps(
            [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]
        ).decode(),
        "gen_ai.completion": '[{"role": "assistant", "content": "hello"}]',
    }
    [session] = otel_genai.parse(doc_of(otlp(span("01" * 8, 0, attrs))))
    assert scenario(session.events) == [(EventKind.USER, "hi"), (EventKind.ASSISTANT, "hello")]


def test_json_lines_requests_group_by_conversation_then_trace() -> None:
    def turn(trace: str, start: int, text: str, conv: str | None) -> dict[str, Any]:
        attrs = {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "m",
            "gen_ai.input.messages": [
                {"role": "user", "parts": [{"type": "text", "content": text}]}
            ],
        }
        if conv:
            attrs["gen_ai.conversation.id"] = conv
        return otlp(span(f"{start:016x}", start, attrs, trace_id=trace))

    lines = [
        turn("a" * 32, 0, "one", "c1"),
        turn("b" * 32, 50, "two", "c1"),
        turn("c" * 32, 10, "three", None),
    ]
    raw = b"\n".join(orjson.dumps(line) for line in lines)
    doc = parse_bytes("collector.jsonl", raw)
    assert doc.jsonl and otel_genai.sniff(doc)
    sessions = {s.id: s for s in otel_genai.parse(doc)}
    assert set(sessions) == {"c1", "c" * 32}
    assert [e.text for e in sessions["c1"].events] == ["one", "two"]
    assert sessions["c1"].meta["trace_ids"] == ["a" * 32, "b" * 32]


def test_nested_invoke_agent_marks_subagent_steps() -> None:
    outer = span(
        "01" * 8,
        0,
        {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "planner"},
        name="invoke_agent planner",
    )
    inner = span(
        "02" * 8,
        5,
        {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "coder"},
        parentSpanId="01" * 8,
    )
    tool = span(
        "03" * 8,
        6,
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "run",
            "gen_ai.tool.call.id": "r1",
            "gen_ai.tool.call.result": {"ok": True},
        },
        parentSpanId="02" * 8,
    )
    [session] = otel_genai.parse(doc_of(otlp(outer, inner, tool)))
    assert session.agent == "planner"
    assert [(e.kind, e.subagent, e.output) for e in session.events] == [
        (EventKind.TOOL_CALL, "coder", ""),
        (EventKind.TOOL_RESULT, "coder", '{"ok":true}'),
    ]


# --- retrieval ----------------------------------------------------------------------------

# A RAG agent's turn: the case id and the amount of its reply are in the retrieved documents only.
RAG_QUESTION = "What happened with my water damage claim?"
RAG_DOCS = [
    "Case CX-48213: water damage claim, settled for $12,450.00 on 2024-03-02.",
    "Case CX-50017: roof claim, denied for lack of photos.",
]
RAG_REPLY = "Your claim is case CX-48213; it was settled for $12,450.00."
RAG_DOCUMENTS = [
    {"id": "d1", "score": 0.91, "content": RAG_DOCS[0]},
    {"id": "d2", "score": 0.52, "content": RAG_DOCS[1]},
]


def _rag(retrieval: dict[str, Any]) -> dict[str, Any]:
    """An agent span with the question, its retrieval span, then the chat span that answers (sent
    no documents)."""
    root = span(
        "01" * 8,
        0,
        {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "claims-agent",
            "gen_ai.conversation.id": "rag",
            "gen_ai.input.messages": [
                {"role": "user", "parts": [{"type": "text", "content": RAG_QUESTION}]}
            ],
        },
        name="invoke_agent claims-agent",
    )
    root["endTimeUnixNano"] = str(1_775_000_000_000_000_000 + 40 * 1_000_000)
    found = span(
        "02" * 8,
        10,
        {"gen_ai.operation.name": "retrieval", "gen_ai.data_source.id": "claims-kb", **retrieval},
        name="retrieval claims-kb",
        parentSpanId="01" * 8,
    )
    chat = span(
        "03" * 8,
        20,
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": [
                {"role": "user", "parts": [{"type": "text", "content": RAG_QUESTION}]}
            ],
            "gen_ai.output.messages": [
                {
                    "role": "assistant",
                    "parts": [{"type": "text", "content": RAG_REPLY}],
                    "finish_reason": "stop",
                }
            ],
        },
        parentSpanId="01" * 8,
    )
    return otlp(root, found, chat)


def rag_steps(session: Session) -> list[tuple[Any, ...]]:
    """The session as (kind, text, meta) rows; a retrieval is a SYSTEM event, never a tool step."""
    assert not [e for e in session.events if e.kind in (EventKind.TOOL_CALL, EventKind.TOOL_RESULT)]
    return [(e.kind, e.text, e.meta) for e in session.events]


@pytest.mark.parametrize(
    ("retrieval", "text"),
    [
        pytest.param(
            {"gen_ai.retrieval.documents": orjson.dumps(RAG_DOCUMENTS).decode()},
            "\n\n".join(RAG_DOCS),
            id="documents-json-string",
        ),
        pytest.param(
            {"gen_ai.retrieval.documents": RAG_DOCUMENTS},
            "\n\n".join(RAG_DOCS),
            id="documents-structured",
        ),
        pytest.param(
            {"gen_ai.retrieval.documents": [{"id": "CX-48213", "score": 0.91}]},
            '{"id":"CX-48213","score":0.91}',
            id="ids-only",
        ),
        pytest.param(
            # no documents attribute: the output messages hold what was retrieved, and are no reply
            {
                "gen_ai.output.messages": [
                    {"role": "assistant", "parts": [{"type": "text", "content": d}]}
                    for d in RAG_DOCS
                ]
            },
            "\n\n".join(RAG_DOCS),
            id="output-messages",
        ),
    ],
)
def test_retrieval_span_is_retrieved_context(retrieval: dict[str, Any], text: str) -> None:
    [session] = otel_genai.parse(doc_of(_rag(retrieval)))
    assert rag_steps(session) == [
        (EventKind.USER, RAG_QUESTION, {}),
        (EventKind.SYSTEM, text, {"retrieval": True, "name": "retrieval claims-kb"}),
        (EventKind.ASSISTANT, RAG_REPLY, {}),
    ]
    assert session.events[1].subagent is None


def test_retrieval_span_without_content_adds_nothing() -> None:
    # content capture off: the span says a retrieval happened, not what it found
    [session] = otel_genai.parse(doc_of(_rag({"gen_ai.retrieval.query.text": RAG_QUESTION})))
    assert [e.kind for e in session.events] == [EventKind.USER, EventKind.ASSISTANT]


def test_retrieval_under_a_sub_agent_keeps_the_sub_agent() -> None:
    data = _rag({"gen_ai.retrieval.documents": RAG_DOCUMENTS})
    spans = data["resourceSpans"][0]["scopeSpans"][0]["spans"]
    researcher = span(
        "04" * 8,
        5,
        {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "researcher"},
        parentSpanId="01" * 8,
    )
    spans[1]["parentSpanId"] = "04" * 8
    spans.append(researcher)
    [session] = otel_genai.parse(doc_of(data))
    [retrieved] = [e for e in session.events if e.kind is EventKind.SYSTEM]
    assert (retrieved.text, retrieved.subagent) == ("\n\n".join(RAG_DOCS), "researcher")


def test_retrieved_ids_ground_the_reply() -> None:
    [session] = otel_genai.parse(doc_of(_rag({"gen_ai.retrieval.documents": RAG_DOCUMENTS})))
    assert_grounded_by_retrieval(session, {"CX-48213", "$12,450.00"})


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"stringValue": "x"}, "x"),
        ({"intValue": "9007199254740993"}, 9007199254740993),
        ({"intValue": 7}, 7),
        ({"doubleValue": 0.5}, 0.5),
        ({"boolValue": True}, True),
        ({"arrayValue": {"values": [{"stringValue": "stop"}, {"intValue": "2"}]}}, ["stop", 2]),
        ({"kvlistValue": {"values": [{"key": "a", "value": {"boolValue": False}}]}}, {"a": False}),
        ({"bytesValue": base64.b64encode(b"hi").decode()}, "hi"),
        ({}, None),
        ("flat", "flat"),
    ],
)
def test_any_value_decoding(value: Any, expected: Any) -> None:
    assert any_value(value) == expected


def test_sniff_leaves_openinference_and_plain_otlp_alone() -> None:
    data = example()
    assert otel_genai.sniff(doc_of(data))
    marked = copy.deepcopy(data)
    marked["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"].append(
        {"key": "openinference.span.kind", "value": {"stringValue": "AGENT"}}
    )
    assert not otel_genai.sniff(doc_of(marked))
    http = otlp(span("01" * 8, 0, {"http.request.method": "GET"}, name="GET /"))
    assert not otel_genai.sniff(doc_of(http))
    assert not otel_genai.sniff(doc_of({"spans": []}))


def test_missing_spans_is_a_malformed_session() -> None:
    with pytest.raises(MalformedSessionError, match="resourceSpans"):
        otel_genai.parse(doc_of({"traces": []}))
    with pytest.raises(MalformedSessionError, match="no spans"):
        otel_genai.parse(doc_of({"resourceSpans": [{"scopeSpans": [{"spans": []}]}]}))
