"""OpenTelemetry GenAI spans in OTLP JSON (one request, or one per line from the Collector).

Instrumentations differ by age, so one file may hold any of: the current ``gen_ai.input.messages``
/ ``gen_ai.output.messages`` attributes (JSON strings or structured values), the pre-1.37 span
events (``gen_ai.user.message`` ... ``gen_ai.choice``), the deprecated ``gen_ai.prompt`` /
``gen_ai.completion`` attributes, or OpenLLMetry's flattened ``gen_ai.prompt.<i>.*`` keys.
Tool steps come from ``execute_tool`` spans; only when a trace has none are they rebuilt from the
tool calls and responses inside the chat history. A ``retrieval`` span gives the documents it
returned (``gen_ai.retrieval.documents``, else its output messages) as context, a SYSTEM event.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sessions.documents import Document
from sessions.errors import MalformedSessionError
from sessions.formats._history import (
    Batch,
    CallPool,
    Msg,
    Timeline,
    add_retrieval,
    add_span_tool,
    dedupe_calls,
    message_from,
    replay,
    retrieved_text,
    to_msgs,
    tool_registry,
)
from sessions.formats._otlp import (
    Span,
    SpanEvent,
    first_attr,
    group_sessions,
    indexed,
    json_value,
    nearest,
    otlp_requests,
    otlp_spans,
    parse_input,
    resource_attr,
    stamp,
    subtree_end,
)
from sessions.formats.registry import adapter
from sessions.models import Session

FORMAT = "otel_genai"
OPENINFERENCE_KIND = "openinference.span.kind"
AGENT_OPS = ("invoke_agent", "create_agent", "invoke_workflow")
CONVERSATION_KEYS = (
    "gen_ai.conversation.id",
    # OpenLLMetry puts session ids in association properties
    "traceloop.association.properties.session_id",
    "traceloop.association.properties.conversation_id",
    "traceloop.association.properties.thread_id",
)
# pre-1.37 content events, and the role each one speaks in
EVENT_ROLES = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
    "gen_ai.choice": "assistant",
}


def _is_genai(span: Span) -> bool:
    prefixes = ("gen_ai.", "llm.", "traceloop.")
    return any(k.startswith(prefixes) for k in span.attrs) or any(
        e.name.startswith("gen_ai.") for e in span.events
    )


def sniff(doc: Document) -> bool:
    if not otlp_requests(doc.data):
        return False
    spans = otlp_spans(doc.data)
    # OpenInference spans are OTLP too, but carry their own conventions and adapter
    if any(OPENINFERENCE_KIND in s.attrs for s in spans):
        return False
    return any(_is_genai(s) for s in spans)


@adapter(FORMAT, sniff=sniff, priority=30)
def parse(doc: Document) -> list[Session]:
    if not otlp_requests(doc.data):
        raise MalformedSessionError(f"{doc.source}: no OTLP 'resourceSpans' object in the file")
    spans = otlp_spans(doc.data)
    if not spans:
        raise MalformedSessionError(f"{doc.source}: the OTLP 'resourceSpans' hold no spans")
    groups = group_sessions(spans, CONVERSATION_KEYS, fallback=Path(doc.source).stem)
    return [_session(doc.source, sid, members) for sid, members in groups]


def _op(span: Span) -> str:
    op = span.attrs.get("gen_ai.operation.name")
    if isinstance(op, str) and op:
        return op
    if span.attrs.get("traceloop.span.kind") == "tool" or span.name.startswith("execute_tool"):
        return "execute_tool"
    return ""


def _session(source: str, sid: str, spans: list[Span]) -> Session:
    parent = {s.span_id: s.parent_id for s in spans}
    agent_spans = {
        s.span_id: str(s.attrs["gen_ai.agent.name"])
        for s in spans
        if _op(s) in AGENT_OPS and s.attrs.get("gen_ai.agent.name")
    }
    agent = first_attr(spans, "gen_ai.agent.name", "traceloop.workflow.name")
    agent = agent or resource_attr(spans, "service.name")

    def subagent(span: Span) -> str | None:
        name = nearest(span.span_id, parent, agent_spans)
        return name if name and name != agent else None

    tool_spans = [(rank, s) for rank, s in enumerate(spans) if _op(s) == "execute_tool"]
    retrievals = [(rank, s) for rank, s in enumerate(spans) if _is_retrieval(s)]
    pool = CallPool()
    batches: list[Batch] = []
    ends = subtree_end(spans)
    for rank, span in enumerate(spans):
        if _op(span) == "execute_tool" or _is_retrieval(span):
            continue
        inputs, outputs = _messages(span)
        who = subagent(span)
        if inputs:
            batches.append(Batch(span.start, rank, inputs, fresh=False, subagent=who))
        if outputs:
            pool.add(outputs)
            # an agent span's output repeats its last LLM reply: place it after its children
            # and let it through only if no LLM span recorded it
            is_agent = _op(span) in AGENT_OPS
            rank_out = rank + len(spans) if is_agent else rank
            done = ends[span.span_id] if is_agent else span.end
            batches.append(Batch(done, rank_out, outputs, fresh=not is_agent, subagent=who))
    timeline = Timeline()
    replay(batches, timeline, calls=not tool_spans)
    for rank, span in tool_spans:
        _add_tool(span, rank, timeline, pool, subagent(span))
    for rank, span in retrievals:
        add_retrieval(timeline, span.end, rank, span.name, _retrieved(span), subagent(span))

    definitions: list[Any] = [
        s.attrs["gen_ai.tool.definitions"] for s in spans if "gen_ai.tool.definitions" in s.attrs
    ]
    definitions += [f.get("name") for s in spans for f in indexed(s.attrs, "llm.request.functions")]
    session = Session(
        id=sid,
        source=source,
        format=FORMAT,
        events=dedupe_calls(timeline.events()),
        agent=agent,
        agent_version=first_attr(spans, "gen_ai.agent.version")
        or resource_attr(spans, "service.version"),
        model=first_attr(spans, "gen_ai.response.model", "gen_ai.request.model"),
        started_at=stamp(min(s.start for s in spans)),
        registered_tools=tool_registry(definitions),
        sources=[source],
        meta=_meta(spans),
    )
    session.reindex()
    return session


def _is_retrieval(span: Span) -> bool:
    # the operation, or (an instrumentation that names none) the attribute only retrieval sets
    op = _op(span)
    return op == "retrieval" or (not op and "gen_ai.retrieval.documents" in span.attrs)


def _retrieved(span: Span) -> str:
    """The documents of a retrieval span (opt-in ``gen_ai.retrieval.documents``: a JSON list of
    ``{id, score, content, ...}``), else the text of its output messages; empty when it has
    neither (content capture off): then the step adds nothing."""
    documents = span.attrs.get("gen_ai.retrieval.documents")
    if documents not in (None, "", []):
        return retrieved_text(documents)
    _, outputs = _messages(span)
    return "\n\n".join(m.text for m in outputs if m.text)


def _add_tool(span: Span, rank: int, timeline: Timeline, pool: CallPool, who: str | None) -> None:
    attrs = span.attrs
    name = attrs.get("gen_ai.tool.name") or attrs.get("traceloop.entity.name")
    raw_args = attrs.get("gen_ai.tool.call.arguments", attrs.get("traceloop.entity.input"))
    add_span_tool(
        span,
        rank,
        timeline,
        pool,
        who,
        name=str(name or span.name.removeprefix("execute_tool").strip() or "unknown"),
        given=attrs.get("gen_ai.tool.call.id"),
        args=_unwrap_traceloop(parse_input(raw_args)),
        result=attrs.get("gen_ai.tool.call.result", attrs.get("traceloop.entity.output")),
    )


def _unwrap_traceloop(args: Any) -> Any:
    # Traceloop's @tool decorator records {"args": [...], "kwargs": {...}}
    if isinstance(args, dict) and set(args) == {"args", "kwargs"} and not args["args"]:
        return args["kwargs"]
    return args


def _messages(span: Span) -> tuple[list[Msg], list[Msg]]:
    attrs = span.attrs
    inputs = to_msgs(attrs["gen_ai.input.messages"]) if "gen_ai.input.messages" in attrs else []
    outputs = (
        to_msgs(attrs["gen_ai.output.messages"], "assistant")
        if "gen_ai.output.messages" in attrs
        else []
    )
    inputs = inputs or _legacy(attrs, "gen_ai.prompt", "user")
    # The system prompt, apart from the input messages in current instrumentations.
    instructions = json_value(attrs.get("gen_ai.system_instructions"))
    if instructions not in (None, "", []) and not any(m.role == "system" for m in inputs):
        parts = instructions if isinstance(instructions, list) else [instructions]
        inputs = to_msgs([{"role": "system", "parts": parts}], "system") + inputs
    outputs = outputs or _legacy(attrs, "gen_ai.completion", "assistant")
    for event in span.events:
        if event.name == "gen_ai.content.prompt":
            inputs += to_msgs(event.attrs.get("gen_ai.prompt"))
        elif event.name == "gen_ai.content.completion":
            outputs += to_msgs(event.attrs.get("gen_ai.completion"), "assistant")
        elif event.name in EVENT_ROLES:
            msg = _event_msg(event)
            if msg is not None:
                (outputs if event.name == "gen_ai.choice" else inputs).append(msg)
    return inputs, outputs


def _legacy(attrs: dict[str, Any], prefix: str, role: str) -> list[Msg]:
    """The deprecated whole-value attribute, else OpenLLMetry's ``<prefix>.<i>.*`` keys."""
    if attrs.get(prefix) not in (None, ""):
        return to_msgs(attrs[prefix], role)
    msgs = []
    for item in indexed(attrs, prefix):
        raw = {
            "role": item.get("role") or role,
            "content": _blocks(item.get("content")),
            "tool_call_id": item.get("tool_call_id"),
            "tool_calls": [
                {"id": c.get("id"), "name": c.get("name"), "arguments": c.get("arguments")}
                for c in indexed(item, "tool_calls")
            ],
        }
        msg = message_from(raw, role)
        if msg is not None:
            msgs.append(msg)
    return msgs


