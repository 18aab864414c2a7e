"""Write the bundled example bucket: three days of sessions in several formats, with planted
failures, so `halluwatch run --config examples/halluwatch.yaml` works on a fresh clone.

The output is committed; run this again only to change it: `python examples/generate.py`.
Everything is deterministic (fixed ids, fixed clock), so the files do not churn.
"""

from __future__ import annotations

import gzip
import json
import shutil
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
BUCKET = HERE / "bucket"
DAYS = [date(2026, 11, 27), date(2026, 11, 28), date(2026, 11, 29)]
SUPPORT_TOOLS = ["lookup_order", "refund_order", "docs_search", "send_email"]


def _tools() -> list[dict]:
    return [
        {"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
        for n in SUPPORT_TOOLS
    ]


def _call(cid: str, name: str, args: dict) -> dict:
    return {
        "id": cid,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }


def support_session(day: date, n: int, version: str, *, renamed: bool, invented: bool) -> dict:
    """An OpenAI chat support session; some call the renamed tool or invent an order id."""
    order = f"ORD-{day:%m%d}{n:03d}"
    messages: list[dict] = [
        {"role": "system", "content": "You are the Acme support agent. Use the tools."},
        {"role": "user", "content": f"Where is my order {order}? Also, how do returns work?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [_call(f"call_{n}a", "lookup_order", {"order_id": order})],
        },
        {
            "role": "tool",
            "tool_call_id": f"call_{n}a",
            "content": json.dumps({"order_id": order, "status": "shipped", "total": "42.50"}),
        },
    ]
    docs_tool = "search_docs" if renamed else "docs_search"
    messages += [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [_call(f"call_{n}b", docs_tool, {"query": "returns policy"})],
        },
        {
            "role": "tool",
            "tool_call_id": f"call_{n}b",
            "content": "Error: unknown tool search_docs"
            if renamed
            else "Returns are accepted within 30 days with the receipt.",
        },
    ]
    if invented:
        messages += [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    _call(
                        f"call_{n}c",
                        "refund_order",
                        {"order_id": f"ORD-9{n:03d}77", "amount": "42.50"},
                    )
                ],
            },
            {"role": "tool", "tool_call_id": f"call_{n}c", "content": "Error: order not found"},
        ]
    messages.append(
        {
            "role": "assistant",
            "content": f"Your order {order} has shipped. Returns are accepted within 30 days.",
        }
    )
    return {
        "id": f"sess-{day:%Y%m%d}-{n:03d}",
        "model": "gpt-4o-2024-08-06",
        "created": int(datetime(day.year, day.month, day.day, 9, n % 60, tzinfo=UTC).timestamp()),
        "metadata": {"agent": "support-bot", "app_version": version},
        "tools": _tools(),
        "messages": messages,
    }


def claude_session(day: date, n: int, *, invent_tool: bool, failed_tests: bool) -> list[dict]:
    """A Claude Code transcript: runs the tests, sometimes calls a tool that does not exist."""
    sid = f"00000000-0000-4000-8000-{day:%m%d}{n:08d}"
    t0 = datetime(day.year, day.month, day.day, 14, 0, tzinfo=UTC)
    lines: list[dict] = []
    parent = None

    def add(kind: str, message: dict, seconds: int, **extra: object) -> None:
        nonlocal parent
        uid = f"{sid[:-4]}{len(lines):04d}"
        lines.append(
            {
                "parentUuid": parent,
                "isSidechain": False,
                "userType": "external",
                "cwd": "/work/app",
                "sessionId": sid,
                "version": "2.1.89",
                "gitBranch": "main",
                "type": kind,
                "message": message,
                "uuid": uid,
                "timestamp": (t0 + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z"),
                **extra,
            }
        )
        parent = uid

    def assistant(mid: str, blocks: list[dict], seconds: int) -> None:
        for block in blocks:  # Claude Code writes one line per content block of a response
            add(
                "assistant",
                {
                    "model": "claude-sonnet-4-5",
                    "id": mid,
                    "type": "message",
                    "role": "assistant",
                    "content": [block],
                    "stop_reason": None,
                },
                seconds,
                requestId=f"req_{mid}",
            )

    def result(cid: str, text: str, is_error: bool, seconds: int) -> None:
        add(
            "user",
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": cid,
                        "content": text,
                        "is_error": is_error,
                    }
                ],
            },
            seconds,
        )

    add(
        "user",
        {"role": "user", "content": "Fix the failing date parser test and run the suite."},
        0,
    )
    assistant(
        f"msg_{n}a",
        [
            {"type": "text", "text": "I'll look at the parser first."},
            {
                "type": "tool_use",
                "id": f"toolu_{n}1",
                "name": "Read",
                "input": {"file_path": "/work/app/parser.py"},
            },
        ],
        2,
    )
    result(f"toolu_{n}1", "1→def parse(s):\n2→    return s.split('-')", False, 3)
    if invent_tool:
        assistant(
            f"msg_{n}b",
            [
                {
                    "type": "tool_use",
                    "id": f"toolu_{n}2",
                    "name": "RunTests",
                    "input": {"path": "tests/"},
                }
            ],
            5,
        )
        result(
            f"toolu_{n}2",
            "<tool_use_error>Error: No such tool available: RunTests</tool_use_error>",
            True,
            6,
        )
    assistant(
        f"msg_{n}c",
        [
            {
                "type": "tool_use",
                "id": f"toolu_{n}3",
                "name": "Bash",
                "input": {"command": "pytest -q tests/"},
            }
        ],
        8,
    )
    if failed_tests:
        result(f"toolu_{n}3", "Exit code 1\n1 failed, 11 passed in 0.31s", True, 12)
    else:
        result(f"toolu_{n}3", "12 passed in 0.30s", False, 12)
    assistant(f"msg_{n}d", [{"type": "text", "text": "Fixed the parser; all tests pass."}], 14)
    return lines


