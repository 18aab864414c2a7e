from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from sessions.config import AgentConfig, SessionsConfig
from sessions.errors import ConfigError
from sessions.reader import SessionReader

CHAT = {
    "id": "s-1",
    "messages": [
        {"role": "user", "content": "refund order 42"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "refund", "arguments": "{"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "done"},
        {"role": "assistant", "content": "Refunded."},
    ],
}


def _bytes(value: object) -> bytes:
    return json.dumps(value).encode()


def test_failures_are_data_with_reasons_and_good_files_still_parse() -> None:
    reader = SessionReader()
    result = reader.read_unit(
        [
            ("ok.json", _bytes(CHAT)),
            ("cut.jsonl", _bytes(CHAT) + b"\n" + _bytes(CHAT)[:40]),
            ("junk.json", b"{not json"),
            ("odd.json", _bytes({"hello": "world"})),
            ("bad.json.gz", b"\x1f\x8b" + b"garbage"),
            ("empty.json", b"  \n"),
            ("gone.json", OSError("vanished")),
        ]
    )
    assert [s.id for s in result.sessions] == ["s-1"]
    assert {f.source: f.reason for f in result.failures} == {
        "cut.jsonl": "truncated",
        "junk.json": "invalid_json",
        "odd.json": "unknown_format",
        "bad.json.gz": "bad_gzip",
        "empty.json": "empty",
        "gone.json": "read_error",
    }
    assert all(f.source in f.message or f.source == "gone.json" for f in result.failures)


def test_invalid_arguments_are_kept_raw_and_gzip_is_transparent() -> None:
    result = SessionReader().read_unit([("s.json.gz", gzip.compress(_bytes(CHAT)))])
    (session,) = result.sessions
    call = session.tool_calls()[0]
    assert call.input == "{"
    assert session.registered_tools is None  # no tools in the file, none configured


def test_identity_from_path_pattern_and_tools_from_config(tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"type": "function", "function": {"name": "refund"}}]))
    reader = SessionReader(
        SessionsConfig(agent_from_path=r"/(?P<agent>[a-z-]+)/(?P<agent_version>v[0-9.]+)/"),
        {"billing-bot": AgentConfig(tools_file="tools.json", tools=["lookup"])},
        base=tmp_path,
    )
    (session,) = reader.read_unit([("day/billing-bot/v3.1/s.json", _bytes(CHAT))]).sessions
    assert (session.agent, session.agent_version) == ("billing-bot", "v3.1")
    assert session.registered_tools is not None
    assert session.registered_tools.source == "config"
    assert set(session.registered_tools.names) == {"refund", "lookup"}


def test_forced_format_and_unknown_format_name() -> None:
    forced = SessionReader(SessionsConfig(format="anthropic_messages"))
    result = forced.read_unit([("s.json", _bytes(CHAT))])
    assert result.sessions == [] or result.sessions[0].format == "anthropic_messages"
    with pytest.raises(ConfigError, match="unknown format 'nope'"):
        SessionReader(SessionsConfig(format="nope"))


def test_claude_code_sessions_get_builtin_tools_with_mcp() -> None:
    line = {
        "type": "user",
        "sessionId": "abc",
        "uuid": "u1",
        "timestamp": "2026-11-29T10:00:00Z",
        "message": {"role": "user", "content": "hi"},
    }
    (session,) = SessionReader().read_unit([("abc.jsonl", _bytes(line) + b"\n")]).sessions
    assert session.registered_tools is not None
    assert session.registered_tools.source == "claude_code_builtin"
    assert "Bash" in session.registered_tools
    assert "mcp__github__create_issue" in session.registered_tools
    assert "RunTests" not in session.registered_tools
