"""`halluwatch serve`: one long-running process that schedules the nightly flow itself.

    serve(loaded, cron="0 3 * * *", timezone="Europe/Berlin")

Serves two deployments, the same two that `infra/prefect.yaml` declares for a work pool:
`nightly/halluwatch-nightly` on a cron schedule (``date: yesterday``, computed by the flow in
``run.timezone``) and `backfill/halluwatch-backfill` with no schedule, for runs started by hand
or by CI after a deploy. Scheduling needs a real Prefect server: on the temporary API server a
process starts for itself, Prefect refuses to schedule, so ``PREFECT_API_URL`` must be set.
Each run reads the config afresh and runs its batches on the config's ``run.task_runner``
(threads, processes or Dask; see ``flows.runners``), as a run started any other way does.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from flows.config import LoadedConfig
from sessions.errors import ConfigError, StorageError

NIGHTLY_DEPLOYMENT = "halluwatch-nightly"
BACKFILL_DEPLOYMENT = "halluwatch-backfill"
DEFAULT_CRON = "0 3 * * *"


def check_timezone(name: str) -> str:
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ConfigError(f"--timezone: unknown time zone {name!r}") from None
    return name


def check_cron(cron: str) -> str:
    """Five fields, each accepted by Prefect's cron validator."""
    if len(cron.split()) != 5:
        raise ConfigError(f"--cron {cron!r} is not a cron expression of five fields")
    from prefect.client.schemas.schedules import CronSchedule

    try:
        CronSchedule(cron=cron, timezone="UTC")
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        raise ConfigError(f"--cron {cron!r} is not a valid cron expression: {exc}") from None
    return cron


def api_url() -> str | None:
    """The Prefect API this process would use: the environment, else the active profile."""
    url = os.environ.get("PREFECT_API_URL")
    if url:
        return url
    from prefect.settings import get_current_settings

    return get_current_settings().api.url or None


def require_api() -> str:
    url = api_url()
    if not url:
        raise ConfigError(
            "PREFECT_API_URL is not set: `halluwatch serve` needs a running Prefect server "
            "(Prefect does not schedule on the temporary server a process starts for itself); "
            "start one with `prefect server start` and set "
            "PREFECT_API_URL=http://HOST:4200/api"
        )
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        problem = client.api_healthcheck()
    if problem is not None:
        raise StorageError(f"the Prefect API at {url} is unreachable: {problem}")
    return url


def deployments(loaded: LoadedConfig, cron: str, timezone: str) -> list[Any]:
    """The two runner deployments, built from the flows themselves."""
    from prefect.schedules import Cron

    from flows.nightly import backfill, nightly

    config = str(Path(loaded.path or "halluwatch.yaml").resolve())
    return [
        nightly.to_deployment(
            name=NIGHTLY_DEPLOYMENT,
            schedule=Cron(cron, timezone=timezone),
            parameters={"config": config, "date": "yesterday"},
            description=f"Yesterday's sessions ({loaded.config.run.timezone}), at {cron} "
            f"{timezone}.",
            tags=["halluwatch"],
        ),
        backfill.to_deployment(
            name=BACKFILL_DEPLOYMENT,
            parameters={"config": config, "concurrency": 2},
            description="Re-run a date range: --param start=D --param end=D "
            "[--param deploy_version=V].",
            tags=["halluwatch"],
        ),
    ]


def serve(loaded: LoadedConfig, cron: str = DEFAULT_CRON, timezone: str | None = None) -> None:
    """Check everything, then serve both deployments until interrupted."""
    tz = check_timezone(timezone or loaded.config.run.timezone)
    check_cron(cron)
    require_api()
    from prefect import serve as prefect_serve

    prefect_serve(*deployments(loaded, cron, tz))
