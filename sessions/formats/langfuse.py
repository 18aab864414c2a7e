"""Langfuse trace exports: a trace with its ``observations`` (``GET /api/public/traces/{id}``),
a list of such traces, ``{"data": [...]}`` of them, or one trace per JSON line.

Langfuse has no first-class tool call id: a TOOL observation takes one from its metadata, else
from the matching ``tool_calls[]`` of a GENERATION output, else its own observation id. A
RETRIEVER observation (or a SPAN named for a retriever) gives the documents it returned as
context, a SYSTEM event. Traces that share a ``sessionId`` are one session.
"""

from __future__ import annotations

import re
from typing import Any

from sessions.documents import Document
from sessions.errors import MalformedSessionError
from sessions.formats._history import (
    Batch,
    CallPool,
    Msg,
    Timeline,
    add_retrieval,
    add_tool_step,
    dedupe_calls,
    replay,
    retrieved_text,
    to_msgs,
    tool_registry,
    user_msgs,
)
from sessions.formats._otlp import json_value, nanos, nearest, parse_input
from sessions.formats.common import json_text, parse_time
from sessions.formats.registry import adapter
from sessions.models import Event, EventKind, Session

FORMAT = "langfuse"
CALL_ID_KEYS = ("tool_call_id", "toolCallId", "call_id", "callId")


_WORDY = re.compile(r"\w")


def _traces(data: Any) -> list[dict[str, Any]]:
    if isinstance(data, dict) and not isinstance(data.get("observations"), list):
        data = data.get("data")
    items = data if isinstance(data, list) else [data]
    return [t for t in items if isinstance(t, dict) and isinstance(t.get("observations"), list)]


def _observations(trace: dict[str, Any]) -> list[dict[str, Any]]:
    # the trace list endpoint returns observation ids only: those carry nothing to read
    return [o for o in trace["observations"] if isinstance(o, dict) and o.get("type")]


def sniff(doc: Document) -> bool:
    for trace in _traces(doc.data):
        for obs in _observations(trace):
            if any(k in obs for k in ("traceId", "startTime", "parentObservationId")):
                return True
    return False


@adapter(FORMAT, sniff=sniff, priority=40)
def parse(doc: Document) -> list[Session]:
    traces = [t for t in _traces(doc.data) if _observations(t) or t.get("input") is not None]
    if not traces:
        raise MalformedSessionError(
            f"{doc.source}: no Langfuse trace with 'observations' (expected a trace object, "
            "a list of traces or {'data': [traces]})"
        )
    sessions: dict[str, list[dict[str, Any]]] = {}
    for trace in traces:
        sid = str(trace.get("sessionId") or trace.get("id") or doc.source)
        sessions.setdefault(sid, []).append(trace)
    return [_session(doc.source, sid, members) for sid, members in sessions.items()]


def _session(source: str, sid: str, traces: list[dict[str, Any]]) -> Session:
    traces = sorted(traces, key=lambda t: nanos(t.get("timestamp")))
    timeline = Timeline()
    agent: str | None = None
    model: str | None = None
    definitions: list[Any] = []
    batches: list[Batch] = []
    for trace in traces:
        observations = _observations(trace)
        agents = [o for o in observations if o.get("type") == "AGENT" and o.get("name")]
        agent = agent or (str(agents[0]["name"]) if agents else None) or trace.get("name")
        generations = [o for o in observations if o.get("type") == "GENERATION"]
        model = model or next((str(g["model"]) for g in generations if g.get("model")), None)
        for gen in generations:
            for holder in (json_value(gen.get("input")), gen.get("metadata")):
                if isinstance(holder, dict) and holder.get("tools"):
                    definitions.append(holder["tools"])
        batches += _add_trace(trace, observations, agent, timeline)
    # one replay for the whole session: a later trace's input often repeats earlier turns
    replay(batches, timeline)
    first = traces[0]
    version = next(
        (
            t.get("release") or t.get("version")
            for t in traces
            if t.get("release") or t.get("version")
        ),
        None,
    )
    session = Session(
        id=sid,
        source=source,
        format=FORMAT,
        events=dedupe_calls(timeline.events()),
        agent=str(agent) if agent else None,
        agent_version=str(version) if version else None,
        model=model,
        started_at=parse_time(first.get("timestamp")),
        registered_tools=tool_registry(definitions),
        sources=[source],
        meta=_meta(traces),
    )
    session.reindex()
    return session


