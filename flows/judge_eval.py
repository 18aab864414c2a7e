"""`halluwatch judge-eval`: the judge on a hand-labelled set, and how often it agrees.

    evaluate(cases, judge) -> JudgeEval   (the agreement report, unscored cases, the judge's totals)

Each labelled case becomes one judge item: its evidence, in the order given, as the items the
agent saw, and its reply. The claims the judge extracts are aligned with the human claims
(detectors/judge/calibration.py). A case the judge could not score is reported with its reason;
its human claims count as missed, since a person checking the judge would see nothing for them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from detectors.judge import EvidenceItem, Judge, JudgeItem
from detectors.judge.calibration import (
    AgreementReport,
    ClaimPair,
    LabelledCase,
    agreement,
    match_claims,
)


def case_item(case: LabelledCase) -> JudgeItem:
    evidence = [
        EvidenceItem(
            id=f"E{n}",
            index=None if e.source == "reference" else n - 1,
            source=e.source,
            text=e.text,
            name=e.name,
        )
        for n, e in enumerate(case.evidence, start=1)
    ]
    return JudgeItem(
        session_id=case.id,
        agent=case.agent,
        agent_version=None,
        reply_index=len(case.evidence),
        reply=case.reply,
        evidence=evidence,
        domain=case.domain,
    )


@dataclass(slots=True)
class JudgeEval:
    report: AgreementReport
    unscored: dict[str, str] = field(default_factory=dict)  # case id -> why it was not scored
    totals: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"agreement": self.report.to_dict(), "unscored": self.unscored, "judge": self.totals}


def evaluate(cases: Sequence[LabelledCase], judge: Judge) -> JudgeEval:
    judgements = judge.judge([case_item(c) for c in cases])
    pairs: list[ClaimPair] = []
    unscored: dict[str, str] = {}
    for case, judgement in zip(cases, judgements, strict=True):
        if judgement.status != "scored":
            unscored[case.id] = judgement.unscored_reason or judgement.status
            pairs += match_claims(case.claims, [])
            continue
        pairs += match_claims(case.claims, judgement.claims)
    return JudgeEval(agreement(pairs), unscored, judge.totals())
