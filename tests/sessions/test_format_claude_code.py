"""The Claude Code adapter on real transcripts (spotter, reliability) and the spec's examples.

Expectations are computed from the raw JSON lines in each test, independently of the adapter.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from tests_support import SHARED, only, shared_document, shared_path

from sessions.documents import Document, parse_bytes
from sessions.errors import MalformedSessionError
from sessions.formats import claude_code as cc
from sessions.formats.registry import get_adapter
from sessions.models import Event, EventKind, Session

SPOTTER = "corpus/claude_code/spotter"
EXAMPLES = "formats/examples"
SUBAGENT_EXAMPLE = f"{EXAMPLES}/claude_code_subagent"
SUBAGENT_FILE = "e24635d4-d3e2-43c4-bc82-377e6ce6b8c3/subagents/agent-a96cf8a57447af436.jsonl"


def _relative(pattern: str) -> list[str]:
    return sorted(str(p.relative_to(SHARED)) for p in SHARED.glob(pattern))


ALL_FILES = (
    _relative(f"{SPOTTER}/*.jsonl")
    + _relative("corpus/claude_code/reliability/*__transcript.jsonl")
    + _relative(f"{EXAMPLES}/claude_code_*.jsonl")
    + _relative(f"{SUBAGENT_EXAMPLE}/**/*.jsonl")
)
RELIABILITY = _relative("corpus/claude_code/reliability/*__transcript.jsonl")
COMPACTION = _relative(f"{SPOTTER}/*agent-acompact-*.jsonl")
MAIN_WITH_SUBAGENTS = [
    "4d5611e5-241a-462a-8d15-5122611a9569",
    "8463c716-a2ea-4c14-9efa-87158ebd9f20",
    "ae4a77f8-aedd-4bc1-888f-c94edc91af04",
]


def parse_one(relative: str) -> Session:
    return only(list(cc.parse(shared_document(relative))))


def raw_lines(relative: str) -> list[dict[str, Any]]:
    text = shared_path(relative).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def content_blocks(line: dict[str, Any]) -> list[dict[str, Any]]:
    content = (line.get("message") or {}).get("content")
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def raw_tool_use_ids(relative: str) -> list[str]:
    return [
        block["id"]
        for line in raw_lines(relative)
        if line.get("type") == "assistant"
        for block in content_blocks(line)
        if block.get("type") == "tool_use"
    ]


def inline(lines: list[Any]) -> Session:
    sessions = list(cc.parse(Document("inline.jsonl", lines, jsonl=True)))
    assert len(sessions) == 1
    return sessions[0]


def envelope(kind: str, content: Any, **extra: Any) -> dict[str, Any]:
    line = {
        "type": kind,
        "sessionId": "s1",
        "timestamp": "2026-02-01T10:00:00Z",
        "message": {"role": kind, "content": content},
    }
    line.update(extra)
    return line


def test_adapter_is_registered_with_its_link_step() -> None:
    registered = get_adapter("claude_code")
    assert registered.priority == 10
    assert registered.link is cc.link_subagents
    assert registered.sniff(shared_document(f"{SPOTTER}/short.jsonl"))


@pytest.mark.parametrize("relative", ALL_FILES)
def test_sniff_claims_every_claude_code_file(relative: str) -> None:
    assert cc.sniff(shared_document(relative))


def test_sniff_rejects_other_shapes() -> None:
    chat = [{"messages": [{"role": "user", "content": "hi"}], "type": "user", "sessionId": "x"}]
    assert not cc.sniff(Document("chat.jsonl", chat, jsonl=True))
    plain = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]
    assert not cc.sniff(Document("plain.jsonl", plain, jsonl=True))
    meta = shared_document(f"{SUBAGENT_EXAMPLE}/{SUBAGENT_FILE.replace('.jsonl', '.meta.json')}")
    assert not meta.jsonl and not cc.sniff(meta)


def test_split_assistant_lines_become_one_response() -> None:
    session = parse_one(f"{EXAMPLES}/claude_code_session.jsonl")
    kinds = [e.kind for e in session.events]
    assert kinds == [
        EventKind.USER,
        EventKind.ASSISTANT,
        EventKind.TOOL_CALL,
        EventKind.TOOL_RESULT,
        EventKind.TOOL_CALL,
        EventKind.TOOL_RESULT,
        EventKind.ASSISTANT,
    ]
    text, call = session.events[1], session.events[2]
    assert text.meta["response"] == call.meta["response"] == "msg_01LkFf6TEM2cX5xngiCiACE3"
    assert [e.index for e in session.events] == list(range(len(session.events)))
    assert session.id == "e24635d4-d3e2-43c4-bc82-377e6ce6b8c3"
    assert (session.agent, session.agent_version, session.model) == (
        "claude-code",
        "2.1.89",
        "claude-opus-4-6",
    )
    assert session.started_at is not None and session.started_at.isoformat().startswith(
        "2026-04-01T13:13:31.823"
    )
    assert session.registered_tools is None
    assert session.sources == [session.source]


def test_parallel_calls_precede_results_written_between_their_lines() -> None:
    relative = f"{SPOTTER}/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl"
    lines = raw_lines(relative)
    # Find a response whose lines have a tool_result line written between them.
    first_seen: dict[str, int] = {}
    interleaved: set[str] = set()
    last_result_line = -1
    for i, line in enumerate(lines):
        if line.get("type") == "user" and any(
            b.get("type") == "tool_result" for b in content_blocks(line)
        ):
            last_result_line = i
        if line.get("type") == "assistant":
            msg_id = line["message"]["id"]
            if msg_id in first_seen and last_result_line > first_seen[msg_id]:
                interleaved.add(msg_id)
            first_seen.setdefault(msg_id, i)
    assert interleaved, "the corpus file should hold interleaved split responses"

    session = parse_one(relative)
    positions: dict[str, list[int]] = {}
    for event in session.events:
        if "response" in event.meta:
            positions.setdefault(event.meta["response"], []).append(event.index)
    for msg_id in interleaved:
        span = positions[msg_id]
        assert span == list(range(span[0], span[-1] + 1)), msg_id
    call_at = {e.call_id: e.index for e in session.tool_calls()}
    for event in session.events:
        if event.kind is EventKind.TOOL_RESULT:
            assert call_at[event.call_id] < event.index


def test_tool_errors_in_the_example() -> None:
    session = parse_one(f"{EXAMPLES}/claude_code_session.jsonl")
    failed, succeeded = (e for e in session.events if e.kind is EventKind.TOOL_RESULT)
    assert failed.call_id == "toolu_01VSrUFrHurzbCeSEyHQk9mb"
    assert failed.is_error and "File does not exist." in failed.output
    assert not failed.error_inferred
    assert not succeeded.is_error and "port: 8080" in succeeded.output


def test_error_signals_without_the_flag() -> None:
    session = inline(
        [
            envelope(
                "user",
                [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": "<tool_use_error>File does not exist.</tool_use_error>",
                    }
                ],
            ),
            envelope(
                "user",
                [{"type": "tool_result", "tool_use_id": "t2", "content": "boom"}],
                toolUseResult="Error: Exit code 1\nboom",
            ),
            envelope(
                "user",
                [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t3",
                        "is_error": False,
                        "content": [{"type": "text", "text": "Error: in the file text"}],
                    }
                ],
                toolUseResult={"stdout": "Error: in the file text", "stderr": ""},
            ),
        ]
    )
    flags = {e.call_id: e.is_error for e in session.events}
    assert flags == {"t1": True, "t2": True, "t3": False}


@pytest.mark.parametrize("relative", _relative(f"{SPOTTER}/*.jsonl"))
def test_error_flags_match_the_raw_lines(relative: str) -> None:
    expected = set()
    for line in raw_lines(relative):
        if line.get("type") != "user":
            continue
        results = [b for b in content_blocks(line) if b.get("type") == "tool_result"]
        side = line.get("toolUseResult")
        for block in results:
            wrapped = str(block.get("content")).startswith("<tool_use_error>")
            string_error = len(results) == 1 and isinstance(side, str) and side.startswith("Error:")
            if block.get("is_error") is True or wrapped or string_error:
                expected.add(block["tool_use_id"])
    session = parse_one(relative)
    flagged = {
        e.call_id for e in _own(session.events) if e.kind is EventKind.TOOL_RESULT and e.is_error
    }
    assert flagged == expected


def test_corpus_error_count() -> None:
    shared_path(SPOTTER)
    # The corpus README counts 44 is_error results in the spotter files (the examples excluded).
    flagged = sum(
        1
        for relative in _relative(f"{SPOTTER}/*.jsonl")
        for e in _own(parse_one(relative).events)
        if e.kind is EventKind.TOOL_RESULT and e.is_error
    )
    assert flagged == 44


@pytest.mark.parametrize("relative", ALL_FILES)
def test_each_tool_call_is_counted_once(relative: str) -> None:
    expected = raw_tool_use_ids(relative)  # only type=assistant lines: progress lines excluded
    everything = parse_one(relative).tool_calls()
    calls = _own(everything)  # the file's own, not its sub-agents' copied from progress lines
    assert len(everything) == len({c.call_id for c in everything})
    assert len(calls) == len(set(expected))
    assert {c.call_id for c in calls} == set(expected)
    assert all(c.name for c in calls)


def test_progress_mirrors_stand_in_for_the_subagent_file_until_it_is_linked() -> None:
    relative = f"{SPOTTER}/subagent.jsonl"
    mirrored = {
        block["id"]
        for line in raw_lines(relative)
        if line.get("type") == "progress" and line["data"].get("type") == "agent_progress"
        for block in content_blocks(line["data"]["message"])
        if block.get("type") == "tool_use"
    }
    assert mirrored
    session = parse_one(relative)
    copies = [e for e in session.events if e.meta.get("mirrored")]
    # Read alone, the main file holds its sub-agent's calls and results (never its text) ...
    assert {e.call_id for e in copies if e.kind is EventKind.TOOL_CALL} == mirrored
    assert {e.kind for e in copies} == {EventKind.TOOL_CALL, EventKind.TOOL_RESULT}
    assert {e.subagent for e in copies} == {"afb92ff"}
    assert session.meta["subagent_calls"] == {"afb92ff": "toolu_01Cz2Pnv7qNcnK1ZiocxWhQX"}
    assert session.meta["subagent_types"] == {"afb92ff": "Plan"}


def _own(events: list[Event]) -> list[Event]:
    """The events a file's own lines make (not its sub-agents' copied from progress lines)."""
    return [e for e in events if not e.meta.get("mirrored")]


def test_thinking_is_not_a_reply() -> None:
    relative = f"{SPOTTER}/short.jsonl"
    thoughts = [
        block["thinking"]
        for line in raw_lines(relative)
        if line.get("type") == "assistant"
        for block in content_blocks(line)
        if block.get("type") == "thinking" and block.get("thinking")
    ]
    assert thoughts
    texts = [e.text for e in parse_one(relative).events]
    assert not any(t in texts for t in thoughts)


def test_harness_text_is_marked_synthetic() -> None:
    session = parse_one(f"{SPOTTER}/tool_heavy.jsonl")
    users = [e for e in session.events if e.kind is EventKind.USER]
    synthetic = {e.text.strip()[:24] for e in users if e.meta.get("synthetic")}
    human = [e.text for e in users if not e.meta.get("synthetic")]
    assert human == [
        "start phoenix in background",
        "scrolling back in xterm.js still does not work (maybe because outer web catches it)? "
        "websearch xterm.js tmux interactions",
    ]
    assert synthetic == {
        "<command-name>/mcp</comm",
        "<local-command-stdout>Re",
        "[Request interrupted by ",
        "<local-command-caveat>Ca",
    }


def test_system_reminder_only_messages_are_synthetic() -> None:
    session = inline(
        [
            envelope("user", "<system-reminder>\nhook output\n</system-reminder>"),
            envelope("user", "<system-reminder>x</system-reminder> now fix the bug"),
            envelope("user", "<task-notification>\n<task-id>b1</task-id>\n</task-notification>"),
        ]
    )
    assert [bool(e.meta.get("synthetic")) for e in session.events] == [True, False, True]


def test_compaction_summary_and_boundary_in_the_main_file() -> None:
    session = parse_one(f"{SPOTTER}/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl")
    summaries = [e for e in session.events if e.kind is EventKind.USER and e.meta.get("compaction")]
    assert len(summaries) == 1
    assert summaries[0].text.startswith("This session is being continued")
    assert summaries[0].meta.get("synthetic")
    boundary = [e for e in session.events if e.meta.get("boundary")]
    assert len(boundary) == 1 and boundary[0].kind is EventKind.SYSTEM
    assert boundary[0].index == summaries[0].index - 1


@pytest.mark.parametrize("relative", COMPACTION)
def test_compaction_files_are_marked(relative: str) -> None:
    agent = next(line["agentId"] for line in raw_lines(relative))
    session = parse_one(relative)
    assert session.meta == {
        "sidechain": True,
        "agent_id": agent,
        "compaction": True,
        "parent_session_id": session.id.split(":")[0],
    }
    assert session.id.endswith(f":{agent}")
    assert session.events and all(e.meta.get("compaction") for e in session.events)
    assert all(e.subagent == agent for e in session.events)
    assert all(e.meta.get("synthetic") for e in session.events if e.kind is EventKind.USER)
    assert session.replies()[-1].text.lstrip().startswith("<analysis>")


def test_example_subagent_is_linked_after_its_spawning_call() -> None:
    parent = parse_one(f"{SUBAGENT_EXAMPLE}/parent_lines.jsonl")
    child = parse_one(f"{SUBAGENT_EXAMPLE}/{SUBAGENT_FILE}")
    assert child.meta["sidechain"] and child.meta["agent_id"] == "a96cf8a57447af436"
    linked = cc.link_subagents([child, parent])
    assert linked == [parent]
    session = linked[0]
    assert session.id == "e24635d4-d3e2-43c4-bc82-377e6ce6b8c3"
    spawn = next(e for e in session.events if e.name == "Agent")
    assert spawn.call_id == "toolu_01Q3g2QgvKmHqJZ3XMPgmJJ5"
    after = session.events[spawn.index + 1 : spawn.index + 1 + len(child.events)]
    assert [e.subagent for e in after] == ["a96cf8a57447af436"] * len(child.events)
    assert after[0].kind is EventKind.USER
    assert after[0].text == "Find every place that reads the port setting."
    assert all(e.meta.get("subagent_type") == "Explore" for e in after)
    result = next(
        e for e in session.events if e.kind is EventKind.TOOL_RESULT and e.call_id == spawn.call_id
    )
    assert result.index == spawn.index + 1 + len(child.events)
    assert [e.index for e in session.events] == list(range(len(session.events)))
    assert {c.call_id for c in session.tool_calls()} == {
        "toolu_01Q3g2QgvKmHqJZ3XMPgmJJ5",
        "toolu_01SubGrep00000000000001",
    }
    assert len(session.sources) == 2 and session.sources[0] == session.source


def _spawn_of(relative: str) -> tuple[str, str]:
    for line in raw_lines(relative):
        extra = line.get("toolUseResult")
        if line.get("type") == "user" and isinstance(extra, dict) and "agentId" in extra:
            return extra["agentId"], content_blocks(line)[0]["tool_use_id"]
    raise AssertionError(f"no spawned agent in {relative}")


@pytest.mark.parametrize("stem", MAIN_WITH_SUBAGENTS)
def test_spotter_session_links_its_subagent_and_compaction(stem: str) -> None:
    main_file = f"{SPOTTER}/{stem}.jsonl"
    shared_path(main_file)
    side_files = _relative(f"{SPOTTER}/{stem}__subagents__*.jsonl")
    assert len(side_files) == 2
    agent, spawn_call = _spawn_of(main_file)
    sessions = [parse_one(main_file)] + [parse_one(f) for f in side_files]
    child_sizes = {s.meta["agent_id"]: len(s.events) for s in sessions[1:]}
    # The progress lines' copies of the sub-agents' calls give way to the sub-agents' files.
    total = sum(len(_own(s.events)) for s in sessions)
    assert len(_own(sessions[0].events)) < len(sessions[0].events)

    linked = cc.link_subagents(sessions)
    assert len(linked) == 1
    session = linked[0]
    assert session.id == stem and len(session.events) == total
    assert len(session.sources) == 3

    expected = [i for f in [main_file, *side_files] for i in raw_tool_use_ids(f)]
    call_ids = [c.call_id for c in session.tool_calls()]
    assert len(call_ids) == len(set(call_ids)) == len(set(expected))
    assert set(call_ids) == set(expected)

    spawn = next(e for e in session.tool_calls() if e.call_id == spawn_call)
    block = session.events[spawn.index + 1 : spawn.index + 1 + child_sizes[agent]]
    assert all(e.subagent == agent for e in block)
    assert sum(1 for e in session.events if e.subagent == agent) == child_sizes[agent]

    compaction = [e for e in session.events if e.subagent and e.subagent.startswith("acompact")]
    assert compaction and all(e.meta.get("compaction") for e in compaction)
    boundary = next(e for e in session.events if e.meta.get("boundary"))
    # The compaction fork ends just before the boundary it produced.
    assert compaction[-1].index == boundary.index - 1
    assert [e.index for e in session.events] == list(range(len(session.events)))


ORPHAN = "6c2214d7-b87e-4432-8e41-22ba294ea584"


def test_orphan_subagent_files_stay_their_own_sessions() -> None:
    lone = parse_one(f"{SPOTTER}/{ORPHAN}__subagents__agent-afc096d.jsonl")
    assert cc.link_subagents([lone]) == [lone]
    assert lone.id == f"{ORPHAN}:afc096d"
    assert lone.meta["sidechain"] and not lone.meta["compaction"]
    assert all(e.subagent == "afc096d" for e in lone.events)

    group = [parse_one(f) for f in _relative(f"{SPOTTER}/fa812bfe-*__subagents__*.jsonl")]
    linked = cc.link_subagents(group)
    assert len(linked) == 3
    agents = ("a93ccab", "aa84377", "acompact-70d8e7")
    parent = "fa812bfe-b295-4cca-9c2f-fdf01028cb46"
    assert sorted(s.id for s in linked) == [f"{parent}:{a}" for a in agents]


def test_stream_json_init_tools_become_registered_tools() -> None:
    relative = f"{EXAMPLES}/claude_code_stream_json.jsonl"
    init = raw_lines(relative)[0]
    session = parse_one(relative)
    assert session.registered_tools is not None
    assert session.registered_tools.names == frozenset(init["tools"])
    assert session.registered_tools.source == "session"
    assert "mcp__github__get_issue" in session.registered_tools
    assert "mcp__github__delete_repo" not in session.registered_tools
    assert (session.id, session.agent_version) == (init["session_id"], "2.1.89")
    final = raw_lines(relative)[-1]["result"]
    assert [e.text for e in session.replies()] == [final]  # the result line is not repeated


def test_stream_json_result_and_deferred_tools() -> None:
    lines: list[Any] = [
        {
            "type": "system",
            "subtype": "init",
            "session_id": "s2",
            "tools": ["Read"],
            "model": "claude-sonnet-4-5",
            "claude_code_version": "2.1.100",
        },
        {
            "type": "attachment",
            "sessionId": "s2",
            "parentUuid": None,
            "attachment": {
                "type": "deferred_tools_delta",
                "addedNames": ["WebFetch"],
                "removedNames": [],
            },
        },
        {
            "type": "assistant",
            "session_id": "s2",
            "parent_tool_use_id": None,
            "message": {
                "id": "m1",
                "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": "Looking."}],
            },
        },
        {"type": "result", "subtype": "success", "session_id": "s2", "result": "Done: 3 files."},
    ]
    session = inline(lines)
    assert session.registered_tools is not None
    assert session.registered_tools.names == frozenset({"Read", "WebFetch"})
    assert [e.text for e in session.replies()] == ["Looking.", "Done: 3 files."]
    assert session.events[-1].meta == {"final_result": True}


def test_api_errors_are_not_replies() -> None:
    session = inline(
        [
            envelope("user", "hello"),
            envelope(
                "assistant",
                None,
                isApiErrorMessage=True,
                message={
                    "model": "<synthetic>",
                    "id": "x",
                    "content": [{"type": "text", "text": "API Error: 529 Overloaded"}],
                },
            ),
            envelope(
                "assistant",
                None,
                message={
                    "model": "claude-opus-4-6",
                    "id": "m2",
                    "content": [{"type": "text", "text": "Hi!"}],
                },
            ),
        ]
    )
    kinds = [e.kind for e in session.events]
    assert kinds == [EventKind.USER, EventKind.SYSTEM, EventKind.ASSISTANT]
    assert session.events[1].text == "API Error: 529 Overloaded"
    assert session.events[1].meta.get("api_error")
    assert [e.text for e in session.replies()] == ["Hi!"]
    assert session.model == "claude-opus-4-6"


def test_odd_lines_are_skipped_not_fatal() -> None:
    session = inline(
        [
            "not an object",
            42,
            {"type": "mystery", "sessionId": "s1"},
            {"type": "summary", "summary": "s", "leafUuid": "u"},
            envelope("user", 17),
            envelope("assistant", None, message="just a string"),
            envelope(
                "assistant", None, message={"id": "m", "content": [None, 3, {"type": "tool_use"}]}
            ),
            envelope("user", [{"type": "tool_result", "tool_use_id": "t", "content": {"odd": 1}}]),
            envelope("user", [{"type": "image", "source": {}}, "plain part"]),
        ]
    )
    assert session.id == "s1"
    assert session.warnings and "2 line(s)" in session.warnings[0]
    kinds = [e.kind for e in session.events]
    assert kinds == [
        EventKind.USER,
        EventKind.ASSISTANT,
        EventKind.TOOL_CALL,
        EventKind.TOOL_RESULT,
        EventKind.USER,
    ]
    assert session.events[0].text == "17"
    assert session.events[1].text == "just a string"
    assert session.events[2].call_id is None and session.events[2].name is None
    assert session.events[3].output == '{"odd":1}'
    assert session.events[4].text == "[image]\nplain part"


@pytest.mark.parametrize("relative", RELIABILITY)
def test_reliability_transcripts_parse(relative: str) -> None:
    lines = raw_lines(relative)
    session_id = next(line["sessionId"] for line in lines if "sessionId" in line)
    session = parse_one(relative)
    assert session.id == session_id and session.format == "claude_code"
    assert session.agent_version == "2.1.14"
    assert session.model == "claude-opus-4-5-20251101"
    assert session.replies()
    prompts = [e for e in session.events if e.kind is EventKind.USER]
    assert prompts and not prompts[0].meta.get("synthetic")
    meta_texts = {
        line["message"]["content"] if isinstance(line["message"]["content"], str) else None
        for line in lines
        if line.get("isMeta")
    }
    for event in prompts:
        if event.text in meta_texts:
            assert event.meta.get("synthetic")


def test_repeated_lines_and_calls_count_once() -> None:
    call = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}
    first = envelope(
        "assistant",
        None,
        uuid="u1",
        requestId="r1",
        message={
            "id": "m1",
            "model": "claude-opus-4-6",
            "content": [{"type": "text", "text": "Listing."}, call],
        },
    )
    # The same call again on a line with another uuid and response (as a resumed session
    # may rewrite it), and the first line written twice.
    again = envelope(
        "assistant",
        None,
        uuid="u2",
        requestId="r2",
        message={"id": "m2", "model": "claude-opus-4-6", "content": [call]},
    )
    result = envelope(
        "user", [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a"}], uuid="u3"
    )
    session = inline([first, first, result, again, dict(result, uuid="u4")])
    kinds = [e.kind for e in session.events]
    assert kinds == [EventKind.ASSISTANT, EventKind.TOOL_CALL, EventKind.TOOL_RESULT]


def test_spawn_known_only_from_progress_lines() -> None:
    # A background agent: no tool result names it yet, only the parent's progress lines do.
    spawn = {
        "type": "tool_use",
        "id": "toolu_spawn",
        "name": "Task",
        "input": {"subagent_type": "Explore", "prompt": "look", "run_in_background": True},
    }
    parent = inline(
        [
            envelope("user", "go", timestamp="2026-02-01T10:00:00Z"),
            envelope(
                "assistant",
                None,
                timestamp="2026-02-01T10:00:01Z",
                message={"id": "m1", "model": "claude-opus-4-6", "content": [spawn]},
            ),
            {
                "type": "progress",
                "sessionId": "s1",
                "parentToolUseID": "toolu_spawn",
                "toolUseID": "agent_msg_1",
                "data": {
                    "type": "agent_progress",
                    "agentId": "abc1234",
                    "message": {"type": "assistant"},
                },
            },
            envelope(
                "assistant",
                None,
                timestamp="2026-02-01T10:00:02Z",
                message={
                    "id": "m2",
                    "model": "claude-opus-4-6",
                    "content": [{"type": "text", "text": "Waiting."}],
                },
            ),
        ]
    )
    assert parent.meta["subagent_calls"] == {"abc1234": "toolu_spawn"}
    assert parent.meta["subagent_types"] == {"abc1234": "Explore"}
    # Stamped after "Waiting.": only the spawn link can place it right after the call.
    child = inline(
        [
            envelope(
                "user",
                "look",
                isSidechain=True,
                agentId="abc1234",
                timestamp="2026-02-01T10:00:05Z",
            )
        ]
    )
    [session] = cc.link_subagents([parent, child])
    assert [(e.kind, e.subagent) for e in session.events] == [
        (EventKind.USER, None),
        (EventKind.TOOL_CALL, None),
        (EventKind.USER, "abc1234"),
        (EventKind.ASSISTANT, None),
    ]
    assert session.events[2].meta == {"subagent_type": "Explore"}


def test_stream_json_errors_are_system_events() -> None:
    session = inline(
        [
            {
                "type": "assistant",
                "session_id": "s3",
                "error": "rate_limit",
                "message": {
                    "id": "m1",
                    "model": "<synthetic>",
                    "content": [{"type": "text", "text": "API Error: Rate limit reached"}],
                },
            },
            {
                "type": "result",
                "subtype": "error_max_turns",
                "session_id": "s3",
                "is_error": True,
                "errors": ["Reached maximum number of turns (3)"],
            },
        ]
    )
    assert [e.kind for e in session.events] == [EventKind.SYSTEM, EventKind.SYSTEM]
    assert session.events[0].meta == {"synthetic": True, "api_error": True}
    assert session.events[1].text == "Reached maximum number of turns (3)"
    assert session.events[1].meta["result_subtype"] == "error_max_turns"
    assert not session.replies() and session.model is None


# --- read from bytes: what is skipped or decoded in part reads as decoding every line whole ---


def _project_line(kind: str, uuid: str, body: dict[str, Any], **after: Any) -> dict[str, Any]:
    """A project-file line with the members in the order Claude Code writes them."""
    line: dict[str, Any] = {
        "parentUuid": None,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/u/app",
        "sessionId": "s-bytes",
        "version": "2.1.39",
        "gitBranch": "main",
        "slug": "plain-test-slug",
        "type": kind,
    }
    line.update(body)
    line.update(uuid=uuid, timestamp=f"2026-02-01T10:00:{len(uuid):02d}Z")
    line.update(after)
    return line


def _result(uuid: str, call_id: str, output: str, side: Any, **after: Any) -> dict[str, Any]:
    block = {"tool_use_id": call_id, "type": "tool_result", "content": output}
    body = {"message": {"role": "user", "content": [block]}}
    return _project_line("user", uuid, body, toolUseResult=side, **after)


def _call(uuid: str, call_id: str, name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    block = {"type": "tool_use", "id": call_id, "name": name, "input": tool_input}
    message = {"id": f"msg_{uuid}", "model": "claude-opus-4-6", "content": [block]}
    return _project_line("assistant", uuid, {"message": message}, requestId=f"req_{uuid}")


def _hook(uuid: str, parent: str) -> dict[str, Any]:
    data = {"type": "hook_progress", "hookEvent": "PostToolUse", "hookName": "PostToolUse:Bash"}
    return _project_line("progress", uuid, {"data": data, "parentToolUseID": parent})


def _both_ways(lines: list[dict[str, Any]]) -> tuple[Session, Session]:
    """The session read from the file's bytes, and from every line decoded up front."""
    body = b"".join(json.dumps(line, ensure_ascii=False).encode() + b"\n" for line in lines)
    body = body.replace(b'": ', b'":').replace(b", ", b",")  # written compactly, as the CLI does
    from_bytes = only(list(cc.parse(parse_bytes("s-bytes.jsonl", body))))
    decoded = [json.loads(line) for line in body.splitlines()]
    return from_bytes, only(list(cc.parse(Document("s-bytes.jsonl", decoded, jsonl=True))))


