"""Dispatch against a real results store on disk: cooldown, re-runs, the outbox, the record."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest

from alerts.config import AlertsConfig
from alerts.dispatch import DispatchResult, dispatch
from alerts.models import Alert
from alerts.outbox import MAX_ATTEMPTS, read_deliveries
from alerts.redact import Redactor
from findings.store import ResultsStore
from sessions.errors import DeliveryError
from sessions.storage import LocalStore

DAY = date(2026, 11, 29)


class Recording:
    """A channel that keeps what it was sent."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.sent: list[list[Alert]] = []

    def send(self, alerts: Sequence[Alert]) -> None:
        self.sent.append(list(alerts))

    @property
    def keys(self) -> list[list[str]]:
        return [[a.key for a in batch] for batch in self.sent]


class Flaky(Recording):
    """A channel that fails while ``down``, the way a 503 looks after the channel's retries."""

    def __init__(self, name: str, down: bool = True) -> None:
        super().__init__(name)
        self.down = down
        self.calls = 0

    def send(self, alerts: Sequence[Alert]) -> None:
        self.calls += 1
        if self.down:
            raise DeliveryError(f"{self.name}: 503 from hooks.example.com", retryable=True)
        super().send(alerts)


def finding(sessions: int = 10, severity: str = "high", day: date = DAY, **over: Any) -> dict:
    return {
        "id": "f-invented-case-id",
        "day": day.isoformat(),
        "title": "support-agent cites case numbers no tool returned",
        "kind": "invented_id",
        "agent": "support-agent",
        "severity": severity,
        "affected_sessions": sessions,
        "affected_share": sessions / 1000,
        "first_seen": "2026-11-20",
        "recommended_fix": "Only quote case numbers returned by lookup_case.",
        "agent_versions": {"2.3": sessions},
        "examples": [],
        **over,
    }


@pytest.fixture
def results(tmp_path: Path) -> ResultsStore:
    return ResultsStore(LocalStore(tmp_path), "halluwatch/")


def cfg(**over: Any) -> AlertsConfig:
    return AlertsConfig.model_validate(
        {"channels": {"slack": {"type": "console"}, "hook": {"type": "console"}}, **over}
    )


def run(
    results: ResultsStore,
    channels: dict[str, Recording],
    findings: list[dict],
    day: date = DAY,
    run_id: str = "r1",
    config: AlertsConfig | None = None,
    **kw: Any,
) -> DispatchResult:
    now = datetime(day.year, day.month, day.day, 6, tzinfo=UTC)
    return dispatch(
        day,
        run_id,
        [],
        findings,
        config or cfg(),
        results,
        channels,
        now=now,
        redactor=kw.pop("redactor", Redactor(None, [])),
        **kw,
    )


def statuses(result: DispatchResult) -> list[tuple[str, str]]:
    return [(d.channel, d.status) for d in result.deliveries]


def outbox_keys(results: ResultsStore) -> list[str]:
    return [o.key for o in results.store.list("halluwatch/alerts/outbox/")]


def test_sends_to_every_routed_channel_and_records_it(results: ResultsStore) -> None:
    slack, hook = Recording("slack"), Recording("hook")
    result = run(results, {"slack": slack, "hook": hook}, [finding()])
    assert statuses(result) == [("slack", "sent"), ("hook", "sent")] and not result.failed
    assert slack.keys == hook.keys == [["f-invented-case-id"]]
    record = read_deliveries(results, DAY, "r1")
    assert record is not None and record["dry_run"] is False
    assert [(d["channel"], d["status"]) for d in record["deliveries"]] == statuses(result)
    assert record["deliveries"][0]["alert_ids"] == [result.alerts[0].id]
    assert record["alerts"][0]["summary"].startswith("10 sessions affected")


def test_a_rerun_of_the_same_day_sends_nothing_new(results: ResultsStore) -> None:
    slack, hook = Recording("slack"), Recording("hook")
    run(results, {"slack": slack, "hook": hook}, [finding()])
    again = run(results, {"slack": slack, "hook": hook}, [finding(sessions=30)], run_id="r2")
    assert statuses(again) == [("slack", "skipped_duplicate"), ("hook", "skipped_duplicate")]
    assert all(d.reason == f"delivered on {DAY}" for d in again.deliveries)
    assert len(slack.sent) == len(hook.sent) == 1 and not again.failed
    assert read_deliveries(results, DAY, "r2") is not None


