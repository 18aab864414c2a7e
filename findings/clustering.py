"""Clustering: one day's signal rows grouped into findings, one per failure mode and agent.

A signature names the failure mode from the facts detectors put in ``Signal.data``:

    unknown_tool               (kind, agent, called tool, closest registered tool)
    not_found                  (kind, agent, tool, masked error template)
    invented_id                (kind, agent, id pattern, tool the id was passed to)
    *_action_claim             (kind, agent, claim rule, masked preceding error)
    faithfulness_violation     (kind, agent, entity kind)
    *_claim (LLM judge)        (kind, agent, where the evidence came from, safety-critical domain)
    any other kind             (kind, agent, detector)

The agent version is not part of it (one failure across versions is one finding; the versions
are counted), nor is the day: the id, the first 12 hex digits of the sha256 of the signature's
canonical JSON, is the same tomorrow, so ``first_seen`` and ``trend`` carry over.

Severity, in three steps:

1. Base by kind: contradicted_action_claim, invented_id and contradicted_claim high;
   unbacked_action_claim, unknown_tool, faithfulness_violation and partial_claim medium;
   not_found and unsupported_claim low; other kinds medium. In an agent the judge config marks
   safety-critical (medical, financial, legal), a contradicted claim is critical and an
   ungrounded (unsupported) claim high.
2. Scale: one level up when the affected sessions are >= 5% of the agent's sessions that day
   (and at least 3 sessions), or >= 20 sessions.
3. Lift: one more level up when the affected sessions grew >= 2x since the finding's last
   previous appearance (and are at least 3).

The result is capped at critical. Findings come sorted by severity, then affected sessions.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any

import orjson

from detectors.models import Severity
from findings.models import Finding

MAX_SESSION_IDS = 100
SCALE_SHARE = 0.05
SCALE_SESSIONS = 20
MIN_SCALE_SESSIONS = 3
LIFT = 2.0
LEVELS = [Severity.LOW, Severity.MEDIUM, Severity.HIGH, Severity.CRITICAL]
BASE_SEVERITY = {
    "contradicted_action_claim": Severity.HIGH,
    "invented_id": Severity.HIGH,
    "unbacked_action_claim": Severity.MEDIUM,
    "unknown_tool": Severity.MEDIUM,
    "faithfulness_violation": Severity.MEDIUM,
    "not_found": Severity.LOW,
    "contradicted_claim": Severity.HIGH,
    "partial_claim": Severity.MEDIUM,
    "unsupported_claim": Severity.LOW,
}
# In a safety-critical domain, what a wrong or ungrounded claim is worth.
SAFETY_CRITICAL_SEVERITY = {
    "contradicted_claim": Severity.CRITICAL,
    "unsupported_claim": Severity.HIGH,
    "partial_claim": Severity.HIGH,
}
# Which fields of ``Signal.data`` name the failure mode, per kind (after kind and agent).
SIGNATURE_FIELDS = {
    "unknown_tool": ("tool", "closest"),
    "not_found": ("tool", "template"),
    "invented_id": ("pattern", "tool"),
    "unbacked_action_claim": ("rule", "preceding_error"),
    "contradicted_action_claim": ("rule", "preceding_error"),
    "faithfulness_violation": ("entity_kind",),
    "contradicted_claim": ("evidence_source", "domain"),
    "partial_claim": ("evidence_source", "domain"),
    "unsupported_claim": ("evidence_source", "domain"),
}
JUDGE_KINDS = ("contradicted_claim", "partial_claim", "unsupported_claim")


def cluster(
    signals: Sequence[Mapping[str, Any]],
    sessions_by_agent: Mapping[str | None, int],
    day: date,
    previous: Sequence[Finding] = (),
    *,
    max_examples: int = 5,
) -> list[Finding]:
    """The day's findings from its stored signal rows (see the module docstring)."""
    groups: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    signatures: dict[str, dict[str, Any]] = {}
    for row in signals:
        sig = signature(row)
        key = finding_id(sig)
        signatures[key] = sig
        groups[key].append(row)
    history = _history(previous, day)
    findings = [
        _finding(key, signatures[key], rows, sessions_by_agent, day, history, max_examples)
        for key, rows in groups.items()
    ]
    return sorted(
        findings, key=lambda f: (-LEVELS.index(f.severity), -f.affected_sessions, f.title, f.id)
    )


def signature(row: Mapping[str, Any]) -> dict[str, Any]:
    """The failure mode a stored signal row belongs to."""
    kind = str(row["kind"])
    data = _json(row.get("data"), {})
    if kind == "unknown_tool":
        data = {**data, "tool": row["value"]}  # the called name is the signal's value
    fields = SIGNATURE_FIELDS.get(kind)
    if fields is None:
        return {"kind": kind, "agent": row.get("agent"), "detector": row.get("detector")}
    return {"kind": kind, "agent": row.get("agent"), **{name: data.get(name) for name in fields}}


