"""Alerts from a day's anomalies and findings, and which channel gets which."""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from typing import Any

import pytest

from alerts.config import AlertsConfig
from alerts.models import Alert
from alerts.routing import alerts_for_day, route
from detectors.models import Severity
from findings.anomalies import anomaly_row
from findings.models import Finding
from findings.stats import SpikeResult
from sessions.errors import ConfigError

DAY = date(2026, 11, 29)


def anomaly(**over: Any) -> dict[str, Any]:
    result = SpikeResult(
        metric="action_claim_session_share",
        agent="support-agent",
        agent_version="2.3",
        kind="proportion",
        today_value=0.041,
        today_numerator=41,
        today_denominator=1000,
        baseline_value=0.008,
        baseline_numerator=56,
        baseline_denominator=7000,
        baseline_days=7,
        lift=0.041 / 0.008 - 1,
        p_value=1.2e-9,
        status="anomaly",
        severity=Severity.CRITICAL,
        reason="rose",
    )
    return {**anomaly_row(result, DAY, "run-1"), **over}


def finding(**over: Any) -> dict[str, Any]:
    base = Finding(
        id="f-invented-case-id",
        day=DAY,
        signature={"kind": "invented_id", "agent": "support-agent"},
        title="support-agent cites case numbers no tool returned",
        kind="invented_id",
        agent="support-agent",
        severity=Severity.HIGH,
        affected_sessions=12,
        affected_share=0.012,
        signals=15,
        first_seen=date(2026, 11, 27),
        recommended_fix="Only quote case numbers returned by lookup_case.",
        agent_versions={"2.2": 3, "2.3": 9},
        session_ids=[f"s{i}" for i in range(12)],
        examples=[
            {"session_id": f"s{i}", "agent_version": "2.3", "value": f"CASE-{i}", "events": []}
            for i in range(7)
        ],
    ).to_dict()
    return {**base, **over}


def make(**over: Any) -> Alert:
    base = Alert(
        item_type="finding",
        key="k",
        day=DAY,
        severity="high",
        title="t",
        summary="s",
        agent="support-agent",
        agent_version="2.3",
        kind="invented_id",
    )
    return replace(base, **over)


def config(**over: Any) -> AlertsConfig:
    raw: dict[str, Any] = {
        "channels": {
            "ids-slack": {"type": "console"},
            "billing-mail": {"type": "console"},
            "support-hook": {"type": "console"},
            "oncall": {"type": "console"},
        },
        "teams": {"billing-agent": "billing", "refund-agent": "billing"},
        "routes": [
            {
                "match": {"kinds": ["invented_id"], "min_severity": "high"},
                "channels": ["ids-slack"],
            },
            {"match": {"teams": ["billing"]}, "channels": ["billing-mail"], "digest": True},
            {
                "match": {"agents": ["support-*"], "agent_versions": ["2.*"]},
                "channels": ["support-hook"],
            },
        ],
        "default_route": ["oncall"],
        **over,
    }
    return AlertsConfig.model_validate(raw)


def test_anomaly_alert_leads_with_figure_baseline_and_lift() -> None:
    [alert] = alerts_for_day(DAY, [anomaly()], [], {"support-agent": "support"}, "https://r/x")
    assert alert.item_type == "anomaly"
    assert alert.key == "anomaly:action_claim_session_share:support-agent:2.3"
    assert alert.title == (
        "support-agent 2.3: share of sessions with an unbacked action claim rose to 4.1%"
    )
    assert alert.summary.startswith(
        "share of sessions with an unbacked action claim rose from 0.8% to 4.1% for "
        "support-agent 2.3 (5.1x baseline; 41 of 1,000 sessions today, baseline over 7 days"
    )
    assert (alert.severity, alert.team, alert.report_url) == ("critical", "support", "https://r/x")
    assert (alert.value, alert.baseline, alert.affected_sessions) == (0.041, 0.008, 41)


def test_rate_anomaly_and_rows_that_are_not_anomalies() -> None:
    rate = anomaly(
        metric="invented_id_per_100_calls",
        kind="rate",
        agent_version="*",
        today_value=0.02,
        baseline_value=0.0,
        lift=None,
    )
    normal = anomaly(status="normal")
    [alert] = alerts_for_day(DAY, [rate, normal], [], {}, None)
    assert alert.title == "support-agent: invented identifiers rose to 2.00 per 100 tool calls"
    assert "from 0.00 per 100 tool calls" in alert.summary
    assert "new: none in the baseline" in alert.summary
    assert alert.affected_sessions is None and alert.team is None


