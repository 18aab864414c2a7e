"""OpenInference, Langfuse and LangSmith exports, their retrieval steps, and the sniff separation
of the four trace adapters over every example file."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import orjson
import pytest
from tests_support import assert_grounded_by_retrieval, shared_example, shared_path

from sessions.documents import Document, parse_bytes
from sessions.errors import MalformedSessionError, UnknownFormatError
from sessions.formats import detect, langfuse, langsmith, openinference, otel_genai
from sessions.models import EventKind, Session

CONFIG_ID = "call_VSPygqKTWdrhaFErNvMV18Yl"
SETTINGS_ID = "call_mszuSIzqtI65i1wAUOE8w5H4"
QUESTION = "What port does the app use? Check config.yaml."
REPLY = (
    "config.yaml doesn't exist. settings.yaml sets the port: the app listens on 8080 "
    "(host localhost)."
)
MINE = {
    "otel_genai": otel_genai,
    "openinference": openinference,
    "langfuse": langfuse,
    "langsmith": langsmith,
}
CLAIMS = {
    "otel_genai_otlp.json": "otel_genai",
    "openinference_spans.json": "openinference",
    "langfuse_trace.json": "langfuse",
    "langsmith_runs.json": "langsmith",
}


def load(name: str) -> Any:
    return orjson.loads(shared_path(f"formats/examples/{name}").read_bytes())


def doc_of(data: Any, *, jsonl: bool = False) -> Document:
    return Document("mem://export.json", data, jsonl=jsonl)


def steps(session: Session) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for e in session.events:
        if e.kind in (EventKind.USER, EventKind.ASSISTANT):
            out.append((e.kind, e.text))
        elif e.kind is EventKind.TOOL_CALL:
            out.append((e.kind, e.call_id, e.name, e.input))
        elif e.kind is EventKind.TOOL_RESULT:
            out.append((e.kind, e.call_id, e.is_error))
    return out


SCENARIO = [
    (EventKind.USER, QUESTION),
    (EventKind.TOOL_CALL, CONFIG_ID, "read_file", {"path": "config.yaml"}),
    (EventKind.TOOL_RESULT, CONFIG_ID, True),
    (EventKind.TOOL_CALL, SETTINGS_ID, "read_file", {"path": "settings.yaml"}),
    (EventKind.TOOL_RESULT, SETTINGS_ID, False),
    (EventKind.ASSISTANT, REPLY),
]


# A RAG agent's turn: the case id and the amount of its reply are in the retrieved documents only.
RAG_QUESTION = "What happened with my water damage claim?"
RAG_DOCS = [
    "Case CX-48213: water damage claim, settled for $12,450.00 on 2024-03-02.",
    "Case CX-50017: roof claim, denied for lack of photos.",
]
RAG_META = '{"source":"claims.pdf"}'
RAG_TEXT = f"{RAG_DOCS[0]}\n{RAG_META}\n\n{RAG_DOCS[1]}"  # the first document has metadata
RAG_REPLY = "Your claim is case CX-48213; it was settled for $12,450.00."


def rag_steps(session: Session) -> list[tuple[Any, ...]]:
    """The session as (kind, text, meta) rows; a retrieval is a SYSTEM event, never a tool step."""
    assert not [e for e in session.events if e.kind in (EventKind.TOOL_CALL, EventKind.TOOL_RESULT)]
    return [(e.kind, e.text, e.meta) for e in session.events]


def rag_order(name: str, text: str = RAG_TEXT) -> list[tuple[Any, ...]]:
    return [
        (EventKind.USER, RAG_QUESTION, {}),
        (EventKind.SYSTEM, text, {"retrieval": True, "name": name}),
        (EventKind.ASSISTANT, RAG_REPLY, {}),
    ]


def check_rag_faithful(session: Session) -> None:
    """No signal for the reply; without the retrieved text the same reply is flagged."""
    assert_grounded_by_retrieval(session, {"CX-48213", "$12,450.00"})


def check_outputs(session: Session, error_text: str) -> None:
    results = [e for e in session.events if e.kind is EventKind.TOOL_RESULT]
    assert error_text in results[0].output and not results[0].error_inferred
    assert results[1].output == "port: 8080\nhost: localhost\n"
    assert [e.index for e in session.events] == list(range(len(session.events)))


# --- OpenInference ------------------------------------------------------------------------


def test_openinference_example() -> None:
    [session] = openinference.parse(doc_of(load("openinference_spans.json")))
    assert steps(session) == SCENARIO
    check_outputs(session, "No such file or directory: 'config.yaml'")
    assert session.id == "sess_7f3c2a1e" and session.agent == "Config Assistant"
    assert session.model == "gpt-4.1-2025-04-14"
    assert session.agent_version == "v3"  # llm.prompt_template.version
    assert session.meta["app_version"] == "1.4.2"
    assert session.registered_tools is not None
    assert session.registered_tools.names == frozenset({"read_file"})


def _to_otlp(flat: dict[str, Any]) -> dict[str, Any]:
    """The flat example re-encoded as OTLP JSON (status codes as integers)."""

    def value(v: Any) -> dict[str, Any]:
        return {"intValue": str(v)} if isinstance(v, int) else {"stringValue": v}

    spans = []
    for i, s in enumerate(flat["spans"]):
        spans.append(
            {
                "traceId": "4bf92f3577b34da6a3ce929d0e0e4736",
                "spanId": s["span_id"],
                "parentSpanId": s["parent_id"] or "",
                "name": s["name"],
                "startTimeUnixNano": str(1775049211823000000 + i * 10**9),
                "endTimeUnixNano": str(1775049211823000000 + i * 10**9 + 5 * 10**8),
                "attributes": [{"key": k, "value": value(v)} for k, v in s["attributes"].items()],
                "status": {
                    "code": 2 if s["status_code"] == "ERROR" else 1,
                    "message": s.get("status_message", ""),
                },
            }
        )
    return {"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": spans}]}]}


def test_openinference_in_otlp_json_is_not_claimed_by_otel_genai() -> None:
    doc = doc_of(_to_otlp(load("openinference_spans.json")))
    assert openinference.sniff(doc) and not otel_genai.sniff(doc)
    assert detect(doc).name == "openinference"
    [session] = openinference.parse(doc)
    assert steps(session) == SCENARIO
    assert session.started_at is not None and session.meta["trace_ids"] == [
        "4bf92f3577b34da6a3ce929d0e0e4736"
    ]


def test_openinference_phoenix_nested_attributes_and_rebuild_without_tool_spans() -> None:
    llm = {
        "openinference": {"span": {"kind": "LLM"}},
        "session": {"id": "s1"},
        "llm": {
            "model_name": "claude-x",
            "input_messages": [{"message": {"role": "user", "content": "ls please"}}],
            "output_messages": [
                {
                    "message": {
                        "role": "assistant",
                        "tool_calls": [
                            {
                                "tool_call": {
                                    "id": "t1",
                                    "function": {"name": "ls", "arguments": '{"dir": "."}'},
                                }
                            }
                        ],
                    }
                }
            ],
        },
    }
    final = {
        "openinference": {"span": {"kind": "LLM"}},
        "llm": {
            "input_messages": [
                {"message": {"role": "user", "content": "ls please"}},
                {"message": {"role": "tool", "tool_call_id": "t1", "content": "a.txt"}},
            ],
            "output_messages": [
                {
                    "message": {
                        "role": "assistant",
                        "contents": [
                            {"message_content": {"type": "text", "text": "One file: a.txt"}}
                        ],
                    }
                }
            ],
        },
    }
    data = {
        "data": [
            {
                "name": "llm",
                "context": {"trace_id": "t", "span_id": "1"},
                "span_kind": "LLM",
                "start_time": "2026-04-01T10:00:00Z",
                "status_code": "OK",
                "attributes": llm,
            },
            {
                "name": "llm",
                "context": {"trace_id": "t", "span_id": "2"},
                "span_kind": "LLM",
                "start_time": "2026-04-01T10:00:05Z",
                "status_code": "OK",
                "attributes": final,
            },
        ]
    }
    doc = doc_of(data)
    assert openinference.sniff(doc) and not langfuse.sniff(doc)
    [session] = openinference.parse(doc)
    assert session.id == "s1" and session.model == "claude-x"
    assert steps(session) == [
        (EventKind.USER, "ls please"),
        (EventKind.TOOL_CALL, "t1", "ls", {"dir": "."}),
        (EventKind.TOOL_RESULT, "t1", False),
        (EventKind.ASSISTANT, "One file: a.txt"),
    ]


def _oi_rag(retriever_attrs: dict[str, Any]) -> dict[str, Any]:
    """Phoenix span dicts: a CHAIN root, its RETRIEVER, then the LLM call that answers."""

    def span(span_id: str, kind: str, name: str, second: int, attrs: dict[str, Any]) -> Any:
        return {
            "name": name,
            "context": {"trace_id": "rag", "span_id": span_id},
            "parent_id": None if span_id == "root" else "root",
            "span_kind": kind,
            "start_time": f"2026-04-01T10:00:0{second}Z",
            "end_time": f"2026-04-01T10:00:0{second + 1}Z",
            "status_code": "OK",
            "attributes": {"openinference.span.kind": kind, **attrs},
        }

    root = {"input.value": RAG_QUESTION, "output.value": RAG_REPLY, "session.id": "rag"}
    llm = {
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.content": RAG_QUESTION,
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": RAG_REPLY,
    }
    retriever = {"input.value": RAG_QUESTION, **retriever_attrs}
    spans = [
        span("root", "CHAIN", "rag", 0, root),
        span("ret", "RETRIEVER", "claims-retriever", 1, retriever),
        span("llm", "LLM", "ChatOpenAI", 3, llm),
    ]
    spans[0]["end_time"] = "2026-04-01T10:00:05Z"
    return {"spans": spans}


_OI_FLAT = {
    "retrieval.documents.0.document.id": "d1",
    "retrieval.documents.0.document.content": RAG_DOCS[0],
    "retrieval.documents.0.document.metadata": '{"source": "claims.pdf"}',
    "retrieval.documents.0.document.score": 0.91,
    "retrieval.documents.1.document.id": "d2",
    "retrieval.documents.1.document.content": RAG_DOCS[1],
}
_OI_NESTED = {
    "retrieval": {
        "documents": [
            {"document": {"content": RAG_DOCS[0], "metadata": {"source": "claims.pdf"}}},
            {"document": {"content": RAG_DOCS[1]}},
        ]
    }
}


@pytest.mark.parametrize(
    ("attrs", "text"),
    [
        pytest.param(_OI_FLAT, RAG_TEXT, id="flattened"),
        pytest.param(_OI_NESTED, RAG_TEXT, id="phoenix-nested"),
        pytest.param(
            # one structured attribute, as an OTLP arrayValue of kvlists decodes
            {
                "retrieval.documents": [
                    {"document.content": RAG_DOCS[0], "document.metadata": RAG_META},
                    {"document.content": RAG_DOCS[1]},
                ]
            },
            RAG_TEXT,
            id="list-attribute",
        ),
        pytest.param(
            {"output.value": orjson.dumps({"documents": RAG_DOCS}).decode()},
            "\n\n".join(RAG_DOCS),
            id="output-value",
        ),
    ],
)
def test_openinference_retriever_span_is_retrieved_context(attrs: Any, text: str) -> None:
    [session] = openinference.parse(doc_of(_oi_rag(attrs)))
    assert rag_steps(session) == rag_order("claims-retriever", text)
    assert session.events[1].subagent is None


def test_openinference_retrieved_ids_ground_the_reply() -> None:
    [session] = openinference.parse(doc_of(_oi_rag(_OI_FLAT)))
    check_rag_faithful(session)


def test_openinference_retriever_without_documents_adds_nothing() -> None:
    [session] = openinference.parse(doc_of(_oi_rag({})))
    assert [e.kind for e in session.events] == [EventKind.USER, EventKind.ASSISTANT]


# --- Langfuse -----------------------------------------------------------------------------


def test_langfuse_example() -> None:
    [session] = langfuse.parse(doc_of(load("langfuse_trace.json")))
    assert steps(session) == SCENARIO
    check_outputs(session, "FileNotFoundError: [Errno 2]")
    assert session.id == "sess_7f3c2a1e" and session.agent == "Config Assistant"
    assert (session.agent_version, session.model) == ("1.4.2", "gpt-4.1-2025-04-14")
    assert session.registered_tools is not None
    assert session.registered_tools.names == frozenset({"read_file"})
    assert session.started_at is not None


def test_langfuse_call_ids_from_generation_else_observation_id() -> None:
    trace = load("langfuse_trace.json")
    for obs in trace["observations"]:
        obs.pop("metadata", None)
    [session] = langfuse.parse(doc_of(trace))
    calls = [(e.call_id, e.input) for e in session.tool_calls()]
    # the first matches the preceding GENERATION's tool_calls; the second has no request
    assert calls == [
        (CONFIG_ID, {"path": "config.yaml"}),
        ("4d5e6f708192a3b4", {"path": "settings.yaml"}),
    ]
    results = [e.call_id for e in session.events if e.kind is EventKind.TOOL_RESULT]
    assert results == [CONFIG_ID, "4d5e6f708192a3b4"]
    assert session.registered_tools is None


def test_langfuse_trace_lists_group_by_session_id() -> None:
    first = load("langfuse_trace.json")
    second = copy.deepcopy(first)
    # the next turn's input repeats the conversation so far: only the new question is new
    history = [
        {"role": "user", "content": QUESTION},
        {"role": "assistant", "content": REPLY},
        {"role": "user", "content": "and the host?"},
    ]
    second.update(
        id="trace-2",
        timestamp="2026-04-01T14:00:00Z",
        input={"messages": history},
        output="localhost",
    )
    second["observations"] = [
        {
            "id": "g2",
            "type": "GENERATION",
            "startTime": "2026-04-01T14:00:01Z",
            "output": "localhost",
            "model": "m",
        }
    ]
    other = {
        "id": "trace-3",
        "observations": [{"id": "x", "type": "SPAN", "traceId": "trace-3"}],
        "input": "unrelated",
    }
    for data in ([second, first, other], {"data": [first, second, other]}):
        doc = doc_of(data)
        assert langfuse.sniff(doc)
        sessions = {s.id: s for s in langfuse.parse(doc)}
        assert set(sessions) == {"sess_7f3c2a1e", "trace-3"}
        texts = [e.text for e in sessions["sess_7f3c2a1e"].events if e.text]
        system = "You are a config assistant. Use tools to inspect files."  # the prompt sent
        assert texts == [QUESTION, system, REPLY, "and the host?", "localhost"]


def _langfuse_rag(retriever: dict[str, Any], **trace: Any) -> dict[str, Any]:
    """A trace: the question, a retrieval, then the GENERATION that answers (sent no documents)."""
    return {
        "id": "rag-1",
        "sessionId": "rag",
        "timestamp": "2026-05-14T15:00:00Z",
        "input": {"messages": [{"role": "user", "content": RAG_QUESTION}]},
        "output": RAG_REPLY,
        "observations": [
            {
                "id": "r1",
                "traceId": "rag-1",
                "name": "claims-retriever",
                "startTime": "2026-05-14T15:00:01Z",
                "endTime": "2026-05-14T15:00:02Z",
                "input": {"query": RAG_QUESTION},
                **retriever,
            },
            {
                "id": "g1",
                "traceId": "rag-1",
                "type": "GENERATION",
                "name": "answer",
                "startTime": "2026-05-14T15:00:03Z",
                "endTime": "2026-05-14T15:00:05Z",
                "model": "gpt-4.1",
                "input": [{"role": "user", "content": RAG_QUESTION}],
                "output": {"role": "assistant", "content": RAG_REPLY},
            },
        ],
        **trace,
    }


_LF_DOCS = [{"pageContent": RAG_DOCS[0], "metadata": {"source": "claims.pdf"}}, RAG_DOCS[1]]


@pytest.mark.parametrize(
    ("retriever", "name", "text"),
    [
        pytest.param({"type": "RETRIEVER", "output": _LF_DOCS}, None, RAG_TEXT, id="pageContent"),
        pytest.param(
            {
                "type": "RETRIEVER",
                "output": {
                    "documents": [
                        {"page_content": RAG_DOCS[0], "metadata": {"source": "claims.pdf"}},
                        {"content": RAG_DOCS[1], "metadata": {}},
                    ]
                },
            },
            None,
            RAG_TEXT,
            id="documents-object",
        ),
        pytest.param(
            {"type": "RETRIEVER", "output": orjson.dumps(RAG_DOCS).decode()},
            None,
            "\n\n".join(RAG_DOCS),
            id="json-string-list",
        ),
        pytest.param(
            {
                "type": "RETRIEVER",
                "output": [
                    {
                        "lc": 1,
                        "type": "constructor",
                        "id": ["langchain", "schema", "document", "Document"],
                        "kwargs": {
                            "page_content": RAG_DOCS[0],
                            "metadata": {"source": "claims.pdf"},
                        },
                    },
                    {"text": RAG_DOCS[1]},
                ],
            },
            None,
            RAG_TEXT,
            id="langchain-serialised",
        ),
        pytest.param(
            {"type": "SPAN", "name": "VectorStoreRetriever", "output": _LF_DOCS},
            "VectorStoreRetriever",
            RAG_TEXT,
            id="span-named-retriever",
        ),
        pytest.param(
            {"type": "RETRIEVER", "output": {"hits": [{"case": "CX-48213", "amount": 12450}]}},
            None,
            '{"hits":[{"case":"CX-48213","amount":12450}]}',
            id="json-fallback",
        ),
    ],
)
def test_langfuse_retriever_is_retrieved_context(
    retriever: dict[str, Any], name: str | None, text: str
) -> None:
    [session] = langfuse.parse(doc_of(_langfuse_rag(retriever)))
    assert rag_steps(session) == rag_order(name or "claims-retriever", text)


def test_langfuse_retrieved_ids_ground_the_reply() -> None:
    [session] = langfuse.parse(doc_of(_langfuse_rag({"type": "RETRIEVER", "output": _LF_DOCS})))
    check_rag_faithful(session)


def test_langfuse_retrieval_keeps_the_sub_agent_and_plain_spans_stay_silent() -> None:
    main = {"id": "a0", "traceId": "rag-1", "type": "AGENT", "name": "claims-agent"}
    agent = {
        "id": "a1",
        "traceId": "rag-1",
        "type": "AGENT",
        "name": "researcher",
        "parentObservationId": "a0",
        "startTime": "2026-05-14T15:00:00.500Z",
        "endTime": "2026-05-14T15:00:02.500Z",
    }
    trace = _langfuse_rag({"type": "RETRIEVER", "output": _LF_DOCS, "parentObservationId": "a1"})
    other = {"id": "s1", "traceId": "rag-1", "type": "SPAN", "name": "format", "output": "CX-1"}
    trace["observations"] = [main, *trace["observations"], agent, other]
    [session] = langfuse.parse(doc_of(trace))
    [retrieved] = [e for e in session.events if e.kind is EventKind.SYSTEM]
    assert (retrieved.text, retrieved.subagent) == (RAG_TEXT, "researcher")


def test_langfuse_span_named_for_retrieval_that_runs_the_model_is_no_retrieval() -> None:
    """LangChain's RetrievalQA chain (a SPAN in Langfuse SDK v2) wraps the GENERATION and outputs
    the answer: only its retriever child is retrieved context, not the chain's answer."""
    trace = _langfuse_rag({"type": "SPAN", "name": "VectorStoreRetriever", "output": _LF_DOCS})
    chain = {
        "id": "c1",
        "traceId": "rag-1",
        "type": "SPAN",
        "name": "RetrievalQA",
        "startTime": "2026-05-14T15:00:00.500Z",
        "endTime": "2026-05-14T15:00:06Z",
        "output": {"result": RAG_REPLY},
    }
    for obs in trace["observations"]:
        obs["parentObservationId"] = "c1"
    trace["observations"].append(chain)
    [session] = langfuse.parse(doc_of(trace))
    assert rag_steps(session) == rag_order("VectorStoreRetriever")


