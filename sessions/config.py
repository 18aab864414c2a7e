"""The typed config of the sessions stage: where sessions live, how a day is laid out, agents."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

import orjson
from pydantic import BaseModel, ConfigDict, Field, field_validator

from sessions.errors import ConfigError
from sessions.models import ToolRegistry

DEFAULT_INCLUDE = [
    "*.json",
    "*.jsonl",
    "*.ndjson",
    "*.json.gz",
    "*.jsonl.gz",
    "*.ndjson.gz",
    "*.traj",  # SWE-agent
    "*.traj.gz",
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AgentConfig(_Strict):
    """What the run config knows about one agent."""

    tools: list[str] | None = Field(
        None, description="Tool names registered for this agent, used when a session lists none."
    )
    tools_file: str | None = Field(
        None,
        description="A JSON file of tool definitions (OpenAI or Anthropic `tools` format), "
        "relative to the config file. Merged with `tools`.",
    )
    allow_mcp: bool = Field(
        False, description="Also accept any `mcp__<server>__<tool>` name for this agent."
    )
    version: str | None = Field(
        None, description="Agent version to assume when neither the session nor the path has one."
    )
    detectors: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="Detector parameters for this agent, merged key by key over `detectors:`.",
    )


class SessionsConfig(_Strict):
    """Where a day's sessions are and how to read them."""

    location: str = Field(
        "./sessions-bucket",
        description="A local folder or `s3://bucket/prefix` holding the session files.",
    )
    endpoint_url: str | None = Field(
        None, description="S3-compatible endpoint (MinIO, Ceph, R2...); AWS when unset."
    )
    region: str | None = Field(None, description="S3 region; the AWS default chain when unset.")
    layout: str = Field(
        "sessions/{date:%Y/%m/%d}/",
        description="The key prefix of one day's partition under `location`. Fields: {date}.",
    )
    format: str = Field("auto", description="Session format, or `auto` to detect per file.")
    include: list[str] = Field(
        default_factory=lambda: list(DEFAULT_INCLUDE),
        description="File name patterns to read; other files are counted as skipped.",
    )
    agent_from_path: str | None = Field(
        None,
        description="A regular expression matched against each key; its named groups `agent` "
        "and `agent_version` fill in what a format does not record.",
    )
    default_agent: str | None = Field(
        None, description="Agent name for sessions whose format and path name none."
    )
    read_concurrency: Annotated[int, Field(ge=1, le=256)] = Field(
        8, description="Objects read at once."
    )

    @field_validator("agent_from_path")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is None:
            return value
        try:
            pattern = re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a valid regular expression: {exc}") from exc
        if not {"agent", "agent_version"} & set(pattern.groupindex):
            raise ValueError("needs a named group (?P<agent>...) or (?P<agent_version>...)")
        return value


def load_tools_file(path: Path) -> list[str]:
    """Tool names from an OpenAI (`function.name` or flat `name`) or Anthropic tools file."""
    try:
        data = orjson.loads(path.read_bytes())
    except FileNotFoundError:
        raise ConfigError(f"tools_file {path} does not exist: fix the path in the config") from None
    except orjson.JSONDecodeError as exc:
        raise ConfigError(f"tools_file {path} is not valid JSON: {exc}") from None
    if isinstance(data, dict):
        data = data.get("tools", [])
    if not isinstance(data, list):
        raise ConfigError(f"tools_file {path} must hold a list of tool definitions")
    names: list[str] = []
    for item in data:
        if isinstance(item, str):
            names.append(item)
        elif isinstance(item, dict):
            fn = item.get("function")
            name = fn.get("name") if isinstance(fn, dict) else item.get("name")
            if isinstance(name, str):
                names.append(name)
    if not names:
        raise ConfigError(f"tools_file {path} lists no tool names")
    return names


def agent_registries(agents: dict[str, AgentConfig], base: Path) -> dict[str, ToolRegistry]:
    """The configured tool registry of each agent that lists tools."""
    registries: dict[str, ToolRegistry] = {}
    for name, agent in agents.items():
        names = list(agent.tools or [])
        if agent.tools_file:
            names += load_tools_file((base / agent.tools_file).resolve())
        if names or agent.allow_mcp:
            registries[name] = ToolRegistry(frozenset(names), "config", allow_mcp=agent.allow_mcp)
    return registries
