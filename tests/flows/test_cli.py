"""The CLI through its real entry point (the installed `halluwatch` script)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from tests_support import SHARED, halluwatch_bin

REPO = Path(__file__).resolve().parents[2]


def run_cli(
    *args: str, env: dict[str, str] | None = None, cwd: Path = REPO
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [halluwatch_bin(), *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=300,
        check=False,
    )


def _claude_tool_calls(path: Path) -> int:
    """Unique tool_use ids in a Claude Code file's assistant lines, and in the sub-agent
    messages its progress lines mirror when that sub-agent's own file is not beside it."""
    ids = set()
    for line in path.read_text().splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        data = value.get("data") if value.get("type") == "progress" else None
        if isinstance(data, dict) and data.get("type") == "agent_progress":
            own_file = path.with_name(f"{path.stem}__subagents__agent-{data.get('agentId')}.jsonl")
            message = data.get("message") or {}
            if own_file.exists() or message.get("type") != "assistant":
                continue
            value = message
        elif value.get("type") != "assistant":
            continue
        for block in (value.get("message") or {}).get("content") or []:
            if isinstance(block, dict) and block.get("type") in ("tool_use", "server_tool_use"):
                ids.add(block["id"])
    return len(ids)


def test_scan_json_over_the_corpus_counts_every_tool_call_once() -> None:
    claude = SHARED / "corpus" / "claude_code"
    tau = SHARED / "corpus" / "openai_chat" / "tau_airline" / "gpt-4o-airline.dev.json"
    examples = SHARED / "formats" / "examples"
    if not (claude.is_dir() and tau.is_file() and examples.is_dir()):
        pytest.skip(
            f"{SHARED} is absent: the shared development corpus is not beside this checkout"
        )
    result = run_cli("scan", "--json", str(claude), str(tau), str(examples))
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    errors = {Path(r["source"]).name: r["error"] for r in rows if r["error"]}
    assert list(errors) == ["openllmetry_attributes.json"]
    assert errors["openllmetry_attributes.json"].startswith("unknown_format:")

    expected_claude = sum(_claude_tool_calls(p) for p in claude.rglob("*.jsonl"))
    expected_claude += sum(_claude_tool_calls(p) for p in examples.rglob("claude_code*/**/*.jsonl"))
    expected_claude += sum(_claude_tool_calls(p) for p in examples.glob("claude_code*.jsonl"))
    expected_tau = sum(
        len(m.get("tool_calls") or []) for t in json.loads(tau.read_text()) for m in t["traj"]
    )
    # Every other example encodes the same scenario: two reads (config.yaml fails, settings.yaml).
    others = [p for p in examples.glob("*.json") if p.name != "openllmetry_attributes.json"]
    assert sum(r["tool_calls"] for r in rows) == expected_claude + expected_tau + 2 * len(others)
    by_format = Counter(r["format"] for r in rows if not r["error"])
    assert by_format["openai_chat"] == 101  # 100 trajectories + the example
    # Linked sub-agent files are part of their parent's session, not sessions of their own.
    sources = {Path(r["source"]).name for r in rows}
    assert "4d5611e5-241a-462a-8d15-5122611a9569__subagents__agent-a2898e3.jsonl" not in sources
    assert "4d5611e5-241a-462a-8d15-5122611a9569.jsonl" in sources
    assert "LICENSE" not in sources


def test_scan_reports_bad_files_and_goes_on(tmp_path: Path) -> None:
    good = {
        "id": "g",
        "tools": [{"type": "function", "function": {"name": "docs_search"}}],
        "messages": [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": "1",
                        "type": "function",
                        "function": {"name": "search_docs", "arguments": "{}"},
                    }
                ],
            },
        ],
    }
    (tmp_path / "a-good.json").write_text(json.dumps(good))
    (tmp_path / "b-cut.json").write_text(json.dumps(good)[:50])
    (tmp_path / "c-other.json").write_text('{"hello": 1}')
    result = run_cli("scan", "--json", str(tmp_path))
    assert result.returncode == 3, "2 of 3 files unreadable is above the allowed share (0.5)"
    rows = {Path(r["source"]).name: r for r in map(json.loads, result.stdout.splitlines())}
    assert rows["b-cut.json"]["error"].startswith("invalid_json:")
    assert rows["c-other.json"]["error"].startswith("unknown_format:")
    signal = rows["a-good.json"]["signals"][0]
    assert (signal["kind"], signal["value"], signal["detector"]) == (
        "unknown_tool",
        "search_docs",
        "unknown_tool",
    )
    assert "docs_search" in signal["explanation"]

    table = run_cli("scan", str(tmp_path))
    assert "unknown_tool" in table.stdout and "ERROR invalid_json" in table.stdout
    assert "1 sessions, 1 tool calls, 2 unreadable files" in table.stdout


def test_config_errors_exit_2_with_one_line_and_no_traceback(tmp_path: Path) -> None:
    config = tmp_path / "bad.yaml"
    config.write_text("sessions:\n  locaton: ./x\n")
    for args in (
        ["run", "--config", str(config)],
        ["scan", "--config", str(config), str(tmp_path)],
    ):
        result = run_cli(*args)
        assert result.returncode == 2
        assert (
            result.stderr.strip() == f"halluwatch: error: {config}: sessions.locaton: unknown key"
        )
    bad_date = run_cli(
        "run", "--config", str(REPO / "examples" / "halluwatch.yaml"), "--date", "29/11"
    )
    assert bad_date.returncode == 2 and "Traceback" not in bad_date.stderr
    assert "'29/11' is not YYYY-MM-DD" in bad_date.stderr
    missing = run_cli("scan", str(tmp_path / "nope"))
    assert missing.returncode == 2 and "no such file or folder" in missing.stderr


def test_scan_does_not_import_prefect() -> None:
    code = (
        "import sys, flows.cli as c;"
        "c.main(['scan', '--json', 'examples/bucket/sessions/2026/11/29']);"
        "sys.exit(1 if 'prefect' in sys.modules else 0)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, "scan imported prefect"
