"""After a day is committed: its report page, then its alerts.

Kept out of the Prefect flow module so `halluwatch alerts test` and the tests use the same code.
Channels are built from the config and the environment before any work, so a missing secret
stops the run at once with the variable's name.
"""

from __future__ import annotations

import os
from collections import Counter
from datetime import date
from typing import Any

from alerts.channels import Channel, build_channel
from alerts.dispatch import DispatchResult, dispatch
from alerts.models import Alert, Example
from alerts.render import Renderer
from alerts.report import write_report
from flows.config import LoadedConfig
from flows.context import run_parts


def build_channels(loaded: LoadedConfig) -> dict[str, Channel]:
    cfg = loaded.config.alerts
    override = (loaded.base / cfg.templates_dir).resolve() if cfg.templates_dir else None
    renderer = Renderer(override)
    return {
        name: build_channel(name, channel, env=os.environ, base=loaded.base, renderer=renderer)
        for name, channel in cfg.channels.items()
    }


def report_and_alert(
    loaded: LoadedConfig, day: date, run_id: str, manifest: dict[str, Any], *, dry_run: bool
) -> dict[str, Any]:
    """Write the day's report, send its alerts; returns what the manifest records of both."""
    results = run_parts(loaded).results
    cfg = loaded.config.alerts
    report = write_report(
        results,
        day,
        history_days=loaded.config.findings.history_days,
        base_url=cfg.report_base_url,
    )
    findings = results.read_document("findings_detail", day) or []
    result = dispatch(
        day,
        run_id,
        manifest.get("anomalies", []),
        findings,
        cfg,
        results,
        build_channels(loaded),
        dry_run=dry_run,
    )
    return {"report_key": report, "alerts": summary(result, dry_run)}


def summary(result: DispatchResult, dry_run: bool) -> dict[str, Any]:
    return {
        "dry_run": dry_run,
        "alerts": len(result.alerts),
        "deliveries": dict(sorted(Counter(d.status for d in result.deliveries).items())),
        "failed": result.failed,
        "record_key": result.record_key,
    }


def sample_alert(day: date) -> Alert:
    """What `halluwatch alerts test` sends: plainly a test, with every part a real alert has."""
    return Alert(
        item_type="test",
        key="halluwatch-test",
        day=day,
        severity="medium",
        title="halluwatch test alert: your channel works",
        summary="This is a test sent by `halluwatch alerts test`; nothing is wrong.",
        agent="example-agent",
        agent_version="v0",
        kind="action_claim_session_share",
        value=0.041,
        baseline=0.008,
        lift=4.1,
        p_value=1e-6,
        affected_sessions=3,
        recommended_fix="Nothing to fix: this alert only checks the delivery path.",
        examples=[Example("session-123", "v0", "All tests pass.", "A sample example.", [])],
    )


def send_test(loaded: LoadedConfig, day: date) -> dict[str, str]:
    """Send the sample alert through every configured channel; channel -> "sent" or the error."""
    outcome = {}
    for name, channel in build_channels(loaded).items():
        try:
            channel.send([sample_alert(day)])
            outcome[name] = "sent"
        except Exception as exc:  # report every channel, not only the first that fails
            outcome[name] = f"failed: {exc}"
    return outcome
