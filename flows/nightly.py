"""The nightly flow: list a day's sessions, analyse them in batches, write the day's results.

    nightly(config, date)  ->  the run manifest (a dict), also written to the results store

It reads like the script it is: everything it calls is a plain function elsewhere, callable and
tested without Prefect. One task per batch of files (packed by bytes), never one per session.
"""

from __future__ import annotations

import contextvars
import importlib.metadata
import statistics
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.futures import as_completed

from alerts.dispatch import AlertsNotDelivered
from findings.anomalies import anomaly_row
from findings.batch import BatchPartial, run_batch
from findings.canaries import CanaryMissed, CanaryResult, check_canaries
from findings.evaluate import earlier_days, evaluate_day
from findings.metrics import merge_groups
from findings.sampling import Sample
from findings.store import ResultsStore
from flows.alerting import report_and_alert
from flows.config import LoadedConfig, load_config
from flows.context import run_parts
from flows.dates import resolve_date
from flows.failures import notify_failure, redact_run_logs
from flows.judging import JudgePartial, judge_off, judge_sample, sampling_plan
from flows.progress import reporter
from flows.runners import ConfiguredTaskRunner, use_task_runner
from sessions.errors import ConfigError, CredentialError
from sessions.grouping import batches, select
from sessions.reader import SessionReader
from sessions.storage import partition_prefix

Units = list[list[tuple[str, int]]]

# A day with fewer sessions than this share of its baseline's median is "thin": alerted, since an
# export that broke looks, downstream, exactly like a quiet day with no hallucinations.
THIN_DAY_SHARE = 0.10
THIN_DAY_MIN_BASELINE_DAYS = 3


def code_version() -> str:
    try:
        return importlib.metadata.version("halluwatch")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


@task(name="process-batch", retries=2, retry_delay_seconds=[2, 10], cache_policy=NO_CACHE)
def process_batch(
    loaded: LoadedConfig, day: date, run_id: str, batch_no: int, units: Units
) -> BatchPartial:
    parts = run_parts(loaded)
    return run_batch(
        store=parts.sessions,
        results=parts.results,
        reader=parts.reader,
        suite=parts.suite,
        day=day,
        run_id=run_id,
        batch_no=batch_no,
        units=units,
        read_concurrency=loaded.config.sessions.read_concurrency,
        sampling=sampling_plan(loaded),
    )


@task(name="judge-sample", cache_policy=NO_CACHE)
def judge_sample_task(
    loaded: LoadedConfig, day: date, run_id: str, sample: Sample, part: int
) -> JudgePartial:
    # No task retries: each judge call retries on its own, and the cache makes a re-run cheap.
    return judge_sample(loaded, day, run_id, sample, part)


@dataclass(slots=True)
class AnalysedDay:
    """A day whose batches are done and written, but not yet evaluated or committed."""

    day: date
    run_id: str
    started: datetime
    prefix: str
    listed: int
    skipped: dict[str, int]
    batches: int
    total: BatchPartial
    judge: dict[str, Any]


def analyse_day(loaded: LoadedConfig, day: date) -> AnalysedDay:
    """List the day, run its batches as tasks, and merge their counts."""
    logger = get_run_logger()
    cfg = loaded.config
    parts = run_parts(loaded)
    started = datetime.now(UTC)
    run_id = f"{started:%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:8]}"
    prefix = partition_prefix(cfg.sessions.layout, day)
    selection = select(parts.sessions.list(prefix), cfg.sessions.include)
    planned: list[Units] = [
        [[(o.key, o.size) for o in unit.objects] for unit in batch]
        for batch in batches(selection.units, int(cfg.run.batch_mb * 1024 * 1024))
    ]
    logger.info(
        "%s: %d units in %d batches under %s", day, len(selection.units), len(planned), prefix
    )
    total = BatchPartial()
    progress = reporter()
    progress.start(len(planned), f"halluwatch {day}")
    futures = {
        process_batch.submit(loaded, day, run_id, n, units): units
        for n, units in enumerate(planned)
    }
    try:
        for future in as_completed(list(futures)):
            try:
                partial = future.result()
            except (ConfigError, CredentialError):
                raise  # every batch would fail the same way: stop and say what to fix
            except Exception as exc:  # a batch that failed after its retries is counted, not fatal
                partial = _failed_batch(futures[future], exc)
                logger.error("a batch of %d files failed: %s", partial.files, exc)
            total += partial
            progress.advance(partial.sessions)
    finally:
        progress.stop()
    judge = judge_off()
    if total.frame is not None:
        # The judge reads its sample once the whole day has been offered to it; its signals
        # go in one more part after the batches' own.
        judged = judge_sample_task(loaded, day, run_id, total.frame.select(), len(planned))
        merge_groups(total.groups, judged.groups)
        total.signals_by_kind.update(judged.signals_by_kind)
        judge = judged.manifest
        total.frame = None  # not needed past here, and not small
    skipped = {k: len(v) for k, v in sorted(selection.skipped.items())}
    listed = sum(len(u.objects) for u in selection.units) + sum(skipped.values())
    return AnalysedDay(day, run_id, started, prefix, listed, skipped, len(planned), total, judge)