def _shape(session: Session) -> list[Any]:
    events = [
        (e.kind, e.text, e.call_id, e.name, e.input, e.output, e.is_error, e.subagent, e.meta)
        for e in session.events
    ]
    return [session.id, session.agent_version, session.started_at, session.meta, events]


LONG = "x" * 3000  # long enough that a line is first decoded without its toolUseResult


def test_long_result_lines_read_as_if_decoded_whole() -> None:
    spawn = {"subagent_type": "Explore", "prompt": "look around"}
    lines = [
        _project_line("user", "u-1", {"message": {"role": "user", "content": "fix it"}}),
        _call("a-1", "toolu_b1", "Bash", {"command": "make test"}),
        _result(
            "r-1", "toolu_b1", LONG, {"stdout": LONG, "stderr": ""}, sourceToolAssistantUUID="a-1"
        ),
        _call("a-2", "toolu_b2", "Bash", {"command": "make lint"}),
        # A string toolUseResult is an error signal: read though the value was cut.
        _result(
            "r-2", "toolu_b2", LONG, f"Error: Exit code 2\n{LONG}", sourceToolAssistantUUID="a-2"
        ),
        _call("a-3", "toolu_t1", "Task", spawn),
        # A spawn's toolUseResult names the sub-agent: read for spawning calls.
        _result(
            "r-3",
            "toolu_t1",
            LONG,
            {"agentId": "a77", "agentType": "Explore", "content": [{"type": "text", "text": LONG}]},
            sourceToolAssistantUUID="a-3",
        ),
        _call("a-4", "toolu_m1", "mcp__db__query", {"sql": "select 1"}),
        # An object member after the value, and the key itself nested inside the value.
        _result(
            "r-4",
            "toolu_m1",
            LONG + ',"toolUseResult":"Error: quoted, not a member"',
            {"rows": [{"toolUseResult": "Error: nested"}], "note": LONG},
            mcpMeta={"server": "db", "nested": {"isSidechain": True}},
            sourceToolAssistantUUID="a-4",
        ),
        _call("a-5", "toolu_b3", "Bash", {"command": "true"}),
        _result("r-5", "toolu_b3", LONG, "Error: " + LONG, mcpMeta={"k": [1]}, last=True),
    ]
    from_bytes, decoded = _both_ways(lines)
    assert _shape(from_bytes) == _shape(decoded)
    errors = {
        e.call_id for e in from_bytes.events if e.kind is EventKind.TOOL_RESULT and e.is_error
    }
    assert errors == {"toolu_b2", "toolu_b3"}
    assert from_bytes.meta["subagent_calls"] == {"a77": "toolu_t1"}
    assert from_bytes.meta["subagent_types"] == {"a77": "Explore"}


