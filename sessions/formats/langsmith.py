"""LangSmith run exports: ``{"runs": [...]}``, a list of runs, or one run per JSON line.

The runs of a trace share ``trace_id`` and are ordered by ``dotted_order``. Tool runs give the
tool steps; LLM runs the assistant text and the tool-call ids; retriever runs the documents they
returned, as context (a SYSTEM event); the root run the user's input and the final answer.
``run.session_id`` is the LangSmith project, not the conversation: the session is the thread
named in ``extra.metadata``, else the trace.
"""

from __future__ import annotations

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
    message_from,
    replay,
    retrieved_text,
    to_msgs,
    tool_registry,
    user_msgs,
)
from sessions.formats._otlp import nanos, nearest, parse_input, stamp
from sessions.formats.common import json_text, text_of
from sessions.formats.registry import adapter
from sessions.models import Session

FORMAT = "langsmith"
THREAD_KEYS = ("session_id", "thread_id", "conversation_id")
VERSION_KEYS = ("app_version", "version", "revision_id")


def _runs(data: Any) -> list[dict[str, Any]]:
    if isinstance(data, dict):
        data = data.get("runs")
    if not isinstance(data, list):
        return []
    return [r for r in data if isinstance(r, dict) and isinstance(r.get("run_type"), str)]


def sniff(doc: Document) -> bool:
    return any(
        ("id" in r or "trace_id" in r) and ("inputs" in r or "dotted_order" in r)
        for r in _runs(doc.data)
    )


@adapter(FORMAT, sniff=sniff, priority=40)
def parse(doc: Document) -> list[Session]:
    runs = _runs(doc.data)
    if not runs:
        raise MalformedSessionError(
            f"{doc.source}: no LangSmith runs (expected {{'runs': [...]}} or a list of runs "
            "with 'run_type')"
        )
    by_id = {str(r["id"]): r for r in runs if r.get("id")}
    traces: dict[str, list[dict[str, Any]]] = {}
    for run in runs:
        traces.setdefault(_trace_id(run, by_id), []).append(run)
    sessions: dict[str, list[list[dict[str, Any]]]] = {}
    for trace_id, members in traces.items():
        members = _ordered(members)
        sid = next((str(v) for r in members if (v := _pick(_metadata(r), THREAD_KEYS))), trace_id)
        sessions.setdefault(sid, []).append(members)
    return [_session(doc.source, sid, group) for sid, group in sessions.items()]


def _trace_id(run: dict[str, Any], by_id: dict[str, dict[str, Any]]) -> str:
    if run.get("trace_id"):
        return str(run["trace_id"])
    seen: set[str] = set()
    while run.get("parent_run_id") and str(run["parent_run_id"]) in by_id:
        if str(run["parent_run_id"]) in seen:
            break
        seen.add(str(run["parent_run_id"]))
        run = by_id[str(run["parent_run_id"])]
    return str(run.get("id") or "")