def _blocks(content: Any) -> Any:
    # some instrumentations store content blocks as a JSON string; plain text may look like JSON
    value = json_value(content)
    if (
        isinstance(value, list)
        and value
        and all(isinstance(b, dict) and "type" in b for b in value)
    ):
        return value
    return content


def _event_msg(event: SpanEvent) -> Msg | None:
    attrs = event.attrs
    role = EVENT_ROLES[event.name]
    body = json_value(attrs.get("gen_ai.event.content", attrs.get("body")))
    if not isinstance(body, dict):
        keys = ("role", "content", "tool_calls", "id", "tool_call_id", "message")
        body = {k: attrs[k] for k in keys if k in attrs}
    if event.name == "gen_ai.choice" and isinstance(json_value(body.get("message")), dict):
        body = json_value(body["message"])
    body = {**body, "tool_calls": json_value(body.get("tool_calls")) or []}
    body["content"] = _blocks(body.get("content"))
    if role == "tool":
        body["tool_call_id"] = body.get("tool_call_id") or body.get("id")
    body.setdefault("role", role)
    return message_from(body, role)


def _meta(spans: list[Span]) -> dict[str, Any]:
    meta: dict[str, Any] = {"trace_ids": sorted({s.trace_id for s in spans if s.trace_id})}
    provider = first_attr(spans, "gen_ai.provider.name", "gen_ai.system")
    if provider:
        meta["provider"] = provider
    service = resource_attr(spans, "service.name")
    if service:
        meta["service"] = service
    return meta