def test_cooldown_holds_a_repeat_unless_it_got_worse(results: ResultsStore) -> None:
    slack = Recording("slack")
    config = cfg(channels={"slack": {"type": "console"}}, cooldown_days=3)

    def day_run(offset: int, **kw: Any) -> list[str]:
        day = DAY + timedelta(days=offset)
        result = run(results, {"slack": slack}, [finding(day=day, **kw)], day, config=config)
        return [d.status for d in result.deliveries]

    assert day_run(0, sessions=10) == ["sent"]
    assert day_run(1, sessions=14) == ["skipped_duplicate"]  # +40%: not worse enough
    assert day_run(2, sessions=15) == ["sent"]  # +50% on the last alert: worse
    assert day_run(3, sessions=15) == ["skipped_duplicate"]
    assert day_run(4, sessions=15, severity="critical") == ["sent"]  # higher severity
    assert day_run(5, sessions=15, severity="critical") == ["skipped_duplicate"]
    assert day_run(7, sessions=15, severity="critical") == ["sent"]  # cooldown over
    assert [a.day for batch in slack.sent for a in batch] == [
        DAY + timedelta(days=n) for n in (0, 2, 4, 7)
    ]


def test_cooldown_reason_is_recorded(results: ResultsStore) -> None:
    slack = Recording("slack")
    config = cfg(channels={"slack": {"type": "console"}})
    run(results, {"slack": slack}, [finding()], config=config)
    later = run(results, {"slack": slack}, [finding()], DAY + timedelta(days=1), config=config)
    [delivery] = later.deliveries
    assert delivery.reason == (
        "cooldown: alerted on 2026-11-29 and not worse since; may repeat from 2026-12-02"
    )


def test_a_failing_channel_queues_its_copy_and_the_next_run_delivers_it(
    results: ResultsStore,
) -> None:
    slack, hook = Recording("slack"), Flaky("hook")
    first = run(results, {"slack": slack, "hook": hook}, [finding()])
    assert statuses(first) == [("slack", "sent"), ("hook", "failed")] and first.failed
    assert slack.keys == [["f-invented-case-id"]]
    failed = first.deliveries[1]
    assert failed.error == "DeliveryError: hook: 503 from hooks.example.com"
    assert failed.reason == "kept in the outbox for the next run"
    alert_id = first.alerts[0].id
    [key] = outbox_keys(results)
    assert key == f"halluwatch/alerts/outbox/{alert_id}__hook.json"
    entry = orjson.loads(results.store.read(key))
    assert entry["channel"] == "hook" and entry["alert"]["id"] == alert_id
    assert entry["attempts"] == 1

    hook.down = False
    tomorrow = DAY + timedelta(days=1)
    second = run(results, {"slack": slack, "hook": hook}, [finding(day=tomorrow)], tomorrow)
    assert not second.failed
    assert statuses(second) == [
        ("hook", "sent"),  # yesterday's copy, from the outbox, first
        ("slack", "skipped_duplicate"),  # today's: in cooldown
        ("hook", "skipped_duplicate"),
    ]
    assert second.deliveries[0].reason == "from the outbox (first failed 2026-11-29T06:00:00+00:00)"
    assert [[a.day for a in batch] for batch in hook.sent] == [[DAY]]
    assert outbox_keys(results) == []


def test_outbox_retry_that_fails_again_keeps_the_entry_then_gives_up(
    results: ResultsStore,
) -> None:
    hook = Flaky("hook")
    config = cfg(channels={"hook": {"type": "console"}})
    run(results, {"hook": hook}, [finding()], config=config)
    for n in range(2, MAX_ATTEMPTS + 1):
        day = DAY + timedelta(days=n - 1)
        result = run(results, {"hook": hook}, [], day, config=config)
        [delivery] = result.deliveries
        assert (delivery.status, delivery.attempts) == ("failed", n) and result.failed
        if n < MAX_ATTEMPTS:
            assert len(outbox_keys(results)) == 1
    assert delivery.reason == f"dropped from the outbox after {MAX_ATTEMPTS} failed runs"
    assert outbox_keys(results) == []


