"""Failed deliveries wait in the outbox; every run records what it delivered.

    <results>/alerts/outbox/<alert_id>__<channel>.json         {alert, channel, attempts, ...}
    <results>/alerts/deliveries/date=YYYY-MM-DD/run=<id>.json   the run's deliveries

A delivery that failed after the channel's own retries is written to the outbox and retried at
the start of the next run's dispatch; it is removed once sent. An entry that failed
``MAX_ATTEMPTS`` runs in a row is dropped (and that drop recorded as failed), so one poisoned
alert does not fail every night from then on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

import orjson

from alerts.models import Alert, Delivery
from findings.store import ResultsStore

MAX_ATTEMPTS = 5


@dataclass(frozen=True, slots=True)
class OutboxEntry:
    alert: Alert
    channel: str
    attempts: int  # failed attempts so far, one per run
    first_failed: str  # ISO timestamp
    error: str | None


class Outbox:
    def __init__(self, results: ResultsStore) -> None:
        self.store = results.store
        self.prefix = f"{results.prefix}alerts/outbox/"

    def _key(self, alert_id: str, channel: str) -> str:
        return f"{self.prefix}{alert_id}__{channel}.json"

    def holds(self, alert: Alert, channel: str) -> bool:
        return self.store.exists(self._key(alert.id, channel))

    def entries(self) -> list[OutboxEntry]:
        """Every waiting entry, oldest failure first."""
        out = []
        for obj in self.store.list(self.prefix):
            if not obj.key.endswith(".json"):
                continue
            raw = orjson.loads(self.store.read(obj.key))
            out.append(
                OutboxEntry(
                    alert=Alert.from_dict(raw["alert"]),
                    channel=raw["channel"],
                    attempts=int(raw.get("attempts", 1)),
                    first_failed=raw.get("first_failed", ""),
                    error=raw.get("error"),
                )
            )
        return sorted(out, key=lambda e: (e.first_failed, e.channel, e.alert.id))

    def put(self, alert: Alert, channel: str, error: str, now: datetime) -> int:
        """Keep (or keep again) ``alert`` for ``channel``; returns its failed attempts so far."""
        key = self._key(alert.id, channel)
        previous: dict[str, Any] = (
            orjson.loads(self.store.read(key)) if self.store.exists(key) else {}
        )
        attempts = int(previous.get("attempts", 0)) + 1
        entry = {
            "alert": alert.to_dict(),
            "channel": channel,
            "attempts": attempts,
            "first_failed": previous.get("first_failed", now.isoformat()),
            "last_failed": now.isoformat(),
            "error": error,
        }
        self.store.write(key, orjson.dumps(entry, option=orjson.OPT_INDENT_2))
        return attempts

    def remove(self, alert: Alert, channel: str) -> None:
        # An exact key is a prefix of only itself: keys end in ".json".
        self.store.delete_prefix(self._key(alert.id, channel))


def deliveries_key(results: ResultsStore, day: date, run_id: str) -> str:
    return f"{results.prefix}alerts/deliveries/date={day.isoformat()}/run={run_id}.json"


def record_deliveries(
    results: ResultsStore,
    day: date,
    run_id: str,
    deliveries: Sequence[Delivery],
    alerts: Sequence[Alert],
    *,
    dry_run: bool,
) -> str:
    """Write what this run delivered (and the redacted alerts it built); returns the key."""
    key = deliveries_key(results, day, run_id)
    value = {
        "date": day.isoformat(),
        "run_id": run_id,
        "dry_run": dry_run,
        "deliveries": [d.to_dict() for d in deliveries],
        "alerts": [a.to_dict() for a in alerts],
    }
    results.store.write(key, orjson.dumps(value, option=orjson.OPT_INDENT_2))
    return key


def read_deliveries(results: ResultsStore, day: date, run_id: str) -> dict[str, Any] | None:
    key = deliveries_key(results, day, run_id)
    if not results.store.exists(key):
        return None
    value = orjson.loads(results.store.read(key))
    return value if isinstance(value, dict) else None
