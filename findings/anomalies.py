"""Today's rates against the trailing baseline of stored days: which moved, and how much.

Each metric row of today (per agent version, and per agent across versions) is tested against
the same metric, agent and version over the previous ``window_days`` stored days with the test
that fits it (``findings.stats``). Every result is kept, the untested ones with their reason
("only 12 sessions today"), so a quiet day is distinguishable from an untestable one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict
from datetime import date
from typing import Any

from findings.metrics import METRIC_BY_NAME
from findings.stats import RatePoint, SpikeParams, SpikeResult, test_spike


def _key(row: Mapping[str, Any]) -> tuple[str, str | None, str | None]:
    return (row["metric"], row["agent"], row["agent_version"])


def detect_anomalies(
    today: date,
    today_rows: Sequence[Mapping[str, Any]],
    history: Mapping[date, Sequence[Mapping[str, Any]]],
    params: SpikeParams,
) -> list[SpikeResult]:
    """Test every metric row of ``today`` against ``history`` (earlier days' metric rows)."""
    baseline: dict[tuple[str, str | None, str | None], list[RatePoint]] = {}
    for day, rows in sorted(history.items()):
        if day >= today:
            continue
        for row in rows:
            baseline.setdefault(_key(row), []).append(
                RatePoint(day, int(row["numerator"]), int(row["denominator"]))
            )
    results = []
    for row in today_rows:
        metric = METRIC_BY_NAME.get(row["metric"])
        if metric is None:
            continue
        results.append(
            test_spike(
                RatePoint(today, int(row["numerator"]), int(row["denominator"])),
                baseline.get(_key(row), []),
                kind=metric.kind,
                metric=metric.name,
                agent=row["agent"],
                agent_version=row["agent_version"],
                params=params,
                unit=metric.unit,
            )
        )
    return results


def anomaly_row(result: SpikeResult, day: date, run_id: str) -> dict[str, Any]:
    row = asdict(result)
    row["severity"] = str(result.severity) if result.severity is not None else None
    return {"date": day.isoformat(), "run_id": run_id, **row}
