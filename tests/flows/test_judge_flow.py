"""The LLM judge inside the nightly flow, against an OpenAI-compatible server on loopback."""

from __future__ import annotations

import re
import shutil
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from judge_grader import parse_prompt
from openai_server import openai_server

from findings.store import ResultsStore
from sessions.storage import LocalStore

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples"
DAY = date(2026, 11, 29)
API_KEY = "sk-judge-test-5f0e1d2c3b4a"

pytestmark = pytest.mark.prefect

_FACT = re.compile(r"\b[A-Z]{2,5}-\d+\b|\b\d+ days\b|\$\d[\d,.]*")


def sentence_grader(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """One claim per sentence with a fact in it: supported when its facts are in the evidence."""
    evidence, reply, _ = parse_prompt(messages)
    claims = []
    for sentence in re.split(r"(?<=[.!?])\s+", reply):
        facts = _FACT.findall(sentence)
        if not facts:
            continue
        found = next(((eid, f) for f in facts for eid, text in evidence.items() if f in text), None)
        claim: dict[str, Any] = {"claim": sentence, "numeric_mismatch": False}
        if found and all(any(f in t for t in evidence.values()) for f in facts):
            eid, fact = found
            claim.update(label="supported", evidence_id=eid, evidence_quote=fact)
        else:
            claim.update(label="unsupported", evidence_id=None, evidence_quote="")
        claims.append(claim)
    return {"claims": claims, "reason": f"{len(claims)} sentences with facts checked"}


def _example(tmp_path: Path, judge: str) -> Path:
    shutil.copytree(EXAMPLE / "bucket", tmp_path / "bucket")
    config = tmp_path / "halluwatch.yaml"
    config.write_text((EXAMPLE / "halluwatch.yaml").read_text() + judge)
    return config


def test_the_night_judges_a_weighted_sample_and_a_rerun_makes_no_request(
    prefect_api: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from flows.nightly import nightly

    config = _example(
        tmp_path,
        "judge:\n  model: judge-test\n  sample_rate: 0.5\n  max_sessions: 12\n"
        "  input_usd_per_mtok: 0.15\n  output_usd_per_mtok: 0.60\n",
    )
    with openai_server(grader=sentence_grader) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
        monkeypatch.delenv("JUDGE_MODEL", raising=False)
        manifest = nightly(config=str(config), date=DAY.isoformat())
        first_requests = len(server.chat_requests())

        judge = manifest["judge"]
        assert judge["status"] == "on" and judge["model"] == "judge-test"
        assert judge["template"] == "claims-v1"
        assert 0 < judge["sessions_sampled"] <= 12
        assert judge["sessions_offered"] == manifest["sessions"] == 31
        # Identical replies with identical evidence are judged once, even within a night.
        assert judge["requests"] == first_requests > 0
        assert judge["requests"] + judge["cache_hits"] == judge["judged_replies"]
        assert judge["cost_usd"] > 0 and judge["by_status"] == {"scored": judge["judged_replies"]}
        assert all(r.headers.get("authorization") == f"Bearer {API_KEY}" for r in server.requests)

        results = ResultsStore(LocalStore(tmp_path / "results"), "")
        judgements = results.read_table("judgements", DAY).to_pylist()
        assert len(judgements) == judge["judged_replies"]
        assert {j["status"] for j in judgements} == {"scored"}
        assert all(j["weight"] >= 1 for j in judgements)
        # "Returns are accepted within 30 days" is in no tool output: unsupported, with the
        # reply cited and a fix; the order id sentence is backed by the lookup.
        signals = [
            s
            for s in results.read_table("signals", DAY).to_pylist()
            if s["detector"] == "llm_judge"
        ]
        assert signals and {s["kind"] for s in signals} == {"unsupported_claim"}
        returns = [s for s in signals if "30 days" in s["value"]]
        assert returns and all(s["agent"] == "support-bot" for s in returns)
        assert "nothing the agent saw in this session supports it" in returns[0]["explanation"]
        assert manifest["signals_by_kind"]["unsupported_claim"] == len(signals)
        metric = next(
            m
            for m in results.read_table("metrics", DAY).to_pylist()
            if m["metric"] == "unbacked_claims_per_judged_reply"
            and m["agent"] == "support-bot"
            and m["agent_version"] == "*"
        )
        assert metric["denominator"] > 0 and metric["ci_low"] <= metric["value"]
        assert metric["value"] <= metric["ci_high"]
        report = (tmp_path / "results" / manifest["report_key"]).read_text()
        assert "judge-test" in report
        for path in (tmp_path / "results").rglob("*"):
            if path.is_file():
                assert API_KEY.encode() not in path.read_bytes(), path

        # The same day again: every reply comes from the cache, the rows are the same.
        again = nightly(config=str(config), date=DAY.isoformat())
        assert len(server.chat_requests()) == first_requests
        assert again["judge"]["requests"] == 0
        assert again["judge"]["cache_hits"] == judge["judged_replies"]
        assert again["signals_by_kind"] == manifest["signals_by_kind"]
        rerun = results.read_table("judgements", DAY).to_pylist()
        assert sorted((j["session_id"], j["reply_event"]) for j in rerun) == sorted(
            (j["session_id"], j["reply_event"]) for j in judgements
        )


def test_without_a_judge_the_night_says_it_is_off(
    prefect_api: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from flows.nightly import nightly

    monkeypatch.delenv("JUDGE_MODEL", raising=False)
    config = _example(tmp_path, "")
    manifest = nightly(config=str(config), date=DAY.isoformat())
    assert manifest["judge"] == {"status": "off", "reason": "no judge configured"}
    report = (tmp_path / "results" / manifest["report_key"]).read_text()
    assert "off (no judge configured)" in report
    results = ResultsStore(LocalStore(tmp_path / "results"), "")
    assert results.read_table("judgements", DAY).num_rows == 0


def test_a_rejected_key_keeps_the_code_checks_and_raises_an_anomaly(
    prefect_api: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from flows.nightly import nightly

    config = _example(tmp_path, "judge:\n  model: judge-test\n  sample_rate: 1.0\n")
    unauthorized = (401, {}, {"error": {"message": f"Incorrect API key provided: {API_KEY}"}})
    with openai_server() as server:
        server.script(*[unauthorized] * 5)
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
        manifest = nightly(config=str(config), date=DAY.isoformat())
    assert manifest["judge"]["status"] == "error"
    assert manifest["signals_by_kind"]["unknown_tool"] == 9  # the code checks are committed
    judge_rows = [a for a in manifest["anomalies"] if a["metric"] == "judge"]
    assert len(judge_rows) == 1 and judge_rows[0]["severity"] == "high"
    assert "LLM evaluations failed" in judge_rows[0]["reason"]
    assert API_KEY not in str(manifest)
