"""One batch end to end on a real folder: rows, failures and the faithfulness audit log."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

from detectors.runner import DetectorSuite
from findings.batch import run_batch
from findings.store import ResultsStore
from sessions.reader import SessionReader
from sessions.storage import LocalStore

DAY = date(2026, 11, 29)
REAL = ["CASE-10231", "CASE-10232", "CASE-10240", "CASE-10255", "CASE-10260", "CASE-10271"]


def _session() -> dict:
    cases = [{"case_id": c, "status": "open"} for c in REAL]
    reply = "Open cases: " + ", ".join(REAL) + ", plus CASE-10299 and CASE-10300 (escalated)."
    return {
        "id": "faith-1",
        "metadata": {"agent": "support-bot", "app_version": "v7"},
        "tools": [{"type": "function", "function": {"name": "search_cases"}}],
        "messages": [
            {"role": "user", "content": "Which cases are open for ACME?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "search_cases", "arguments": '{"customer": "ACME"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": json.dumps(cases)},
            {"role": "assistant", "content": reply},
        ],
    }


def test_batch_writes_sessions_signals_failures_and_audit(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    store.write("day/a.json", json.dumps(_session()).encode())
    store.write("day/b.json", b'{"messages": [')
    results = ResultsStore(store, "results/")
    units = [[("day/a.json", store.list("day/a.json").__next__().size)], [("day/b.json", 14)]]
    partial = run_batch(
        store=store,
        results=results,
        reader=SessionReader(),
        suite=DetectorSuite(),
        day=DAY,
        run_id="r1",
        batch_no=0,
        units=units,
    )
    assert (partial.files, partial.files_parsed, partial.sessions) == (2, 1, 1)
    assert dict(partial.failures_by_reason) == {"invalid_json": 1}
    assert partial.signals_by_kind["faithfulness_violation"] == 2

    results.write_manifest(DAY, {"run_id": "r1"})
    signals = results.read_table("signals", DAY).to_pylist()
    assert sorted(s["value"] for s in signals) == ["CASE-10299", "CASE-10300"]
    (audit,) = results.read_table("audit", DAY).to_pylist()
    assert audit["action"] == "quality.faithfulness_violation"
    assert audit["score"] == 6 / 8 and audit["threshold"] == 0.9
    assert audit["agent"] == "support-bot" and audit["agent_version"] == "v7"
    assert set(audit["unsupported_sample"]) == {"CASE-10299", "CASE-10300"}
    assert [f["source"] for f in results.read_table("failures", DAY).to_pylist()] == ["day/b.json"]
