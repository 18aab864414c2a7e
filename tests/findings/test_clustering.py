"""Clustering signal rows into findings: signatures, ids, severity, history, examples, fixes."""

from __future__ import annotations

import random
from datetime import date, timedelta
from typing import Any

import orjson
import pytest

from detectors.models import Severity, Signal
from detectors.not_found import NotFoundParams, not_found
from detectors.unknown_tool import UnknownToolParams, unknown_tool
from findings.batch import signal_row
from findings.clustering import cluster, finding_id, severity, signature
from findings.models import Finding
from sessions.models import Event, EventKind, Session, ToolRegistry

DAY = date(2026, 11, 29)
TOOLS = ToolRegistry(frozenset({"docs_search", "refund_payment", "book_reservation"}), "session")


def _session(
    sid: str,
    calls: list[tuple[str, Any, str, bool]],
    agent: str = "support-bot",
    version: str = "v1",
) -> Session:
    events = [Event(EventKind.USER, text="help me")]
    for i, (name, arguments, output, is_error) in enumerate(calls):
        events.append(Event(EventKind.TOOL_CALL, call_id=f"c{i}", name=name, input=arguments))
        events.append(
            Event(EventKind.TOOL_RESULT, call_id=f"c{i}", output=output, is_error=is_error)
        )
    session = Session(
        id=sid,
        source=f"sessions/{sid}.json",
        format="openai_chat",
        events=events,
        agent=agent,
        agent_version=version,
        registered_tools=TOOLS,
    )
    session.reindex()
    return session


def _rows(session: Session, signals: list[Signal]) -> list[dict[str, Any]]:
    assert signals, "the detector found nothing to cluster"
    return [signal_row(s, session, DAY.isoformat(), "r1") for s in signals]


def _renamed(sid: str, version: str = "v1", agent: str = "support-bot") -> list[dict[str, Any]]:
    session = _session(sid, [("search_docs", {"q": "refunds"}, "ok", False)], agent, version)
    return _rows(session, unknown_tool(session, UnknownToolParams()))


def _missing_payment(sid: str, method: str, tool: str = "book_reservation") -> list[dict]:
    output = f"Error: payment method {method} not found"
    session = _session(sid, [(tool, {"payment_id": method}, output, True)])
    return _rows(session, not_found(session, NotFoundParams()))


def _row(kind: str, sid: str, agent: str | None = "support-bot", **data: Any) -> dict[str, Any]:
    """A stored row as the SIGNAL_SCHEMA holds it, for kinds whose detectors need long setups."""
    return {
        "date": DAY.isoformat(),
        "run_id": "r1",
        "session_id": sid,
        "source": f"sessions/{sid}.json",
        "agent": agent,
        "agent_version": "v1",
        "kind": kind,
        "value": f"value of {sid}",
        "severity": "medium",
        "events": [3],
        "explanation": "why",
        "detector": kind,
        "detector_version": 1,
        "params": "{}",
        "data": orjson.dumps(data).decode(),
        "evidence": orjson.dumps([{"index": 3, "kind": "assistant", "text": "Done."}]).decode(),
    }


def test_one_failure_across_sessions_and_versions_is_one_finding() -> None:
    rows = _renamed("s1", "v1") + _renamed("s2", "v1") + _renamed("s3", "v2") + _renamed("s3", "v2")
    [finding] = cluster(rows, {"support-bot": 40}, DAY)
    assert finding.kind == "unknown_tool"
    assert finding.signature == {
        "kind": "unknown_tool",
        "agent": "support-bot",
        "tool": "search_docs",
        "closest": "docs_search",
    }
    assert finding.title == "support-bot still calls `search_docs` (renamed `docs_search`?)"
    assert (finding.affected_sessions, finding.signals) == (3, 4)
    assert finding.affected_share == pytest.approx(3 / 40)
    assert finding.agent_versions == {"v1": 2, "v2": 1}
    assert finding.session_ids == ["s1", "s2", "s3"]
    assert "`search_docs`" in finding.recommended_fix and "`docs_search`" in finding.recommended_fix