# --- LangSmith ----------------------------------------------------------------------------


def test_langsmith_example() -> None:
    [session] = langsmith.parse(doc_of(load("langsmith_runs.json")))
    # the failed run has no ToolMessage: its id comes from the LLM run's tool_calls, and its
    # Python-repr input "{'path': 'config.yaml'}" is read as the object it is
    assert steps(session) == SCENARIO
    check_outputs(session, "FileNotFoundError: [Errno 2]")
    assert session.id == "sess_7f3c2a1e"  # extra.metadata.thread_id, not run.session_id
    assert session.meta["project_id"] == "6b4f1a2e-0c3d-4e5f-8a9b-0c1d2e3f4a5b"
    assert (session.agent, session.agent_version, session.model) == (
        "Config Assistant",
        "1.4.2",
        "gpt-4.1",
    )
    assert session.registered_tools is not None
    assert session.registered_tools.names == frozenset({"read_file"})


def test_langsmith_run_list_jsonl_tool_message_error_and_trace_id_session() -> None:
    runs = load("langsmith_runs.json")["runs"]
    for run in runs:
        run["extra"].get("metadata", {}).pop("thread_id", None)
    llm = next(r for r in runs if r["run_type"] == "llm")
    llm["outputs"]["generations"][0][0]["message"]["kwargs"]["tool_calls"] = []
    ok = runs[3]["outputs"]["output"]["kwargs"]
    ok["status"] = "error"  # a handled tool error returned to the model
    raw = b"\n".join(orjson.dumps(r) for r in reversed(runs))
    doc = parse_bytes("runs.jsonl", raw)
    assert doc.jsonl and langsmith.sniff(doc)
    [session] = langsmith.parse(doc)
    assert session.id == runs[0]["trace_id"]
    assert steps(session) == [
        (EventKind.USER, QUESTION),
        (EventKind.TOOL_CALL, runs[2]["id"], "read_file", {"path": "config.yaml"}),
        (EventKind.TOOL_RESULT, runs[2]["id"], True),
        (EventKind.TOOL_CALL, SETTINGS_ID, "read_file", {"path": "settings.yaml"}),
        (EventKind.TOOL_RESULT, SETTINGS_ID, True),
        (EventKind.ASSISTANT, REPLY),
    ]


