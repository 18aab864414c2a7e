"""``faithfulness_violation``: a reply cites an entity that nothing the agent saw supports.

Each assistant reply (its own text, not harness-injected or compaction text) is checked against
the context before it: system and user messages and tool outputs (or, with ``context_keys``, only
those JSON fields of tool outputs). Seven entity kinds are checked (see ``detectors.entities``):
case/ticket ids, SKUs and model numbers, error codes, percentages, money, counts with a noun and
date scopes. A number is supported when context holds it (in any written form, or rounded to the
precision the reply wrote it with), within ``tolerance`` when the reply marks it approximate, or
as the sum of two same-kind context numbers or of all of one context event's. When the supported
share of a reply's entities is below ``threshold``, every unsupported entity is a signal; the
first one carries the audit record in ``data["audit"]``. The context is extracted once per event,
as the session is walked, so a long session costs one pass.
"""

from __future__ import annotations

import bisect
import json
from collections import defaultdict
from typing import Any

from pydantic import Field

from detectors.entities import (
    KINDS,
    Entity,
    clean,
    context_counts,
    context_numbers,
    digit_runs,
    extract,
    scope_keys,
    viewed_lines,
)
from detectors.models import Severity, Signal
from detectors.registry import DetectorParams, detector
from sessions.models import Event, EventKind, Session

KIND = "faithfulness_violation"
_EPS = 1e-9


class FaithfulnessParams(DetectorParams):
    threshold: float = Field(
        0.9, ge=0, le=1, description="Replies whose supported share is below this are flagged."
    )
    tolerance: float = Field(
        0.1, ge=0, le=1, description="Relative slack for numbers marked approximate (`about 50`)."
    )
    context_keys: list[str] = Field(
        default_factory=list,
        description="JSON keys of tool outputs that hold retrieved context; empty = all output.",
    )


class _Pool:
    """Sorted numbers with lazy sorting, for range queries."""

    def __init__(self) -> None:
        self.values: list[float] = []
        self.exact: dict[float, int] = defaultdict(int)
        self._sorted = True

    def add(self, value: float) -> None:
        self.values.append(value)
        self.exact[round(value, 6)] += 1
        self._sorted = False

    def any_between(self, low: float, high: float) -> bool:
        if not self._sorted:
            self.values.sort()
            self._sorted = True
        i = bisect.bisect_left(self.values, low - _EPS)
        return i < len(self.values) and self.values[i] <= high + _EPS

    def pair_sum(self, target: float) -> bool:
        """Whether two context numbers (two occurrences, when they are equal) add up to it."""
        for value in self.exact:
            rest = round(target - value, 6)
            if rest in self.exact and (rest != value or self.exact[value] > 1):
                return True
        return False


class _Context:
    def __init__(self, params: FaithfulnessParams) -> None:
        self.params = params
        self.ids: set[str] = set()
        self.digits: set[str] = set()
        self.scopes: set[str] = set()
        self.kinds: dict[str, _Pool] = defaultdict(_Pool)
        self.totals: dict[str, set[float]] = defaultdict(set)
        self.bare = _Pool()
        self.texts: list[tuple[str, set[str]]] = []

    def add(self, text: str) -> None:
        if not text.strip():
            return
        entities = extract(text, context=True)
        norms: set[str] = set()
        sums: dict[str, float] = defaultdict(float)
        for e in entities:
            norms.add(e.norm)
            if e.kind == "date":
                self.scopes.update(scope_keys(e.norm))
            elif e.value is None:
                self.ids.add(e.norm)
            elif e.kind != "count":
                self.kinds[e.kind].add(e.value)
                sums[e.kind] += e.value
        for value in context_counts(text) + viewed_lines(text):
            self.kinds["count"].add(value)
            sums["count"] += value
        for kind, total in sums.items():
            self.totals[kind].add(round(total, 6))
        for value in context_numbers(text):
            self.bare.add(value)
        self.digits |= digit_runs(text)
        self.texts.append((clean(text), norms))

    def supports(self, e: Entity) -> bool:
        if e.kind == "date":
            return e.norm in self.scopes
        if e.value is None:
            return e.norm in self.ids or (len(e.digits) >= 3 and e.digits in self.digits)
        pool, value = self.kinds[e.kind], e.value
        mantissa = value / e.scale
        half = 0.5 * 10 ** (-e.decimals) * e.scale  # what rounding to the written precision hides
        low, high = mantissa * e.scale - half, mantissa * e.scale + half
        if e.qualifier == "approx":
            slack = abs(value) * self.params.tolerance
            low, high = min(low, value - slack), max(high, value + slack)
        if pool.any_between(low, high) or self.bare.any_between(low, high):
            return True
        if e.kind == "percent" and self.bare.any_between(low / 100, high / 100):
            return True  # 12% from a `"rate": 0.12` field
        if e.qualifier == "gt" and pool.values and max(pool.values) >= value:
            return True
        if e.qualifier == "lt" and pool.values and min(pool.values) <= value:
            return True
        return round(value, 6) in self.totals[e.kind] or pool.pair_sum(value)

    def excerpt_for(self, entities: list[Entity]) -> str:
        """About 300 characters of the context event sharing most entities with the reply."""
        if not self.texts:
            return ""
        wanted = {e.norm for e in entities}
        text, norms = max(reversed(self.texts), key=lambda t: len(t[1] & wanted))
        shared = [e for e in entities if e.norm in norms]
        at = next((text.find(e.raw) for e in shared if text.find(e.raw) >= 0), 0)
        start = max(0, at - 100)
        return " ".join(text[start : start + 300].split())[:300]


