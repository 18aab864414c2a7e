"""When a nightly or backfill run fails: one short "halluwatch run failed" message to the team.

    notify_failure(flow, flow_run, state)        the flows' on_failure / on_crashed hook
    send_failure(loaded, failure) -> outcome     plain function: render, route and send

A night that fails quietly looks, the next morning, exactly like a night with nothing to report.
So a failed or crashed flow run sends one message through the configured channels (the routes
apply; a route can take them with ``match: {item_types: [run_failure]}``), naming the flow, the
day, the error type and its message (redacted like every alert) and the flow run. Not sent for:

- ``AlertsNotDelivered``: the alerts themselves could not be delivered (they wait in the outbox);
- ``CanaryMissed``: already alerted, as a critical anomaly of the committed day;
- a dry run or ``alerts.enabled: false`` (logged instead);
- ``KeyboardInterrupt``: someone stopped the run at a terminal, on purpose.

The message is sent straight to the channels, outside the outbox and the delivery records: those
live in the results store, which may be what broke. Nothing here raises: a message that cannot
be delivered is logged, and the run's own error stays what the caller sees.
"""

from __future__ import annotations

import inspect
import json
import logging
import os
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from alerts.channels import Channel, build_channel
from alerts.models import Alert
from alerts.redact import LogRedaction, Redactor, env_secrets
from alerts.render import Renderer, one_line, slack_escape
from alerts.routing import route
from flows.config import LoadedConfig, load_config
from flows.dates import resolve_date
from sessions.errors import ConfigError

if TYPE_CHECKING:
    from prefect import Flow
    from prefect.client.schemas.objects import FlowRun
    from prefect.states import State

log = logging.getLogger(__name__)

FAILURE_TEMPLATES = (
    "run_failed.slack_blocks.json.j2",
    "run_failed.email.txt.j2",
    "run_failed.email.html.j2",
    "run_failed.console.txt.j2",
)
MAX_ERROR_CHARS = 500
# Errors the run has already told someone about (by name: importing them here would import the
# flow's whole dependency tree into a plain function).
ALREADY_ALERTED = frozenset({"AlertsNotDelivered", "CanaryMissed"})
NOT_A_FAILURE = frozenset({"KeyboardInterrupt"})


@dataclass(frozen=True, slots=True)
class RunFailure:
    """One failed flow run, as the message reports it. ``error`` is already redacted."""

    flow: str  # "nightly" or "backfill"
    label: str  # the day, or the range "2026-11-27..2026-11-29"
    day: date
    error_type: str
    error: str
    rerun: str  # the command that runs the same work again
    flow_run_id: str | None = None
    flow_run_name: str | None = None
    url: str | None = None  # the flow run in the Prefect UI, when the API has one
    state: str = "Failed"  # or "Crashed"

    @property
    def title(self) -> str:
        return f"halluwatch run failed: {self.flow} {self.label}"

    def alert(self) -> Alert:
        """The alert that carries it through routing and the webhook payload."""
        return Alert(
            item_type="run_failure",
            key=f"run_failure:{self.flow}:{self.flow_run_id or self.label}",
            day=self.day,
            severity="critical",
            title=self.title,
            summary=f"{self.error_type}: {self.error}",
            kind=self.error_type,
            recommended_fix=f"Fix the cause, then run the same work again: {self.rerun}",
            report_url=self.url,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "flow": self.flow,
            "label": self.label,
            "state": self.state,
            "error_type": self.error_type,
            "error": self.error,
            "rerun": self.rerun,
            "flow_run_id": self.flow_run_id,
            "flow_run_name": self.flow_run_name,
            "url": self.url,
        }