def _langsmith_rag(documents: Any) -> dict[str, Any]:
    """A LangChain RAG chain: the root chain, its retriever run, then the LLM run that answers."""

    def run(run_id: str, run_type: str, name: str, second: int, **fields: Any) -> dict[str, Any]:
        return {
            "id": run_id,
            "trace_id": "root",
            "parent_run_id": None if run_id == "root" else "root",
            "name": name,
            "run_type": run_type,
            "start_time": f"2026-04-01T13:00:0{second}.000000",
            "end_time": f"2026-04-01T13:00:0{second + 1}.000000",
            "dotted_order": "20260401T130000000000Zroot"
            + ("" if run_id == "root" else f".20260401T13000{second}000000Z{run_id}"),
            "extra": {"metadata": {"thread_id": "rag"}},
            **fields,
        }

    message = {
        "lc": 1,
        "type": "constructor",
        "id": ["AIMessage"],
        "kwargs": {"content": RAG_REPLY},
    }
    return {
        "runs": [
            run(
                "root",
                "chain",
                "RAG Chain",
                0,
                inputs={"question": RAG_QUESTION},
                outputs={"output": RAG_REPLY},
                end_time="2026-04-01T13:00:06.000000",
            ),
            run(
                "ret",
                "retriever",
                "VectorStoreRetriever",
                1,
                inputs={"query": RAG_QUESTION},
                outputs=documents,
            ),
            run(
                "llm",
                "llm",
                "ChatOpenAI",
                3,
                inputs={"messages": [[{"role": "user", "content": RAG_QUESTION}]]},
                outputs={"generations": [[{"text": RAG_REPLY, "message": message}]]},
            ),
        ]
    }


