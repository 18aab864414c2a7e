"""Channels deliver rendered alerts: one ``send(alerts)`` per message, several alerts = a digest.

``build_channel`` turns a channel config into a channel, reading its secrets from the environment
by the variable names in the config. It runs before any work, so a missing secret stops the run
with a ``CredentialError`` naming the variable (never its value). ``send`` raises
``DeliveryError`` with ``retryable`` set when trying again may help.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

from alerts.channels.config import (
    ChannelConfig,
    ConsoleChannelConfig,
    EmailChannelConfig,
    SlackChannelConfig,
    WebhookChannelConfig,
)
from alerts.channels.console import ConsoleChannel
from alerts.channels.email import EmailChannel
from alerts.channels.slack import SlackChannel
from alerts.channels.webhook import WebhookChannel, decode_secret
from alerts.models import Alert
from alerts.render import Renderer
from sessions.errors import ConfigError, CredentialError

__all__ = [
    "Channel",
    "ConsoleChannel",
    "EmailChannel",
    "SlackChannel",
    "WebhookChannel",
    "build_channel",
]


class Channel(Protocol):
    name: str

    def send(self, alerts: Sequence[Alert]) -> None: ...


def build_channel(
    name: str,
    config: ChannelConfig,
    *,
    env: Mapping[str, str],
    base: Path,
    renderer: Renderer,
) -> Channel:
    """The channel for ``config``; ``base`` is the config file's folder (relative paths)."""
    if isinstance(config, SlackChannelConfig):
        return _slack(name, config, env, renderer)
    if isinstance(config, EmailChannelConfig):
        if (config.username_env is None) != (config.password_env is None):
            raise ConfigError(
                f"channel {name!r}: set both username_env and password_env, or neither"
            )
        return EmailChannel(
            name,
            renderer=renderer,
            host=config.host,
            port=config.port,
            security=config.security,
            sender=config.sender,
            recipients=config.recipients,
            username=_secret(env, config.username_env, name, "the SMTP user name"),
            password=_secret(env, config.password_env, name, "the SMTP password"),
            timeout_s=config.timeout_s,
        )
    if isinstance(config, WebhookChannelConfig):
        secret = _secret(env, config.secret_env, name, "the webhook signing secret")
        key = decode_secret(secret, config.secret_env or "") if secret is not None else None
        return WebhookChannel(
            name,
            renderer=renderer,
            url=config.url,
            signing_key=key,
            timeout_s=config.timeout_s,
            max_attempts=config.max_attempts,
        )
    if isinstance(config, ConsoleChannelConfig):
        path = base / config.path if config.path else None
        # stderr, so `--json` output on stdout stays machine-readable.
        return ConsoleChannel(name, renderer=renderer, path=path, stream=sys.stderr)
    raise ConfigError(f"channel {name!r}: unknown channel type {type(config).__name__}")


def _slack(
    name: str, config: SlackChannelConfig, env: Mapping[str, str], renderer: Renderer
) -> SlackChannel:
    if (config.webhook_url_env is None) == (config.token_env is None):
        raise ConfigError(f"channel {name!r}: set exactly one of webhook_url_env and token_env")
    if config.token_env is not None and not config.channel:
        raise ConfigError(f"channel {name!r}: token_env needs `channel` (a channel id or name)")
    return SlackChannel(
        name,
        renderer=renderer,
        max_examples=config.max_examples,
        webhook_url=_secret(env, config.webhook_url_env, name, "the Slack incoming-webhook URL"),
        token=_secret(env, config.token_env, name, "the Slack bot token"),
        channel=config.channel,
        api_url=config.api_url,
    )


def _secret(env: Mapping[str, str], var: str | None, channel: str, what: str) -> str | None:
    """The value of ``var`` (None when the config names no variable); an unset or empty one is
    a CredentialError naming the variable."""
    if var is None:
        return None
    value = env.get(var, "").strip()
    if not value:
        raise CredentialError(
            f"channel {channel!r}: environment variable {var} is not set "
            f"(it should hold {what}); export it or remove the channel from the config"
        )
    return value
