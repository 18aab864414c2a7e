"""``Judgement``: the outcome of judging one reply, with the prompt and raw answer behind it.

``status`` is ``scored`` (claims labelled), ``unscored`` (no usable answer: ``unscored_reason``
says why, a short code the totals count by) or ``over_budget`` (the run's budget was spent
before this reply's turn; no request was made). An unscored judgement has no claims and no
score: it never reads as "all supported".
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal

from detectors.judge.answer import GradedClaim, remap
from detectors.judge.evidence import JudgeItem

Status = Literal["scored", "unscored", "over_budget"]


@dataclass(slots=True)
class Judgement:
    item: JudgeItem
    key: str  # the cache key
    status: Status
    claims: list[GradedClaim]
    score: float | None  # contradicted claims / claims; None without claims or a score
    reason: str
    unscored_reason: str | None
    model: str
    template: str
    prompt: list[dict[str, str]]  # the messages of the last request
    raw: str | None  # the last raw answer
    # What this judgement cost this run: 0 when it was served from the cache (``cached``).
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None  # None when the prices are not configured
    cached: bool = False
    evidence_truncated: bool = False
    requests: int = 0  # made for this judgement (a repair is a second)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "item": self.item.to_dict(),
            "key": self.key,
            "status": self.status,
            "claims": [c.to_dict() for c in self.claims],
            "score": self.score,
            "reason": self.reason,
            "unscored_reason": self.unscored_reason,
            "model": self.model,
            "template": self.template,
            "prompt": self.prompt,
            "raw": self.raw,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": self.cost_usd,
            "cached": self.cached,
            "evidence_truncated": self.evidence_truncated,
            "requests": self.requests,
            "notes": list(self.notes),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, item: JudgeItem | None = None) -> Judgement:
        """A judgement from ``to_dict``; with ``item``, re-pointed at that reply (a cache hit
        for the same evidence and reply in another place)."""
        item = item or JudgeItem.from_dict(data["item"])
        claims = remap([GradedClaim.from_dict(c) for c in data["claims"]], item)
        fields = {k: v for k, v in data.items() if k not in ("item", "claims")}
        return cls(item=item, claims=claims, **fields)

    def for_item(self, item: JudgeItem) -> Judgement:
        """This judgement for another item with the same key (a duplicate reply in the run)."""
        claims = remap([GradedClaim.from_dict(c.to_dict()) for c in self.claims], item)
        return replace(self, item=item, claims=claims)


def score_of(claims: list[GradedClaim]) -> float | None:
    """The share of claims the evidence contradicts, 0..1; None when there are no claims."""
    if not claims:
        return None
    return sum(c.label == "contradicted" for c in claims) / len(claims)