def test_progress_lines_skipped_unread_change_nothing() -> None:
    agent = _project_line(
        "progress",
        "p-agent",
        {"data": {"type": "agent_progress", "agentId": "a88"}, "parentToolUseID": "toolu_t1"},
    )
    other_session = dict(_hook("p-other", "toolu_b1"), sessionId="s-elsewhere")
    nested = _project_line(
        "progress", "p-nested", {"data": {"type": "hook_progress"}, "toolUseResult": {"a": 1}}
    )
    # Its data's type, written first, settles it: the output naming another type changes nothing.
    shell = _project_line(
        "progress",
        "p-shell",
        {"data": {"type": "bash_progress", "output": '"agent_progress" a99'}, "agentId": "a99"},
    )
    lines = [
        _project_line("user", "u-1", {"message": {"role": "user", "content": "go"}}),
        _call("a-1", "toolu_t1", "Task", {"subagent_type": "Plan", "prompt": "plan"}),
        _hook("p-1", "toolu_t1"),
        _hook("p-2", "toolu_t1"),
        _hook("p-2", "toolu_t1"),  # written twice
        agent,  # says which call spawned a88: always read
        other_session,  # another session's id: read, so it is counted
        nested,
        shell,
        _result("r-1", "toolu_t1", "done", {"status": "completed"}),
        _hook("p-3", "toolu_t1"),  # the last line: always decoded
    ]
    from_bytes, decoded = _both_ways(lines)
    assert _shape(from_bytes) == _shape(decoded)
    assert from_bytes.meta["subagent_calls"] == {"a88": "toolu_t1"}
    assert from_bytes.warnings == decoded.warnings == ["lines name 2 session ids; kept s-bytes"]


