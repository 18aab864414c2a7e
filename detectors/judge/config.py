"""The `judge:` section of the run config, and the per-agent reference facts it points to.

Everything here is checked when the config is loaded: unknown keys, rates outside 0..1, a dollar
budget without prices to compute dollars from, a reference file that does not exist.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from sessions.errors import ConfigError

Domain = Literal["medical", "financial", "legal"]
Rate = Annotated[float, Field(ge=0, le=1)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class BatchConfig(_Strict):
    """OpenAI Batch API mode: cheaper, slower; what is not done by the deadline is judged online."""

    enabled: bool = Field(False, description="Send the judge requests as one OpenAI batch.")
    poll_seconds: float = Field(30, gt=0, description="Seconds between batch status checks.")
    deadline_minutes: float = Field(
        60, gt=0, description="Minutes to wait for the batch before judging the rest online."
    )


class JudgeConfig(_Strict):
    """How the LLM judge samples replies, calls the model and what it may spend."""

    model: str | None = Field(
        None, description="Judge model name; overrides JUDGE_MODEL. Unset both to turn it off."
    )
    sample_rate: Rate = Field(0.05, description="Share of sessions judged, 0..1.")
    agent_rates: dict[str, Rate] = Field(
        default_factory=dict, description="Per-agent sample rates overriding `sample_rate`."
    )
    max_sessions: int = Field(200, ge=0, description="At most this many sessions judged per run.")
    oversample_flagged: float = Field(
        4.0,
        ge=1,
        description="How many times more likely a session with code-check signals is sampled.",
    )
    max_replies_per_session: int = Field(
        3, ge=1, description="The last N replies with text of a sampled session are judged."
    )
    evidence_tokens: int = Field(
        6000,
        ge=200,
        description="Evidence budget per reply in tokens (about 4 characters each); the most "
        "relevant items are kept, long ones excerpted around what the reply mentions.",
    )
    concurrency: int = Field(4, ge=1, le=64, description="Judge requests in flight at once.")
    timeout_seconds: float = Field(60, gt=0, description="Timeout of one judge request.")
    max_retries: int = Field(
        3, ge=0, le=10, description="Retries of a request on 429, 5xx, timeouts, lost connections."
    )
    budget_tokens: int | None = Field(
        None, ge=1, description="Stop judging once this many tokens (input + output) are used."
    )
    budget_usd: float | None = Field(
        None, gt=0, description="Stop judging once this many dollars are spent (needs prices)."
    )
    input_usd_per_mtok: float | None = Field(
        None, ge=0, description="Price of one million input tokens in dollars; cost is null "
        "when unset.",
    )  # fmt: skip
    output_usd_per_mtok: float | None = Field(
        None, ge=0, description="Price of one million output tokens in dollars."
    )
    safety_critical: dict[str, Domain] = Field(
        default_factory=dict,
        description="Agents whose domain is safety-critical (medical, financial, legal): a "
        "contradicted claim there is critical, an ungrounded one high.",
    )
    references: dict[str, str] = Field(
        default_factory=dict,
        description="Per-agent file of curated facts (one per line, or a YAML list), relative "
        "to the config file; judged as evidence beside the session.",
    )
    batch: BatchConfig = Field(default_factory=BatchConfig, description="Batch API mode.")

    @model_validator(mode="after")
    def _prices_for_dollar_budget(self) -> JudgeConfig:
        if self.budget_usd is not None and (
            self.input_usd_per_mtok is None or self.output_usd_per_mtok is None
        ):
            raise ValueError(
                "budget_usd needs input_usd_per_mtok and output_usd_per_mtok to compute dollars"
            )
        return self

    def rate_for(self, agent: str | None) -> float:
        return self.agent_rates.get(agent, self.sample_rate) if agent else self.sample_rate

    def domain_of(self, agent: str | None) -> Domain | None:
        return self.safety_critical.get(agent) if agent else None

    def cost_usd(self, input_tokens: int, output_tokens: int) -> float | None:
        """Dollars for this usage, or None when the prices are not configured."""
        if self.input_usd_per_mtok is None or self.output_usd_per_mtok is None:
            return None
        return (
            input_tokens * self.input_usd_per_mtok + output_tokens * self.output_usd_per_mtok
        ) / 1_000_000


def parse_judge_config(raw: Any, *, where: str = "judge") -> JudgeConfig:
    """Validate a `judge:` mapping; each problem becomes one ``ConfigError`` line naming its key."""
    try:
        return JudgeConfig.model_validate(raw or {})
    except ValidationError as exc:
        lines = []
        for err in exc.errors():
            loc = ".".join([where, *(str(p) for p in err["loc"])])
            msg = "unknown key" if err["type"] == "extra_forbidden" else err["msg"]
            lines.append(f"{loc}: {msg}")
        raise ConfigError("\n".join(lines)) from None


def load_references(config: JudgeConfig, base: Path) -> dict[str, list[str]]:
    """Each agent's curated facts, read from ``config.references`` (paths relative to ``base``).

    A ``.yaml``/``.yml`` file holds a list of strings; any other file one fact per line (blank
    lines and ``#`` comments skipped).
    """
    facts: dict[str, list[str]] = {}
    for agent, relative in config.references.items():
        path = (base / relative).resolve()
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ConfigError(
                f"judge.references.{agent}: file {path} does not exist: fix the path (relative "
                "to the config file) or remove the entry"
            ) from None
        except OSError as exc:
            raise ConfigError(f"judge.references.{agent}: {path} cannot be read: {exc}") from None
        facts[agent] = _facts(text, path, agent)
    return facts


def _facts(text: str, path: Path, agent: str) -> list[str]:
    if path.suffix.lower() not in (".yaml", ".yml"):
        lines = (line.strip() for line in text.splitlines())
        return [line for line in lines if line and not line.startswith("#")]
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"judge.references.{agent}: {path} is not valid YAML: {exc}") from None
    if data is None:
        return []
    if not isinstance(data, list) or not all(isinstance(x, str | int | float) for x in data):
        raise ConfigError(f"judge.references.{agent}: {path} must hold a YAML list of facts")
    return [str(x).strip() for x in data if str(x).strip()]