def _context_text(event: Event, keys: list[str]) -> str:
    if event.kind is not EventKind.TOOL_RESULT:
        return event.text
    if not keys:
        return event.output
    try:
        data = json.loads(event.output)
    except ValueError:
        return event.output
    found: list[str] = []
    _collect(data, set(keys), found)
    return "\n".join(found)


def _collect(data: Any, keys: set[str], found: list[str]) -> None:
    if isinstance(data, dict):
        for key, value in data.items():
            if key in keys:
                found.append(value if isinstance(value, str) else json.dumps(value))
            else:
                _collect(value, keys, found)
    elif isinstance(data, list):
        for item in data:
            _collect(item, keys, found)


def _is_reply(event: Event) -> bool:
    return (
        event.kind is EventKind.ASSISTANT
        and bool(event.text)
        and not event.meta.get("synthetic")
        and not event.meta.get("compaction")
    )


def _explain(e: Entity, tolerance: float) -> str:
    if e.value is None and e.kind != "date":
        return f"Reply cites {e.raw}, which appears nowhere in what the agent saw"
    if e.kind == "date":
        return f"Reply names the period {e.raw}, which no date in what the agent saw falls in"
    return (
        f"Reply states {e.raw}, which matches no {e.kind.replace('_', ' ')} in what the agent saw "
        f"(exactly, rounded, within {tolerance:.0%} when marked approximate, or as a sum)"
    )


def check_reply(
    reply: Event, context: _Context, params: FaithfulnessParams
) -> tuple[list[Signal], dict[str, Any] | None]:
    """The signals for one reply and its audit record (``None`` when it has no entities)."""
    entities = list({(e.kind, e.norm): e for e in extract(reply.text)}.values())
    if not entities:
        return [], None
    supported = [context.supports(e) for e in entities]
    score = sum(supported) / len(entities)
    breakdown: dict[str, dict[str, int]] = {}
    for kind in KINDS:
        mine = [ok for e, ok in zip(entities, supported, strict=True) if e.kind == kind]
        if mine:
            breakdown[kind] = {"supported": sum(mine), "total": len(mine)}
    unsupported = [e for e, ok in zip(entities, supported, strict=True) if not ok]
    audit = {
        "action": f"quality.{KIND}",
        "score": score,
        "threshold": params.threshold,
        "per_kind_breakdown": breakdown,
        "unsupported_sample": [e.raw for e in unsupported[:5]],
        "response_excerpt": " ".join(reply.text.split())[:300],
        "context_excerpt": "",
    }
    if score >= params.threshold:
        return [], audit
    audit["context_excerpt"] = context.excerpt_for(entities)
    signals = [
        Signal(
            kind=KIND,
            value=e.raw,
            events=[reply.index],
            severity=Severity.MEDIUM,
            explanation=f"{_explain(e, params.tolerance)} (reply score {score:.2f}).",
        )
        for e in unsupported
    ]
    signals[0].data["audit"] = audit
    return signals, audit


@detector("faithfulness", version=1, params=FaithfulnessParams, kinds=(KIND,))
def faithfulness(session: Session, params: FaithfulnessParams) -> list[Signal]:
    context = _Context(params)
    signals: list[Signal] = []
    for event in session.events:
        if event.kind in (EventKind.USER, EventKind.SYSTEM, EventKind.TOOL_RESULT):
            context.add(_context_text(event, params.context_keys))
        elif _is_reply(event):
            signals += check_reply(event, context, params)[0]
    return signals


__all__ = ["FaithfulnessParams", "check_reply", "faithfulness"]