@pytest.mark.parametrize(
    "spell",
    [
        pytest.param(lambda body: body.replace(b"\n", b"\r\n"), id="crlf"),
        pytest.param(lambda body: body.replace(b"\n", b"\n\n  \n"), id="blank-lines"),
        pytest.param(
            lambda body: body.replace(b'\n{"type":"progress"', b'\n {"type":"progress"'),
            id="indented-progress",
        ),
        pytest.param(lambda body: body.rstrip(b"\n"), id="no-final-newline"),
    ],
)
def test_lines_found_in_the_body_read_as_if_split_and_decoded(spell: Any) -> None:
    lines = [
        _project_line("user", "u-1", {"message": {"role": "user", "content": "go"}}),
        _call("a-1", "toolu_t1", "Task", {"subagent_type": "Plan", "prompt": "plan"}),
        _hook("p-1", "toolu_t1"),
        _hook("p-2", "toolu_t1"),
        _project_line(
            "progress",
            "p-agent",
            {"data": {"type": "agent_progress", "agentId": "a88"}, "parentToolUseID": "toolu_t1"},
        ),
        _result("r-1", "toolu_t1", LONG, {"status": "completed", "agentId": "a88"}),
        _hook("p-3", "toolu_t1"),
    ]
    body = b"".join(json.dumps(line, separators=(",", ":")).encode() + b"\n" for line in lines)
    body = spell(body)
    from_bytes = only(list(cc.parse(parse_bytes("s-bytes.jsonl", body))))
    decoded = [json.loads(line) for line in body.splitlines() if line.strip()]
    assert len(decoded) == len(lines)
    expected = only(list(cc.parse(Document("s-bytes.jsonl", decoded, jsonl=True))))
    assert _shape(from_bytes) == _shape(expected)
    assert from_bytes.meta["subagent_calls"] == {"a88": "toolu_t1"}


