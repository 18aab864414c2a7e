"""From a day's anomalies and findings to alerts, and from alerts to channels.

    alerts_for_day(day, anomalies, findings, teams, report_url) -> [Alert]
    route(alerts, config) -> [(channel, [Alert], digest)]

An anomaly alert leads with today's figure, its baseline and the lift ("rose from 0.8% to 4.1%
of sessions, 5.1x"); a finding alert with the sessions it affects, their share, and the fix.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any

from alerts.config import AlertsConfig
from alerts.models import SEVERITY_ORDER, Alert, Example
from findings.metrics import ALL_VERSIONS, METRIC_BY_NAME

MAX_EXAMPLES = 5

# What each metric counts, in words a reader at 9 a.m. understands without the docs.
METRIC_LABELS = {
    "unknown_tool_per_100_calls": "calls to unregistered tools",
    "not_found_per_100_calls": "not-found tool results",
    "invented_id_per_100_calls": "invented identifiers",
    "action_claim_session_share": "share of sessions with an unbacked action claim",
    "faithfulness_violations_per_reply": "faithfulness violations",
    "unbacked_claims_per_judged_reply": "unbacked claims",
}
# The ``kind`` of anomaly rows the run raises about itself (missed canaries, a missing or thin
# day of sessions), as opposed to the spike tests' "proportion" and "rate" rows.
RUN_CHECK_KIND = "count"
SINGULAR = {"replies": "reply", "judged replies": "judged reply", "tool calls": "tool call"}


def alerts_for_day(
    day: date,
    anomalies: Sequence[Mapping[str, Any]],
    findings: Sequence[Mapping[str, Any]],
    teams: Mapping[str, str],
    report_url: str | None,
) -> list[Alert]:
    """One alert per anomaly row (status ``anomaly``) and per finding of ``day``."""
    alerts = [
        anomaly_alert(day, row, teams, report_url)
        for row in anomalies
        if row.get("status", "anomaly") == "anomaly"
    ]
    alerts += [finding_alert(day, f, teams, report_url) for f in findings]
    return alerts


def anomaly_alert(
    day: date, row: Mapping[str, Any], teams: Mapping[str, str], report_url: str | None
) -> Alert:
    if row.get("kind") == RUN_CHECK_KIND:
        return run_check_alert(day, row, teams, report_url)
    metric, agent, version = row["metric"], row.get("agent"), row.get("agent_version")
    today, base, lift = row.get("today_value"), row.get("baseline_value"), row.get("lift")
    label = METRIC_LABELS.get(metric, metric.replace("_", " "))
    who = _who(agent, None if version == ALL_VERSIONS else version)
    change = f"from {_figure(metric, base)} to {_figure(metric, today)}"
    times = "new: none in the baseline" if lift is None else f"{lift + 1:.1f}x baseline"
    definition = METRIC_BY_NAME.get(metric)
    unit = definition.unit if definition else "units"
    p_value = row.get("p_value")
    summary = (
        f"{label} rose {change} for {who} ({times}; {row.get('today_numerator', 0):,} of "
        f"{row.get('today_denominator', 0):,} {unit} today, baseline over "
        f"{row.get('baseline_days', 0)} days"
        + (f", p={p_value:.2g}" if p_value is not None else "")
        + ")"
    )
    return Alert(
        item_type="anomaly",
        key=f"anomaly:{metric}:{agent}:{version}",
        day=day,
        severity=_severity(row.get("severity")),
        title=f"{who}: {label} rose to {_figure(metric, today)}",
        summary=summary,
        agent=agent,
        agent_version=version,
        kind=metric,
        value=today,
        baseline=base,
        lift=lift,
        p_value=p_value,
        affected_sessions=(
            row.get("today_numerator")
            if definition is not None and definition.kind == "proportion"
            else None
        ),
        report_url=report_url,
        team=teams.get(agent) if agent else None,
    )


def run_check_alert(
    day: date, row: Mapping[str, Any], teams: Mapping[str, str], report_url: str | None
) -> Alert:
    """An alert for a row the run raised about itself (a missed canary, a missing day's data).

    Such rows carry their own words in ``reason``; a rate change summary would not fit them.
    """
    metric, agent, version = row["metric"], row.get("agent"), row.get("agent_version")
    reason = str(row["reason"])
    return Alert(
        item_type="canary" if metric == "canary" else "anomaly",
        key=f"{'canary' if metric == 'canary' else 'anomaly'}:{metric}:{agent}:{version}"
        + (f":{row['canary']}" if row.get("canary") else ""),
        day=day,
        severity=_severity(row.get("severity")),
        title=f"halluwatch: {reason.split(':', 1)[0]}",
        summary=reason,
        agent=agent,
        agent_version=version,
        kind=metric,
        value=row.get("today_value"),
        baseline=row.get("baseline_value"),
        lift=row.get("lift"),
        p_value=row.get("p_value"),
        report_url=report_url,
        team=teams.get(agent) if agent else None,
    )


def finding_alert(
    day: date, finding: Mapping[str, Any], teams: Mapping[str, str], report_url: str | None
) -> Alert:
    agent = finding.get("agent")
    affected = int(finding.get("affected_sessions") or 0)
    share = finding.get("affected_share")
    versions: Mapping[str, int] = finding.get("agent_versions") or {}
    # A finding spans versions; it is routed and shown by the version it hits most.
    version = max(versions, key=lambda v: (versions[v], v)) if versions else None
    scope = f" ({share:.1%} of {agent or 'its'} sessions)" if share is not None else ""
    since = finding.get("first_seen")
    summary = (
        f"{affected:,} session{'s' if affected != 1 else ''} affected{scope}"
        + (f", first seen {since}" if since and since != day.isoformat() else ", new today")
        + (f". Fix: {finding['recommended_fix']}" if finding.get("recommended_fix") else "")
    )
    examples = [
        Example(
            session_id=str(e.get("session_id")),
            agent_version=e.get("agent_version"),
            value=str(e.get("value") or ""),
            explanation=str(e.get("explanation") or ""),
            events=list(e.get("events") or []),
        )
        for e in (finding.get("examples") or [])[:MAX_EXAMPLES]
    ]
    return Alert(
        item_type="finding",
        key=str(finding["id"]),
        day=day,
        severity=_severity(finding.get("severity")),
        title=str(finding.get("title") or finding["id"]),
        summary=summary,
        agent=agent,
        agent_version=version,
        kind=finding.get("kind"),
        value=float(affected),
        affected_sessions=affected,
        recommended_fix=finding.get("recommended_fix"),
        examples=examples,
        report_url=report_url,
        team=teams.get(agent) if agent else None,
    )


def route(alerts: Sequence[Alert], config: AlertsConfig) -> list[tuple[str, list[Alert], bool]]:
    """Which channel gets which alerts, as one digest or one message per alert.

    Alerts below ``config.min_severity`` go nowhere. Every matching route sends; an alert that
    two routes send to one channel goes there once (the first route's ``digest`` decides).
    Alerts no route matched go to ``config.default_route``, one message each.
    """
    floor = SEVERITY_ORDER.index(config.min_severity)
    # channel -> digest flag -> alerts, in first-seen order
    plan: dict[str, dict[bool, list[Alert]]] = {}
    for alert in alerts:
        if alert.severity_rank < floor:
            continue
        targets: dict[str, bool] = {}
        for r in config.routes:
            if r.match.matches(alert):
                for channel in r.channels:
                    targets.setdefault(channel, r.digest)
        if not targets:
            targets = dict.fromkeys(config.default_route, False)
        for channel, digest in targets.items():
            plan.setdefault(channel, {}).setdefault(digest, []).append(alert)
    out: list[tuple[str, list[Alert], bool]] = []
    for channel, groups in plan.items():
        for digest, group in groups.items():
            if digest:
                out.append((channel, group, True))
            else:
                out.extend((channel, [alert], False) for alert in group)
    return out


def _who(agent: str | None, version: str | None) -> str:
    name = agent or "all agents"
    return f"{name} {version}" if version else name


def _figure(metric: str, value: float | None) -> str:
    if value is None:
        return "n/a"
    definition = METRIC_BY_NAME.get(metric)
    if definition is None:
        return f"{value:.3g}"
    if definition.kind == "proportion":
        return f"{value:.1%}"
    if definition.scale != 1:
        return f"{value * definition.scale:.2f} per {definition.scale:g} {definition.unit}"
    return f"{value:.3f} per {SINGULAR.get(definition.unit, definition.unit)}"


def _severity(value: Any) -> str:
    return str(value) if value in SEVERITY_ORDER else "medium"