_LS_DOCS = {
    "documents": [
        {"page_content": RAG_DOCS[0], "metadata": {"source": "claims.pdf"}, "type": "Document"},
        {"page_content": RAG_DOCS[1], "metadata": {}, "type": "Document"},
    ]
}


@pytest.mark.parametrize(
    ("outputs", "text"),
    [
        pytest.param(_LS_DOCS, RAG_TEXT, id="documents"),
        pytest.param(
            {"result": ["CX-48213", "CX-50017"]}, '{"result":["CX-48213","CX-50017"]}', id="json"
        ),
    ],
)
def test_langsmith_retriever_run_is_retrieved_context(outputs: Any, text: str) -> None:
    [session] = langsmith.parse(doc_of(_langsmith_rag(outputs)))
    assert session.id == "rag"
    assert rag_steps(session) == rag_order("VectorStoreRetriever", text)


def test_langsmith_retrieved_ids_ground_the_reply() -> None:
    [session] = langsmith.parse(doc_of(_langsmith_rag(_LS_DOCS)))
    check_rag_faithful(session)


@pytest.mark.parametrize(
    "open_runs",
    [("root",), ("root", "llm", "ret"), ("root", "ret")],
    ids=["root-open", "all-open", "root-and-retriever-open"],
)
def test_langsmith_root_without_end_time_answers_after_its_children(
    open_runs: tuple[str, ...],
) -> None:
    """A root run still open (no end_time) has its final answer after all its children ran, not
    at time zero ahead of the question, nor before a child that ended later."""
    data = _langsmith_rag(_LS_DOCS)
    for run in data["runs"]:
        if run["id"] in open_runs:
            del run["end_time"]
    [session] = langsmith.parse(doc_of(data))
    assert rag_steps(session) == rag_order("VectorStoreRetriever")


