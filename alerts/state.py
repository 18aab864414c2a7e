"""What has been alerted already, kept in the results store so any worker sees it.

    <results>/alerts/state.json
      {"items":     {<alert key>: {"last_day", "last_severity_rank", "last_value"}},
       "delivered": {<alert id>: {<channel>: <day>}}}

``items`` is the cooldown: the same anomaly or finding is not alerted again within
``cooldown_days`` of its last alert unless it got worse (a higher severity, or its value up by
half or more since that alert). ``delivered`` makes a re-run of a day send nothing twice: an
alert id a channel already took is skipped. Both are pruned after ``KEEP_DAYS``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

import orjson

from alerts.models import Alert
from findings.store import ResultsStore

KEEP_DAYS = 60
WORSE_VALUE_RATIO = 1.5


def state_key(results: ResultsStore) -> str:
    return f"{results.prefix}alerts/state.json"


@dataclass(slots=True)
class AlertState:
    items: dict[str, dict[str, Any]] = field(default_factory=dict)
    delivered: dict[str, dict[str, str]] = field(default_factory=dict)

    @classmethod
    def load(cls, results: ResultsStore) -> AlertState:
        key = state_key(results)
        if not results.store.exists(key):
            return cls()
        raw = orjson.loads(results.store.read(key))
        return cls(items=dict(raw.get("items", {})), delivered=dict(raw.get("delivered", {})))

    def save(self, results: ResultsStore, today: date, cooldown_days: int) -> None:
        horizon = (today - timedelta(days=max(KEEP_DAYS, cooldown_days))).isoformat()
        items = {k: v for k, v in self.items.items() if v["last_day"] >= horizon}
        delivered = {
            alert_id: channels
            for alert_id, channels in self.delivered.items()
            if max(channels.values(), default="") >= horizon
        }
        value = {"items": items, "delivered": delivered}
        results.store.write(
            state_key(results),
            orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS),
        )

    def delivered_on(self, alert: Alert, channel: str) -> str | None:
        """The day ``channel`` took this very alert (same item, same day), if it did."""
        return self.delivered.get(alert.id, {}).get(channel)

    def mark_delivered(self, alert: Alert, channel: str, today: date) -> None:
        self.delivered.setdefault(alert.id, {})[channel] = today.isoformat()

    def cooldown(self, alert: Alert, cooldown_days: int) -> str | None:
        """Why ``alert`` is held back by the cooldown, or None when it may go out."""
        last = self.items.get(alert.key)
        if last is None:
            return None
        last_day = date.fromisoformat(last["last_day"])
        if (alert.day - last_day).days >= cooldown_days:
            return None
        if alert.severity_rank > int(last["last_severity_rank"]):
            return None
        before = last.get("last_value")
        if alert.value is not None and before and alert.value >= WORSE_VALUE_RATIO * before:
            return None
        until = last_day + timedelta(days=cooldown_days)
        return f"cooldown: alerted on {last_day} and not worse since; may repeat from {until}"

    def remember(self, alert: Alert) -> None:
        """``alert`` went out (or waits in the outbox): its cooldown starts on its day."""
        last = self.items.get(alert.key)
        if last is not None and last["last_day"] > alert.day.isoformat():
            return  # a backfill of an older day does not move the cooldown back
        self.items[alert.key] = {
            "last_day": alert.day.isoformat(),
            "last_severity_rank": alert.severity_rank,
            "last_value": alert.value,
        }
