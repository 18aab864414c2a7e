"""The `judge:` config, reference files, and whether the judge is on."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from detectors.judge import (
    OFF_REASON,
    JudgeConfig,
    JudgeSettings,
    load_references,
    parse_judge_config,
    resolve_model,
)
from detectors.judge.prompt import PromptTemplates
from sessions.errors import ConfigError, CredentialError

ENV = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "JUDGE_MODEL")


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_defaults() -> None:
    config = parse_judge_config(None)
    assert config == JudgeConfig()
    assert (config.model, config.sample_rate, config.max_sessions) == (None, 0.05, 200)
    assert (config.oversample_flagged, config.max_replies_per_session) == (4.0, 3)
    assert (config.evidence_tokens, config.concurrency, config.max_retries) == (6000, 4, 3)
    assert (config.batch.enabled, config.batch.poll_seconds, config.batch.deadline_minutes) == (
        False,
        30,
        60,
    )
    assert all(field.description for field in JudgeConfig.model_fields.values())


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"modle": "gpt-4o-mini"}, "judge.modle: unknown key"),
        ({"batch": {"enabled": True, "poll": 5}}, "judge.batch.poll: unknown key"),
        ({"sample_rate": 1.5}, "judge.sample_rate: Input should be less than or equal to 1"),
        ({"agent_rates": {"bot": -0.1}}, "judge.agent_rates.bot: Input should be greater"),
        ({"safety_critical": {"bot": "dental"}}, "judge.safety_critical.bot: Input should be"),
        ({"concurrency": 0}, "judge.concurrency: Input should be greater than or equal to 1"),
        ({"budget_usd": 5}, "budget_usd needs input_usd_per_mtok and output_usd_per_mtok"),
        ({"budget_usd": 5, "input_usd_per_mtok": 0.15}, "budget_usd needs input_usd_per_mtok"),
    ],
)
def test_config_errors_name_the_key(raw: dict, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        parse_judge_config(raw)
    assert message in str(raised.value)


def test_a_dollar_budget_with_prices_is_fine() -> None:
    config = parse_judge_config(
        {"budget_usd": 2, "input_usd_per_mtok": 0.15, "output_usd_per_mtok": 0.6}
    )
    assert config.cost_usd(1_000_000, 1_000_000) == pytest.approx(0.75)
    assert JudgeConfig().cost_usd(10, 10) is None


def test_references_are_read_relative_to_the_config_folder(tmp_path: Path) -> None:
    (tmp_path / "refs").mkdir()
    (tmp_path / "refs" / "support.txt").write_text(
        "# curated by the support team\nRefunds over $500 need approval.\n\nSLA: 24 h\n"
    )
    (tmp_path / "refs" / "clinic.yaml").write_text("- Max dose of X is 40 mg a day.\n- 12\n")
    config = parse_judge_config(
        {"references": {"support-bot": "refs/support.txt", "clinic-bot": "refs/clinic.yaml"}}
    )
    assert load_references(config, tmp_path) == {
        "support-bot": ["Refunds over $500 need approval.", "SLA: 24 h"],
        "clinic-bot": ["Max dose of X is 40 mg a day.", "12"],
    }


def test_a_missing_or_bad_reference_file_is_a_config_error_naming_it(tmp_path: Path) -> None:
    config = parse_judge_config({"references": {"support-bot": "refs/missing.txt"}})
    with pytest.raises(ConfigError) as raised:
        load_references(config, tmp_path)
    assert "judge.references.support-bot" in str(raised.value)
    assert str(tmp_path / "refs" / "missing.txt") in str(raised.value)

    (tmp_path / "facts.yaml").write_text("refund: 30 days\n")
    config = parse_judge_config({"references": {"bot": "facts.yaml"}})
    with pytest.raises(ConfigError, match="must hold a YAML list of facts"):
        load_references(config, tmp_path)


def test_the_judge_is_off_without_a_model(clean_env: pytest.MonkeyPatch) -> None:
    assert resolve_model(JudgeConfig(), JudgeSettings()) is None
    assert JudgeSettings().resolve_model(None) is None
    assert OFF_REASON == "no judge configured"
    assert f"LLM evaluations: off ({OFF_REASON})" == "LLM evaluations: off (no judge configured)"


def test_a_model_without_key_or_endpoint_is_a_credential_error(
    clean_env: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(CredentialError) as raised:
        resolve_model(JudgeConfig(model="gpt-4o-mini"), JudgeSettings())
    message = str(raised.value)
    assert "judge.model = 'gpt-4o-mini'" in message
    assert "set OPENAI_API_KEY" in message and "OPENAI_BASE_URL" in message

    clean_env.setenv("JUDGE_MODEL", "llama3.1")
    with pytest.raises(CredentialError, match=re.escape("JUDGE_MODEL = 'llama3.1'")):
        resolve_model(JudgeConfig(), JudgeSettings())


def test_settings_come_from_the_environment(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("JUDGE_MODEL", "llama3.1")
    clean_env.setenv("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1")
    clean_env.setenv("OPENAI_API_KEY", "")
    settings = JudgeSettings()
    assert settings.openai_api_key is None  # empty is unset: a local server needs no key
    assert resolve_model(JudgeConfig(), settings) == "llama3.1"
    assert resolve_model(JudgeConfig(model="qwen2.5"), settings) == "qwen2.5"

    clean_env.setenv("OPENAI_API_KEY", "sk-env-secret")
    settings = JudgeSettings()
    assert settings.openai_api_key is not None
    assert settings.openai_api_key.get_secret_value() == "sk-env-secret"
    assert "sk-env-secret" not in repr(settings)


def test_a_missing_or_broken_judge_template_stops_before_any_work(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"judge template claims\.system\.j2 not found"):
        PromptTemplates(tmp_path)
    for name in ("claims.system.j2", "claims.user.j2", "claims.repair.j2"):
        (tmp_path / name).write_text("{{ reply }}")
    (tmp_path / "claims.repair.j2").write_text("{% if %}")
    with pytest.raises(ConfigError, match=r"claims\.repair\.j2, line 1"):
        PromptTemplates(tmp_path)