@pytest.mark.parametrize("open_runs", [(0, 3), (0, 1, 2, 3)], ids=["root-and-last-tool", "all"])
def test_langsmith_example_without_end_times_keeps_the_final_answer_last(
    open_runs: tuple[int, ...],
) -> None:
    # the root and the last tool run (which starts after the others ended), or every run
    data = load("langsmith_runs.json")
    for i in open_runs:
        del data["runs"][i]["end_time"]
    [session] = langsmith.parse(doc_of(data))
    assert steps(session) == SCENARIO


# --- shared behaviour ---------------------------------------------------------------------


def test_duplicate_spans_give_one_call_per_id() -> None:
    data = load("langfuse_trace.json")
    data["observations"].append(copy.deepcopy(data["observations"][2]))
    [session] = langfuse.parse(doc_of(data))
    assert [e.call_id for e in session.tool_calls()] == [CONFIG_ID, SETTINGS_ID]


@pytest.mark.parametrize(
    ("module", "data", "missing"),
    [
        (langsmith, {"runs": []}, "no LangSmith runs"),
        (langfuse, {"observations": []}, "no Langfuse trace"),
        (openinference, {"spans": [{"attributes": {"foo": 1}}]}, "openinference.span.kind"),
        (langsmith, "not a run", "no LangSmith runs"),
    ],
)
def test_missing_content_is_a_malformed_session(module: Any, data: Any, missing: str) -> None:
    with pytest.raises(MalformedSessionError, match=missing):
        module.parse(doc_of(data))