def test_a_bad_line_in_the_body_is_named_by_its_number() -> None:
    good = json.dumps(_project_line("user", "u-1", {"message": {"role": "user", "content": "go"}}))
    body = (good + "\n" + good.replace("u-1", "u-2") + "\n{not json\n" + good + "\n").encode()
    with pytest.raises(MalformedSessionError) as caught:
        list(cc.parse(parse_bytes("s-bad.jsonl", body)))
    assert caught.value.reason == "invalid_json"
    assert "line 3 is not JSON" in str(caught.value)


def test_a_last_line_cut_off_inside_its_tool_result_fails_as_truncated() -> None:
    lines = [
        _project_line("user", "u-1", {"message": {"role": "user", "content": "go"}}),
        _call("a-1", "toolu_b1", "Bash", {"command": "ls"}),
        _result("r-1", "toolu_b1", LONG, {"stdout": LONG, "meta": {"rows": 1}}),
    ]
    body = b"".join(json.dumps(line, separators=(",", ":")).encode() + b"\n" for line in lines)
    cut = body.rindex(b'"rows":1}') + len(b'"rows":1}')  # ends in a brace, inside the value
    with pytest.raises(MalformedSessionError) as caught:
        list(cc.parse(parse_bytes("s-cut.jsonl", body[:cut] + b"\n")))
    assert caught.value.reason == "truncated"


