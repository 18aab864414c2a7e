"""The nightly flow: list a day's sessions, analyse them in batches, write the day's results.

    nightly(config, date)  ->  the run manifest (a dict), also written to the results store

It reads like the script it is: everything it calls is a plain function elsewhere, callable and
tested without Prefect. One task per batch of files (packed by bytes), never one per session.
"""

from __future__ import annotations

import importlib.metadata
import uuid
from datetime import UTC, date, datetime
from typing import Any

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.futures import as_completed

from findings.batch import BatchPartial, run_batch
from flows.config import LoadedConfig, load_config
from flows.context import run_parts
from flows.dates import resolve_date
from flows.progress import reporter
from sessions.errors import ConfigError, CredentialError
from sessions.grouping import batches, select
from sessions.storage import partition_prefix

Units = list[list[tuple[str, int]]]


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
    )


def run_day(loaded: LoadedConfig, day: date) -> dict[str, Any]:
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
                units = futures[future]
                partial = BatchPartial(files=sum(len(u) for u in units))
                partial.failures_by_reason["batch_failed"] += partial.files
                partial.failures.append(
                    {
                        "source": units[0][0][0],
                        "reason": "batch_failed",
                        "message": f"{type(exc).__name__}: {exc}",
                    }
                )
                logger.error("a batch of %d files failed: %s", partial.files, exc)
            total += partial
            progress.advance(partial.sessions)
    finally:
        progress.stop()
    manifest = {
        "run_id": run_id,
        "date": day.isoformat(),
        "code_version": code_version(),
        "config_hash": loaded.hash,
        "sessions_location": parts.sessions.url,
        "results_location": parts.results.url,
        "prefix": prefix,
        "started_at": started.isoformat(),
        "finished_at": datetime.now(UTC).isoformat(),
        "listed": sum(len(u.objects) for u in selection.units)
        + sum(map(len, selection.skipped.values())),
        "skipped_by_reason": {k: len(v) for k, v in sorted(selection.skipped.items())},
        "batches": len(planned),
        "detectors": parts.suite.describe(),
        **total.to_dict(),
    }
    manifest["manifest_key"] = parts.results.write_manifest(day, manifest)
    parts.results.drop_other_runs(day, run_id)
    return manifest


@flow(name="nightly", flow_run_name="nightly-{date}", log_prints=False)
def nightly(config: str, date: str = "yesterday") -> dict[str, Any]:
    """Analyse one day of agent sessions and write its results."""
    loaded = load_config(config)
    return run_day(loaded, resolve_date(date, loaded.config.run.timezone))
