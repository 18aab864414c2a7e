"""Eight days of generated sessions with a planted rise, for the findings and flow tests.

Two agents. `support-bot` (OpenAI chat, tools declared) says "I have refunded your order" without
calling `refund_order` in a few sessions a day; from ``deploy_day`` on it runs version v2, in
which the share jumps. `ops-bot` stays the same throughout, so it must never be an anomaly.
"""

from __future__ import annotations

import json
from datetime import date, timedelta
from pathlib import Path

TOOLS = ["lookup_order", "refund_order", "send_email"]


def _session(agent: str, version: str, sid: str, *, unbacked: bool) -> dict:
    messages: list[dict] = [
        {"role": "user", "content": "Order 5521 arrived broken, can I get my money back?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "lookup_order", "arguments": '{"order": "5521"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": '{"status": "delivered"}'},
    ]
    if unbacked:
        messages.append({"role": "assistant", "content": "I have refunded your order."})
    else:
        messages += [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c2",
                        "type": "function",
                        "function": {"name": "refund_order", "arguments": '{"order": "5521"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c2", "content": '{"refunded": true}'},
            {"role": "assistant", "content": "I have refunded your order."},
        ]
    return {
        "id": sid,
        "metadata": {"agent": agent, "app_version": version},
        "tools": [{"type": "function", "function": {"name": t}} for t in TOOLS],
        "messages": messages,
    }


def write_days(
    root: Path,
    first: date,
    days: int = 8,
    per_day: int = 300,
    baseline_unbacked: int = 3,
    planted_unbacked: int = 30,
    deploy_day: int = 8,
) -> list[date]:
    """Write ``days`` days under ``root/sessions/YYYY/MM/DD/``; returns the dates."""
    dates = [first + timedelta(days=n) for n in range(days)]
    for n, day in enumerate(dates, start=1):
        folder = root / "sessions" / f"{day:%Y/%m/%d}"
        folder.mkdir(parents=True, exist_ok=True)
        version = "v2" if n >= deploy_day else "v1"
        unbacked = planted_unbacked if n >= deploy_day else baseline_unbacked
        with (folder / "support.jsonl").open("w") as out:
            for i in range(per_day):
                # Spread the unbacked sessions through the day rather than first in the file.
                flagged = (i * unbacked) // per_day != ((i + 1) * unbacked) // per_day
                s = _session("support-bot", version, f"s-{day}-{i}", unbacked=flagged)
                out.write(json.dumps(s) + "\n")
        with (folder / "ops.jsonl").open("w") as out:
            for i in range(per_day):
                flagged = (i * 3) // per_day != ((i + 1) * 3) // per_day
                out.write(json.dumps(_session("ops-bot", "v1", f"o-{day}-{i}", unbacked=flagged)))
                out.write("\n")
    return dates


CONFIG = """\
sessions:
  location: ./bucket
results:
  location: ./results
  prefix: ""
"""
