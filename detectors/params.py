"""What a config may set for each detector: pydantic models, validated when the config loads.

They live apart from the detectors' code, which only reads them: that code is plain Python that
mypyc can compile (``setup.py``; mypyc compiles no pydantic model), and these models stay
interpreted either way. Each detector module re-exports its own (``detectors.faithfulness.
FaithfulnessParams``).
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, field_validator

from detectors.registry import DetectorParams

STRIPE_PREFIXES = [
    "acct", "ba", "card", "ch", "cs", "cus", "evt", "ii", "in", "pi", "pm", "po", "price",
    "prod", "re", "seti", "si", "src", "sub", "tr", "txn",
]  # fmt: skip


def _valid_regex(regex: str) -> str:
    """``regex`` itself once it compiles; a bad one is a config error, raised before any work."""
    try:
        re.compile(regex)
    except re.error as exc:
        raise ValueError(f"invalid regex {regex!r}: {exc}") from None
    return regex


class Rule(BaseModel):
    """One claim and its evidence. Regexes are case-insensitive ``search``es."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="Short label used in explanations (e.g. 'tests pass').")
    claim: str = Field(description="Regex over a reply sentence that states the action is done.")
    tools: list[str] = Field(
        default_factory=list, description="Regexes over tool names whose calls back the claim."
    )
    commands: str | None = Field(
        None, description="Regex over a shell command (or a shell tool's input) that backs it."
    )
    failure: str | None = Field(
        None, description="Regex over a result's output that means the action failed."
    )
    weak_commands: str | None = Field(
        None,
        description="Commands that back the claim but whose outcome says nothing about it "
        "(e.g. `git commit`, whose hooks may run the tests).",
    )
    weak_evidence: str | None = Field(
        None,
        description="Regex over a weak command's output showing it did the work (a hook's "
        "lines); when set, weak commands only back the claim once one of their results in the "
        "session matches (a repository whose commits print only git's summary runs no hook).",
    )
    already_done: str | None = Field(
        None,
        description="Regex over a failed result's output that says there was nothing left to do "
        "(git's `nothing to commit`): after an earlier success of the rule it is no failure.",
    )
    strict_subject: bool = Field(
        False,
        description="Only an unqualified claim can be contradicted ('all tests pass', not "
        "'the renderer tests pass').",
    )
    about_ci: bool = Field(
        False, description="The claim reports a CI run ('the pipeline is green')."
    )
    ci_runs_it: bool = Field(
        False,
        description="A check CI runs too (tests, lint, a build): in a sentence that is about CI "
        "('tests passed in CI, and lint too') the claim is CI's, left to the CI rule.",
    )

    @field_validator(
        "claim", "commands", "failure", "weak_commands", "weak_evidence", "already_done"
    )
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        return value if value is None else _valid_regex(value)

    @field_validator("tools")
    @classmethod
    def _tools_compile(cls, value: list[str]) -> list[str]:
        return [_valid_regex(pattern) for pattern in value]


class ActionClaimsParams(DetectorParams):
    rules: list[Rule] = Field(
        default_factory=list, description="Extra claim rules (added to the defaults)."
    )
    replace_defaults: bool = Field(False, description="Use only `rules`, not the default pack.")
    derive_from_tools: bool = Field(
        True, description="Check state-change claims against the agent's domain tool names."
    )


class FaithfulnessParams(DetectorParams):
    threshold: float = Field(
        0.9, ge=0, le=1, description="Replies whose supported share is below this are flagged."
    )
    tolerance: float = Field(
        0.1, ge=0, le=1, description="Relative slack for numbers marked approximate (`about 50`)."
    )
    context_keys: list[str] = Field(
        default_factory=list,
        description="JSON keys of tool outputs that hold retrieved context; empty = all output.",
    )


class InventedIdParams(DetectorParams):
    prefixes: list[str] = Field(
        default_factory=lambda: list(STRIPE_PREFIXES),
        description="Prefixes of Stripe-style ids (`cus_...`); [] turns the pattern off.",
    )
    min_body: int = Field(8, ge=4, description="Shortest id body after the prefix's `_`.")
    uuids: bool = Field(True, description="Check UUIDs.")
    patterns: dict[str, str] = Field(
        default_factory=dict,
        description="More id patterns for this agent, name -> regex (e.g. ticket keys "
        "`\\b[A-Z]{2,10}-\\d+\\b`). Matched as written in tool inputs, compared without case.",
    )

    @field_validator("patterns")
    @classmethod
    def _compiles(cls, value: dict[str, str]) -> dict[str, str]:
        return {name: _valid_regex(regex) for name, regex in value.items()}


class NotFoundParams(DetectorParams):
    patterns: list[str] = Field(
        default_factory=list,
        description="Extra regexes for this agent's not-found errors; a named group `t` "
        "captures the missing target.",
    )
    probe_commands: list[str] = Field(
        default_factory=list, description="Extra shell commands that only test for existence."
    )

    @field_validator("patterns")
    @classmethod
    def _compiles(cls, value: list[str]) -> list[str]:
        return [_valid_regex(pattern) for pattern in value]


class UnknownToolParams(DetectorParams):
    ignore: list[str] = Field(
        default_factory=list,
        description="Tool names never flagged (e.g. a tool the harness injects but never lists).",
    )
    closest_cutoff: float = Field(
        0.6, ge=0, le=1, description="Similarity from which a registered tool is named as closest."
    )