def _add_trace(
    trace: dict[str, Any], observations: list[dict[str, Any]], agent: Any, timeline: Timeline
) -> list[Batch]:
    """Add the trace's tool steps to ``timeline``; return its messages for the session replay."""
    order = sorted(
        range(len(observations)), key=lambda i: (nanos(observations[i].get("startTime")), i)
    )
    ordered = [observations[i] for i in order]
    parent = {str(o.get("id")): _str(o.get("parentObservationId")) for o in ordered}
    agent_obs = {
        str(o.get("id")): str(o["name"])
        for o in ordered
        if o.get("type") == "AGENT" and o.get("name")
    }

    def subagent(obs: dict[str, Any]) -> str | None:
        name = nearest(str(obs.get("id")), parent, agent_obs)
        return name if name and name != agent else None

    start = nanos(trace.get("timestamp")) or min(
        (nanos(o.get("startTime")) for o in ordered), default=0
    )
    end = max((nanos(o.get("endTime") or o.get("startTime")) for o in ordered), default=start)
    late = len(ordered) + 1  # the trace output repeats the last reply: rank it after everything
    batches = [Batch(start, -1, user_msgs(trace.get("input")), fresh=False)]
    systems: set[str] = set()  # system prompts added (each once per trace)
    has_tools = any(o.get("type") == "TOOL" for o in ordered)
    callers = _model_callers(ordered, parent)
    pool = CallPool()
    for rank, obs in enumerate(ordered):
        kind, who = obs.get("type"), subagent(obs)
        when = nanos(obs.get("startTime"))
        done = nanos(obs.get("endTime")) or when
        if kind == "GENERATION":
            history = to_msgs(obs.get("input"))
            # The prompt the model was sent: its system message (context the agent saw) and
            # the user turns after the trace's first (the trace input holds only that one).
            for msg in history:
                if msg.role == "system" and msg.text and msg.text not in systems:
                    systems.add(msg.text)
                    event = Event(EventKind.SYSTEM, text=msg.text, subagent=who)
                    timeline.add(when, rank, event)
            # (A turn with no word in it, like an elided "...", says nothing.)
            users = [m for m in history if m.role == "user" and _WORDY.search(m.text or "")]
            batches.append(Batch(when, rank, users, fresh=False, subagent=who))
            outputs = to_msgs(obs.get("output"), "assistant")
            pool.add(outputs)
            batches.append(Batch(done, rank, outputs, fresh=True, subagent=who))
            if not has_tools:  # rebuild tool results from the history the next call was sent
                results = [m for m in to_msgs(obs.get("input")) if m.role == "tool"]
                batches.append(Batch(when, rank, results, fresh=False, subagent=who))
        elif kind == "AGENT" and who is not None:
            batches.append(Batch(when, rank, user_msgs(obs.get("input")), False, who))
            batches.append(Batch(done, rank + late, _replies(obs.get("output")), False, who))
        elif kind == "TOOL":
            _add_tool(obs, when, done, rank, timeline, pool, who)
        elif _is_retrieval(obs, callers):
            text = retrieved_text(obs.get("output"))
            add_retrieval(timeline, done, rank, obs.get("name"), text, who)
    if trace.get("output") is not None:
        batches.append(Batch(end, late, _replies(trace.get("output")), fresh=False))
    else:
        root = next((o for o in ordered if o.get("type") == "AGENT" and subagent(o) is None), None)
        if root is not None:
            batches.append(Batch(end, late, _replies(root.get("output")), fresh=False))
    for batch in batches:
        batch.calls = not has_tools
    return batches


def _model_callers(ordered: list[dict[str, Any]], parent: dict[str, str | None]) -> set[str]:
    """The observations a GENERATION runs under (its ancestors)."""
    found: set[str] = set()
    for obs in ordered:
        if obs.get("type") != "GENERATION":
            continue
        node = parent.get(str(obs.get("id")))
        while node is not None and node not in found:
            found.add(node)
            node = parent.get(node)
    return found


def _is_retrieval(obs: dict[str, Any], callers: set[str]) -> bool:
    """A RETRIEVER, or a SPAN named for a retriever (older SDKs, hand-made traces) that runs no
    model: a chain named for retrieval (LangChain's ``RetrievalQA``, a SPAN in SDK v2) wraps the
    GENERATION and outputs the answer, which is no retrieved context."""
    kind = obs.get("type")
    if kind == "RETRIEVER":
        return True
    named = kind == "SPAN" and "retriev" in str(obs.get("name")).lower()
    return named and str(obs.get("id")) not in callers


def _replies(value: Any) -> list[Msg]:
    value = json_value(value)
    if isinstance(value, str):
        return [Msg("assistant", value)] if value else []
    if isinstance(value, dict) and isinstance(value.get("output"), str):
        return [Msg("assistant", value["output"])]
    return [m for m in to_msgs(value, "assistant") if m.role == "assistant" and m.text]


def _add_tool(
    obs: dict[str, Any],
    when: int,
    done: int,
    rank: int,
    timeline: Timeline,
    pool: CallPool,
    who: str | None,
) -> None:
    name = str(obs.get("name") or "unknown")
    metadata: dict[str, Any] = m if isinstance(m := obs.get("metadata"), dict) else {}
    given = next((metadata[k] for k in CALL_ID_KEYS if metadata.get(k)), None)
    failed = obs.get("level") == "ERROR"
    output = obs.get("output")
    text = json_text(output) if output not in (None, "") else ""
    if failed and not text:
        text = str(obs.get("statusMessage") or "error")
    add_tool_step(
        timeline,
        pool,
        rank,
        who,
        call_at=when,
        result_at=done,
        given=given,
        fallback_id=str(obs.get("id") or f"{name}:{rank}"),
        name=name,
        args=parse_input(obs.get("input")),
        output=text,
        failed=failed,
    )


def _str(value: Any) -> str | None:
    return str(value) if value not in (None, "") else None


def _meta(traces: list[dict[str, Any]]) -> dict[str, Any]:
    meta: dict[str, Any] = {"trace_ids": [str(t["id"]) for t in traces if t.get("id")]}
    first = traces[0]
    for key in ("version", "release", "userId", "environment"):
        if first.get(key) not in (None, ""):
            meta[key] = first[key]
    prompts = {
        (str(o["promptName"]), json_text(o.get("promptVersion")))
        for t in traces
        for o in _observations(t)
        if o.get("promptName")
    }
    if prompts:
        meta["prompts"] = [{"name": n, "version": v} for n, v in sorted(prompts)]
    return meta
