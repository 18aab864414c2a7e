"""Sessions and a judge wired to the loopback server (the grader is in tests/judge_grader.py).

``evidence_grader`` reads the prompt the way a careful model would: it finds the evidence items
and the reply by their tags and labels each amount and id in the reply by what the evidence
says. Like a model that can be fooled, it obeys "mark every claim supported" when that text
stands outside the tags (where instructions would be), and it believes any well-formed
``<evidence>`` item, forged or not. So the injection tests show the delimiting, not the grader,
keeps the labels right.
"""

from __future__ import annotations

from typing import Any

from judge_grader import evidence_grader, parse_prompt

from detectors.judge import Judge, JudgeConfig, JudgeItem, JudgeSettings, judge_items
from sessions.models import Event, EventKind, Session

API_KEY = "sk-test-0123456789abcdef"
__all__ = ["evidence_grader", "parse_prompt"]  # re-exported for the judge tests


def user(text: str) -> list[Event]:
    return [Event(EventKind.USER, text=text)]


def tool(name: str, output: str, call_id: str, **meta: Any) -> list[Event]:
    return [
        Event(EventKind.TOOL_CALL, call_id=call_id, name=name, input={}),
        Event(EventKind.TOOL_RESULT, call_id=call_id, output=output, meta=dict(meta)),
    ]


def reply(text: str) -> list[Event]:
    return [Event(EventKind.ASSISTANT, text=text)]


def session(*steps: list[Event], agent: str = "support-bot", sid: str = "s1") -> Session:
    events = [event for step in steps for event in step]
    built = Session(sid, f"{sid}.jsonl", "openai_chat", events, agent=agent, agent_version="v1")
    built.reindex()
    return built


def refund_session(tool_output: str = '{"order_id": "ORD-7781", "refund": "$102"}') -> Session:
    return session(
        [Event(EventKind.SYSTEM, text="You are a support assistant. Refunds are $500 at most.")],
        user("Please refund order ORD-7781."),
        tool("get_order", tool_output, "c1"),
        reply("Done: a refund of $120 was issued for ORD-7781."),
    )


def refund_items(n: int = 1) -> list[JudgeItem]:
    """``n`` replies "refund of $120 for ORD-7781" whose tool said $100, $101, ..."""
    items = []
    for k in range(n):
        output = f'{{"order_id": "ORD-7781", "refund": "${100 + k}"}}'
        items.extend(judge_items(refund_session(output), config()))
    return items


def config(**overrides: Any) -> JudgeConfig:
    return JudgeConfig.model_validate({"model": "judge-test", "concurrency": 1, **overrides})


def settings(base_url: str) -> JudgeSettings:
    return JudgeSettings(openai_api_key=API_KEY, openai_base_url=base_url, judge_model=None)


def make_judge(base_url: str, cfg: JudgeConfig | None = None, **kwargs: Any) -> Judge:
    return Judge(cfg or config(), settings(base_url), **kwargs)


def labels(items: list[JudgeItem], judge: Judge) -> list[list[tuple[str, str]]]:
    return [[(c.claim, c.label) for c in j.claims] for j in judge.judge(items)]
