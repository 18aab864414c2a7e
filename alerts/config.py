"""The typed config of the alerts stage: channels, routes, owners, cooldown, redaction.

    alerts:
      channels:
        support-slack: {type: slack, webhook_url_env: SUPPORT_SLACK_WEBHOOK}
        oncall-hook: {type: webhook, url: "https://hooks.example.com/halluwatch"}
      teams: {support-agent: support}
      routes:
        - match: {teams: [support], min_severity: high}
          channels: [support-slack]
          digest: true
      default_route: [oncall-hook]

Every route that matches an alert sends it; an alert no route matched goes to ``default_route``
(every channel by default), so nothing important is dropped without anyone deciding so.
"""

from __future__ import annotations

import re
from fnmatch import fnmatchcase
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from alerts.channels.config import ChannelConfig
from alerts.models import SEVERITY_ORDER, Alert, ItemType
from alerts.redact import compile_pattern
from sessions.errors import ConfigError

CHANNEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
SeverityName = Literal["low", "medium", "high", "critical"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RouteMatch(_Strict):
    """Which alerts a route takes: every condition given must hold; an unset one matches all."""

    item_types: list[ItemType] | None = Field(
        None, description="Alert types: `anomaly`, `finding`, `canary`, `run_failure`, `test`."
    )
    kinds: list[str] | None = Field(
        None, description="Signal kinds (findings) or metric names (anomalies)."
    )
    min_severity: SeverityName | None = Field(
        None, description="Lowest severity taken: `low`, `medium`, `high` or `critical`."
    )
    agents: list[str] | None = Field(
        None, description="Agent names; shell-style wildcards allowed (`support-*`)."
    )
    agent_versions: list[str] | None = Field(
        None, description="Agent versions; shell-style wildcards allowed (`2.*`)."
    )
    teams: list[str] | None = Field(None, description="Owning teams, as named in `alerts.teams`.")

    def matches(self, alert: Alert) -> bool:
        return (
            (self.item_types is None or alert.item_type in self.item_types)
            and (self.kinds is None or alert.kind in self.kinds)
            and (
                self.min_severity is None
                or alert.severity_rank >= SEVERITY_ORDER.index(self.min_severity)
            )
            and _any_glob(self.agents, alert.agent)
            and _any_glob(self.agent_versions, alert.agent_version)
            and (self.teams is None or alert.team in self.teams)
        )


class Route(_Strict):
    match: RouteMatch = Field(
        default_factory=RouteMatch, description="Which alerts this route takes (default: all)."
    )
    channels: list[str] = Field(min_length=1, description="Channel names to send them to.")
    digest: bool = Field(
        False,
        description="One message per channel with all matched alerts (true), or one message "
        "per alert (false).",
    )


class AlertsConfig(_Strict):
    enabled: bool = Field(True, description="Send alerts at all (false: record them only).")
    channels: dict[str, ChannelConfig] = Field(
        default_factory=dict,
        description="Named channels, tagged by `type` (slack, email, webhook, console); a "
        "console channel when none is configured.",
    )
    routes: list[Route] = Field(
        default_factory=list, description="Routes, in order; every matching route sends."
    )
    teams: dict[str, str] = Field(
        default_factory=dict, description="Agent name -> owning team (routes may match on it)."
    )
    default_route: list[str] = Field(
        default_factory=list,
        description="Channels for alerts no route matched (default: every channel).",
    )
    min_severity: SeverityName = Field(
        "medium", description="Alerts below this severity are not sent anywhere."
    )
    cooldown_days: int = Field(
        3,
        ge=0,
        description="Days before the same anomaly or finding alerts again, unless it got "
        "worse (higher severity, or its value up by half or more).",
    )
    report_base_url: str | None = Field(
        None,
        description="Where the results store is served (reports are under `reports/`); a URL "
        "with `{date}` is used as it is, with the day filled in.",
    )
    redact: dict[str, str] = Field(
        default_factory=dict,
        description="Extra redaction patterns, kind -> regex (`customer_id: 'CUST-\\d{6}'`).",
    )
    templates_dir: str | None = Field(
        None,
        description="Folder of templates overriding the built-in ones (relative to the config).",
    )

    @model_validator(mode="before")
    @classmethod
    def _defaults(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        if not data.get("channels"):
            data["channels"] = {"console": {"type": "console"}}
        if "default_route" not in data:
            data["default_route"] = list(data["channels"])
        return data

    @field_validator("redact")
    @classmethod
    def _patterns(cls, value: dict[str, str]) -> dict[str, str]:
        for kind, rx in value.items():
            try:
                compile_pattern(kind, rx)
            except ConfigError as exc:
                raise ValueError(str(exc)) from None
        return value

    @model_validator(mode="after")
    def _known_channels(self) -> AlertsConfig:
        # Channel names become parts of object keys (the outbox): keep them plain.
        bad = [name for name in self.channels if not CHANNEL_NAME.fullmatch(name)]
        if bad:
            raise ConfigError(
                f"alerts.channels: invalid name(s) {', '.join(map(repr, bad))}: use letters, "
                "digits, '-', '_' and '.'"
            )
        named = [(f"routes[{i}]", name) for i, r in enumerate(self.routes) for name in r.channels]
        named += [("default_route", name) for name in self.default_route]
        unknown = [f"{where}: {name!r}" for where, name in named if name not in self.channels]
        if unknown:
            raise ConfigError(
                f"alerts: unknown channel(s) {', '.join(unknown)}; configured channels: "
                f"{', '.join(sorted(self.channels)) or 'none'}"
            )
        return self

    def secret_env_names(self) -> list[str]:
        """The env vars the channels read secrets from (their values are redacted too)."""
        names = set()
        for channel in self.channels.values():
            for field, value in channel.model_dump().items():
                if field.endswith("_env") and isinstance(value, str):
                    names.add(value)
        return sorted(names)

    def report_url(self, day_iso: str) -> str | None:
        if not self.report_base_url:
            return None
        if "{date}" in self.report_base_url:
            return self.report_base_url.replace("{date}", day_iso)
        # The base URL is where the results store is served; reports live under reports/.
        return f"{self.report_base_url.rstrip('/')}/reports/date={day_iso}/report.html"


def _any_glob(patterns: list[str] | None, value: str | None) -> bool:
    if patterns is None:
        return True
    return value is not None and any(fnmatchcase(value, p) for p in patterns)
