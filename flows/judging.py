"""The night's LLM evaluations: judge the sampled sessions, write their rows, count them.

    judge_sample(loaded, day, run_id, sample, part)  ->  JudgePartial

Runs after the day's batches (which offered every session to the sample, findings/sampling.py)
and before the day is evaluated. The sampled sessions are read again from the object store (a
batch returns counts, never sessions), their last replies judged with the evidence the agent saw,
and the results written beside the batches' parts: signals (``unsupported_claim``,
``partial_claim``, ``contradicted_claim``) and one ``judgements`` row per judged reply. Every
judge reply is cached by content hash in the results store, so a re-run repeats no call.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import orjson

from detectors.judge import (
    OFF_REASON,
    TEMPLATE_VERSION,
    Judge,
    JudgeConfig,
    JudgeItem,
    Judgement,
    JudgeSettings,
    judge_items,
    judgement_signals,
    load_references,
)
from findings.batch import identity, signal_row
from findings.judge_cache import StoreJudgeCache
from findings.metrics import Group, GroupCounts
from findings.sampling import Sample, Sampled, SamplingPlan
from flows.config import LoadedConfig
from flows.context import run_parts
from sessions.errors import CredentialError
from sessions.models import Session

UNBACKED = frozenset({"unsupported", "contradicted"})


def judge_enabled(loaded: LoadedConfig) -> bool:
    return JudgeSettings().resolve_model(loaded.config.judge) is not None


def sampling_plan(loaded: LoadedConfig) -> SamplingPlan | None:
    """The sample design when the judge is on, else ``None`` (the batches then offer nothing)."""
    if not judge_enabled(loaded):
        return None
    cfg = loaded.config.judge
    return SamplingPlan(
        rate=cfg.sample_rate,
        agent_rates=dict(cfg.agent_rates),
        oversample_flagged=cfg.oversample_flagged,
        max_sessions=cfg.max_sessions,
    )


def judge_off() -> dict[str, Any]:
    return {"status": "off", "reason": OFF_REASON}


@dataclass(slots=True)
class JudgePartial:
    """What judging adds to the day: counts per group, signals by kind, the manifest section."""

    groups: dict[Group, GroupCounts] = field(default_factory=dict)
    signals_by_kind: Counter[str] = field(default_factory=Counter)
    manifest: dict[str, Any] = field(default_factory=judge_off)


def judge_sample(
    loaded: LoadedConfig, day: date, run_id: str, sample: Sample, part: int
) -> JudgePartial:
    parts = run_parts(loaded)
    cfg: JudgeConfig = loaded.config.judge
    settings = JudgeSettings()
    references = load_references(cfg, loaded.base)
    sessions = _read_sampled(loaded, sample)
    items: list[JudgeItem] = []
    for sampled in sample.sessions:
        session = sessions.get(sampled.candidate.session_id)
        if session is not None:
            items.extend(judge_items(session, cfg, references.get(session.agent or "", ())))
    judge = Judge(cfg, settings, cache=StoreJudgeCache(parts.results))
    try:
        judgements = judge.judge(items) if items else []
    except CredentialError as exc:
        # Every call would fail the same way: judge nothing tonight, keep the code checks, and
        # say so (commit_day turns this into an anomaly, so it alerts).
        return JudgePartial(manifest={"status": "error", "reason": str(exc), **sample.describe()})

    out = JudgePartial()
    day_s = day.isoformat()
    by_session: dict[str, list[Judgement]] = defaultdict(list)
    for judgement in judgements:
        by_session[judgement.item.session_id].append(judgement)
    signal_rows: list[dict[str, Any]] = []
    judgement_rows: list[dict[str, Any]] = []
    for sampled in sample.sessions:
        session = sessions.get(sampled.candidate.session_id)
        if session is None:
            continue
        group = out.groups.setdefault((session.agent, session.agent_version), GroupCounts())
        scored = unbacked = 0
        for judgement in by_session.get(session.id, []):
            judgement_rows.append(judgement_row(judgement, session, sampled, day_s, run_id))
            if judgement.status != "scored":
                continue
            scored += 1
            unbacked += sum(1 for c in judgement.claims if c.label in UNBACKED)
            for signal in judgement_signals(judgement):
                out.signals_by_kind[signal.kind] += 1
                group.signals[signal.kind] += 1
                signal_rows.append(signal_row(signal, session, day_s, run_id))
        group.add_judged(sampled.weight, unbacked, scored)
    parts.results.write_part("signals", day, run_id, part, signal_rows)
    parts.results.write_part("judgements", day, run_id, 0, judgement_rows)
    missing = len(sample.sessions) - len(sessions)
    out.manifest = {
        "status": "on",
        "model": settings.resolve_model(cfg),
        "template": TEMPLATE_VERSION,
        **sample.describe(),
        **({"sessions_not_found_again": missing} if missing else {}),
        **judge.totals(),
    }
    return out


def _read_sampled(loaded: LoadedConfig, sample: Sample) -> dict[str, Session]:
    """Read the sampled sessions again, unit by unit; sessions not found again are skipped."""
    parts = run_parts(loaded)
    wanted: dict[tuple[tuple[str, int], ...], set[str]] = defaultdict(set)
    for sampled in sample.sessions:
        wanted[sampled.candidate.unit].add(sampled.candidate.session_id)
    found: dict[str, Session] = {}
    for unit, ids in wanted.items():
        keys = [key for key, _ in unit]
        files = list(parts.sessions.read_many(keys, max_workers=4))
        for session in parts.reader.read_unit(files).sessions:
            if session.id in ids:
                found[session.id] = session
    return found


def judgement_row(
    judgement: Judgement, session: Session, sampled: Sampled, day: str, run_id: str
) -> dict[str, Any]:
    labels = Counter(c.label for c in judgement.claims)
    return {
        **identity(session, day, run_id),
        "reply_event": judgement.item.reply_index,
        "status": judgement.status,
        "score": judgement.score,
        "claims": len(judgement.claims),
        "supported": labels["supported"],
        "partial": labels["partial"],
        "unsupported": labels["unsupported"],
        "contradicted": labels["contradicted"],
        "reason": judgement.reason,
        "unscored_reason": judgement.unscored_reason,
        "model": judgement.model,
        "template": judgement.template,
        "cached": judgement.cached,
        "input_tokens": judgement.input_tokens,
        "output_tokens": judgement.output_tokens,
        "cost_usd": judgement.cost_usd,
        "weight": sampled.weight,
        "flagged": sampled.candidate.flagged,
        "evidence_truncated": judgement.evidence_truncated,
        "claims_detail": orjson.dumps(
            [
                {
                    "claim": c.claim,
                    "label": c.label,
                    "evidence_quote": c.evidence_quote,
                    "evidence_source": c.evidence_source,
                    "evidence_event": c.evidence_event,
                }
                for c in judgement.claims
            ]
        ).decode(),
    }
