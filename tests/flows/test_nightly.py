"""The nightly flow on a real Prefect API, with a local folder and with moto's S3 server."""

from __future__ import annotations

import gzip
import json
import shutil
from datetime import date
from pathlib import Path

import boto3
import pytest
from tests_support import cli_env, halluwatch_bin

from findings.store import ResultsStore
from sessions.storage import LocalStore, open_store

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples"
DAY = date(2026, 11, 29)

pytestmark = pytest.mark.prefect


def _example_copy(tmp_path: Path, extra_config: str = "") -> Path:
    shutil.copytree(EXAMPLE / "bucket", tmp_path / "bucket")
    config = tmp_path / "halluwatch.yaml"
    text = (EXAMPLE / "halluwatch.yaml").read_text() + extra_config
    config.write_text(text)
    return config


def test_nightly_on_the_bundled_example_writes_the_day(prefect_api: str, tmp_path: Path) -> None:
    from flows.nightly import nightly

    config = _example_copy(tmp_path)
    manifest = nightly(config=str(config), date="2026-11-29")
    assert manifest["files"] == 10 and manifest["files_parsed"] == 9
    assert manifest["failed_by_reason"] == {"truncated": 1}
    assert manifest["failures"][0]["source"].endswith("partial-upload.jsonl")
    assert manifest["formats"] == {"claude_code": 4, "openai_chat": 24, "otel_genai": 3}
    # 8 support sessions call the renamed docs tool and one Claude Code session calls RunTests;
    # every day, 3 refunds pass an order id never seen (and the service says it does not exist),
    # 3 ops sessions read a missing config.yaml, one Claude Code reply says the tests pass after
    # they failed.
    assert manifest["signals_by_kind"] == {
        "contradicted_action_claim": 1,
        "invented_id": 3,
        "not_found": 6,
        "unknown_tool": 9,
    }
    assert manifest["sessions_without_tool_list"] == 0

    results = ResultsStore(LocalStore(tmp_path / "results"), "")
    stored = results.read_manifest(DAY)
    assert stored is not None and stored["run_id"] == manifest["run_id"]
    sessions = results.read_table("sessions", DAY)
    assert sessions.num_rows == 31
    assert sum(sessions.column("tool_calls").to_pylist()) == manifest["tool_calls"]
    signals = results.read_table("signals", DAY).to_pylist()
    values = sorted({(s["agent"], s["value"]) for s in signals if s["kind"] == "unknown_tool"})
    assert values == [("claude-code", "RunTests"), ("support-bot", "search_docs")]
    agent_versions = {
        s["agent_version"]
        for s in signals
        if s["kind"] == "unknown_tool" and s["agent"] != "claude-code"
    }
    assert agent_versions == {"v2.4"}
    failures = results.read_table("failures", DAY).to_pylist()
    assert [f["reason"] for f in failures] == ["truncated"]

    # A re-run replaces the day: one run's parts remain, and the same rows.
    again = nightly(config=str(config), date="2026-11-29")
    assert again["run_id"] != manifest["run_id"]
    runs = {p.name for p in (tmp_path / "results" / "signals" / "date=2026-11-29").iterdir()}
    assert runs == {f"run={again['run_id']}"}
    assert results.read_table("signals", DAY).num_rows == len(signals)


def test_nightly_reads_and_writes_s3(prefect_api: str, s3_endpoint: str, tmp_path: Path) -> None:
    from flows.nightly import nightly

    s3 = boto3.client("s3", endpoint_url=s3_endpoint, region_name="us-east-1")
    s3.create_bucket(Bucket="agent-logs")
    source = EXAMPLE / "bucket"
    for path in sorted(source.rglob("*")):
        if path.is_file():
            s3.put_object(
                Bucket="agent-logs",
                Key=f"prod/{path.relative_to(source).as_posix()}",
                Body=path.read_bytes(),
            )
    # A gzip copy of a Claude Code session and an object that is not a session at all.
    claude = next((source / "sessions/2026/11/29/claude-code").glob("*.jsonl"))
    s3.put_object(
        Bucket="agent-logs",
        Key="prod/sessions/2026/11/29/extra/copy.jsonl.gz",
        Body=gzip.compress(claude.read_bytes().replace(b"-8000-1129", b"-8000-9129")),
    )
    s3.put_object(
        Bucket="agent-logs", Key="prod/sessions/2026/11/29/extra/notes.json", Body=b"[1, 2"
    )
    config = tmp_path / "halluwatch.yaml"
    config.write_text(
        (EXAMPLE / "halluwatch.yaml")
        .read_text()
        .replace(
            "location: ./bucket", f"location: s3://agent-logs/prod\n  endpoint_url: {s3_endpoint}"
        )
        .replace(
            "location: ./results",
            f"location: s3://agent-logs/halluwatch\n  endpoint_url: {s3_endpoint}",
        )
    )
    manifest = nightly(config=str(config), date="2026-11-29")
    assert manifest["files"] == 12
    assert manifest["failed_by_reason"] == {"invalid_json": 1, "truncated": 1}
    assert manifest["formats"]["claude_code"] == 5
    assert manifest["sessions_location"] == "s3://agent-logs/prod/"
    results = ResultsStore(open_store("s3://agent-logs/halluwatch", endpoint_url=s3_endpoint), "")
    assert results.read_table("sessions", DAY).num_rows == manifest["sessions"] == 32
    keys = [
        o["Key"] for o in s3.list_objects_v2(Bucket="agent-logs", Prefix="halluwatch/")["Contents"]
    ]
    assert "halluwatch/manifests/date=2026-11-29/manifest.json" in keys
    assert any(k.startswith("halluwatch/signals/date=2026-11-29/run=") for k in keys)


def test_cli_run_through_the_entry_point(prefect_api: str, tmp_path: Path) -> None:
    import subprocess

    config = _example_copy(tmp_path)
    result = subprocess.run(
        [halluwatch_bin(), "run", "--config", str(config), "--date", "2026-11-28", "--json"],
        capture_output=True,
        text=True,
        env=cli_env(PREFECT_API_URL=prefect_api),
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    manifest = json.loads(result.stdout)
    assert manifest["date"] == "2026-11-28"
    assert "unknown_tool" not in manifest["signals_by_kind"]  # no renamed tool before v2.4
    assert manifest["sessions"] == 31
    assert (tmp_path / "results" / "manifests" / "date=2026-11-28" / "manifest.json").is_file()
    assert "Starting Prefect's temporary API server" not in result.stderr
