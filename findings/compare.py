"""Before and after: each rate over two date ranges, or two agent versions, with its difference.

A team runs this right after a deploy: the same metrics as the nightly job, pooled over each side
(numerators and denominators summed, so busy days weigh more), the difference with its confidence
interval and a two-sided exact p-value (``findings.stats.compare_rates``), and, for the findings
that moved most, sessions from both sides side by side.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import date
from typing import Any

import orjson

from findings.metrics import ALL_VERSIONS, METRIC_BY_NAME
from findings.stats import Comparison, Counts, compare_rates
from findings.store import ResultsStore


@dataclass(frozen=True, slots=True)
class Side:
    """One side of a comparison: a date range, and optionally one agent version."""

    label: str
    days: tuple[date, ...]
    version: str | None = None  # None: every version; else only this one
    exclude_version: str | None = None  # every version but this one

    def includes(self, version: str | None) -> bool:
        """Whether a metric row of ``version`` counts on this side (never both a version and
        the ``*`` sum of all versions, which would count sessions twice)."""
        if self.version is None and self.exclude_version is None:
            return version == ALL_VERSIONS
        if version == ALL_VERSIONS:
            return False
        if self.version is not None:
            return version == self.version
        return version != self.exclude_version


@dataclass(frozen=True, slots=True)
class MetricChange:
    metric: str
    agent: str | None
    before: Counts
    after: Counts
    comparison: Comparison

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "agent": self.agent,
            "before": asdict(self.before),
            "after": asdict(self.after),
            **asdict(self.comparison),
        }


def pooled(rows: Iterable[Mapping[str, Any]], side: Side) -> dict[tuple[str, str | None], Counts]:
    """Sum numerators and denominators per (metric, agent) over the rows that belong to ``side``."""
    sums: dict[tuple[str, str | None], list[int]] = defaultdict(lambda: [0, 0])
    for row in rows:
        if not side.includes(row["agent_version"]):
            continue
        total = sums[(row["metric"], row["agent"])]
        total[0] += int(row["numerator"])
        total[1] += int(row["denominator"])
    return {key: Counts(n, d) for key, (n, d) in sums.items()}


def compare(
    before_rows: Sequence[Mapping[str, Any]],
    after_rows: Sequence[Mapping[str, Any]],
    before: Side,
    after: Side,
    confidence: float = 0.95,
) -> list[MetricChange]:
    b, a = pooled(before_rows, before), pooled(after_rows, after)
    changes = []
    for key in sorted(set(b) | set(a), key=lambda k: (k[1] or "", k[0])):
        metric = METRIC_BY_NAME.get(key[0])
        if metric is None:
            continue
        left, right = b.get(key, Counts(0, 0)), a.get(key, Counts(0, 0))
        if not left.denominator or not right.denominator:
            continue  # nothing to compare on one side (e.g. no judged replies)
        result = compare_rates(left, right, kind=metric.kind, confidence=confidence)
        changes.append(MetricChange(key[0], key[1], left, right, result))
    return changes


def moved_findings(
    before: Sequence[Mapping[str, Any]], after: Sequence[Mapping[str, Any]], top: int = 3
) -> list[dict[str, Any]]:
    """The findings whose affected sessions changed most, with sessions from both sides."""
    sides: dict[str, dict[str, Any]] = {}
    for label, findings in (("before", before), ("after", after)):
        for f in findings:
            entry = sides.setdefault(
                f["id"],
                {
                    "id": f["id"],
                    "title": f["title"],
                    "kind": f["kind"],
                    "agent": f["agent"],
                    "before": 0,
                    "after": 0,
                    "before_sessions": [],
                    "after_sessions": [],
                },
            )
            entry[label] += int(f["affected_sessions"])
            entry[f"{label}_sessions"].extend(f.get("session_ids", [])[:3])
    moved = sorted(sides.values(), key=lambda e: (-abs(e["after"] - e["before"]), e["id"]))
    for entry in moved:
        entry["before_sessions"] = sorted(set(entry["before_sessions"]))[:3]
        entry["after_sessions"] = sorted(set(entry["after_sessions"]))[:3]
    return moved[:top]


def comparison_report(
    results: ResultsStore, before: Side, after: Side
) -> tuple[dict[str, Any], str]:
    """Compare ``before`` with ``after`` from the committed days; store and return the report.

    When the sides are agent versions, only agents that ran the ``after`` version are compared:
    an agent that never ran it has nothing to compare.
    """
    committed = set(results.committed_days())
    days = sorted({*before.days, *after.days})
    rows = {d: results.read_table("metrics", d).to_pylist() for d in days if d in committed}
    detail = {d: results.read_document("findings_detail", d) or [] for d in days if d in committed}
    agents: set[str | None] | None = None
    if after.version is not None:
        agents = {
            r["agent"] for rs in rows.values() for r in rs if r["agent_version"] == after.version
        }

    def side_rows(side: Side) -> list[dict[str, Any]]:
        found = [r for d in side.days for r in rows.get(d, [])]
        return found if agents is None else [r for r in found if r["agent"] in agents]

    def side_findings(side: Side) -> list[dict[str, Any]]:
        found = [f for d in side.days for f in detail.get(d, [])]
        if agents is not None:
            found = [f for f in found if f["agent"] in agents]
        if side.version is None and side.exclude_version is None:
            return found
        return [f for f in found if any(map(side.includes, f.get("agent_versions", {})))]

    report = {
        "before": before.label,
        "after": after.label,
        "missing_days": [d.isoformat() for d in days if d not in committed],
        "metrics": [
            c.to_dict() for c in compare(side_rows(before), side_rows(after), before, after)
        ],
        "findings_moved": moved_findings(side_findings(before), side_findings(after)),
    }
    name = f"comparisons/{_slug(before.label)}__vs__{_slug(after.label)}.json"
    results.store.write(results.prefix + name, orjson.dumps(report, option=orjson.OPT_INDENT_2))
    return report, name


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in ".-" else "_" for c in text)[:60]