def test_templates_mask_ids_and_different_tools_or_templates_split() -> None:
    rows = (
        _missing_payment("s1", "certificate_7504069")
        + _missing_payment("s2", "credit_card_1122334")
        + _missing_payment("s3", "certificate_1", tool="refund_payment")
    )
    session = _session(
        "s4", [("book_reservation", {"flight": "HAT170"}, "Error: flight not found", True)]
    )
    rows += _rows(session, not_found(session, NotFoundParams()))
    findings = cluster(rows, {"support-bot": 1000}, DAY)
    by_key = {(f.signature["tool"], f.signature["template"]): f for f in findings}
    assert set(by_key) == {
        ("book_reservation", "Error: payment method <id> not found"),
        ("refund_payment", "Error: payment method <id> not found"),
        ("book_reservation", "Error: flight not found"),
    }
    assert by_key[("book_reservation", "Error: payment method <id> not found")].session_ids == [
        "s1",
        "s2",
    ]
    assert len({f.id for f in findings}) == 3


def test_id_is_stable_across_order_and_days_and_differs_per_agent() -> None:
    rows = _renamed("s1") + _renamed("s2", "v2")
    shuffled = list(reversed(rows))
    today = cluster(rows, {"support-bot": 10}, DAY)[0]
    tomorrow = cluster(shuffled, {"support-bot": 10}, DAY + timedelta(days=1))[0]
    assert today.id == tomorrow.id
    assert len(today.id) == 12 and int(today.id, 16) >= 0
    assert finding_id(dict(reversed(list(today.signature.items())))) == today.id
    other = cluster(_renamed("s9", agent="billing-bot"), {"billing-bot": 10}, DAY)[0]
    assert other.id != today.id
    assert other.title.startswith("billing-bot ")


@pytest.mark.parametrize(
    ("kind", "base"),
    [
        ("contradicted_action_claim", Severity.HIGH),
        ("unbacked_action_claim", Severity.MEDIUM),
        ("invented_id", Severity.HIGH),
        ("unknown_tool", Severity.MEDIUM),
        ("faithfulness_violation", Severity.MEDIUM),
        ("not_found", Severity.LOW),
    ],
)
def test_base_severity_per_kind(kind: str, base: Severity) -> None:
    assert severity(kind, affected=1, share=0.001, previous_sessions=None) is base


def test_scale_and_lift_raise_severity_up_to_critical() -> None:
    assert severity("not_found", 3, 0.05, None) is Severity.MEDIUM  # share at the 5% line
    assert severity("not_found", 1, 0.25, None) is Severity.LOW  # one session is no scale
    assert severity("not_found", 20, 0.001, None) is Severity.MEDIUM  # 20 sessions
    assert severity("not_found", 19, 0.049, None) is Severity.LOW
    assert severity("not_found", 19, None, None) is Severity.LOW  # no denominator: count only
    assert severity("not_found", 4, 0.001, previous_sessions=2) is Severity.MEDIUM  # lift 2x
    assert severity("not_found", 3, 0.001, previous_sessions=2) is Severity.LOW  # 1.5x is not
    assert severity("not_found", 40, 0.5, previous_sessions=10) is Severity.HIGH
    assert severity("invented_id", 40, 0.5, previous_sessions=10) is Severity.CRITICAL
    assert severity("contradicted_action_claim", 40, 0.5, 10) is Severity.CRITICAL  # capped


def test_cluster_applies_share_of_the_agents_sessions() -> None:
    rows = [r for s in ("s1", "s2", "s3") for r in _missing_payment(s, "certificate_7504069")]
    assert cluster(rows, {"support-bot": 59}, DAY)[0].severity is Severity.MEDIUM  # 3/59 >= 5%
    assert cluster(rows, {"support-bot": 61}, DAY)[0].severity is Severity.LOW
    assert cluster(rows, {}, DAY)[0].affected_share is None