def _chained(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``lines`` with a parent uuid each but the first, as the CLI writes a chain."""
    for n, line in enumerate(lines[1:]):
        line["parentUuid"] = f"00000000-0000-4000-8000-{n:012d}"
    return lines


def test_runs_of_progress_lines_read_as_if_decoded_line_by_line() -> None:
    agent = _project_line(
        "progress",
        "p-agent",
        {"data": {"type": "agent_progress", "agentId": "a88"}, "parentToolUseID": "toolu_t1"},
    )
    lines = _chained(
        [
            _project_line("user", "u-1", {"message": {"role": "user", "content": "go"}}),
            _call("a-1", "toolu_t1", "Task", {"subagent_type": "Plan", "prompt": "plan"}),
            *(_hook(f"p-{n}", "toolu_t1") for n in range(1, 6)),
            agent,  # in the middle of a run: read, and the run goes on after it
            *(_hook(f"q-{n}", "toolu_t1") for n in range(1, 4)),
            dict(_hook("p-other", "toolu_t1"), sessionId="s-elsewhere"),
            _result("r-1", "toolu_t1", "done", {"status": "completed"}),
            *(_hook(f"z-{n}", "toolu_t1") for n in range(1, 4)),  # the run ends at the last line
        ]
    )
    from_bytes, decoded = _both_ways(lines)
    assert _shape(from_bytes) == _shape(decoded)
    assert from_bytes.meta["subagent_calls"] == {"a88": "toolu_t1"}
    assert from_bytes.warnings == decoded.warnings == ["lines name 2 session ids; kept s-bytes"]
    # The last line of a run is always decoded: cut off, the file fails as truncated.
    body = b"".join(json.dumps(line, separators=(",", ":")).encode() + b"\n" for line in lines)
    with pytest.raises(MalformedSessionError) as caught:
        list(cc.parse(parse_bytes("s-cut.jsonl", body[:-12] + b"\n")))
    assert caught.value.reason == "truncated"
