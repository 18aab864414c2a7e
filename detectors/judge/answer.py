"""The judge's answer: its schema, reading it from a completion, and checking what it cites.

The judge may not invent evidence: a claim labelled supported, partial or contradicted must cite
an item that was sent and quote text that occurs in it (compared case- and
white-space-insensitively). Otherwise the claim is downgraded to unsupported, with a note.
An answer that cannot be read at all is a ``Failure`` with a stable ``code``, never a pass.
"""

from __future__ import annotations

import html
import re
from dataclasses import asdict, dataclass
from typing import Any, Literal

from openai.types.chat import ChatCompletion
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from detectors.judge.evidence import JudgeItem

Label = Literal["supported", "partial", "unsupported", "contradicted"]


class AnswerClaim(BaseModel):
    model_config = ConfigDict(extra="forbid")

    claim: str = Field(description="The factual claim, in the reply's words.")
    label: Label = Field(description="Grounding of the claim in the evidence.")
    evidence_id: str | None = Field(description='The cited evidence item, e.g. "E3", or null.')
    evidence_quote: str = Field(description="Exact words of the cited item; empty if none.")
    numeric_mismatch: bool = Field(description="A number differs from the evidence.")


class Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    claims: list[AnswerClaim]
    reason: str


@dataclass(frozen=True, slots=True)
class Failure:
    """Why an answer could not be used: ``code`` is counted in the totals, ``detail`` shown."""

    code: str  # invalid_json | schema_mismatch | length | refusal | empty | content_filter
    detail: str


@dataclass(slots=True)
class GradedClaim:
    """A claim as labelled, with where its evidence came from in the session."""

    claim: str
    label: Label
    evidence_id: str | None
    evidence_quote: str
    evidence_source: str | None  # tool_output | user_message | retrieved_context | reference
    evidence_event: int | None
    evidence_name: str | None  # the tool of a tool output
    numeric_mismatch: bool
    judge_label: Label  # what the judge said, before any downgrade
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GradedClaim:
        return cls(**data)


def read_answer(completion: ChatCompletion) -> tuple[str | None, Answer | Failure]:
    """The raw content of the completion and the answer in it, or why there is none."""
    if not completion.choices:
        return None, Failure("empty", "the response has no choices")
    choice = completion.choices[0]
    raw = choice.message.content
    if choice.message.refusal:
        return raw, Failure("refusal", f"the model refused: {choice.message.refusal[:200]}")
    if choice.finish_reason == "length":
        return raw, Failure("length", "the answer was cut off at the length limit")
    if choice.finish_reason == "content_filter":
        return raw, Failure("content_filter", "the answer was stopped by a content filter")
    if not raw or not raw.strip():
        return raw, Failure("empty", "the answer is empty")
    try:
        return raw, Answer.model_validate_json(_unfenced(raw))
    except ValidationError as exc:
        first = exc.errors()[0]
        if first["type"] == "json_invalid":
            return raw, Failure("invalid_json", f"not valid JSON: {first['msg']}")
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        return raw, Failure("schema_mismatch", f"{where}: {first['msg']}")


def _unfenced(raw: str) -> str:
    # Local models often wrap JSON in a Markdown code fence despite being told not to.
    text = raw.strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
        text = text.rsplit("```", 1)[0]
    return text


def _norm(text: str) -> str:
    return " ".join(html.unescape(text).split()).casefold()


def quote_occurs(quote: str, text: str) -> bool:
    """Whether ``quote`` occurs in ``text``; an elided one ("a ... b") needs each part, in order."""
    haystack = _norm(text)
    parts = [_norm(p).strip(" \"'") for p in re.split(r"\.\.\.|…|\[…\]", quote)]
    position = 0
    found_any = False
    for part in parts:
        if not part:
            continue
        at = haystack.find(part, position)
        if at < 0:
            return False
        position = at + len(part)
        found_any = True
    return found_any


def grade(answer: Answer, item: JudgeItem) -> list[GradedClaim]:
    """The answer's claims mapped to the session, unverifiable citations downgraded."""
    by_id = item.evidence_by_id()
    graded = []
    for claim in answer.claims:
        label: Label = claim.label
        cited = by_id.get(claim.evidence_id.strip()) if claim.evidence_id else None
        note = None
        if label != "unsupported":
            if cited is None:
                note = f"judge said {label} but cited no evidence item that was sent"
                note += f" ({claim.evidence_id})" if claim.evidence_id else ""
            elif not quote_occurs(claim.evidence_quote, cited.text):
                note = f"judge said {label} but its quote is not in {cited.id}"
            if note is not None:
                label, cited = "unsupported", None
        graded.append(
            GradedClaim(
                claim=claim.claim.strip(),
                label=label,
                evidence_id=cited.id if cited else None,
                evidence_quote=claim.evidence_quote if cited else "",
                evidence_source=cited.source if cited else None,
                evidence_event=cited.index if cited else None,
                evidence_name=cited.name if cited else None,
                numeric_mismatch=claim.numeric_mismatch and label != "unsupported",
                judge_label=claim.label,
                note=note,
            )
        )
    return graded


def remap(claims: list[GradedClaim], item: JudgeItem) -> list[GradedClaim]:
    """Claims of a cached judgement pointed at this item's events (same evidence, maybe another
    session or position)."""
    by_id = item.evidence_by_id()
    for claim in claims:
        cited = by_id.get(claim.evidence_id) if claim.evidence_id else None
        if cited is not None:
            claim.evidence_event, claim.evidence_source = cited.index, cited.source
            claim.evidence_name = cited.name
    return claims
