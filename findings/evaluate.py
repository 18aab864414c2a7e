"""After a day's batches: its metrics, the spike tests against the baseline, its findings.

Reads only what earlier runs committed (their manifests name their runs) plus this run's own
rows, and writes this run's metrics, anomalies and findings beside its other parts; the manifest
written after this commits them all at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from findings.anomalies import anomaly_row, detect_anomalies
from findings.clustering import cluster
from findings.config import FindingsConfig
from findings.metrics import ALL_VERSIONS, Group, GroupCounts, metric_rows, with_all_versions
from findings.models import Finding
from findings.stats import SpikeResult
from findings.store import ResultsStore


@dataclass(slots=True)
class DayEvaluation:
    metrics: list[dict[str, Any]]
    spikes: list[SpikeResult]
    findings: list[Finding]

    @property
    def anomalies(self) -> list[SpikeResult]:
        return [s for s in self.spikes if s.status == "anomaly"]


def earlier_days(results: ResultsStore, day: date, days: int) -> list[date]:
    """Committed days in the ``days`` before ``day``, oldest first."""
    first = day - timedelta(days=days)
    return [d for d in results.committed_days() if first <= d < day]


def evaluate_day(
    results: ResultsStore,
    day: date,
    run_id: str,
    groups: dict[Group, GroupCounts],
    config: FindingsConfig,
) -> DayEvaluation:
    metrics = metric_rows(groups, day.isoformat(), run_id)
    results.write_part("metrics", day, run_id, 0, metrics)

    window = earlier_days(results, day, config.spikes.window_days)
    history = {d: results.read_table("metrics", d).to_pylist() for d in window}
    spikes = detect_anomalies(day, metrics, history, config.spikes)
    results.write_part("anomalies", day, run_id, 0, [anomaly_row(s, day, run_id) for s in spikes])

    previous: list[Finding] = []
    for earlier in earlier_days(results, day, config.history_days):
        detail = results.read_document("findings_detail", earlier) or []
        previous.extend(Finding.from_dict(item) for item in detail)
    sessions_by_agent = {
        agent: counts.sessions
        for (agent, version), counts in with_all_versions(groups).items()
        if version == ALL_VERSIONS
    }
    signals = results.read_run_table("signals", day, run_id).to_pylist()
    findings = cluster(signals, sessions_by_agent, day, previous)
    results.write_part("findings", day, run_id, 0, [finding_row(f, day, run_id) for f in findings])
    results.write_document("findings_detail", day, run_id, [f.to_dict() for f in findings])
    return DayEvaluation(metrics, spikes, findings)


def finding_row(finding: Finding, day: date, run_id: str) -> dict[str, Any]:
    return {
        "date": day.isoformat(),
        "run_id": run_id,
        "finding_id": finding.id,
        "kind": finding.kind,
        "agent": finding.agent,
        "severity": str(finding.severity),
        "title": finding.title,
        "affected_sessions": finding.affected_sessions,
        "affected_share": finding.affected_share,
        "signals": finding.signals,
        "first_seen": str(finding.first_seen),
        "recommended_fix": finding.recommended_fix,
    }
