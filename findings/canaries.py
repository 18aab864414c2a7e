"""Planted canary sessions: proof, every night, that the detectors still catch what they should.

    check_canaries(reader, suite) -> [CanaryResult]

Each canary is a small session built here in code (not read from the bucket), parsed from JSON
bytes by the run's own ``SessionReader`` and checked by the run's own ``DetectorSuite``, so it
goes through the same code path as a real session. A canary that is not caught means a check is
broken (disabled, misconfigured, or regressed) and the night says so loudly.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from detectors.runner import DetectorSuite
from sessions.errors import HalluwatchError
from sessions.reader import SessionReader

CANARY_AGENT = "halluwatch-canary"


class CanaryMissed(HalluwatchError):
    """A planted canary session was not caught: a detector is broken. Raised after committing."""

    def __init__(self, message: str, manifest: dict[str, Any]) -> None:
        super().__init__(message)
        self.manifest = manifest


@dataclass(frozen=True, slots=True)
class Canary:
    name: str
    expected_kind: str
    session: dict[str, Any]


@dataclass(frozen=True, slots=True)
class CanaryResult:
    canary: str
    expected_kind: str
    caught: bool
    error: str | None = None  # why the canary could not even be read, when it could not

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _tool(name: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}


def _call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ],
    }


def _chat(name: str, tools: list[str], messages: list[dict[str, Any]]) -> dict[str, Any]:
    """An OpenAI-chat-shaped session, as an agent's export would hold it."""
    return {
        "id": f"halluwatch-canary-{name}",
        "model": "gpt-4o-2024-08-06",
        "created": 1795942800,
        "metadata": {"agent": CANARY_AGENT, "app_version": "canary"},
        "tools": [_tool(t) for t in tools],
        "messages": messages,
    }


CANARIES: tuple[Canary, ...] = (
    Canary(
        "invented_stripe_id",
        "invented_id",
        _chat(
            "invented_stripe_id",
            ["lookup_customer"],
            [
                {"role": "system", "content": "You are the billing assistant. Use the tools."},
                {"role": "user", "content": "Can you look up my customer record?"},
                _call("call_c1", "lookup_customer", {"customer_id": "cus_Q7xK2mR9vTz4Lp"}),
                {"role": "tool", "tool_call_id": "call_c1", "content": '{"found": true}'},
                {"role": "assistant", "content": "I found your customer record."},
            ],
        ),
    ),
    Canary(
        "claims_tests_pass",
        "unbacked_action_claim",
        _chat(
            "claims_tests_pass",
            ["read_file"],
            [
                {"role": "system", "content": "You are a coding assistant."},
                {"role": "user", "content": "Fix the failing date parser and run the tests."},
                _call("call_c2", "read_file", {"path": "src/dates.py"}),
                {"role": "tool", "tool_call_id": "call_c2", "content": "def parse(s): ..."},
                {"role": "assistant", "content": "I fixed the parser. All tests pass."},
            ],
        ),
    ),
    Canary(
        "undeclared_tool",
        "unknown_tool",
        _chat(
            "undeclared_tool",
            ["docs_search"],
            [
                {"role": "system", "content": "You are the support agent. Use the tools."},
                {"role": "user", "content": "How do returns work?"},
                _call("call_c3", "search_knowledge_base", {"query": "returns policy"}),
                {"role": "tool", "tool_call_id": "call_c3", "content": "Returns: 30 days."},
                {"role": "assistant", "content": "Returns are accepted within 30 days."},
            ],
        ),
    ),
)


def check_canary(canary: Canary, reader: SessionReader, suite: DetectorSuite) -> CanaryResult:
    raw = json.dumps(canary.session).encode()
    read = reader.read_unit([(f"halluwatch-canaries/{canary.name}.json", raw)])
    if read.failures or not read.sessions:
        reason = read.failures[0].message if read.failures else "no session parsed"
        return CanaryResult(canary.name, canary.expected_kind, False, reason)
    kinds = {signal.kind for session in read.sessions for signal in suite.run(session)}
    return CanaryResult(canary.name, canary.expected_kind, canary.expected_kind in kinds)


def check_canaries(reader: SessionReader, suite: DetectorSuite) -> list[CanaryResult]:
    """Run every canary through ``reader`` and ``suite``; which were caught."""
    return [check_canary(canary, reader, suite) for canary in CANARIES]
