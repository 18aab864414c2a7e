"""The replies to judge and, for each, the evidence that fits: what the agent saw before it.

Evidence for a reply is every user message, tool output (with the name of its call) and
retrieved context (a reader's retrieval step, a SYSTEM event marked ``retrieval``, or
``Event.meta["retrieved_context"]``, a string or a list of strings, set by pipelines that
record retrieval) that came before the reply in the same agent's
thread (a sub-agent's steps are evidence for the sub-agent's replies only), plus the agent's
curated reference facts from the config. System prompts are not evidence: they are
instructions, not facts the agent looked up.

A long session is not cut at its end (the tool output a claim rests on is often old): items are
ranked by what they share with the reply (``relevance.py``), most recent first among equals,
taken into the token budget, long ones excerpted around the shared spans, and shown in session
order. What was left out is recorded, so a reader knows the judge did not see everything.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from detectors.judge.config import JudgeConfig
from detectors.judge.relevance import CHARS_PER_TOKEN, excerpt, relevance, token_set, weights
from sessions.models import Event, EventKind, Session

Source = Literal["tool_output", "user_message", "retrieved_context", "reference"]
RETRIEVED_KEY = "retrieved_context"
TAG_OVERHEAD = 60  # characters of the <evidence ...> tags around each item
MIN_EXCERPT = 300  # below this, an item that does not fit is dropped rather than excerpted


@dataclass(frozen=True, slots=True)
class EvidenceItem:
    """One thing the agent saw, as sent to the judge (``text`` may be an excerpt)."""

    id: str  # "E1", "E2", ... in prompt order
    index: int | None  # the event index; None for a reference fact
    source: Source
    text: str
    name: str | None = None  # the tool name of a tool output
    excerpted: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EvidenceItem:
        return cls(**data)


@dataclass(frozen=True, slots=True)
class JudgeItem:
    """One reply to judge with its evidence."""

    session_id: str
    agent: str | None
    agent_version: str | None
    reply_index: int
    reply: str
    evidence: list[EvidenceItem]
    truncated: bool = False
    dropped_items: int = 0
    dropped_chars: int = 0  # left out, whole items and the cut parts of excerpts
    domain: str | None = None  # the agent's safety-critical domain, if any
    subagent: str | None = None

    def evidence_by_id(self) -> dict[str, EvidenceItem]:
        return {item.id: item for item in self.evidence}

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["evidence"] = [item.to_dict() for item in self.evidence]
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> JudgeItem:
        evidence = [EvidenceItem.from_dict(x) for x in data.get("evidence", [])]
        return cls(**{**data, "evidence": evidence})


@dataclass(slots=True)
class _Candidate:
    order: int  # session position; references come before every event
    index: int | None
    source: Source
    text: str
    name: str | None
    tokens: frozenset[str] = field(default_factory=frozenset)
    seq: int = 0  # position among all candidates: the order they are shown in


def judge_items(
    session: Session, config: JudgeConfig, references: Sequence[str] = ()
) -> list[JudgeItem]:
    """The last ``max_replies_per_session`` replies with text, each with its evidence."""
    replies = [
        e for e in session.replies() if not e.meta.get("synthetic") and not e.meta.get("compaction")
    ][-config.max_replies_per_session :]
    if not replies:
        return []
    candidates = _candidates(session, references)
    subagents = {e.index: e.subagent for e in session.events}
    budget = config.evidence_tokens * CHARS_PER_TOKEN
    domain = config.domain_of(session.agent)
    return [
        _item(
            session, reply, [c for c in candidates if _visible(c, reply, subagents)], budget, domain
        )
        for reply in replies
    ]


def _candidates(session: Session, references: Sequence[str]) -> list[_Candidate]:
    names = {e.call_id: e.name for e in session.events if e.kind is EventKind.TOOL_CALL}
    found = [
        _Candidate(-len(references) + i, None, "reference", fact, None)
        for i, fact in enumerate(references)
        if fact.strip()
    ]
    for event in session.events:
        found.extend(_from_event(event, names))
    for seq, candidate in enumerate(found):
        candidate.tokens = token_set(candidate.text)
        candidate.seq = seq
    return found


def _from_event(event: Event, names: dict[str | None, str | None]) -> list[_Candidate]:
    out = []
    if event.kind is EventKind.USER and event.text:
        out.append(_Candidate(event.index, event.index, "user_message", event.text, None))
    elif event.kind is EventKind.TOOL_RESULT and event.output:
        name = event.name or names.get(event.call_id)
        out.append(_Candidate(event.index, event.index, "tool_output", event.output, name))
    elif event.kind is EventKind.SYSTEM and event.text and event.meta.get("retrieval"):
        # A retrieval step the reader kept (a RETRIEVER observation, a retriever run): its
        # documents, not a system prompt.
        out.append(_Candidate(event.index, event.index, "retrieved_context", event.text, None))
    retrieved = event.meta.get(RETRIEVED_KEY) if event.meta else None
    texts = [retrieved] if isinstance(retrieved, str) else retrieved or []
    for text in texts:
        if isinstance(text, str) and text.strip():
            out.append(_Candidate(event.index, event.index, "retrieved_context", text, None))
    return out


def _visible(candidate: _Candidate, reply: Event, subagents: dict[int, str | None]) -> bool:
    if candidate.index is None:
        return True
    return candidate.index < reply.index and subagents.get(candidate.index) == reply.subagent


def _item(
    session: Session, reply: Event, seen: list[_Candidate], budget: int, domain: str | None
) -> JudgeItem:
    """The reply with the candidates it saw, ranked, fitted into the budget, in session order."""
    reply_tokens = token_set(reply.text)
    idf = weights([c.tokens for c in seen])
    ranked = sorted(seen, key=lambda c: (-relevance(reply_tokens, c.tokens, idf), -c.order))
    # "Very long" is a third of the budget: one tool dump must not crowd out the rest.
    cap = max(budget // 3, MIN_EXCERPT)
    remaining = budget
    chosen: list[tuple[_Candidate, str]] = []
    dropped_items = dropped_chars = 0
    for candidate in ranked:
        shared = reply_tokens & candidate.tokens
        text = candidate.text
        if len(text) > cap:
            text = excerpt(text, shared, cap)
        if len(text) + TAG_OVERHEAD > remaining:
            room = remaining - TAG_OVERHEAD
            if room < MIN_EXCERPT:
                dropped_items += 1
                dropped_chars += len(candidate.text)
                continue
            text = excerpt(candidate.text, shared, room)
        remaining -= len(text) + TAG_OVERHEAD
        dropped_chars += max(0, len(candidate.text) - len(text))
        chosen.append((candidate, text))
    chosen.sort(key=lambda pair: pair[0].seq)
    evidence = [
        EvidenceItem(f"E{n}", c.index, c.source, text, c.name, excerpted=text != c.text)
        for n, (c, text) in enumerate(chosen, 1)
    ]
    return JudgeItem(
        session_id=session.id,
        agent=session.agent,
        agent_version=session.agent_version,
        reply_index=reply.index,
        reply=reply.text,
        evidence=evidence,
        truncated=dropped_items > 0 or any(e.excerpted for e in evidence),
        dropped_items=dropped_items,
        dropped_chars=dropped_chars,
        domain=domain,
        subagent=reply.subagent,
    )