def test_rerun_while_the_copy_waits_in_the_outbox_does_not_send_it_twice(
    results: ResultsStore,
) -> None:
    hook = Flaky("hook")
    config = cfg(channels={"hook": {"type": "console"}})
    run(results, {"hook": hook}, [finding()], config=config)
    again = run(results, {"hook": hook}, [finding()], run_id="r2", config=config)
    assert [(d.status, d.reason) for d in again.deliveries] == [
        ("failed", "kept in the outbox for the next run"),
        ("queued", "waiting in the outbox"),
    ]
    assert hook.calls == 2  # the first run, and the outbox retry: not the fresh copy


def test_a_channel_missing_from_the_run_fails_only_itself(results: ResultsStore) -> None:
    slack = Recording("slack")
    result = run(results, {"slack": slack}, [finding()])
    assert statuses(result) == [("slack", "sent"), ("hook", "failed")]
    assert result.deliveries[1].error == "no channel 'hook' was built for this run"


def test_a_crashing_channel_does_not_block_the_others(results: ResultsStore) -> None:
    class Broken(Recording):
        def send(self, alerts: Sequence[Alert]) -> None:
            raise KeyError("template variable")

    slack = Recording("slack")
    result = run(results, {"hook": Broken("hook"), "slack": slack}, [finding()])
    assert statuses(result) == [("slack", "sent"), ("hook", "failed")]
    assert result.deliveries[1].error == "KeyError: 'template variable'"


def test_dry_run_sends_nothing_and_changes_no_state(results: ResultsStore) -> None:
    slack, hook = Recording("slack"), Flaky("hook")
    result = run(results, {"slack": slack, "hook": hook}, [finding()], dry_run=True)
    assert statuses(result) == [("slack", "dry_run"), ("hook", "dry_run")]
    assert slack.sent == [] and hook.calls == 0 and not result.failed
    assert not results.store.exists("halluwatch/alerts/state.json")
    assert read_deliveries(results, DAY, "r1") is not None
    real = run(results, {"slack": slack, "hook": Recording("hook")}, [finding()], run_id="r2")
    assert statuses(real) == [("slack", "sent"), ("hook", "sent")]


def test_disabled_alerts_are_recorded_not_sent(results: ResultsStore) -> None:
    slack = Recording("slack")
    config = cfg(channels={"slack": {"type": "console"}}, enabled=False)
    result = run(results, {"slack": slack}, [finding()], config=config)
    assert [(d.status, d.reason) for d in result.deliveries] == [
        ("dry_run", "alerts.enabled is false")
    ]
    assert slack.sent == []


def test_findings_below_min_severity_send_nothing_and_do_not_fail(results: ResultsStore) -> None:
    slack = Recording("slack")
    result = run(results, {"slack": slack}, [finding(severity="low")])
    assert result.deliveries == [] and not result.failed and slack.sent == []


def test_session_text_with_an_email_address_never_reaches_a_channel(
    results: ResultsStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SUPPORT_HOOK_URL", "https://hooks.example.com/T0/very-private")
    example = {
        "session_id": "s-1",
        "agent_version": "2.3",
        "value": "I emailed the receipt to jane.doe@example.com",
        "explanation": "no send_email call backs it",
        "events": [{"index": 3, "kind": "user", "text": "I'm jane.doe@example.com"}],
    }
    config = cfg(
        channels={"hook": {"type": "webhook", "url": "https://x", "secret_env": "SUPPORT_HOOK_URL"}}
    )
    hook = Recording("hook")
    leaky = finding(
        examples=[example],
        recommended_fix="Check https://hooks.example.com/T0/very-private",
    )
    dispatch(DAY, "r1", [], [leaky], config, results, {"hook": hook}, now=datetime.now(UTC))
    [[alert]] = hook.sent
    text = orjson.dumps(alert.to_dict()).decode()
    assert "jane.doe" not in text and "@" not in text and "very-private" not in text
    assert alert.examples[0].value == "I emailed the receipt to [redacted:email]"
    record = results.store.read("halluwatch/alerts/deliveries/date=2026-11-29/run=r1.json")
    assert b"jane.doe" not in record and b"very-private" not in record
