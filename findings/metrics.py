"""Day metrics: signals turned into rates with their denominators, per agent and agent version.

Batches count; the flow merges the counts; this module turns the merged counts into rows. Each
rate keeps its numerator and denominator beside its value, so a baseline can pool days and a
test can tell 1 of 3 from 100 of 300. Kinds are never blended into one score.

    metric                                  kind        numerator             denominator
    unknown_tool_per_100_calls              rate        unknown_tool signals  tool calls
    not_found_per_100_calls                 rate        not_found signals     tool calls
    invented_id_per_100_calls               rate        invented_id signals   tool calls
    action_claim_session_share              proportion  sessions with an unbacked or
                                                        contradicted action claim   sessions
    faithfulness_violations_per_reply       rate        faithfulness signals  replies
    unbacked_claims_per_judged_reply        rate        unsupported or        judged replies
                                                        contradicted claims
                                                        (LLM judge, sampled)

Rows are written per (agent, agent version) and per agent across versions (version ``*``).
The judge reads a weighted sample (findings/sampling.py): its row's numerator and denominator are
the sample's raw counts (what the spike test conditions on), while ``value`` and
``ci_low``/``ci_high`` are the weighted estimate for all of the day's sessions.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from findings.sampling import ratio_estimate

ACTION_KINDS = frozenset({"unbacked_action_claim", "contradicted_action_claim"})
ALL_VERSIONS = "*"


@dataclass(frozen=True, slots=True)
class MetricDef:
    name: str
    kind: Literal["proportion", "rate"]
    numerator: str  # a field of GroupCounts, or "signals:<kind>"
    denominator: str
    scale: float
    unit: str


METRICS = (
    MetricDef(
        "unknown_tool_per_100_calls",
        "rate",
        "signals:unknown_tool",
        "tool_calls",
        100,
        "tool calls",
    ),
    MetricDef(
        "not_found_per_100_calls", "rate", "signals:not_found", "tool_calls", 100, "tool calls"
    ),
    MetricDef(
        "invented_id_per_100_calls", "rate", "signals:invented_id", "tool_calls", 100, "tool calls"
    ),
    MetricDef(
        "action_claim_session_share",
        "proportion",
        "action_claim_sessions",
        "sessions",
        1,
        "sessions",
    ),
    MetricDef(
        "faithfulness_violations_per_reply",
        "rate",
        "signals:faithfulness_violation",
        "replies",
        1,
        "replies",
    ),
    MetricDef(
        "unbacked_claims_per_judged_reply",
        "rate",
        "judged_unbacked_claims",
        "judged_replies",
        1,
        "judged replies",
    ),
)
METRIC_BY_NAME = {m.name: m for m in METRICS}
# Metrics from the judge's weighted sample: ``value`` is the weighted estimate, with an interval.
WEIGHTED = frozenset({"unbacked_claims_per_judged_reply"})


@dataclass(slots=True)
class GroupCounts:
    """What one agent version did in a day (or a batch of it). Merged with ``+=``."""

    sessions: int = 0
    tool_calls: int = 0
    replies: int = 0
    # (weight, unbacked claims, judged replies) per judged session: the raw counts and the
    # weighted estimate both come from these.
    judged: list[tuple[float, int, int]] = field(default_factory=list)
    action_claim_sessions: int = 0
    signals: Counter[str] = field(default_factory=Counter)
    sessions_with: Counter[str] = field(default_factory=Counter)

    def add_session(self, tool_calls: int, replies: int, kinds: Iterable[str]) -> None:
        counted = Counter(kinds)
        self.sessions += 1
        self.tool_calls += tool_calls
        self.replies += replies
        self.signals.update(counted)
        self.sessions_with.update(counted.keys())
        if ACTION_KINDS & counted.keys():
            self.action_claim_sessions += 1

    def __iadd__(self, other: GroupCounts) -> GroupCounts:
        self.sessions += other.sessions
        self.tool_calls += other.tool_calls
        self.replies += other.replies
        self.judged.extend(other.judged)
        self.action_claim_sessions += other.action_claim_sessions
        self.signals.update(other.signals)
        self.sessions_with.update(other.sessions_with)
        return self

    def add_judged(self, weight: float, unbacked_claims: int, judged_replies: int) -> None:
        self.judged.append((weight, unbacked_claims, judged_replies))

    @property
    def judged_replies(self) -> int:
        return sum(replies for _, _, replies in self.judged)

    @property
    def judged_unbacked_claims(self) -> int:
        return sum(claims for _, claims, _ in self.judged)

    def value_of(self, ref: str) -> int:
        if ref.startswith("signals:"):
            return self.signals[ref.removeprefix("signals:")]
        return int(getattr(self, ref))


Group = tuple[str | None, str | None]  # (agent, agent_version)


def merge_groups(total: dict[Group, GroupCounts], part: dict[Group, GroupCounts]) -> None:
    for key, counts in part.items():
        total.setdefault(key, GroupCounts())
        total[key] += counts


def with_all_versions(groups: dict[Group, GroupCounts]) -> dict[Group, GroupCounts]:
    """``groups`` plus one group per agent summing its versions (version ``*``)."""
    out = dict(groups)
    for (agent, _), counts in groups.items():
        key = (agent, ALL_VERSIONS)
        out.setdefault(key, GroupCounts())
        out[key] += counts
    return out


def metric_rows(groups: dict[Group, GroupCounts], day: str, run_id: str) -> list[dict[str, Any]]:
    rows = []
    for (agent, version), counts in sorted(
        with_all_versions(groups).items(), key=lambda kv: (kv[0][0] or "", kv[0][1] or "")
    ):
        for m in METRICS:
            numerator, denominator = counts.value_of(m.numerator), counts.value_of(m.denominator)
            value = m.scale * numerator / denominator if denominator else None
            low = high = None
            if m.name in WEIGHTED:
                estimate = ratio_estimate(counts.judged)
                if estimate is not None:
                    value, low, high = estimate.value, estimate.low, estimate.high
            rows.append(
                {
                    "date": day,
                    "run_id": run_id,
                    "agent": agent,
                    "agent_version": version,
                    "metric": m.name,
                    "kind": m.kind,
                    "numerator": numerator,
                    "denominator": denominator,
                    "value": value,
                    "ci_low": low,
                    "ci_high": high,
                    "sessions": counts.sessions,
                }
            )
    return rows
