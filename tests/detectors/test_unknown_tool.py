from __future__ import annotations

from detectors.runner import DetectorSuite
from detectors.unknown_tool import UnknownToolParams, closest_tool, unknown_tool
from sessions.models import Event, EventKind, Session, ToolRegistry


def _session(calls: list[tuple[str, str, bool]], tools: ToolRegistry | None) -> Session:
    events: list[Event] = [Event(EventKind.USER, text="help")]
    for i, (name, output, is_error) in enumerate(calls):
        events.append(Event(EventKind.TOOL_CALL, call_id=f"c{i}", name=name, input={}))
        events.append(
            Event(EventKind.TOOL_RESULT, call_id=f"c{i}", output=output, is_error=is_error)
        )
    session = Session(
        id="s1", source="s1.json", format="openai_chat", events=events, registered_tools=tools
    )
    session.reindex()
    return session


REGISTRY = ToolRegistry(frozenset({"docs_search", "lookup_order", "refund_order"}), "session")


def test_flags_unregistered_tool_and_names_the_renamed_one() -> None:
    session = _session([("lookup_order", "{}", False), ("search_docs", "ok", False)], REGISTRY)
    signals = unknown_tool(session, UnknownToolParams())
    assert [s.value for s in signals] == ["search_docs"]
    assert signals[0].events == [3, 4]
    assert "`docs_search`" in signals[0].explanation


def test_registered_tools_are_silent() -> None:
    session = _session([("lookup_order", "{}", False), ("refund_order", "done", False)], REGISTRY)
    assert unknown_tool(session, UnknownToolParams()) == []


def test_unknown_registry_is_silent_unless_the_harness_rejects() -> None:
    quiet = _session([("anything_at_all", "fine", False)], None)
    assert unknown_tool(quiet, UnknownToolParams()) == []
    rejected = _session(
        [
            (
                "RunTests",
                "<tool_use_error>Error: No such tool available: RunTests</tool_use_error>",
                True,
            )
        ],
        None,
    )
    signals = unknown_tool(rejected, UnknownToolParams())
    assert [(s.value, str(s.severity)) for s in signals] == [("RunTests", "high")]


def test_missing_file_is_not_a_rejected_tool() -> None:
    session = _session(
        [("Read", "<tool_use_error>File does not exist.</tool_use_error>", True)], None
    )
    assert unknown_tool(session, UnknownToolParams()) == []


def test_mcp_names_pass_when_the_registry_allows_them() -> None:
    builtin = ToolRegistry(frozenset({"Bash", "Read"}), "claude_code_builtin", allow_mcp=True)
    session = _session([("mcp__github__create_issue", "ok", False), ("Bassh", "?", False)], builtin)
    assert [s.value for s in unknown_tool(session, UnknownToolParams())] == ["Bassh"]


def test_ignore_list_and_suite_stamping() -> None:
    session = _session([("search_docs", "ok", False), ("ghost", "ok", False)], REGISTRY)
    suite = DetectorSuite({"unknown_tool": {"ignore": ["ghost"]}})
    signals = suite.run(session)
    assert [s.value for s in signals] == ["search_docs"]
    assert (signals[0].detector, signals[0].detector_version) == ("unknown_tool", 2)
    assert signals[0].params["ignore"] == ["ghost"]


def test_a_tool_called_again_is_one_signal_with_its_repeats() -> None:
    session = _session(
        [("close_ticket", "ToolNotRegistered", True), ("get_ticket", "ok", False)] * 2
        + [("ghost", "ok", False)],
        ToolRegistry(frozenset({"get_ticket"}), "config"),
    )
    signals = unknown_tool(session, UnknownToolParams())
    assert [(s.value, s.data.get("repeats")) for s in signals] == [
        ("close_ticket", 2),
        ("ghost", None),
    ]
    assert signals[0].events == [1, 2, 5, 6]  # both calls and their results


def test_closest_tool_needs_real_similarity() -> None:
    tools = frozenset({"docs_search", "send_email"})
    assert closest_tool("search_docs", tools, 0.6) == "docs_search"
    assert closest_tool("launch_rocket", tools, 0.6) is None
