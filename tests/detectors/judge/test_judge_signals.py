"""Judged claims become signals a person can act on: evidence, severity, a draft fix."""

from __future__ import annotations

import json

import pytest
from judge_support import config, make_judge, refund_session, reply, session, tool, user
from openai_server import openai_server

from detectors.judge import Judgement, judge_items, judgement_signals
from detectors.judge.signals import severity
from detectors.models import Severity

ANSWER = {
    "claims": [
        {"claim": "refund of $120 issued", "label": "contradicted", "evidence_id": "E2",
         "evidence_quote": "$102", "numeric_mismatch": True},
        {"claim": "order ORD-7781", "label": "supported", "evidence_id": "E1",
         "evidence_quote": "ORD-7781", "numeric_mismatch": False},
        {"claim": "arrives in 3 days", "label": "unsupported", "evidence_id": None,
         "evidence_quote": "", "numeric_mismatch": False},
        {"claim": "you asked on 2026-11-03", "label": "partial", "evidence_id": "E1",
         "evidence_quote": "2026-11-02", "numeric_mismatch": True},
        {"claim": "Dana approved it", "label": "partial", "evidence_id": "E2",
         "evidence_quote": "approved_by", "numeric_mismatch": False},
    ],
    "reason": "The refund amount differs from the order.",
}  # fmt: skip


def _judged(domain: str | None = None) -> Judgement:
    s = session(
        user("Please refund order ORD-7781, I asked on 2026-11-02."),
        tool("get_order", '{"order_id": "ORD-7781", "refund": "$102", "approved_by": "Kim"}', "c1"),
        reply("Done: refund of $120 issued for order ORD-7781; it arrives in 3 days."),
    )
    cfg = config(safety_critical={"support-bot": domain} if domain else {})
    with openai_server() as server:
        server.script(json.dumps(ANSWER))
        (judgement,) = make_judge(server.base_url, cfg).judge(judge_items(s, cfg))
    return judgement


def test_each_claim_the_session_does_not_support_is_a_signal_citing_its_evidence() -> None:
    judgement = _judged()
    signals = judgement_signals(judgement)

    assert [(s.kind, s.value, s.severity) for s in signals] == [
        ("contradicted_claim", "refund of $120 issued", Severity.HIGH),
        ("unsupported_claim", "arrives in 3 days", Severity.LOW),
        ("partial_claim", "you asked on 2026-11-03", Severity.MEDIUM),
        ("partial_claim", "Dana approved it", Severity.LOW),
    ]
    contradicted, unsupported, partial, _ = signals
    assert contradicted.events == [3, 2]  # the reply, then the tool output
    assert contradicted.explanation == (
        'Reply says "refund of $120 issued"; tool output get_order (event 2) says "$102"'
    )
    assert unsupported.events == [3]
    assert unsupported.explanation == (
        'Reply says "arrives in 3 days"; nothing the agent saw in this session supports it'
    )
    assert partial.events == [3, 0]
    assert partial.explanation == (
        'Reply says "you asked on 2026-11-03"; the user\'s message (event 0) has it '
        'differently: "2026-11-02"'
    )
    assert {(s.detector, s.detector_version) for s in signals} == {("llm_judge", 1)}
    assert contradicted.data == {
        "label": "contradicted",
        "evidence_quote": "$102",
        "evidence_source": "tool_output",
        "evidence_event": 2,
        "evidence_tool": "get_order",
        "score": 0.2,
        "reason": "The refund amount differs from the order.",
        "fix": contradicted.data["fix"],
        "model": "judge-test",
        "template": "claims-v1",
        "domain": None,
        "note": None,
    }
    assert contradicted.data["fix"].startswith("Use tool data verbatim")
    assert "get_order" in contradicted.data["fix"]
    assert partial.data["fix"].startswith("Restate the user's facts exactly")
    assert unsupported.data["fix"].startswith("Ground answers")


def test_a_safety_critical_domain_raises_contradicted_and_ungrounded_claims() -> None:
    signals = judgement_signals(_judged("financial"))
    assert [(s.kind, s.severity) for s in signals] == [
        ("contradicted_claim", Severity.CRITICAL),
        ("unsupported_claim", Severity.HIGH),
        ("partial_claim", Severity.MEDIUM),
        ("partial_claim", Severity.LOW),
    ]
    unsupported = signals[1]
    assert unsupported.data["domain"] == "financial"
    assert unsupported.data["fix"].startswith("Add a refusal-and-redirect policy: financial")


@pytest.mark.parametrize(
    ("label", "numeric", "domain", "expected"),
    [
        ("contradicted", False, "medical", Severity.CRITICAL),
        ("contradicted", True, None, Severity.HIGH),
        ("unsupported", False, "legal", Severity.HIGH),
        ("unsupported", False, None, Severity.LOW),
        ("partial", True, None, Severity.MEDIUM),
        ("partial", False, None, Severity.LOW),
    ],
)
def test_severity_rules(label: str, numeric: bool, domain: str | None, expected: Severity) -> None:
    assert severity(label, numeric, domain) == expected


def test_retrieved_context_and_reference_evidence_suggest_a_citation_policy() -> None:
    answer = {
        "claims": [{"claim": "45 days", "label": "contradicted", "evidence_id": "E1",
                    "evidence_quote": "30 days", "numeric_mismatch": True}],
        "reason": "r",
    }  # fmt: skip
    s = session(user("Return window?"), reply("You have 45 days."))
    cfg = config()
    with openai_server() as server:
        server.script(json.dumps(answer))
        items = judge_items(s, cfg, references=["The return window is 30 days."])
        (judgement,) = make_judge(server.base_url, cfg).judge(items)
    (signal,) = judgement_signals(judgement)
    assert signal.events == [1]  # a reference fact has no event
    assert signal.explanation == 'Reply says "45 days"; a reference fact says "30 days"'
    assert signal.data["fix"].startswith("Add a citation policy")


def test_unscored_and_over_budget_judgements_give_no_signals() -> None:
    with openai_server() as server:
        server.script("nope", "nope")
        (judgement,) = make_judge(server.base_url).judge(judge_items(refund_session(), config()))
    assert judgement.status == "unscored"
    assert judgement_signals(judgement) == []


def test_a_judgement_round_trips_through_a_dict() -> None:
    judgement = _judged("legal")
    again = Judgement.from_dict(json.loads(json.dumps(judgement.to_dict())))
    assert again == judgement
    assert judgement_signals(again)[0].severity == Severity.CRITICAL
