"""Send a day's alerts: retry the outbox, build, redact, dedup, route, send, record.

    dispatch(day, run_id, anomalies, findings, config, results, channels) -> DispatchResult

One failing channel never blocks the others: its alerts go to the outbox and the rest are sent.
``DispatchResult.failed`` is true when any delivery ended failed, which is what makes the run
exit with code 4; findings alone never do.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from alerts.channels import Channel
from alerts.config import AlertsConfig
from alerts.models import Alert, Delivery, DeliveryStatus
from alerts.outbox import MAX_ATTEMPTS, Outbox, record_deliveries
from alerts.redact import Redactor, env_secrets
from alerts.routing import alerts_for_day, route
from alerts.state import AlertState
from findings.store import ResultsStore
from sessions.errors import DeliveryError

log = logging.getLogger(__name__)


class AlertsNotDelivered(DeliveryError):
    """Raised at the end of a run whose alerts could not all be delivered (they wait in the
    outbox). It carries the run's manifest: everything else about the run succeeded."""

    def __init__(self, message: str, manifest: dict[str, Any]) -> None:
        super().__init__(message, retryable=True)
        self.manifest = manifest


@dataclass(slots=True)
class DispatchResult:
    deliveries: list[Delivery]
    failed: bool
    alerts: list[Alert]
    record_key: str


class _Run:
    """One dispatch: the state it reads and updates, and the deliveries it records."""

    def __init__(
        self,
        day: date,
        results: ResultsStore,
        channels: Mapping[str, Channel],
        redactor: Redactor,
        now: datetime,
    ) -> None:
        self.day, self.channels, self.redactor, self.now = day, channels, redactor, now
        self.state = AlertState.load(results)
        self.outbox = Outbox(results)
        self.deliveries: list[Delivery] = []

    def record(
        self,
        alerts: Sequence[Alert],
        channel: str,
        status: DeliveryStatus,
        reason: str | None = None,
        *,
        attempts: int = 0,
        error: str | None = None,
    ) -> None:
        ids = [a.id for a in alerts]
        self.deliveries.append(Delivery(ids, channel, status, attempts, error, self.now, reason))

    def send(self, channel: str, alerts: Sequence[Alert]) -> str | None:
        """Send; the error (redacted, it may quote a URL or a token) or None on success."""
        target = self.channels.get(channel)
        if target is None:
            return f"no channel {channel!r} was built for this run"
        try:
            target.send(alerts)
        except Exception as exc:  # a bug in one channel must not stop the others
            # One redacted line, no traceback: a library's exception may quote a URL or token.
            error = self.redactor.text(f"{type(exc).__name__}: {exc}")
            log.warning("alerts: %s failed: %s", channel, error)
            return error
        for alert in alerts:
            self.state.mark_delivered(alert, channel, self.day)
        return None

    def retry_outbox(self, dry_run: bool) -> None:
        down: dict[str, str] = {}  # channel -> why it is not tried again in this run
        for entry in self.outbox.entries():
            alert, channel = entry.alert, entry.channel
            if dry_run or channel in down:
                why = "waiting in the outbox" + (f"; {down[channel]}" if channel in down else "")
                self.record([alert], channel, "queued", why, attempts=entry.attempts)
                continue
            if self.state.delivered_on(alert, channel):
                self.outbox.remove(alert, channel)
                self.record([alert], channel, "skipped_duplicate", "already delivered")
                continue
            error = self.send(channel, [alert])
            if error is None:
                self.outbox.remove(alert, channel)
                reason = f"from the outbox (first failed {entry.first_failed})"
                self.record([alert], channel, "sent", reason, attempts=entry.attempts + 1)
                continue
            attempts = self.outbox.put(alert, channel, error, self.now)
            reason = "kept in the outbox for the next run"
            if attempts >= MAX_ATTEMPTS:
                self.outbox.remove(alert, channel)
                reason = f"dropped from the outbox after {attempts} failed runs"
            down[channel] = f"{channel} failed again in this run"
            self.record([alert], channel, "failed", reason, attempts=attempts, error=error)

    def deliver(
        self, planned: Sequence[tuple[str, list[Alert], bool]], config: AlertsConfig, dry_run: bool
    ) -> None:
        held: dict[str, str] = {}
        for _, group, _ in planned:
            for alert in group:
                if why := self.state.cooldown(alert, config.cooldown_days):
                    held[alert.id] = why
        handled: dict[str, Alert] = {}
        for channel, group, _digest in planned:
            todo = []
            for alert in group:
                if day := self.state.delivered_on(alert, channel):
                    self.record([alert], channel, "skipped_duplicate", f"delivered on {day}")
                elif self.outbox.holds(alert, channel):
                    self.record([alert], channel, "queued", "waiting in the outbox")
                elif alert.id in held:
                    self.record([alert], channel, "skipped_duplicate", held[alert.id])
                else:
                    todo.append(alert)
            if not todo:
                continue
            if dry_run:
                why = "dry run" if config.enabled else "alerts.enabled is false"
                self.record(todo, channel, "dry_run", why)
                continue
            error = self.send(channel, todo)
            if error is None:
                self.record(todo, channel, "sent", attempts=1)
            else:
                for alert in todo:
                    self.outbox.put(alert, channel, error, self.now)
                reason = "kept in the outbox for the next run"
                self.record(todo, channel, "failed", reason, attempts=1, error=error)
            handled.update((a.id, a) for a in todo)
        for alert in handled.values():
            self.state.remember(alert)


def dispatch(
    day: date,
    run_id: str,
    anomalies: Sequence[Mapping[str, Any]],
    findings: Sequence[Mapping[str, Any]],
    config: AlertsConfig,
    results: ResultsStore,
    channels: Mapping[str, Channel],
    *,
    dry_run: bool = False,
    now: datetime | None = None,
    redactor: Redactor | None = None,
) -> DispatchResult:
    """Alert on ``day``'s anomalies and findings (as in the manifest and ``findings_detail``).

    The redactor defaults to ``config.redact`` plus the values of the secret-looking env vars
    and of those the channels read. A dry run (or ``enabled: false``) sends nothing and changes
    no state or outbox, but records what it would have sent.
    """
    dry_run = dry_run or not config.enabled
    if redactor is None:
        redactor = Redactor(config.redact, env_secrets(names=config.secret_env_names()))
    run = _Run(day, results, channels, redactor, now or datetime.now(UTC))
    try:
        run.retry_outbox(dry_run)
    finally:
        if not dry_run:
            run.state.save(results, day, config.cooldown_days)
    report_url = config.report_url(day.isoformat())
    built = alerts_for_day(day, anomalies, findings, config.teams, report_url)
    alerts = [redactor.redact_alert(a) for a in built]
    try:
        run.deliver(route(alerts, config), config, dry_run)
    finally:  # what was sent stays sent, even if recording the rest failed
        if not dry_run:
            run.state.save(results, day, config.cooldown_days)
    key = record_deliveries(results, day, run_id, run.deliveries, alerts, dry_run=dry_run)
    failed = any(d.status == "failed" for d in run.deliveries)
    return DispatchResult(run.deliveries, failed, alerts, key)
