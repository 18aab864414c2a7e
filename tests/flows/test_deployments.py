"""`halluwatch serve` against a real Prefect server on loopback, driven through the Prefect API.

A real `prefect server start` rather than the test harness's server: the harness runs Prefect's
temporary ("ephemeral") server, whose scheduler service does not run, so the nightly cron would
never produce a run there. One server per module, in its own PREFECT_HOME; the `serve` process,
the server and everything they started are stopped by process group whatever happens.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import date
from pathlib import Path
from typing import Any, TypeVar
from zoneinfo import ZoneInfo

import httpx
import pytest
from tests_support import cli_env, halluwatch_bin

from findings.store import ResultsStore
from sessions.storage import LocalStore

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples"
DAYS = [date(2026, 11, 27), date(2026, 11, 28), date(2026, 11, 29)]
ZONE = "Europe/Berlin"
CRON = "15 4 * * *"  # not the default, and clear of the hour a DST change skips
NIGHTLY = "nightly/halluwatch-nightly"
BACKFILL = "backfill/halluwatch-backfill"

pytestmark = pytest.mark.prefect

T = TypeVar("T")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _poll(check: Callable[[], T | None], timeout: float, what: str, log: Path | None = None) -> T:
    """``check()``'s first truthy value, polling until ``timeout`` seconds have passed."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            tail = log.read_text(errors="replace")[-3000:] if log and log.exists() else ""
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}\n{tail}")
        time.sleep(0.1)


def _start(args: list[str], env: dict[str, str], cwd: Path, log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:  # the child keeps its own handle
        return subprocess.Popen(
            args, env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the process group, SIGKILL to what is left after a few seconds."""
    for sig, grace in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 10.0)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            continue
        # The leader is gone; children that outlived it get the same signal via the group.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        return


def _prefect_bin() -> str:
    return str(Path(sys.executable).parent / "prefect")


@pytest.fixture(scope="module")
def prefect_server(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[str, dict[str, str]]]:
    """`prefect server start` on a free loopback port; yields its API URL and the client env."""
    home = tmp_path_factory.mktemp("prefect-server")
    port = _free_port()
    url = f"http://127.0.0.1:{port}/api"
    env = cli_env(
        PREFECT_HOME=str(home),
        PREFECT_API_URL=url,
        # New deployments get their scheduled runs within a second, not five.
        PREFECT_SERVER_SERVICES_SCHEDULER_RECENT_DEPLOYMENTS_LOOP_SECONDS="1",
    )
    log = home / "server.log"
    args = ["server", "start", "--host", "127.0.0.1", "--port", str(port), "--no-ui"]
    server = _start(
        [_prefect_bin(), *args, "--analytics-off"],
        env,
        home,
        log,
    )
    try:

        def healthy() -> bool:
            if server.poll() is not None:
                raise AssertionError(f"prefect server exited:\n{log.read_text()[-3000:]}")
            try:
                return httpx.get(f"{url}/health", timeout=2).status_code == 200
            except httpx.HTTPError:
                return False

        _poll(healthy, 120, "the Prefect server's health endpoint", log)
        yield url, env
    finally:
        _stop(server)


def test_serve_then_backfill_through_the_prefect_api(
    prefect_server: tuple[str, dict[str, str]], tmp_path: Path
) -> None:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import DeploymentFilter, DeploymentFilterId
    from prefect.client.schemas.schedules import CronSchedule
    from prefect.deployments import run_deployment
    from prefect.exceptions import ObjectNotFound
    from prefect.settings import PREFECT_API_URL, temporary_settings

    url, server_env = prefect_server
    shutil.copytree(EXAMPLE / "bucket", tmp_path / "bucket")
    config = tmp_path / "halluwatch.yaml"
    text = (EXAMPLE / "halluwatch.yaml").read_text()
    assert "timezone: UTC" in text
    config.write_text(text.replace("timezone: UTC", f"timezone: {ZONE}"))

    log = tmp_path / "serve.log"
    # The runner polls for runs to start every second instead of every ten.
    env = {**server_env, "PREFECT_RUNNER_POLL_FREQUENCY": "1"}
    serve = _start(
        [halluwatch_bin(), "serve", "--config", str(config), "--cron", CRON], env, tmp_path, log
    )
    try:
        with (
            temporary_settings(updates={PREFECT_API_URL: url}),
            get_client(sync_client=True) as client,
        ):

            def deployment(name: str) -> Any:
                if serve.poll() is not None:
                    raise AssertionError(f"halluwatch serve exited:\n{log.read_text()[-3000:]}")
                try:
                    return client.read_deployment_by_name(name)
                except ObjectNotFound:
                    return None

            nightly = _poll(lambda: deployment(NIGHTLY), 90, NIGHTLY, log)
            _poll(lambda: deployment(BACKFILL), 30, BACKFILL, log)

            run = run_deployment(
                BACKFILL,
                parameters={
                    "start": DAYS[0].isoformat(),
                    "end": DAYS[-1].isoformat(),
                    "deploy_version": "v2.4",
                },
                timeout=180,
                poll_interval=0.5,
            )
            assert run.state is not None and run.state.is_completed(), (
                f"{run.state!r}\n{log.read_text()[-3000:]}"
            )

            # The nightly deployment: its cron, in the config's time zone, and the runs the
            # server's scheduler made from it.
            [schedule] = nightly.schedules
            assert schedule.active
            assert isinstance(schedule.schedule, CronSchedule)
            assert (schedule.schedule.cron, schedule.schedule.timezone) == (CRON, ZONE)
            assert nightly.parameters["date"] == "yesterday"
            assert nightly.parameters["config"] == str(config)
            only_nightly = DeploymentFilter(id=DeploymentFilterId(any_=[nightly.id]))
            scheduled = _poll(
                lambda: client.read_flow_runs(deployment_filter=only_nightly),
                30,
                "scheduled runs of the nightly deployment",
            )
        starts = [r.expected_start_time.astimezone(ZoneInfo(ZONE)) for r in scheduled]
        assert all((s.hour, s.minute) == (4, 15) for s in starts), starts
        assert all(r.state is not None and r.state.is_scheduled() for r in scheduled)
    finally:
        _stop(serve)

    results = ResultsStore(LocalStore(tmp_path / "results"), "")
    assert results.committed_days() == DAYS
    for day in DAYS:
        manifest = results.read_manifest(day)
        assert manifest is not None, day
        assert manifest["date"] == day.isoformat()
        assert manifest["deploy_version"] == "v2.4"
        assert manifest["files"] == 10 and manifest["sessions"] > 0
        assert results.read_table("sessions", day).num_rows == manifest["sessions"]
    # The backfill sends no alerts (it records what it would have sent).
    assert all(results.read_manifest(d)["alerts"]["dry_run"] for d in DAYS)  # type: ignore[index]
