"""Where a run's batches execute: the task runner that `run.task_runner` in the config names.

    threads    ThreadPoolTaskRunner (the default): threads of the flow's own process
    processes  ProcessPoolTaskRunner: a pool of processes on this host, for CPU-bound checks
    dask       prefect-dask's DaskTaskRunner: a running cluster (`address`), or a LocalCluster
               started for the run

The config is only known once the flow has loaded it, and Prefect starts a flow's task runner
before that. So both flows are declared with a ``ConfiguredTaskRunner``: it starts nothing, and
the flow hands it the config (``use_task_runner``) before submitting its first batch. Every way
of starting a flow therefore honours the config: the CLI, `halluwatch serve`, a work-pool worker
running a deployment of `infra/prefect.yaml`, a plain call. A runner given explicitly with
``flow.with_options(task_runner=...)`` wins over the config.

Tasks receive the config, never live clients (``flows.context``), so a batch pickles to a
process or a Dask worker, which builds its own stores and detectors once.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from contextlib import ExitStack
from typing import Any

import prefect
from prefect import get_run_logger
from prefect.context import FlowRunContext
from prefect.futures import PrefectFuture
from prefect.logging import get_logger
from prefect.settings import get_current_settings
from prefect.task_runners import TaskRunner, ThreadPoolTaskRunner
from prefect.tasks import Task

from flows.config import LoadedConfig, TaskRunnerConfig, ThreadsRunner
from sessions.errors import ConfigError


def build_task_runner(settings: TaskRunnerConfig) -> TaskRunner[Any]:
    """A new, unstarted task runner as ``settings`` describe it."""
    check_api_server(settings)
    if settings.type == "threads":
        return ThreadPoolTaskRunner(max_workers=settings.max_workers)
    if settings.type == "processes":
        try:
            from prefect.task_runners import ProcessPoolTaskRunner
        except ImportError:  # older Prefect 3 releases have none
            raise ConfigError(
                f"run.task_runner: type processes needs a newer Prefect than {prefect.__version__}"
                ": pip install -U 'prefect<4' (or use type threads or dask)"
            ) from None
        return ProcessPoolTaskRunner(max_workers=settings.max_workers)
    from prefect_dask import DaskTaskRunner

    if settings.address:
        return DaskTaskRunner(address=settings.address)
    return DaskTaskRunner(
        cluster_class="distributed.LocalCluster",
        cluster_kwargs={
            "n_workers": settings.n_workers,
            "threads_per_worker": settings.threads_per_worker,
            "processes": settings.processes,
            # Any free port: two runs on one host must not fight over the dashboard's 8787.
            "dashboard_address": ":0",
        },
    )


def check_api_server(settings: TaskRunnerConfig) -> None:
    """A Dask runner needs a running Prefect server; a process pool is slow without one.

    On the temporary API server a process starts for itself, every Dask worker and every pool
    process starts one more of its own (STACK.md): for Dask that is broken, for processes it
    costs about 15 s per process.
    """
    if settings.type == "threads" or get_current_settings().api.url:
        return
    if settings.type == "dask":
        raise ConfigError(
            "run.task_runner: type dask needs a running Prefect server, and PREFECT_API_URL is "
            "not set: start one with `prefect server start` and set "
            "PREFECT_API_URL=http://HOST:4200/api"
        )
    get_logger("halluwatch").warning(
        "run.task_runner: each worker process starts a temporary Prefect API server of its own "
        "(about 15 s); set PREFECT_API_URL to a running server to save that"
    )


class ConfiguredTaskRunner(TaskRunner[PrefectFuture[Any]]):
    """The flows' task runner: hands each batch to the runner the run config names.

    It holds no workers of its own. ``configure`` starts the configured runner (a thread pool
    when the flow never calls it); leaving this runner stops it, when the flow run ends.
    """

    def __init__(self) -> None:
        super().__init__()
        self._stack = ExitStack()
        self._lock = threading.Lock()
        self._runner: TaskRunner[Any] | None = None

    def duplicate(self) -> ConfiguredTaskRunner:
        return type(self)()

    def __reduce__(self) -> tuple[type[ConfiguredTaskRunner], tuple[()]]:
        # The flow, and so its task runner, travels with each task to a process or Dask worker
        # (in the task's context); there it is only a template: send an unstarted one.
        return type(self), ()

    @property
    def configured(self) -> TaskRunner[Any] | None:
        """The runner batches go to, once started."""
        return self._runner

    def configure(self, settings: TaskRunnerConfig) -> TaskRunner[Any]:
        with self._lock:
            if self._runner is not None:
                raise RuntimeError("the task runner is already configured for this flow run")
            return self._start(settings)

    def _start(self, settings: TaskRunnerConfig) -> TaskRunner[Any]:
        self._runner = self._stack.enter_context(build_task_runner(settings))
        return self._runner

    def submit(
        self,
        task: Task[Any, Any],
        parameters: dict[str, Any],
        wait_for: Iterable[PrefectFuture[Any]] | None = None,
        dependencies: dict[str, set[Any]] | None = None,
    ) -> PrefectFuture[Any]:
        with self._lock:
            runner = self._runner or self._start(ThreadsRunner())
        return runner.submit(task, parameters, wait_for, dependencies)

    def cancel_all(self) -> None:
        cancel = getattr(self._runner, "cancel_all", None)
        if cancel is not None:
            cancel()

    def __enter__(self) -> ConfiguredTaskRunner:
        super().__enter__()
        self._stack.__enter__()
        return self

    def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> None:
        try:
            self._stack.__exit__(exc_type, exc_value, traceback)
        finally:
            self._runner = None
            super().__exit__(exc_type, exc_value, traceback)


def use_task_runner(loaded: LoadedConfig) -> None:
    """Send this flow run's batches to the runner ``loaded`` names (call before submitting)."""
    context = FlowRunContext.get()
    runner = context.task_runner if context is not None else None
    if isinstance(runner, ConfiguredTaskRunner):
        runner.configure(loaded.config.run.task_runner)
    elif runner is not None:
        get_run_logger().info(
            "run.task_runner is ignored: this flow run was given %s explicitly", runner.name
        )