def test_sniffs_claim_only_their_own_example() -> None:
    folder = shared_path("formats/examples")
    files = sorted(p for p in Path(folder).rglob("*") if p.is_file())
    assert len(files) >= 10
    for path in files:
        doc = parse_bytes(str(path), path.read_bytes())
        claimed = {name for name, module in MINE.items() if module.sniff(doc)}
        expected = {CLAIMS[path.name]} if path.name in CLAIMS else set()
        assert claimed == expected, path.name


def test_openllmetry_fragment_is_an_unknown_format() -> None:
    with pytest.raises(UnknownFormatError):
        detect(shared_example("openllmetry_attributes.json"))


def test_langfuse_generation_input_gives_system_prompt_and_later_user_turns() -> None:
    """The trace input holds the first user turn only; the prompt each generation was sent holds
    the system message and the later turns: both are context the agent saw."""
    trace = {
        "id": "t1",
        "timestamp": "2026-05-14T15:02:14Z",
        "input": {"messages": [{"role": "user", "content": "Cancel order #W553 please"}]},
        "output": "Done: cancelled, $89.95 back to your card.",
        "observations": [
            {
                "id": "g1",
                "type": "GENERATION",
                "startTime": "2026-05-14T15:02:15Z",
                "input": [
                    {"role": "system", "content": "You support orders. Customer order ORD-604417."},
                    {"role": "user", "content": "Cancel order #W553 please"},
                    {"role": "assistant", "content": "Sure, one moment."},
                    {"role": "user", "content": "and confirm the refund amount"},
                ],
                "output": "Done: cancelled, $89.95 back to your card.",
            }
        ],
    }
    [session] = langfuse.parse(doc_of(trace))
    kinds = [(e.kind, e.text) for e in session.events if e.kind is not EventKind.ASSISTANT]
    assert kinds == [
        (EventKind.USER, "Cancel order #W553 please"),
        (EventKind.SYSTEM, "You support orders. Customer order ORD-604417."),
        (EventKind.USER, "and confirm the refund amount"),
    ]
