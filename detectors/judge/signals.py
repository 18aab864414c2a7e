"""Judged claims as signals: one per claim the session does not support.

    label          kind                 severity
    contradicted   contradicted_claim   critical in a safety-critical domain, else high
    unsupported    unsupported_claim    high in a safety-critical domain, else low
    partial        partial_claim        medium when a number differs, else low

Each signal cites the reply and the event its evidence came from, reads in ten seconds
(``Reply says "refund of $120 issued"; tool output get_order (event 7) says "$102"``), and
carries a draft fix chosen by where the evidence came from.
"""

from __future__ import annotations

from detectors.judge.answer import GradedClaim
from detectors.judge.prompt import TEMPLATE_NUMBER
from detectors.judge.results import Judgement
from detectors.models import Severity, Signal

DETECTOR = "llm_judge"
KINDS = {
    "unsupported": "unsupported_claim",
    "partial": "partial_claim",
    "contradicted": "contradicted_claim",
}


def severity(label: str, numeric_mismatch: bool, domain: str | None) -> Severity:
    if label == "contradicted":
        return Severity.CRITICAL if domain else Severity.HIGH
    if label == "unsupported":
        return Severity.HIGH if domain else Severity.LOW
    return Severity.MEDIUM if numeric_mismatch else Severity.LOW


def _short(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def where(claim: GradedClaim) -> str:
    """Where a claim's evidence came from, for a person: ``tool output get_order (event 7)``."""
    at = f" (event {claim.evidence_event})" if claim.evidence_event is not None else ""
    if claim.evidence_source == "tool_output":
        return f"tool output {claim.evidence_name or '(unnamed tool)'}{at}"
    if claim.evidence_source == "user_message":
        return f"the user's message{at}"
    if claim.evidence_source == "retrieved_context":
        return f"retrieved context{at}"
    return "a reference fact"


def explanation(claim: GradedClaim) -> str:
    said = f'Reply says "{_short(claim.claim)}"'
    quote = f'"{_short(claim.evidence_quote, 80)}"'
    if claim.label == "contradicted":
        return f"{said}; {where(claim)} says {quote}"
    if claim.label == "partial":
        return f"{said}; {where(claim)} has it differently: {quote}"
    why = f" ({claim.note})" if claim.note else ""
    return f"{said}; nothing the agent saw in this session supports it{why}"


def draft_fix(claim: GradedClaim, domain: str | None) -> str:
    """A first draft of the prompt or pipeline change that would have prevented the claim."""
    if claim.label == "unsupported":
        if domain:
            return (
                f"Add a refusal-and-redirect policy: {domain} facts the agent has not looked up "
                "in this session are not stated; it says it cannot confirm them and points to "
                "a tool or a qualified person."
            )
        return (
            "Ground answers: look names, numbers, ids and dates up with a tool or retrieval "
            "before stating them, and say so when they are not available."
        )
    if claim.evidence_source == "tool_output":
        return (
            f"Use tool data verbatim: quote values from {claim.evidence_name or 'the tool'} "
            "exactly as returned, without rounding, recomputing or recalling them."
        )
    if claim.evidence_source == "user_message":
        return "Restate the user's facts exactly: repeat names, numbers and dates as given."
    return (
        "Add a citation policy: state facts only from the retrieved passages and cite them; "
        "if the passage lacks the fact, improve retrieval recall rather than filling it in."
    )


def judgement_signals(judgement: Judgement, domain: str | None = None) -> list[Signal]:
    """A signal per non-supported claim of a scored judgement (``domain`` defaults to the
    item's safety-critical domain)."""
    if judgement.status != "scored":
        return []
    domain = domain or judgement.item.domain
    signals = []
    for claim in judgement.claims:
        kind = KINDS.get(claim.label)
        if kind is None:
            continue
        events = [judgement.item.reply_index]
        if claim.evidence_event is not None and claim.evidence_event not in events:
            events.append(claim.evidence_event)
        signals.append(
            Signal(
                kind=kind,
                value=claim.claim,
                events=events,
                explanation=explanation(claim),
                severity=severity(claim.label, claim.numeric_mismatch, domain),
                detector=DETECTOR,
                detector_version=TEMPLATE_NUMBER,
                data={
                    "label": claim.label,
                    "evidence_quote": claim.evidence_quote,
                    "evidence_source": claim.evidence_source,
                    "evidence_event": claim.evidence_event,
                    "evidence_tool": claim.evidence_name,
                    "score": judgement.score,
                    "reason": judgement.reason,
                    "fix": draft_fix(claim, domain),
                    "model": judgement.model,
                    "template": judgement.template,
                    "domain": domain,
                    "note": claim.note,
                },
            )
        )
    return signals
