"""The run config a user writes (`halluwatch.yaml`), composed from each stage's typed config.

Everything is checked when the config is loaded, before any session is read: unknown keys,
bad values, a layout that does not render, an unknown format or detector, a missing tools file,
an unknown time zone. Each problem becomes one ``ConfigError`` line that names the key.
"""

from __future__ import annotations

import hashlib
import importlib.util
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import orjson
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from alerts.config import AlertsConfig
from detectors.judge import JudgeConfig, JudgeSettings, load_references, resolve_model
from detectors.runner import DetectorSuite
from findings.config import FindingsConfig
from sessions.config import AgentConfig, SessionsConfig, agent_registries
from sessions.errors import ConfigError
from sessions.formats import get_adapter
from sessions.storage import partition_prefix


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ResultsConfig(_Strict):
    location: str | None = Field(
        None,
        description="Where results go: a folder or `s3://bucket/prefix`. Default: beside "
        "the sessions, under `prefix`.",
    )
    prefix: str = Field("halluwatch/", description="Key prefix of the results store.")
    endpoint_url: str | None = Field(None, description="S3-compatible endpoint for results.")


class ThreadsRunner(_Strict):
    """Batches on threads of the flow's own process: the default, right for I/O-bound days."""

    type: Literal["threads"] = Field("threads", description="Run batches on a thread pool.")
    max_workers: int | None = Field(
        None, ge=1, description="Threads at most; when unset, Prefect's default (one per batch)."
    )


class ProcessesRunner(_Strict):
    """Batches in worker processes on this host, for CPU-bound parsing and code checks."""

    type: Literal["processes"] = Field(description="Run batches on a pool of processes.")
    max_workers: int | None = Field(
        None, ge=1, description="Processes at most; the host's CPU count when unset."
    )


class DaskRunner(_Strict):
    """Batches on a Dask cluster (prefect-dask): many hosts, or a local cluster for the run."""

    type: Literal["dask"] = Field(description="Run batches on a Dask cluster.")
    address: str | None = Field(
        None,
        description="Scheduler of a running cluster (`tcp://scheduler:8786`); when unset, a "
        "local cluster is started for the run and stopped after it.",
    )
    n_workers: int = Field(2, ge=1, description="Workers of the local cluster.")
    threads_per_worker: int = Field(1, ge=1, description="Threads per local-cluster worker.")
    processes: bool = Field(
        True, description="Local-cluster workers as processes (true) or as threads (false)."
    )

    @model_validator(mode="after")
    def _local_settings_need_a_local_cluster(self) -> DaskRunner:
        local = sorted(self.model_fields_set & {"n_workers", "threads_per_worker", "processes"})
        if self.address and local:
            raise ValueError(
                f"{', '.join(local)} size a local cluster; with `address` the cluster is "
                "already running (size it where it is started)"
            )
        return self


TaskRunnerConfig = Annotated[
    ThreadsRunner | ProcessesRunner | DaskRunner, Field(discriminator="type")
]


class RunSettings(_Strict):
    timezone: str = Field("UTC", description="Time zone in which `yesterday` is computed.")
    batch_mb: float = Field(
        64, gt=0, description="Target size of one batch (one Prefect task) in megabytes."
    )
    max_error_share: float = Field(
        0.5,
        ge=0,
        le=1,
        description="Share of unreadable files above which the run exits with code 3.",
    )
    task_runner: TaskRunnerConfig = Field(
        default_factory=ThreadsRunner,
        description="Where batches run: `threads` (default), `processes` on this host, or "
        "`dask` for a cluster of many hosts.",
    )


class RunConfig(_Strict):
    sessions: SessionsConfig = Field(default_factory=SessionsConfig)
    agents: dict[str, AgentConfig] = Field(
        default_factory=dict, description="Per-agent settings, keyed by agent name."
    )
    detectors: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="Per-detector parameters (and `enabled: false`), keyed by detector name.",
    )
    results: ResultsConfig = Field(default_factory=ResultsConfig)
    findings: FindingsConfig = Field(default_factory=FindingsConfig)
    alerts: AlertsConfig = Field(default_factory=AlertsConfig)
    judge: JudgeConfig = Field(
        default_factory=JudgeConfig,
        description="The LLM judge on a sample of sessions; off unless a model is named.",
    )
    run: RunSettings = Field(default_factory=RunSettings)


@dataclass(frozen=True, slots=True)
class LoadedConfig:
    config: RunConfig
    base: Path  # relative paths in the config are relative to its folder
    path: Path | None

    def detector_suite(self) -> DetectorSuite:
        """The detectors with the global parameters and each agent's overrides."""
        agents = self.config.agents
        overrides = {name: agent.detectors for name, agent in agents.items() if agent.detectors}
        return DetectorSuite(self.config.detectors, overrides)

    @property
    def hash(self) -> str:
        canonical = orjson.dumps(self.config.model_dump(mode="json"), option=orjson.OPT_SORT_KEYS)
        return hashlib.sha256(canonical).hexdigest()[:16]


def _format_errors(source: str, exc: ValidationError) -> str:
    lines = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "(top level)"
        msg = "unknown key" if err["type"] == "extra_forbidden" else err["msg"]
        lines.append(f"{source}: {loc}: {msg}")
    return "\n".join(lines)


def parse_config(
    data: Any, *, base: Path, source: str = "config", path: Path | None = None
) -> LoadedConfig:
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the top level must be a mapping, not {type(data).__name__}")
    try:
        config = RunConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_format_errors(source, exc)) from None
    loaded = LoadedConfig(config, base, path)
    check(loaded)
    return loaded


def load_config(path: str | Path | None) -> LoadedConfig:
    """Read and check a YAML run config; ``None`` gives the defaults (for `scan`)."""
    if path is None:
        return parse_config({}, base=Path.cwd(), source="defaults")
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"config file {file} does not exist") from None
    except OSError as exc:
        raise ConfigError(f"config file {file} cannot be read: {exc.strerror}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{file}: not valid YAML: {exc}") from None
    return parse_config(data, base=file.resolve().parent, source=str(file), path=file)


def check(loaded: LoadedConfig) -> None:
    """The checks pydantic cannot do alone; each raises ``ConfigError`` naming the key."""
    config = loaded.config
    layout = config.sessions.layout
    if partition_prefix(layout, date(2026, 1, 31)) == partition_prefix(layout, date(2026, 2, 1)):
        raise ConfigError(
            f"sessions.layout {layout!r} names no date field: every night would read the same "
            "files (use e.g. 'sessions/{date:%Y/%m/%d}/')"
        )
    if config.sessions.format != "auto":
        get_adapter(config.sessions.format)
    try:
        ZoneInfo(config.run.timezone)
    except (ZoneInfoNotFoundError, ValueError):
        raise ConfigError(f"run.timezone: unknown time zone {config.run.timezone!r}") from None
    loaded.detector_suite()
    agent_registries(config.agents, loaded.base)
    # The judge: a named model without a key or endpoint, or a missing facts file, stops here.
    resolve_model(config.judge, JudgeSettings())
    load_references(config.judge, loaded.base)
    if config.run.task_runner.type == "dask" and importlib.util.find_spec("prefect_dask") is None:
        raise ConfigError(
            "run.task_runner: type dask needs prefect-dask, which is not installed: "
            "pip install 'halluwatch[dask]'"
        )