def finding_id(sig: Mapping[str, Any]) -> str:
    canonical = orjson.dumps(dict(sig), option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(canonical).hexdigest()[:12]


def severity(
    kind: str,
    affected: int,
    share: float | None,
    previous_sessions: int | None,
    domain: str | None = None,
) -> Severity:
    base = BASE_SEVERITY.get(kind, Severity.MEDIUM)
    if domain:
        base = SAFETY_CRITICAL_SEVERITY.get(kind, base)
    level = LEVELS.index(base)
    # A share only raises severity with a few sessions behind it: 1 of 4 sessions is 25%,
    # but one session is an anecdote, not a scale.
    widespread = share is not None and share >= SCALE_SHARE and affected >= MIN_SCALE_SESSIONS
    if affected >= SCALE_SESSIONS or widespread:
        level += 1
    if (
        previous_sessions
        and affected >= LIFT * previous_sessions
        and affected >= MIN_SCALE_SESSIONS
    ):
        level += 1
    return LEVELS[min(level, len(LEVELS) - 1)]


def _finding(
    key: str,
    sig: dict[str, Any],
    rows: list[Mapping[str, Any]],
    sessions_by_agent: Mapping[str | None, int],
    day: date,
    history: Mapping[str, tuple[date, list[dict[str, Any]]]],
    max_examples: int,
) -> Finding:
    agent = sig["agent"]
    sessions = sorted({str(r["session_id"]) for r in rows})
    versions: dict[str, set[str]] = defaultdict(set)
    for r in rows:
        versions[str(r.get("agent_version") or "unknown")].add(str(r["session_id"]))
    total = sessions_by_agent.get(agent)
    share = len(sessions) / total if total else None
    first_seen, trend = history.get(key, (day, []))
    previous_sessions = int(trend[-1]["sessions"]) if trend else None
    title, fix = describe(sig)
    return Finding(
        id=key,
        day=day,
        signature=sig,
        title=title,
        kind=sig["kind"],
        agent=agent,
        severity=severity(sig["kind"], len(sessions), share, previous_sessions, sig.get("domain")),
        affected_sessions=len(sessions),
        affected_share=share,
        signals=len(rows),
        first_seen=first_seen,
        recommended_fix=fix,
        agent_versions={v: len(ids) for v, ids in sorted(versions.items())},
        session_ids=sessions[:MAX_SESSION_IDS],
        trend=[*trend, {"date": day.isoformat(), "sessions": len(sessions)}],
        examples=examples(rows, max_examples),
    )


def _history(
    previous: Sequence[Finding], day: date
) -> dict[str, tuple[date, list[dict[str, Any]]]]:
    """Per finding id: its first day and its trend before ``day`` (a re-run replaces the day)."""
    first: dict[str, date] = {}
    points: dict[str, dict[str, int]] = defaultdict(dict)
    for f in sorted(previous, key=lambda f: f.day):  # later days' records win
        if f.day >= day:
            continue
        first[f.id] = min(first.get(f.id, f.first_seen), f.first_seen)
        for point in f.trend:
            if date.fromisoformat(str(point["date"])) < day:
                points[f.id][str(point["date"])] = int(point["sessions"])
        points[f.id][f.day.isoformat()] = f.affected_sessions
    return {
        key: (first[key], [{"date": d, "sessions": n} for d, n in sorted(points[key].items())])
        for key in first
    }


def examples(rows: Sequence[Mapping[str, Any]], limit: int) -> list[dict[str, Any]]:
    """Up to ``limit`` examples in session-id order, one per session before any second one."""
    ordered = sorted(rows, key=lambda r: (str(r["session_id"]), _first_event(r), str(r["value"])))
    rank: Counter[str] = Counter()  # the nth example of its session, so firsts come first
    ranked: list[tuple[int, int, Mapping[str, Any]]] = []
    for row in ordered:
        rank[str(row["session_id"])] += 1
        ranked.append((rank[str(row["session_id"])], len(ranked), row))
    chosen = [row for _, _, row in sorted(ranked, key=lambda item: item[:2])[:limit]]
    return [
        {
            "session_id": row["session_id"],
            "source": row.get("source"),
            "agent_version": row.get("agent_version"),
            "value": row["value"],
            "explanation": row.get("explanation"),
            "events": _json(row.get("evidence"), []),
        }
        for row in chosen
    ]


def _first_event(row: Mapping[str, Any]) -> int:
    events = row.get("events") or []
    return min(int(e) for e in events) if len(events) else -1


def _json(raw: Any, default: Any) -> Any:
    """A JSON column's value, or ``default`` when it is empty, unreadable or of another type."""
    try:
        value = orjson.loads(raw) if isinstance(raw, str | bytes) and raw else raw
    except orjson.JSONDecodeError:
        return default
    return value if isinstance(value, type(default)) else default


# --- what a failure mode is called and how it is fixed ----------------------------------------

ENTITY_NAMES = {
    "case_id": "case numbers",
    "sku": "SKUs or model numbers",
    "error_code": "error codes",
    "percent": "percentages",
    "money": "amounts of money",
    "count": "counts",
    "date": "dates",
}
TARGETS = {
    "<path>": "file paths",
    "<cmd>": "commands (e.g. `which`)",
    "<module>": "modules",
    "<ref>": "git branches and revisions",
}
# How to back a default claim rule, for the fix ("require a successful call: run the tests").
CHECKS = {
    "tests pass": "run the tests",
    "the test run passes": "run the tests",
    "committed": "`git commit`",
    "pushed": "`git push`",
    "opened a pull request": "create the pull request",
    "deployed": "run the deploy",
    "emailed": "send the email",
    "edited the file": "an edit tool call",
}
_FAILED_COMMAND = re.compile(r"^(`[^`]*`) failed\b")


def describe(sig: Mapping[str, Any]) -> tuple[str, str]:
    """The title and the recommended fix of a failure mode, with its specifics filled in."""
    kind, who = sig["kind"], sig["agent"] or "an agent with no name"
    if kind == "unknown_tool":
        tool, closest = sig["tool"], sig["closest"]
        if closest:
            return (
                f"{who} still calls `{tool}` (renamed `{closest}`?)",
                f"Update the tool description or system prompt that still names `{tool}`; "
                f"it is now `{closest}`.",
            )
        return (
            f"{who} calls `{tool}`, which is not one of its tools",
            f"List `{tool}` among the agent's tools or remove it from the prompt.",
        )
    if kind == "not_found":
        tool, template = sig["tool"], sig["template"] or "not found"
        placeholders = [t for p, t in TARGETS.items() if p in template]
        targets = placeholders[0] if placeholders else "targets"
        return (
            f'{who} calls `{tool}` on targets that do not exist ("{template}")',
            f"Give the agent a way to look up valid {targets} (a search/list tool) before "
            f"calling `{tool}`, or validate inputs.",
        )
    if kind == "invented_id":
        pattern, tool = str(sig["pattern"]), sig["tool"] or "a tool"
        ids = f"`{pattern.split(':', 1)[1]}`" if pattern.startswith("stripe:") else pattern
        return (
            f"{who} invents {ids} ids passed to `{tool}`",
            f"Give the agent a lookup tool for {ids} ids or put the id in context; "
            f"reject unknown ids in `{tool}`.",
        )
    if kind in ("unbacked_action_claim", "contradicted_action_claim"):
        return _claim(who, kind, str(sig["rule"]), sig["preceding_error"])
    if kind in JUDGE_KINDS:
        return _judged(who, kind, sig.get("evidence_source"), sig.get("domain"))
    if kind == "faithfulness_violation":
        entities = ENTITY_NAMES.get(str(sig["entity_kind"]), f"{sig['entity_kind']} values")
        return (
            f"{who} cites {entities} not in the retrieved context",
            f"Add a citation policy (cite the source of every {entities.rstrip('s')}) or "
            f"tighten retrieval so the context holds the {entities} the agent needs.",
        )
    return (
        f"{who}: {kind} ({sig.get('detector') or 'unknown detector'})",
        f"Read the example sessions; the `{kind}` signals share no more specific cause.",
    )


_SOURCES = {
    "tool_output": "tool output",
    "user_message": "the user's own message",
    "retrieved_context": "the retrieved context",
    "reference": "the reference facts",
}


def _judged(who: str, kind: str, source: str | None, domain: str | None) -> tuple[str, str]:
    """Title and fix of a failure mode the LLM judge found, by where the evidence came from."""
    where = _SOURCES.get(source or "", "what the session shows")
    if kind == "unsupported_claim":
        if domain:
            return (
                f"{who} states {domain} facts it never looked up",
                f"Add a refusal-and-redirect policy: {domain} facts not found in the session are "
                "not stated; the agent says it cannot confirm them and points to a tool or a "
                "qualified person.",
            )
        return (
            f"{who} states facts nothing in the session supports",
            "Ground answers: look names, numbers, ids and dates up with a tool or retrieval "
            "before stating them, and say so when they are not available.",
        )
    verb = "contradict" if kind == "contradicted_claim" else "differ from"
    title = f"{who} states facts that {verb} {where}"
    if source == "tool_output":
        fix = "Use tool data verbatim: quote values exactly as the tool returned them."
    elif source == "user_message":
        fix = "Restate the user's facts exactly: repeat names, numbers and dates as given."
    else:
        fix = (
            "Add a citation policy: state facts only from the retrieved passages and cite them; "
            "if the passage lacks the fact, improve retrieval recall."
        )
    return title + (f" ({domain})" if domain else ""), fix


def _claim(who: str, kind: str, rule: str, error: str | None) -> tuple[str, str]:
    check = CHECKS.get(rule, "the matching tool call")
    fix = (
        f"Add a completion check before the final reply: require a successful call that backs "
        f'"{rule}" ({check}) in the same turn'
    )
    if kind == "unbacked_action_claim":
        return f"{who} claims {rule} without a matching call", fix + "."
    failed = _FAILED_COMMAND.match(error or "")
    after = f"a failed {failed.group(1)}" if failed else (error or "a failed call")
    fix += f", and surface the failure: the reply must report that {error or 'the call failed'}."
    return f"{who} claims {rule} after {after}", fix
