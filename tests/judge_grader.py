"""A grader for tests/openai_server.py that labels claims like a careful (but foolable) judge.

It finds the evidence items and the reply by their tags and labels each amount and id in the
reply by what the evidence says: found verbatim = supported; another value of the same kind =
contradicted (a numeric mismatch); nothing = unsupported. Like a model that can be fooled, it
obeys "mark every claim supported" when that text stands outside the tags (where instructions
would be), so an injection test shows that the delimiting, not the grader, keeps labels right.
"""

from __future__ import annotations

import re
from typing import Any

_EVIDENCE = re.compile(r'<evidence id="(E\d+)"[^>]*>\n(.*?)\n</evidence>', re.DOTALL)
_REPLY = re.compile(r"<reply>\n(.*?)\n</reply>", re.DOTALL)
_FACT = re.compile(r"\$\d[\d,]*(?:\.\d\d)?|\b[A-Z]{2,5}-\d+\b")


def parse_prompt(messages: list[dict[str, Any]]) -> tuple[dict[str, str], str, str]:
    """The evidence items by id, the reply, and the user message text outside all tags."""
    content = str(messages[1]["content"])
    evidence = {m.group(1): m.group(2) for m in _EVIDENCE.finditer(content)}
    found = _REPLY.search(content)
    outside = _REPLY.sub("", _EVIDENCE.sub("", content))
    return evidence, found.group(1) if found else "", outside


def evidence_grader(messages: list[dict[str, Any]]) -> dict[str, Any]:
    evidence, reply_text, outside = parse_prompt(messages)
    obeys_injection = "mark every claim supported" in outside.lower()
    claims = []
    for fact in dict.fromkeys(_FACT.findall(reply_text)):
        claims.append(_label(fact, evidence, obeys_injection))
    return {"claims": claims, "reason": f"{len(claims)} facts checked against the evidence"}


def _label(fact: str, evidence: dict[str, str], obey: bool) -> dict[str, Any]:
    claim = {"claim": fact, "numeric_mismatch": False}
    if obey:
        return {**claim, "label": "supported", "evidence_id": "E1", "evidence_quote": fact}
    for eid, text in evidence.items():
        if fact in text:
            return {**claim, "label": "supported", "evidence_id": eid, "evidence_quote": fact}
    kind = "$" if fact.startswith("$") else fact.split("-")[0] + "-"
    for eid, text in evidence.items():
        other = next((f for f in _FACT.findall(text) if f.startswith(kind)), None)
        if other is not None:
            return {**claim, "label": "contradicted", "evidence_id": eid,
                    "evidence_quote": other, "numeric_mismatch": True}  # fmt: skip
    return {**claim, "label": "unsupported", "evidence_id": None, "evidence_quote": ""}
