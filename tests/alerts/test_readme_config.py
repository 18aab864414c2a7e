"""The alerts configuration shown in the README is a valid config whose channels build."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from flows.alerting import build_channels
from flows.config import parse_config
from sessions.errors import CredentialError

REPO = Path(__file__).resolve().parents[2]
ENV = {
    "SLACK_WEBHOOK_URL": "https://hooks.slack.invalid/T/B/x",
    "SLACK_BOT_TOKEN": "xoxb-not-a-real-token",
    "SMTP_USER": "halluwatch",
    "SMTP_PASSWORD": "not-a-real-password",
    "HALLUWATCH_WEBHOOK_SECRET": "whsec_c2l4dGVlbiBieXRlIGtleQ==",
}


def _readme_alerts() -> dict:
    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("## Alerts and the report") :]
    start = section.index("```yaml\n") + len("```yaml\n")
    return yaml.safe_load(section[start : section.index("```", start)])


def test_readme_alerts_config_builds_every_channel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    loaded = parse_config(_readme_alerts(), base=tmp_path, source="README.md")
    channels = build_channels(loaded)
    assert sorted(channels) == ["events", "log", "ml-email", "oncall-slack", "support-slack"]
    for channel in channels.values():
        for secret in ENV.values():
            assert secret not in repr(channel)


def test_a_missing_secret_names_its_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("SMTP_PASSWORD")
    loaded = parse_config(_readme_alerts(), base=tmp_path, source="README.md")
    with pytest.raises(CredentialError, match="SMTP_PASSWORD"):
        build_channels(loaded)