def test_first_seen_and_trend_carry_over_and_lift_uses_the_last_appearance() -> None:
    d1, d2 = DAY - timedelta(days=2), DAY - timedelta(days=1)
    day1 = cluster(_renamed("a1"), {"support-bot": 1000}, d1)
    day2 = cluster(_renamed("b1") + _renamed("b2"), {"support-bot": 1000}, d2, day1)
    today_rows = [r for i in range(4) for r in _renamed(f"c{i}")]
    # A stale record of today itself (an earlier run of the day) is replaced, not counted.
    stale = cluster(_renamed("x1"), {"support-bot": 1000}, DAY)
    [today] = cluster(today_rows, {"support-bot": 1000}, DAY, [*stale, *day2, *day1])
    assert today.first_seen == d1
    assert today.trend == [
        {"date": d1.isoformat(), "sessions": 1},
        {"date": d2.isoformat(), "sessions": 2},
        {"date": DAY.isoformat(), "sessions": 4},
    ]
    assert today.severity is Severity.HIGH  # medium base, 4 >= 2 x 2 sessions yesterday
    [fresh] = cluster(today_rows, {"support-bot": 1000}, DAY)
    assert (fresh.first_seen, fresh.severity) == (DAY, Severity.MEDIUM)
    assert Finding.from_dict(orjson.loads(orjson.dumps(today.to_dict()))) == today


def test_examples_are_capped_deterministic_and_prefer_distinct_sessions() -> None:
    rows = [
        _row("invented_id", f"s{i}", pattern="stripe:cus_", tool="refund_payment")
        for i in (3, 1, 2)
    ]
    rows += [_row("invented_id", "s1", pattern="stripe:cus_", tool="refund_payment")]
    for row, value in zip(rows, ["cus_a", "cus_c", "cus_b", "cus_0"], strict=True):
        row["value"] = value  # values sort against session ids: the order must not follow them
    [finding] = cluster(rows, {"support-bot": 100}, DAY, max_examples=3)
    assert [e["session_id"] for e in finding.examples] == ["s1", "s2", "s3"]
    assert finding.examples[0]["events"] == [{"index": 3, "kind": "assistant", "text": "Done."}]
    assert finding.examples[0]["source"] == "sessions/s1.json"
    for seed in range(5):
        shuffled = list(rows)
        random.Random(seed).shuffle(shuffled)
        assert cluster(shuffled, {"support-bot": 100}, DAY, max_examples=3)[0].examples == (
            finding.examples
        )
    [more] = cluster(rows, {"support-bot": 100}, DAY, max_examples=10)
    assert [e["session_id"] for e in more.examples] == ["s1", "s2", "s3", "s1"]


def test_session_ids_are_capped_with_the_total_kept() -> None:
    rows = [_row("faithfulness_violation", f"s{i:03d}", entity_kind="case_id") for i in range(150)]
    [finding] = cluster(rows, {"support-bot": 1000}, DAY)
    assert finding.affected_sessions == 150
    assert finding.session_ids == [f"s{i:03d}" for i in range(100)]


def test_titles_and_fixes_name_the_specifics() -> None:
    claim = {"rule": "tests pass"}
    rows = [
        _row("invented_id", "s1", pattern="stripe:cus_", tool="refund_payment"),
        _row("unbacked_action_claim", "s2", preceding_error=None, **claim),
        _row(
            "contradicted_action_claim",
            "s3",
            preceding_error="`mix test` failed (exit code 1)",
            **claim,
        ),
        _row("faithfulness_violation", "s4", entity_kind="case_id"),
        _row("unknown_tool", "s5", closest=None, rejected=True),
    ]
    rows[-1]["value"] = "RunTests"
    findings = {f.kind: f for f in cluster(rows, {"support-bot": 1000}, DAY)}
    invented = findings["invented_id"]
    assert invented.title == "support-bot invents `cus_` ids passed to `refund_payment`"
    assert "lookup tool for `cus_` ids" in invented.recommended_fix
    assert "reject unknown ids in `refund_payment`" in invented.recommended_fix
    unbacked = findings["unbacked_action_claim"]
    assert (
        "completion check" in unbacked.recommended_fix
        and "run the tests" in unbacked.recommended_fix
    )
    contradicted = findings["contradicted_action_claim"]
    assert contradicted.title == "support-bot claims tests pass after a failed `mix test`"
    assert "report that `mix test` failed (exit code 1)" in contradicted.recommended_fix
    faithful = findings["faithfulness_violation"]
    assert faithful.title == "support-bot cites case numbers not in the retrieved context"
    assert "cite the source of every case number" in faithful.recommended_fix
    unknown = findings["unknown_tool"]
    assert "List `RunTests` among the agent's tools or remove it" in unknown.recommended_fix
    not_found_fix = cluster(_missing_payment("s6", "certificate_1"), {}, DAY)[0].recommended_fix
    assert "look up valid" in not_found_fix and "before calling `book_reservation`" in not_found_fix