def _failed_batch(units: Units, exc: Exception) -> BatchPartial:
    partial = BatchPartial(files=sum(len(u) for u in units))
    partial.failures_by_reason["batch_failed"] += partial.files
    partial.failures.append(
        {
            "source": units[0][0][0],
            "reason": "batch_failed",
            "message": f"{type(exc).__name__}: {exc}",
        }
    )
    return partial


def commit_day(
    loaded: LoadedConfig,
    analysed: AnalysedDay,
    *,
    dry_run: bool = False,
    deploy_version: str | None = None,
) -> dict[str, Any]:
    """Evaluate the day against its baseline, then commit it: the manifest names this run.

    Days are committed in date order (a day's baseline is the days before it), and the manifest
    is written last, so a reader sees the previous run or this one, never half of a day.
    """
    parts = run_parts(loaded)
    day, run_id = analysed.day, analysed.run_id
    evaluation = evaluate_day(
        parts.results, day, run_id, analysed.total.groups, loaded.config.findings
    )
    manifest = {
        "run_id": run_id,
        **({"deploy_version": deploy_version} if deploy_version else {}),
        "date": day.isoformat(),
        "code_version": code_version(),
        "config_hash": loaded.hash,
        "sessions_location": parts.sessions.url,
        "results_location": parts.results.url,
        "prefix": analysed.prefix,
        "started_at": analysed.started.isoformat(),
        "finished_at": datetime.now(UTC).isoformat(),
        "listed": analysed.listed,
        "skipped_by_reason": analysed.skipped,
        "batches": analysed.batches,
        "detectors": parts.suite.describe(),
        **analysed.total.to_dict(),
        "judge": analysed.judge,
        "spike_tests": dict(sorted(Counter(s.status for s in evaluation.spikes).items())),
        "anomalies": [anomaly_row(s, day, run_id) for s in evaluation.anomalies],
        "findings": [
            {
                "id": f.id,
                "title": f.title,
                "kind": f.kind,
                "agent": f.agent,
                "severity": str(f.severity),
                "affected_sessions": f.affected_sessions,
            }
            for f in evaluation.findings
        ],
    }
    # Proof the checks are alive: planted sessions every detector must catch, and a day whose
    # sessions went missing. Both are anomaly rows, so they alert like any other anomaly.
    # The canaries are OpenAI-chat sessions: read them with format detection even when the run
    # forces another format, so a forced format cannot make every night fail.
    canaries = check_canaries(SessionReader(), parts.suite)
    manifest["canaries"] = [c.to_dict() for c in canaries]
    manifest["anomalies"].extend(canary_row(c, day, run_id) for c in canaries if not c.caught)
    if analysed.judge.get("status") == "error":
        reason = f"LLM evaluations failed: {analysed.judge.get('reason')}"
        manifest["anomalies"].append(_row(day, run_id, "judge", "high", reason))
    volume = volume_row(parts.results, analysed, loaded.config.findings.spikes.window_days, run_id)
    if volume is not None:
        manifest["anomalies"].append(volume)
    manifest["manifest_key"] = parts.results.write_manifest(day, manifest)
    parts.results.drop_other_runs(day, run_id)
    # The day is committed; its report and alerts follow, and are recorded on its manifest.
    manifest.update(report_and_alert(loaded, day, run_id, manifest, dry_run=dry_run))
    parts.results.write_manifest(day, manifest)
    return manifest


def _row(day: date, run_id: str, metric: str, severity: str, reason: str) -> dict[str, Any]:
    return {
        "date": day.isoformat(),
        "run_id": run_id,
        "metric": metric,
        "agent": None,
        "agent_version": None,
        "kind": "count",
        "today_value": None,
        "baseline_value": None,
        "lift": None,
        "p_value": None,
        "status": "anomaly",
        "severity": severity,
        "reason": reason,
    }


def canary_row(result: CanaryResult, day: date, run_id: str) -> dict[str, Any]:
    """The anomaly row for a canary the detectors did not catch."""
    reason = f"canary {result.canary} was not caught: the {result.expected_kind} check is broken"
    if result.error:
        reason += f" ({result.error})"
    row = _row(day, run_id, "canary", "critical", reason)
    row.update(canary=result.canary, today_value=0.0, baseline_value=1.0)
    return row


