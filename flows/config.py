"""The run config a user writes (`halluwatch.yaml`), composed from each stage's typed config.

Everything is checked when the config is loaded, before any session is read: unknown keys,
bad values, a layout that does not render, an unknown format or detector, a missing tools file,
an unknown time zone. Each problem becomes one ``ConfigError`` line that names the key.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import orjson
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from alerts.config import AlertsConfig
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
