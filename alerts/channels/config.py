"""Channel configs, tagged by ``type``. Secrets are never in the config file: each secret field
names the environment variable that holds it (``webhook_url_env: SLACK_WEBHOOK_URL``), read when
the channel is built, before any work, so a missing one stops the run with its name."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Channel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SlackChannelConfig(_Channel):
    type: Literal["slack"]
    webhook_url_env: str | None = Field(
        None, description="Env var holding an incoming-webhook URL (one channel, no token)."
    )
    token_env: str | None = Field(
        None, description="Env var holding a bot token (`xoxb-…`) for chat.postMessage."
    )
    channel: str | None = Field(None, description="Channel id or name, with a bot token.")
    api_url: str | None = Field(
        None, description="Slack Web API base URL (tests and proxies); Slack's own when unset."
    )
    max_examples: int = Field(3, ge=0, le=10, description="Example sessions shown per alert.")


class EmailChannelConfig(_Channel):
    type: Literal["email"]
    host: str = Field(description="SMTP server host.")
    port: int = Field(587, description="SMTP port (587 STARTTLS, 465 SSL, 25 plain).")
    security: Literal["starttls", "ssl", "none"] = Field("starttls", description="Transport.")
    username_env: str | None = Field(None, description="Env var holding the SMTP user name.")
    password_env: str | None = Field(None, description="Env var holding the SMTP password.")
    sender: str = Field(description="From address.")
    recipients: list[str] = Field(min_length=1, description="To addresses.")
    timeout_s: float = Field(30, gt=0, description="Connection timeout in seconds.")


class WebhookChannelConfig(_Channel):
    type: Literal["webhook"]
    url: str = Field(description="Where to POST the JSON payload.")
    secret_env: str | None = Field(
        None, description="Env var holding the Standard Webhooks signing secret (`whsec_…`)."
    )
    timeout_s: float = Field(10, gt=0, description="Request timeout in seconds.")
    max_attempts: int = Field(4, ge=1, le=10, description="Attempts on 5xx and timeouts.")


class ConsoleChannelConfig(_Channel):
    type: Literal["console"]
    path: str | None = Field(
        None,
        description="Append messages to this file (relative to the config); stdout when unset.",
    )


ChannelConfig = Annotated[
    SlackChannelConfig | EmailChannelConfig | WebhookChannelConfig | ConsoleChannelConfig,
    Field(discriminator="type"),
]
