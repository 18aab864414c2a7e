from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from alerts.channels import (
    ConsoleChannel,
    EmailChannel,
    SlackChannel,
    WebhookChannel,
    build_channel,
)
from alerts.channels.config import ChannelConfig
from alerts.render import Renderer
from sessions.errors import ConfigError, CredentialError
from tests.alerts.loopback import make_alert

CONFIG = TypeAdapter(ChannelConfig)


def build(raw: dict[str, Any], env: dict[str, str], base: Path = Path(".")) -> Any:
    return build_channel("ch", CONFIG.validate_python(raw), env=env, base=base, renderer=Renderer())


def test_each_type_builds_its_channel_with_secrets_from_env(tmp_path: Path) -> None:
    slack = build({"type": "slack", "webhook_url_env": "HOOK"}, {"HOOK": "https://h/x"})
    assert isinstance(slack, SlackChannel) and slack.name == "ch"
    bot = build(
        {
            "type": "slack",
            "token_env": "TOK",
            "channel": "C1",
            "api_url": "http://127.0.0.1:1/api/",
        },
        {"TOK": "xoxb-1"},
    )
    assert isinstance(bot, SlackChannel) and "xoxb-1" not in repr(bot)
    mail = build(
        {"type": "email", "host": "h", "sender": "a@b", "recipients": ["c@d"],
         "username_env": "U", "password_env": "P"},
        {"U": "user", "P": "pw-value"},
    )  # fmt: skip
    assert isinstance(mail, EmailChannel) and "pw-value" not in repr(mail)
    hook = build({"type": "webhook", "url": "http://h/?k=s", "secret_env": "S"}, {"S": "plain"})
    assert isinstance(hook, WebhookChannel) and "k=s" not in repr(hook)
    console = build({"type": "console", "path": "out/alerts.log"}, {}, base=tmp_path)
    assert isinstance(console, ConsoleChannel) and console.path == tmp_path / "out/alerts.log"


@pytest.mark.parametrize(
    ("raw", "env", "var"),
    [
        ({"type": "slack", "webhook_url_env": "SLACK_HOOK"}, {}, "SLACK_HOOK"),
        ({"type": "slack", "token_env": "SLACK_TOK", "channel": "C"}, {"SLACK_TOK": " "},
         "SLACK_TOK"),
        ({"type": "webhook", "url": "http://h", "secret_env": "HOOK_SECRET"}, {}, "HOOK_SECRET"),
        ({"type": "email", "host": "h", "sender": "a@b", "recipients": ["c@d"],
          "username_env": "SMTP_USER", "password_env": "SMTP_PASS"},
         {"SMTP_USER": "u"}, "SMTP_PASS"),
    ],
)  # fmt: skip
def test_a_missing_secret_is_a_credential_error_naming_the_variable(
    raw: dict[str, Any], env: dict[str, str], var: str
) -> None:
    with pytest.raises(CredentialError, match=f"environment variable {var} is not set"):
        build(raw, env)


def test_a_bad_whsec_secret_names_the_variable_not_the_value() -> None:
    with pytest.raises(CredentialError, match="HOOK_SECRET") as caught:
        build({"type": "webhook", "url": "http://h", "secret_env": "HOOK_SECRET"},
              {"HOOK_SECRET": "whsec_not*base64!"})  # fmt: skip
    assert "not*base64" not in str(caught.value)


@pytest.mark.parametrize(
    "raw",
    [
        {"type": "slack"},
        {"type": "slack", "webhook_url_env": "A", "token_env": "B", "channel": "C"},
        {"type": "slack", "token_env": "B"},
        {"type": "email", "host": "h", "sender": "a@b", "recipients": ["c@d"], "username_env": "U"},
    ],
)
def test_incoherent_configs_are_config_errors(raw: dict[str, Any]) -> None:
    with pytest.raises(ConfigError, match="'ch'"):
        build(raw, {"A": "x", "B": "y", "U": "u"})


def test_console_appends_to_a_file_or_writes_to_a_stream(tmp_path: Path) -> None:
    channel = build({"type": "console", "path": "alerts.log"}, {}, base=tmp_path)
    channel.send([make_alert()])
    channel.send([make_alert(title="second one")])
    logged = (tmp_path / "alerts.log").read_text()
    assert logged.count("[HIGH]") == 2 and "second one" in logged
    stream = io.StringIO()
    ConsoleChannel("c", renderer=Renderer(), stream=stream).send([make_alert()])
    assert stream.getvalue().startswith("[HIGH] support-bot v7 invents order ids")