def otel_session(day: date, n: int) -> dict:
    """OTel GenAI spans of an ops agent whose first read hits a missing file."""
    trace = f"{day:%Y%m%d}{n:024d}"
    start = int(datetime(day.year, day.month, day.day, 11, 0, tzinfo=UTC).timestamp() * 1e9)

    def attr(key: str, value: str) -> dict:
        return {"key": key, "value": {"stringValue": value}}

    def span(i: int, name: str, attrs: list[dict], status: dict | None = None) -> dict:
        return {
            "traceId": trace,
            "spanId": f"{i:016x}",
            "name": name,
            "kind": 1,
            "startTimeUnixNano": str(start + i * 1_000_000_000),
            "endTimeUnixNano": str(start + i * 1_000_000_000 + 500_000_000),
            "attributes": attrs,
            "status": status or {"code": 1},
        }

    messages_in = json.dumps(
        [
            {
                "role": "user",
                "parts": [
                    {"type": "text", "content": "What port does the app use? Check config.yaml."}
                ],
            }
        ]
    )
    messages_out = json.dumps(
        [
            {
                "role": "assistant",
                "finish_reason": "stop",
                "parts": [
                    {
                        "type": "text",
                        "content": "The app listens on port 8080 (from settings.yaml).",
                    }
                ],
            }
        ]
    )
    spans = [
        span(
            1,
            "invoke_agent ops-agent",
            [
                attr("gen_ai.operation.name", "invoke_agent"),
                attr("gen_ai.agent.name", "ops-agent"),
                attr("gen_ai.agent.version", "1.4.0"),
                attr("gen_ai.conversation.id", f"ops-{day:%Y%m%d}-{n}"),
                attr("gen_ai.request.model", "gpt-4.1"),
                attr("gen_ai.input.messages", messages_in),
                attr("gen_ai.output.messages", messages_out),
                attr(
                    "gen_ai.tool.definitions",
                    json.dumps([{"type": "function", "name": "read_file"}]),
                ),
            ],
        ),
        span(
            2,
            "execute_tool read_file",
            [
                attr("gen_ai.operation.name", "execute_tool"),
                attr("gen_ai.tool.name", "read_file"),
                attr("gen_ai.tool.call.id", f"call_{n}_1"),
                attr("gen_ai.conversation.id", f"ops-{day:%Y%m%d}-{n}"),
                attr("gen_ai.tool.call.arguments", '{"path": "config.yaml"}'),
                attr("error.type", "FileNotFoundError"),
            ],
            {"code": 2, "message": "No such file or directory: 'config.yaml'"},
        ),
        span(
            3,
            "execute_tool read_file",
            [
                attr("gen_ai.operation.name", "execute_tool"),
                attr("gen_ai.tool.name", "read_file"),
                attr("gen_ai.tool.call.id", f"call_{n}_2"),
                attr("gen_ai.conversation.id", f"ops-{day:%Y%m%d}-{n}"),
                attr("gen_ai.tool.call.arguments", '{"path": "settings.yaml"}'),
                attr("gen_ai.tool.call.result", "port: 8080"),
            ],
        ),
    ]
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": [attr("service.name", "ops-agent")]},
                "scopeSpans": [{"scope": {"name": "example"}, "spans": spans}],
            }
        ]
    }


def main() -> None:
    if BUCKET.exists():
        shutil.rmtree(BUCKET)
    for d, day in enumerate(DAYS):
        folder = BUCKET / "sessions" / f"{day:%Y/%m/%d}"
        (folder / "support-bot").mkdir(parents=True)
        (folder / "claude-code").mkdir(parents=True)
        (folder / "ops-agent").mkdir(parents=True)
        # The last day's deploy (v2.4) brought back the old docs tool name in its prompt.
        support = [
            support_session(
                day,
                n,
                "v2.4" if d == 2 else "v2.3",
                renamed=d == 2 and n % 3 == 0,
                invented=n % 7 == 3,
            )
            for n in range(24)
        ]
        with (folder / "support-bot" / "sessions.jsonl").open("w") as out:
            for s in support[:12]:
                out.write(json.dumps(s) + "\n")
        with gzip.GzipFile(folder / "support-bot" / "sessions-2.jsonl.gz", "wb", mtime=0) as gz:
            gz.write("".join(json.dumps(s) + "\n" for s in support[12:]).encode())
        for n in range(4):
            lines = claude_session(day, n, invent_tool=d == 2 and n == 1, failed_tests=n == 2)
            path = folder / "claude-code" / f"{lines[0]['sessionId']}.jsonl"
            path.write_text("".join(json.dumps(line) + "\n" for line in lines))
        for n in range(3):
            (folder / "ops-agent" / f"trace-{n}.json").write_text(json.dumps(otel_session(day, n)))
        # A file cut off mid-write by the exporter: reported with its reason, never fatal.
        (folder / "support-bot" / "partial-upload.jsonl").write_text(
            json.dumps(support[0]) + "\n" + json.dumps(support[1])[:200]
        )
    print(f"wrote {BUCKET}")


if __name__ == "__main__":
    main()