def test_finding_alert_has_sessions_share_fix_and_five_examples() -> None:
    [alert] = alerts_for_day(DAY, [], [finding()], {"support-agent": "support"}, None)
    assert alert.key == "f-invented-case-id" and alert.kind == "invented_id"
    assert alert.summary == (
        "12 sessions affected (1.2% of support-agent sessions), first seen 2026-11-27. "
        "Fix: Only quote case numbers returned by lookup_case."
    )
    assert alert.agent_version == "2.3"  # the version it hits most
    assert alert.value == 12 and alert.severity == "high"
    assert [e.value for e in alert.examples] == [f"CASE-{i}" for i in range(5)]


def test_routes_by_kind_severity_agent_and_team_with_digest_and_per_item() -> None:
    ids_high = make(key="ids-high")
    ids_medium = make(key="ids-medium", severity="medium", agent_version="1.9")
    bill_1 = make(key="bill-1", agent="billing-agent", team="billing", kind="not_found")
    bill_2 = make(key="bill-2", agent="refund-agent", team="billing", kind="not_found")
    support_v3 = make(key="support-v3", agent_version="3.0", severity="critical", kind="x")
    planned = route([ids_high, ids_medium, bill_1, bill_2, support_v3], config())
    assert [(ch, [a.key for a in group], digest) for ch, group, digest in planned] == [
        ("ids-slack", ["ids-high"], False),
        ("support-hook", ["ids-high"], False),
        ("oncall", ["ids-medium"], False),  # medium: below the ids route, wrong version
        ("oncall", ["support-v3"], False),
        ("billing-mail", ["bill-1", "bill-2"], True),  # one digest for the team
    ]


def test_an_alert_two_routes_send_to_one_channel_goes_there_once() -> None:
    cfg = config(
        routes=[
            {"match": {"item_types": ["finding"]}, "channels": ["oncall"], "digest": True},
            {"match": {"agents": ["support-agent"]}, "channels": ["oncall", "ids-slack"]},
        ]
    )
    planned = route([make(key="a"), make(key="b")], cfg)
    assert [(ch, [a.key for a in g], d) for ch, g, d in planned] == [
        ("oncall", ["a", "b"], True),
        ("ids-slack", ["a"], False),
        ("ids-slack", ["b"], False),
    ]


def test_below_min_severity_goes_nowhere() -> None:
    low = make(key="low", severity="low")
    assert route([low], config()) == []
    assert [g[0].key for _, g, _ in route([low], config(min_severity="low"))] == ["low"]


def test_default_route_is_every_channel_or_console_when_none() -> None:
    cfg = AlertsConfig.model_validate(
        {"channels": {"a": {"type": "console"}, "b": {"type": "console"}}}
    )
    assert cfg.default_route == ["a", "b"]
    assert [ch for ch, _, _ in route([make()], cfg)] == ["a", "b"]
    bare = AlertsConfig.model_validate({})
    assert list(bare.channels) == ["console"] and bare.default_route == ["console"]
    assert [ch for ch, _, _ in route([make()], bare)] == ["console"]


def test_routes_naming_unknown_channels_are_config_errors() -> None:
    with pytest.raises(ConfigError) as info:
        config(
            routes=[{"channels": ["ids-slack", "pager"]}],
            default_route=["oncall", "sms"],
        )
    message = str(info.value)
    assert "routes[0]: 'pager'" in message and "default_route: 'sms'" in message
    assert "ids-slack" not in message.split("configured channels")[0]


def test_unknown_keys_and_bad_patterns_are_rejected() -> None:
    with pytest.raises(ValueError, match="cooldown"):
        AlertsConfig.model_validate({"cooldown": 2})
    with pytest.raises(ValueError, match="invalid regex"):
        AlertsConfig.model_validate({"redact": {"x": "[oops"}})


def test_report_url() -> None:
    cfg = AlertsConfig.model_validate({"report_base_url": "https://r.example.com/hw/"})
    assert (
        cfg.report_url("2026-11-29")
        == "https://r.example.com/hw/reports/date=2026-11-29/report.html"
    )
    cfg = AlertsConfig.model_validate({"report_base_url": "https://r/{date}.html"})
    assert cfg.report_url("2026-11-29") == "https://r/2026-11-29.html"
