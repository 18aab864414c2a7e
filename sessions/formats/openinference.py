"""OpenInference (Arize Phoenix) spans: OTLP JSON, or span dicts with flat dotted attributes.

Span dicts come as ``{"spans": [...]}``, Phoenix's ``{"data": [...]}``, a plain list or one span
per JSON line; Phoenix may also nest attributes (``{"llm": {"model_name": ...}}``), which are
flattened back to the dotted names the conventions define. TOOL spans give the tool steps; LLM
spans give the messages (and, when there are no TOOL spans, the tool calls and results);
RETRIEVER spans the documents they returned, as context (a SYSTEM event).
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
    user_msgs,
)
from sessions.formats._otlp import (
    Span,
    attributes,
    first_attr,
    group_sessions,
    indexed,
    json_value,
    nearest,
    otlp_requests,
    otlp_spans,
    parse_input,
    resource_attr,
    span_from,
    stamp,
    subtree_end,
)
from sessions.formats.registry import adapter
from sessions.models import Session

FORMAT = "openinference"
KIND = "openinference.span.kind"
KINDS = {
    "LLM",
    "EMBEDDING",
    "CHAIN",
    "RETRIEVER",
    "RERANKER",
    "TOOL",
    "AGENT",
    "GUARDRAIL",
    "EVALUATOR",
    "PROMPT",
}


def _spans(data: Any) -> list[Span]:
    if otlp_requests(data):
        return otlp_spans(data, flatten=True)
    raw = data
    if isinstance(data, dict):
        raw = data.get("spans") if isinstance(data.get("spans"), list) else data.get("data")
    if not isinstance(raw, list):
        return []
    return [
        span_from(item, {}, i, flatten=True)
        for i, item in enumerate(raw)
        if isinstance(item, dict) and ("attributes" in item or "span_kind" in item)
    ]


def _kind(span: Span) -> str:
    # Phoenix's own span dicts also carry the kind as a top-level ``span_kind``
    kind = span.attrs.get(KIND) or span.raw.get("span_kind") or ""
    return str(kind).upper()


def sniff(doc: Document) -> bool:
    return any(KIND in s.attrs or _kind(s) in KINDS for s in _spans(doc.data))


@adapter(FORMAT, sniff=sniff, priority=25)
def parse(doc: Document) -> list[Session]:
    spans = [s for s in _spans(doc.data) if _kind(s)]
    if not spans:
        raise MalformedSessionError(
            f"{doc.source}: no span with an '{KIND}' attribute (expected OTLP 'resourceSpans', "
            "'spans' or 'data' with OpenInference spans)"
        )
    groups = group_sessions(spans, ("session.id",), fallback=Path(doc.source).stem)
    return [_session(doc.source, sid, members) for sid, members in groups]


def _session(source: str, sid: str, spans: list[Span]) -> Session:
    ids = {s.span_id for s in spans}
    parent = {s.span_id: s.parent_id for s in spans}
    agent_spans = {
        s.span_id: str(s.attrs.get("agent.name") or s.name) for s in spans if _kind(s) == "AGENT"
    }
    agent = first_attr(spans, "agent.name") or next(iter(agent_spans.values()), None)

    def subagent(span: Span) -> str | None:
        name = nearest(span.span_id, parent, agent_spans)
        return name if name and name != agent else None

    tool_spans = [(rank, s) for rank, s in enumerate(spans) if _kind(s) == "TOOL"]
    retrievers = [(rank, s) for rank, s in enumerate(spans) if _kind(s) == "RETRIEVER"]
    pool = CallPool()
    batches: list[Batch] = []
    late = len(spans)  # agent replies repeat their last LLM output: rank them after it
    ends = subtree_end(spans)
    for rank, span in enumerate(spans):
        kind, who = _kind(span), subagent(span)
        if kind == "LLM":
            inputs = _messages(span.attrs, "llm.input_messages", "user")
            outputs = _messages(span.attrs, "llm.output_messages", "assistant")
            pool.add(outputs)
            batches.append(Batch(span.start, rank, inputs, fresh=False, subagent=who))
            batches.append(Batch(span.end, rank, outputs, fresh=True, subagent=who))
        elif kind == "AGENT" or (kind not in ("TOOL", "RETRIEVER") and span.parent_id not in ids):
            inputs = user_msgs(span.attrs.get("input.value"))
            batches.append(Batch(span.start, rank, inputs, fresh=False, subagent=who))
            outputs = _replies(span.attrs.get("output.value"))
            done = ends[span.span_id]
            batches.append(Batch(done, rank + late, outputs, fresh=False, subagent=who))
    timeline = Timeline()
    replay(batches, timeline, calls=not tool_spans)
    for rank, span in tool_spans:
        _add_tool(span, rank, timeline, pool, subagent(span))
    for rank, span in retrievers:
        add_retrieval(timeline, span.end, rank, span.name, _retrieved(span), subagent(span))

    schemas = [
        v
        for s in spans
        for k, v in s.attrs.items()
        if k.startswith("llm.tools.") and k.endswith(".tool.json_schema")
    ]
    session = Session(
        id=sid,
        source=source,
        format=FORMAT,
        events=dedupe_calls(timeline.events()),
        agent=agent,
        agent_version=first_attr(spans, "llm.prompt_template.version")
        or _app_version(spans)
        or resource_attr(spans, "service.version"),
        model=first_attr(
            spans, "llm.response.model_name", "llm.model_name", "llm.request.model_name"
        ),
        started_at=stamp(min(s.start for s in spans)),
        registered_tools=tool_registry(schemas),
        sources=[source],
        meta=_meta(spans),
    )
    session.reindex()
    return session


def _messages(attrs: dict[str, Any], prefix: str, role: str) -> list[Msg]:
    """``<prefix>.<i>.message.role|content|contents|tool_call_id|tool_calls.<j>.tool_call.*``."""
    msgs = []
    for item in indexed(attrs, prefix):
        contents = [c.get("message_content.text") for c in indexed(item, "message.contents")]
        content = item.get("message.content")
        raw = {
            "role": item.get("message.role") or role,
            "content": content if content is not None else "\n".join(str(c) for c in contents if c),
            "tool_call_id": item.get("message.tool_call_id"),
            "tool_calls": [
                {
                    "id": call.get("tool_call.id"),
                    "name": call.get("tool_call.function.name"),
                    "arguments": call.get("tool_call.function.arguments"),
                }
                for call in indexed(item, "message.tool_calls")
            ],
        }
        msg = message_from(raw, role)
        if msg is not None:
            msgs.append(msg)
    return msgs


def _replies(value: Any) -> list[Msg]:
    value = json_value(value)
    if isinstance(value, str):
        return [Msg("assistant", value)] if value else []
    return [m for m in to_msgs(value, "assistant") if m.role == "assistant" and m.text]


def _add_tool(span: Span, rank: int, timeline: Timeline, pool: CallPool, who: str | None) -> None:
    attrs = span.attrs
    add_span_tool(
        span,
        rank,
        timeline,
        pool,
        who,
        name=str(attrs.get("tool.name") or span.name or "unknown"),
        given=attrs.get("tool.id"),
        args=parse_input(attrs.get("input.value")),
        result=attrs.get("output.value"),
    )


def _retrieved(span: Span) -> str:
    """``retrieval.documents.<i>.document.content`` (and ``.metadata``), flattened or as one list
    attribute (OTLP keeps a structured value whole); else the span's ``output.value``."""
    attrs = span.attrs
    raw = attrs.get("retrieval.documents")
    flat = (
        attributes({"retrieval.documents": raw}, flatten=True) if isinstance(raw, list) else attrs
    )
    docs = []
    for item in indexed(flat, "retrieval.documents"):
        content = item.get("document.content")
        if content in (None, ""):
            continue
        metadata = item.get("document.metadata")
        if metadata is None:  # a nested metadata object, flattened to its keys
            prefix = "document.metadata."
            metadata = {k.removeprefix(prefix): v for k, v in item.items() if k.startswith(prefix)}
        docs.append({"content": content, "metadata": metadata})
    return retrieved_text(docs) if docs else retrieved_text(attrs.get("output.value"))


def _app_version(spans: list[Span]) -> str | None:
    # ``metadata`` is a JSON string by the spec; Phoenix's nested dumps flatten it to keys
    for span in spans:
        metadata = json_value(span.attrs.get("metadata"))
        if not isinstance(metadata, dict):
            metadata = {
                k.removeprefix("metadata."): v
                for k, v in span.attrs.items()
                if k.startswith("metadata.")
            }
        for key in ("app_version", "version", "release"):
            if metadata.get(key) not in (None, ""):
                return str(metadata[key])
    return None


def _meta(spans: list[Span]) -> dict[str, Any]:
    meta: dict[str, Any] = {"trace_ids": sorted({s.trace_id for s in spans if s.trace_id})}
    for key, attr in (
        ("prompt_version", "llm.prompt_template.version"),
        ("user_id", "user.id"),
        ("provider", "llm.provider"),
    ):
        value = first_attr(spans, attr)
        if value:
            meta[key] = value
    app_version = _app_version(spans)
    if app_version:
        meta["app_version"] = app_version
    return meta