class FailureRenderer(Renderer):
    """Renders a run failure with the ``run_failed.*`` templates (a team's own folder first).

    Channels only call their renderer, so the existing channel classes send this message as
    they send alerts. The webhook payload stays schema version 1 (an alert of item type
    ``run_failure``) with one more key, ``run``, holding the flow run's details.
    """

    def __init__(self, failure: RunFailure, override_dir: Path | None = None) -> None:
        super().__init__(override_dir)
        self.failure = failure
        for name in FAILURE_TEMPLATES:
            self._template(name)

    def slack_blocks(self, alerts: Sequence[Alert], *, max_examples: int) -> list[dict[str, Any]]:
        raw = self._render("run_failed.slack_blocks.json.j2", failure=self.failure)
        try:
            blocks = json.loads(raw)["blocks"]
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise ConfigError(
                f"run_failed.slack_blocks.json.j2 did not render a JSON blocks list: {exc}"
            ) from exc
        return list(blocks)

    def slack_text(self, alerts: Sequence[Alert]) -> str:
        return slack_escape(one_line(f"{self.failure.title}: {self.failure.error_type}"))

    def email(
        self, alerts: Sequence[Alert], *, chart_cids: Mapping[str, str] | None = None
    ) -> tuple[str, str, str]:
        subject = f"[halluwatch] run failed: {self.failure.flow} {self.failure.label}"
        text = self._render("run_failed.email.txt.j2", failure=self.failure)
        html = self._render("run_failed.email.html.j2", failure=self.failure)
        return one_line(subject, 180), text, html

    def console(self, alerts: Sequence[Alert]) -> str:
        return self._render("run_failed.console.txt.j2", failure=self.failure)

    def webhook_payload(self, alerts: Sequence[Alert]) -> dict[str, Any]:
        payload = super().webhook_payload(alerts)
        payload["run"] = self.failure.to_dict()
        return payload


def build_failure_channels(loaded: LoadedConfig, failure: RunFailure) -> dict[str, Channel]:
    """The configured channels, rendering ``failure``; a channel that cannot be built (its
    secret is missing) is logged and left out, so the others still send."""
    cfg = loaded.config.alerts
    override = (loaded.base / cfg.templates_dir).resolve() if cfg.templates_dir else None
    renderer = FailureRenderer(failure, override)
    channels: dict[str, Channel] = {}
    for name, channel in cfg.channels.items():
        try:
            channels[name] = build_channel(
                name, channel, env=os.environ, base=loaded.base, renderer=renderer
            )
        except Exception as exc:  # one broken channel must not stop the others
            log.warning("run-failure message: channel %s cannot be built: %s", name, exc)
    return channels


def redactor_for(loaded: LoadedConfig) -> Redactor:
    cfg = loaded.config.alerts
    return Redactor(cfg.redact, env_secrets(names=cfg.secret_env_names()))


# The loggers Prefect writes a run's lines to (its state changes and errors among them).
_RUN_LOGGERS = ("prefect.flow_runs", "prefect.task_runs", "prefect")
_LOG_FILTERS: list[LogRedaction] = []  # the one in place (a process may run several flows)


def redact_run_logs(loaded: LoadedConfig) -> None:
    """Redact the config's secrets and patterns, as in alerts, from what Prefect logs of the
    run; it replaces the filter an earlier run in this process put in place."""
    new = LogRedaction(redactor_for(loaded))
    for name in _RUN_LOGGERS:
        logger = logging.getLogger(name)
        for old in _LOG_FILTERS:
            logger.removeFilter(old)
        logger.addFilter(new)
    _LOG_FILTERS[:] = [new]


def send_failure(loaded: LoadedConfig, failure: RunFailure) -> dict[str, str]:
    """Send ``failure`` to the channels its routes pick; channel -> "sent" or "failed: why".

    Never raises. ``failure.error`` must already be redacted (``describe_failure`` does it).
    """
    outcome: dict[str, str] = {}
    try:
        cfg = loaded.config.alerts
        alert = failure.alert()
        channels = build_failure_channels(loaded, failure)
        redactor = redactor_for(loaded)
        targets = list(dict.fromkeys(channel for channel, _, _ in route([alert], cfg)))
        if not targets:
            log.warning("run-failure message: no route and no default_route takes it")
        for name in targets:
            target = channels.get(name)
            if target is None:
                outcome[name] = "failed: the channel could not be built"
                continue
            try:
                target.send([alert])
            except Exception as exc:  # report every channel
                error = redactor.text(f"{type(exc).__name__}: {exc}")
                log.warning("run-failure message to %s failed: %s", name, error)
                outcome[name] = f"failed: {error}"
            else:
                outcome[name] = "sent"
    except Exception as exc:  # a hook must never raise
        log.warning("run-failure message not sent: %s: %s", type(exc).__name__, exc)
        outcome["*"] = f"failed: {type(exc).__name__}"
    return outcome