def _ordered(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # dotted_order is the tree in start order; without it, fall back to start times
    if all(isinstance(r.get("dotted_order"), str) for r in runs):
        return sorted(runs, key=lambda r: r["dotted_order"])
    return [
        r for _, r in sorted(enumerate(runs), key=lambda p: (nanos(p[1].get("start_time")), p[0]))
    ]


def _extra(run: dict[str, Any], key: str) -> dict[str, Any]:
    extra = run.get("extra")
    value = extra.get(key) if isinstance(extra, dict) else None
    return value if isinstance(value, dict) else {}


def _metadata(run: dict[str, Any]) -> dict[str, Any]:
    return _extra(run, "metadata")


def _pick(data: dict[str, Any], keys: tuple[str, ...]) -> Any:
    return next((data[k] for k in keys if data.get(k) not in (None, "")), None)


def _session(source: str, sid: str, traces: list[list[dict[str, Any]]]) -> Session:
    traces.sort(key=lambda t: nanos(t[0].get("start_time")))
    runs = [r for t in traces for r in t]
    timeline = Timeline()
    # one replay for the whole session: a later trace's input often repeats earlier turns
    replay([b for trace in traces for b in _add_trace(trace, timeline)], timeline)
    root = traces[0][0]
    llms = [r for r in runs if r.get("run_type") == "llm"]
    model = next(
        (
            str(m)
            for r in llms
            if (
                m := _pick(_metadata(r), ("ls_model_name",))
                or _pick(_extra(r, "invocation_params"), ("model", "model_name"))
            )
        ),
        None,
    )
    version = next((str(v) for r in runs if (v := _pick(_metadata(r), VERSION_KEYS))), None)
    starts = [n for r in runs if (n := nanos(r.get("start_time")))]
    meta: dict[str, Any] = {
        "trace_ids": sorted({str(t[0].get("trace_id") or t[0].get("id")) for t in traces})
    }
    project = root.get("session_id")
    if project:
        meta["project_id"] = str(project)  # LangSmith calls its projects sessions
    session = Session(
        id=sid,
        source=source,
        format=FORMAT,
        events=dedupe_calls(timeline.events()),
        agent=str(root["name"]) if root.get("name") else None,
        agent_version=version,
        model=model,
        started_at=stamp(min(starts)) if starts else None,
        registered_tools=tool_registry(_extra(r, "invocation_params").get("tools") for r in llms),
        sources=[source],
        meta=meta,
    )
    session.reindex()
    return session


def _add_trace(runs: list[dict[str, Any]], timeline: Timeline) -> list[Batch]:
    """Add the trace's tool steps to ``timeline``; return its messages for the session replay."""
    ids = {str(r.get("id")) for r in runs}
    root = next((r for r in runs if str(r.get("parent_run_id")) not in ids), runs[0])
    parent = {str(r.get("id")): _str(r.get("parent_run_id")) for r in runs}
    subagents = {
        str(r.get("id")): str(r.get("name"))
        for r in runs
        if _metadata(r).get("ls_agent_type") == "subagent"
    }
    has_tools = any(r.get("run_type") == "tool" for r in runs)
    late = len(runs) + 1  # the root's output repeats the last reply: rank it after everything
    start = nanos(root.get("start_time"))
    batches = [Batch(start, -1, user_msgs(root.get("inputs")), fresh=False)]
    pool = CallPool()
    for rank, run in enumerate(runs):
        who = nearest(str(run.get("id")), parent, subagents)
        when = nanos(run.get("start_time"))
        done = nanos(run.get("end_time")) or when
        if run.get("run_type") == "llm":
            outputs = _llm_output(run.get("outputs"))
            pool.add(outputs)
            batches.append(Batch(done, rank, outputs, fresh=True, subagent=who))
            if not has_tools:  # rebuild tool results from the history the next call was sent
                results = [m for m in to_msgs(run.get("inputs")) if m.role == "tool"]
                batches.append(Batch(when, rank, results, fresh=False, subagent=who))
        elif run.get("run_type") == "tool":
            _add_tool(run, when, done, rank, timeline, pool, who)
        elif run.get("run_type") == "retriever":
            text = retrieved_text(run.get("outputs"))
            add_retrieval(timeline, done, rank, run.get("name"), text, who)
    final = root.get("outputs")
    replies = [m for m in to_msgs(final, "assistant") if m.role == "assistant" and m.text]
    if isinstance(final, dict) and isinstance(final.get("output"), str):
        replies = [Msg("assistant", final["output"])]  # AgentExecutor's final answer
    # The final answer comes after everything the root ran, even when the export lacks end times
    # (a run still open, a partial export): the latest end or start of any run of the trace.
    end = max(nanos(r.get("end_time")) or nanos(r.get("start_time")) for r in runs)
    batches.append(Batch(end, late, replies, fresh=False))
    for batch in batches:
        batch.calls = not has_tools
    return batches


def _llm_output(outputs: Any) -> list[Msg]:
    """``generations[][]`` (LangChain), ``choices[]`` (OpenAI-native) or a message itself."""
    if not isinstance(outputs, dict):
        return to_msgs(outputs, "assistant")
    generations = outputs.get("generations")
    if isinstance(generations, list):
        msgs = []
        for batch in generations:
            for gen in batch if isinstance(batch, list) else [batch]:
                if not isinstance(gen, dict):
                    continue
                msg = (
                    message_from(gen.get("message"), "assistant")
                    if gen.get("message")
                    else message_from(str(gen.get("text") or ""), "assistant")
                )
                if msg is not None:
                    msgs.append(msg)
        return msgs
    if isinstance(outputs.get("choices"), list):
        return to_msgs(outputs["choices"], "assistant")
    return to_msgs(outputs, "assistant")


def _add_tool(
    run: dict[str, Any],
    when: int,
    done: int,
    rank: int,
    timeline: Timeline,
    pool: CallPool,
    who: str | None,
) -> None:
    name = str(run.get("name") or "unknown")
    inputs = run.get("inputs")
    # LangChain records a tool's input as {"input": <str>}; other tracers pass the arguments
    raw = inputs["input"] if isinstance(inputs, dict) and set(inputs) == {"input"} else inputs
    output = run.get("outputs")
    if isinstance(output, dict) and set(output) == {"output"}:
        output = output["output"]
    message = _tool_message(output)
    given = message.get("tool_call_id")
    text = text_of(message.get("content")) if message else json_text(output)
    failed = (
        run.get("error") not in (None, "")
        or run.get("status") == "error"
        or message.get("status") == "error"
    )
    if failed and not text:
        text = str(run.get("error") or "error")
    add_tool_step(
        timeline,
        pool,
        rank,
        who,
        call_at=when,
        result_at=done,
        given=given,
        fallback_id=str(run.get("id") or f"{name}:{rank}"),
        name=name,
        args=parse_input(raw),
        output=text,
        failed=failed,
    )


def _tool_message(output: Any) -> dict[str, Any]:
    """A ToolMessage, serialised (``{"lc": 1, "kwargs": {...}}``) or as a plain dict."""
    if not isinstance(output, dict):
        return {}
    if output.get("lc") and isinstance(output.get("kwargs"), dict):
        output = output["kwargs"]
    return output if output.get("type") == "tool" or "tool_call_id" in output else {}


def _str(value: Any) -> str | None:
    return str(value) if value not in (None, "") else None
