"""The judge's endpoint and secret, from the environment, and whether the judge is on at all.

The judge is on when a model is named (`judge.model` in the config, or ``JUDGE_MODEL``). It then
needs ``OPENAI_API_KEY`` (OpenAI) or ``OPENAI_BASE_URL`` (any OpenAI-compatible server; Ollama
and vLLM need no key). When it is off, the manifest and the report say ``OFF_REASON``.
"""

from __future__ import annotations

import openai
from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from detectors.judge.config import JudgeConfig
from sessions.errors import ConfigError, CredentialError

OFF_REASON = "no judge configured"
# Local servers ignore the key but the SDK insists on one.
PLACEHOLDER_KEY = "no-key-needed"


class JudgeSettings(BaseSettings):
    """``OPENAI_API_KEY``, ``OPENAI_BASE_URL``, ``JUDGE_MODEL``; empty values count as unset."""

    model_config = SettingsConfigDict(extra="ignore", frozen=True)

    openai_api_key: SecretStr | None = Field(None, description="API key of the judge endpoint.")
    openai_base_url: str | None = Field(
        None, description="An OpenAI-compatible endpoint (e.g. http://localhost:11434/v1)."
    )
    judge_model: str | None = Field(None, description="Judge model when the config names none.")

    @field_validator("openai_api_key", "openai_base_url", "judge_model", mode="before")
    @classmethod
    def _empty_is_unset(cls, value: object) -> object:
        if isinstance(value, str) and not value.strip():
            return None
        if isinstance(value, SecretStr) and not value.get_secret_value().strip():
            return None
        return value

    def resolve_model(self, config: JudgeConfig | None) -> str | None:
        """``resolve_model(config, self)``: the judge model, or None when the judge is off."""
        return resolve_model(config, self)


def resolve_model(config: JudgeConfig | None, settings: JudgeSettings) -> str | None:
    """The judge model, or None when the judge is off (then report ``OFF_REASON``).

    Raises ``CredentialError`` when a model is named but there is nothing to call it with, so
    the run stops before any work instead of failing every request.
    """
    model = (config.model if config else None) or settings.judge_model
    if not model:
        return None
    if settings.openai_api_key is None and settings.openai_base_url is None:
        origin = "judge.model" if config and config.model else "JUDGE_MODEL"
        raise CredentialError(
            f"the LLM judge is on ({origin} = {model!r}) but neither OPENAI_API_KEY nor "
            "OPENAI_BASE_URL is set: set OPENAI_API_KEY for OpenAI, or OPENAI_BASE_URL for an "
            "OpenAI-compatible server (Ollama, vLLM), or unset the model to turn the judge off"
        )
    return model


def require_model(config: JudgeConfig, settings: JudgeSettings, what: str) -> str:
    """The judge model for a command that cannot run without one (``what`` names it)."""
    model = resolve_model(config, settings)
    if model is None:
        raise ConfigError(
            f"{what} needs a judge model: set judge.model in the config or JUDGE_MODEL, and "
            "OPENAI_API_KEY (or OPENAI_BASE_URL for a local server)"
        )
    return model


def build_client(config: JudgeConfig, settings: JudgeSettings) -> openai.OpenAI:
    """An ``openai.OpenAI`` with the config's timeout and retries (429, 5xx, lost connections:
    the SDK backs off exponentially and honours ``Retry-After``/``retry-after-ms``)."""
    if resolve_model(config, settings) is None:
        raise ConfigError(f"the LLM judge is off ({OFF_REASON}): set judge.model or JUDGE_MODEL")
    key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else None
    return openai.OpenAI(
        api_key=key or PLACEHOLDER_KEY,
        base_url=settings.openai_base_url,
        timeout=config.timeout_seconds,
        max_retries=config.max_retries,
    )