def describe_failure(
    loaded: LoadedConfig,
    flow: str,
    parameters: Mapping[str, Any],
    exc: BaseException,
    *,
    flow_run_id: str | None = None,
    flow_run_name: str | None = None,
    url: str | None = None,
    state: str = "Failed",
) -> RunFailure:
    """The failure of a ``flow`` run with ``parameters``, its error message redacted."""
    tz = loaded.config.run.timezone
    config = str(loaded.path or parameters.get("config", "halluwatch.yaml"))
    if flow == "backfill":
        start, end = _day(parameters.get("start"), tz), _day(parameters.get("end"), tz)
        label = f"{_iso(start)}..{_iso(end)}"
        day = start if isinstance(start, date) else _today(tz)
        rerun = [
            "halluwatch", "backfill", "--config", config, "--start", _iso(start), "--end",
            _iso(end),
        ]  # fmt: skip
        if parameters.get("deploy_version"):
            rerun += ["--deploy-version", str(parameters["deploy_version"])]
    else:
        resolved = _day(parameters.get("date", "yesterday"), tz)
        label = _iso(resolved)
        day = resolved if isinstance(resolved, date) else _today(tz)
        rerun = ["halluwatch", "run", "--config", config, "--date", label]
    redactor = redactor_for(loaded)
    message = str(exc) or type(exc).__name__
    return RunFailure(
        flow=flow,
        label=label,
        day=day,
        error_type=type(exc).__name__,
        error=one_line(redactor.text(message), MAX_ERROR_CHARS),
        rerun=redactor.text(shlex.join(rerun)),
        flow_run_id=flow_run_id,
        flow_run_name=flow_run_name,
        url=url,
        state=state,
    )


def _day(value: Any, tz: str) -> date | str:
    """The day a parameter names, or the parameter itself when it names none."""
    try:
        return resolve_date(value if isinstance(value, date | str) else str(value), tz)
    except Exception:  # a bad date may be why the run failed
        return str(value)


def _iso(value: date | str) -> str:
    return value.isoformat() if isinstance(value, date) else value


def _today(tz: str) -> date:
    try:
        return resolve_date("today", tz)
    except Exception:
        return datetime.now(UTC).date()


def notify_failure(flow: Flow[Any, Any], flow_run: FlowRun, state: State[Any]) -> None:
    """Prefect ``on_failure`` / ``on_crashed`` hook of the nightly and backfill flows."""
    try:
        _notify(flow, flow_run, state)
    except Exception as exc:  # never raise from a hook
        log.warning("run-failure hook: %s: %s", type(exc).__name__, exc)


def _notify(flow: Flow[Any, Any], flow_run: FlowRun, state: State[Any]) -> None:
    from prefect.logging.loggers import flow_run_logger
    from prefect.states import get_state_exception

    logger = flow_run_logger(flow_run, flow)
    exc: BaseException = RuntimeError(state.message or f"the run ended {state.name}")
    try:
        found = get_state_exception(state)
    except Exception:  # the state may hold no readable result: its message says enough
        found = None
    if isinstance(found, BaseException):
        exc = found
    elif inspect.iscoroutine(found):  # only in an async context, which these flows are not
        found.close()
    name = type(exc).__name__
    if name in ALREADY_ALERTED or name in NOT_A_FAILURE:
        return
    parameters = dict(flow_run.parameters or {})
    try:
        loaded = load_config(str(parameters["config"]))
    except Exception as problem:  # without a config there are no channels
        logger.warning("run-failure message not sent: the config cannot be read (%s)", problem)
        return
    failure = describe_failure(
        loaded,
        flow.name,
        parameters,
        exc,
        flow_run_id=str(flow_run.id),
        flow_run_name=flow_run.name,
        url=_flow_run_url(flow_run),
        state=state.name or state.type.value.title(),
    )
    if parameters.get("dry_run") or not loaded.config.alerts.enabled:
        why = "dry run" if parameters.get("dry_run") else "alerts.enabled is false"
        logger.warning("%s (%s: not sent): %s", failure.title, why, failure.alert().summary)
        return
    outcome = send_failure(loaded, failure)
    failed = {name: status for name, status in outcome.items() if status != "sent"}
    if failed:
        logger.error("run-failure message not delivered: %s", failed)
    elif outcome:
        logger.info("run-failure message sent to %s", ", ".join(outcome))


def _flow_run_url(flow_run: FlowRun) -> str | None:
    try:
        from prefect.utilities.urls import url_for

        return url_for(flow_run)
    except Exception:  # a link is a nicety
        return None
