"""`run.task_runner`: the same day, whether its batches run on threads, processes or Dask."""

from __future__ import annotations

import importlib.util
import os
import pickle
import shutil
import subprocess
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import orjson
import pytest
from prefect import flow, task
from prefect.cache_policies import NO_CACHE
from prefect.context import FlowRunContext
from tests_support import cli_env, halluwatch_bin

from findings.store import ResultsStore
from flows.config import load_config
from flows.runners import ConfiguredTaskRunner, use_task_runner
from sessions.errors import ConfigError
from sessions.storage import LocalStore

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples"
DAY = date(2026, 11, 29)
# The bundled example (44 KB) in 4 to 5 batches, for the runner to spread over its workers.
SMALL_BATCHES = 0.01


def _config(folder: Path, task_runner: str | None = None) -> Path:
    """The bundled example in ``folder``, with small batches and the given runner."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copytree(EXAMPLE / "bucket", folder / "bucket")
    text = (EXAMPLE / "halluwatch.yaml").read_text()
    run = f"run:\n  batch_mb: {SMALL_BATCHES}\n"
    if task_runner is not None:
        run += f"  task_runner: {task_runner}\n"
    assert text.count("run:\n") == 1
    config = folder / "halluwatch.yaml"
    config.write_text(text.replace("run:\n", run))
    return config


@dataclass(frozen=True)
class Outcome:
    counts: dict[str, Any]
    signals: list[bytes]


def _run(config: Path) -> Outcome:
    from flows.nightly import nightly

    manifest = nightly(config=str(config), date=DAY.isoformat())
    counts = {
        key: manifest[key]
        for key in ("batches", "files", "sessions", "tool_calls", "signals_by_kind")
    }
    counts["failures"] = sorted(
        orjson.dumps(f, option=orjson.OPT_SORT_KEYS) for f in manifest["failures"]
    )
    results = ResultsStore(LocalStore(config.parent / "results"), "")
    signals = sorted(
        orjson.dumps(
            {k: v for k, v in row.items() if k != "run_id"},
            option=orjson.OPT_SORT_KEYS,
            default=str,
        )
        for row in results.read_table("signals", DAY).to_pylist()
    )
    return Outcome(counts, signals)


@pytest.fixture(scope="module")
def on_threads(prefect_api: str, tmp_path_factory: pytest.TempPathFactory) -> Outcome:
    """The example day with the default runner (threads), to compare the others with."""
    outcome = _run(_config(tmp_path_factory.mktemp("threads")))
    assert outcome.counts["batches"] > 2 and outcome.counts["sessions"] == 31
    assert outcome.counts["signals_by_kind"]["unknown_tool"] == 9 and outcome.signals
    return outcome


@pytest.mark.prefect
@pytest.mark.parametrize(
    "task_runner",
    [
        "{type: processes, max_workers: 2}",
        "{type: dask, n_workers: 2, threads_per_worker: 1, processes: false}",
    ],
    ids=["processes", "dask-local-cluster"],
)
def test_every_runner_gives_the_same_day(
    on_threads: Outcome, tmp_path: Path, task_runner: str
) -> None:
    assert _run(_config(tmp_path, task_runner)) == on_threads


@pytest.mark.prefect
def test_a_dask_cluster_at_an_address_runs_every_batch(on_threads: Outcome, tmp_path: Path) -> None:
    from distributed import Client, LocalCluster

    # Two worker processes of a cluster started apart from the run, as on many hosts: each
    # batch travels pickled (the config, not live clients) and reports to the Prefect API.
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as cluster,
        Client(cluster) as client,
    ):
        config = _config(tmp_path, f"{{type: dask, address: '{cluster.scheduler_address}'}}")
        outcome = _run(config)
        executed = client.run(lambda dask_worker: dask_worker.state.executed_count)
    assert outcome == on_threads
    assert sum(executed.values()) == outcome.counts["batches"]


@task(name="pid", cache_policy=NO_CACHE)
def _pid() -> int:
    return os.getpid()


@flow(name="pids", task_runner=ConfiguredTaskRunner())
def _pids(config: str) -> tuple[str, set[int]]:
    """Where tasks run once the flow has applied ``config``: the runner's name and the pids."""
    use_task_runner(load_config(config))
    pids = {f.result() for f in [_pid.submit() for _ in range(4)]}
    context = FlowRunContext.get()
    assert context is not None
    runner = context.task_runner
    if isinstance(runner, ConfiguredTaskRunner):
        runner = runner.configured
    return type(runner).__name__, pids


@pytest.mark.prefect
def test_tasks_go_to_the_configured_runner(prefect_api: str, tmp_path: Path) -> None:
    from prefect.task_runners import ThreadPoolTaskRunner

    here = os.getpid()
    assert _pids(str(_config(tmp_path / "default"))) == ("ThreadPoolTaskRunner", {here})
    processes = str(_config(tmp_path / "processes", "{type: processes, max_workers: 2}"))
    name, pids = _pids(processes)
    assert name == "ProcessPoolTaskRunner" and pids and here not in pids
    # A runner given explicitly wins over the config.
    explicit = _pids.with_options(task_runner=ThreadPoolTaskRunner(max_workers=2))
    assert explicit(processes) == ("ThreadPoolTaskRunner", {here})


@pytest.mark.parametrize(
    ("task_runner", "message"),
    [
        ("{type: thread}", "run.task_runner: Input tag 'thread' found using 'type'"),
        ("{type: threads, workers: 4}", "run.task_runner.threads.workers: unknown key"),
        ("{type: processes, max_workers: 0}", "run.task_runner.processes.max_workers"),
        (
            "{type: dask, address: 'tcp://scheduler:8786', n_workers: 4}",
            "n_workers size a local cluster",
        ),
    ],
)
def test_bad_runner_configs_name_the_key(tmp_path: Path, task_runner: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(_config(tmp_path, task_runner))
    assert message in str(info.value)


def test_dask_without_prefect_dask_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "prefect_dask" else find_spec(name, *a),
    )
    with pytest.raises(ConfigError, match=r"pip install 'halluwatch\[dask\]'"):
        load_config(_config(tmp_path, "{type: dask}"))


def test_a_batch_travels_pickled(tmp_path: Path) -> None:
    """What crosses to a process or a Dask worker and back: the config in, the partial out."""
    from flows.context import run_parts
    from flows.nightly import process_batch
    from sessions.grouping import select
    from sessions.storage import partition_prefix

    loaded = load_config(_config(tmp_path))
    assert pickle.loads(pickle.dumps(loaded)) == loaded
    sessions = loaded.config.sessions
    listed = run_parts(loaded).sessions.list(partition_prefix(sessions.layout, DAY))
    units = [[(o.key, o.size) for o in u.objects] for u in select(listed, sessions.include).units]
    partial = process_batch.fn(loaded, DAY, "run", 0, units)
    assert partial.sessions == 31
    assert pickle.loads(pickle.dumps(partial)) == partial


def test_dask_without_a_prefect_server_stops_before_prefect_starts(tmp_path: Path) -> None:
    result = subprocess.run(
        [halluwatch_bin(), "run", "--config", str(_config(tmp_path, "{type: dask}"))],
        capture_output=True,
        text=True,
        env=cli_env(PREFECT_HOME=str(tmp_path / "prefect-home")),
        timeout=120,
        check=False,
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines() == [
        "halluwatch: error: run.task_runner: type dask needs a running Prefect server, and "
        "PREFECT_API_URL is not set: start one with `prefect server start` and set "
        "PREFECT_API_URL=http://HOST:4200/api"
    ]