def test_findings_sorted_by_severity_then_affected_sessions() -> None:
    rows = [
        _row("not_found", f"n{i}", tool="Read", template="File does not exist.") for i in range(9)
    ]
    rows += [_row("invented_id", "i1", pattern="uuid", tool="close_ticket")]
    rows += [_row("faithfulness_violation", f"f{i}", entity_kind="money") for i in range(3)]
    rows += [_row("faithfulness_violation", f"g{i}", entity_kind="count") for i in range(5)]
    order = [(f.kind, f.affected_sessions) for f in cluster(rows, {"support-bot": 1000}, DAY)]
    assert order == [
        ("invented_id", 1),
        ("faithfulness_violation", 5),
        ("faithfulness_violation", 3),
        ("not_found", 9),
    ]


def test_signature_ignores_version_and_value_but_keeps_the_agent() -> None:
    a = _row("not_found", "s1", tool="Bash", template="command not found: <cmd>")
    b = {**a, "agent_version": "v9", "value": "tree", "session_id": "s2"}
    assert signature(a) == signature(b)
    assert signature({**a, "agent": None})["agent"] is None
    assert signature({**a, "agent": None}) != signature(a)


def _judged(sid: str, label: str, source: str | None, domain: str | None) -> dict[str, Any]:
    session = _session(sid, [("get_order", {"order_id": "ORD-1"}, '{"refund": "$102"}', False)])
    session.events.append(Event(EventKind.ASSISTANT, text="A refund of $120 was issued."))
    session.reindex()
    kind = {"contradicted": "contradicted_claim", "unsupported": "unsupported_claim"}[label]
    signal = Signal(
        kind=kind,
        value="refund of $120",
        events=[3, 2],
        explanation='Reply says "refund of $120"; tool output get_order (event 2) says "$102"',
        detector="llm_judge",
        detector_version=1,
        data={"label": label, "evidence_source": source, "domain": domain, "score": 1.0},
    )
    return signal_row(signal, session, DAY.isoformat(), "r1")


def test_judged_claims_cluster_by_evidence_source_with_domain_severity() -> None:
    rows = [
        _judged("s1", "contradicted", "tool_output", None),
        _judged("s2", "contradicted", "tool_output", None),
        _judged("s3", "contradicted", "tool_output", "financial"),
        _judged("s4", "unsupported", None, "financial"),
        _judged("s5", "unsupported", None, None),
    ]
    findings = {
        (f.kind, f.signature.get("domain")): f for f in cluster(rows, {"support-bot": 1000}, DAY)
    }
    assert len(findings) == 4
    tool = findings[("contradicted_claim", None)]
    assert tool.affected_sessions == 2 and tool.severity is Severity.HIGH
    assert tool.title == "support-bot states facts that contradict tool output"
    assert "verbatim" in tool.recommended_fix
    assert findings[("contradicted_claim", "financial")].severity is Severity.CRITICAL
    ungrounded = findings[("unsupported_claim", "financial")]
    assert ungrounded.severity is Severity.HIGH
    assert "refusal-and-redirect" in ungrounded.recommended_fix
    assert findings[("unsupported_claim", None)].severity is Severity.LOW