def volume_row(
    results: ResultsStore, analysed: AnalysedDay, window_days: int, run_id: str
) -> dict[str, Any] | None:
    """An anomaly row when the day has no sessions, or far fewer than its baseline days."""
    day, sessions = analysed.day, analysed.total.sessions
    if sessions == 0:
        row = _row(
            day,
            run_id,
            "sessions",
            "high",
            f"no sessions found under {analysed.prefix}: check the export",
        )
        row["today_value"] = 0.0
        return row
    counts = []
    for earlier in earlier_days(results, day, window_days):
        manifest = results.read_manifest(earlier)
        if manifest is not None and isinstance(manifest.get("sessions"), int):
            counts.append(manifest["sessions"])
    if len(counts) < THIN_DAY_MIN_BASELINE_DAYS:
        return None
    median = statistics.median(counts)
    if sessions >= THIN_DAY_SHARE * median:
        return None
    row = _row(
        day,
        run_id,
        "sessions",
        "high",
        f"{sessions:,} sessions under {analysed.prefix}, far below the usual {median:,.0f}: "
        "check the export",
    )
    row.update(
        today_value=float(sessions),
        baseline_value=float(median),
        lift=sessions / median - 1 if median else None,
    )
    return row


def _flow_options() -> dict[str, Any]:
    """What both flows share: the configured task runner, and one "run failed" message
    through the alert channels when a run fails or crashes (flows/failures.py)."""
    return {
        "log_prints": False,
        "task_runner": ConfiguredTaskRunner(),
        "on_failure": [notify_failure],
        "on_crashed": [notify_failure],
    }


def run_day(loaded: LoadedConfig, day: date, *, dry_run: bool = False) -> dict[str, Any]:
    return commit_day(loaded, analyse_day(loaded, day), dry_run=dry_run)


@flow(name="nightly", flow_run_name="nightly-{date}", **_flow_options())
def nightly(config: str, date: str = "yesterday", dry_run: bool = False) -> dict[str, Any]:
    """Analyse one day of agent sessions, write its results and report, send its alerts.

    ``dry_run`` records what would be sent without sending it.
    """
    loaded = load_config(config)
    redact_run_logs(loaded)  # Prefect's error lines quote exceptions, which may hold secrets
    use_task_runner(loaded)  # run.task_runner: threads, processes or dask
    manifest = run_day(loaded, resolve_date(date, loaded.config.run.timezone), dry_run=dry_run)
    alerts = manifest.get("alerts") or {}
    if alerts.get("failed"):
        # The one reason a night fails: someone expected an alert and did not get it.
        failed = alerts["deliveries"].get("failed", 0)
        raise AlertsNotDelivered(
            f"{failed} alert deliveries failed for {manifest['date']}; they wait in the outbox "
            f"and are retried on the next run (see {alerts['record_key']})",
            manifest,
        )
    missed = [c for c in manifest.get("canaries", []) if not c["caught"]]
    if missed:
        names = ", ".join(f"{c['canary']} ({c['expected_kind']})" for c in missed)
        raise CanaryMissed(
            f"{len(missed)} canary session(s) were not caught for {manifest['date']}: {names}; "
            "a detector is broken or disabled (the day was committed and alerted)",
            manifest,
        )
    return manifest


@flow(name="backfill", flow_run_name="backfill-{start}-{end}", **_flow_options())
def backfill(
    config: str, start: str, end: str, deploy_version: str | None = None, concurrency: int = 2
) -> list[dict[str, Any]]:
    """Re-run every day from ``start`` to ``end`` (inclusive); idempotent.

    Days are analysed concurrently (up to ``concurrency`` at once), then evaluated and committed
    in date order so each day's baseline is the days before it. ``deploy_version`` is recorded
    on each manifest, for the before/after comparison that usually follows. A backfill writes
    reports but sends no alerts (it records what it would have sent): old days are history,
    not news.
    """
    loaded = load_config(config)
    redact_run_logs(loaded)  # Prefect's error lines quote exceptions, which may hold secrets
    use_task_runner(loaded)  # run.task_runner: threads, processes or dask
    tz = loaded.config.run.timezone
    first, last = resolve_date(start, tz), resolve_date(end, tz)
    if last < first:
        raise ConfigError(f"backfill: --end {last} is before --start {first}")
    days = [first + timedelta(days=n) for n in range((last - first).days + 1)]
    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        # Each day runs in a copy of this flow's context, so its tasks belong to this flow run.
        futures = [
            pool.submit(contextvars.copy_context().run, analyse_day, loaded, d) for d in days
        ]
        analysed = [f.result() for f in futures]
    manifests = []
    for item in analysed:
        manifests.append(commit_day(loaded, item, dry_run=True, deploy_version=deploy_version))
    return manifests
