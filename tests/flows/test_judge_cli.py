"""`halluwatch scan --judge` and `halluwatch judge-eval` against a judge on loopback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from judge_grader import evidence_grader, parse_prompt
from openai_server import openai_server

from detectors.judge.calibration import load_cases
from flows.cli import main

REPO = Path(__file__).resolve().parents[2]
LABELLED = REPO / "tests" / "validation" / "claims.jsonl"
API_KEY = "sk-cli-judge-test-9a8b7c"


@pytest.fixture
def judge_env(monkeypatch: pytest.MonkeyPatch) -> Any:
    with openai_server(grader=evidence_grader) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
        monkeypatch.setenv("JUDGE_MODEL", "judge-test")
        yield server


def _refund_session(path: Path) -> Path:
    session = {
        "id": "refund-1",
        "metadata": {"agent": "support-bot"},
        "messages": [
            {"role": "user", "content": "Please refund order ORD-7781."},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "get_order", "arguments": '{"id": "ORD-7781"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": '{"refund": "$102"}'},
            {"role": "assistant", "content": "Done: a refund of $120 was issued for ORD-7781."},
        ],
    }
    path.write_text(json.dumps(session) + "\n")
    return path


def test_scan_judge_adds_judged_claims_to_the_code_checks(
    judge_env: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _refund_session(tmp_path / "refund.jsonl")
    assert main(["scan", "--judge", "--json", str(path)]) == 0
    row = json.loads(capsys.readouterr().out.splitlines()[0])
    judged = {s["kind"]: s for s in row["signals"] if s["detector"] == "llm_judge"}
    assert set(judged) == {"contradicted_claim"}
    assert judged["contradicted_claim"]["value"] == "$120"
    assert '"$102"' in judged["contradicted_claim"]["explanation"]
    assert len(judge_env.chat_requests()) == 1

    assert main(["scan", "--judge", str(path)]) == 0
    text = capsys.readouterr().out
    assert "contradicted_claim" in text
    assert "LLM evaluations: 1 replies judged with judge-test (1 requests" in text
    assert API_KEY not in text


def test_scan_judge_without_a_model_is_a_config_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("JUDGE_MODEL", raising=False)
    path = _refund_session(tmp_path / "refund.jsonl")
    assert main(["scan", "--judge", str(path)]) == 2
    assert "--judge needs a judge model" in capsys.readouterr().err


def test_a_model_without_key_or_endpoint_stops_before_any_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("JUDGE_MODEL", "gpt-4o-mini")
    path = _refund_session(tmp_path / "refund.jsonl")
    assert main(["scan", str(path)]) == 2
    err = capsys.readouterr().err
    assert "neither OPENAI_API_KEY nor OPENAI_BASE_URL is set" in err


def _human_grader(supported_only: bool) -> Any:
    """A judge that answers with the human labels (or calls everything supported)."""
    cases = {c.reply.strip(): c for c in load_cases(LABELLED)}

    def grade(messages: list[dict[str, Any]]) -> dict[str, Any]:
        evidence, reply, _ = parse_prompt(messages)
        case = cases[reply.strip()]
        first_id, first_text = next(iter(evidence.items()))
        claims = []
        for human in case.claims:
            label = "supported" if supported_only else human.label
            cited = label != "unsupported"
            claims.append(
                {
                    "claim": human.claim,
                    "label": label,
                    "evidence_id": first_id if cited else None,
                    "evidence_quote": first_text[:12] if cited else "",
                    "numeric_mismatch": False,
                }
            )
        return {"claims": claims, "reason": "as labelled"}

    return grade


def test_judge_eval_prints_agreement_per_label(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    monkeypatch.setenv("JUDGE_MODEL", "judge-test")
    cases = load_cases(LABELLED)
    claims = sum(len(c.claims) for c in cases)
    with openai_server(grader=_human_grader(supported_only=False)) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        assert main(["judge-eval", "--set", str(LABELLED), "--json"]) == 0
        perfect = json.loads(capsys.readouterr().out)
        assert len(server.chat_requests()) == len(cases)
    assert perfect["agreement"]["matched"] == claims
    assert perfect["agreement"]["agreed"] == claims and perfect["unscored"] == {}

    with openai_server(grader=_human_grader(supported_only=True)) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        assert main(["judge-eval", "--set", str(LABELLED)]) == 0
    table = capsys.readouterr().out
    supported = sum(1 for c in cases for h in c.claims if h.label == "supported")
    assert f"agreement {supported}/{claims}" in table
    per_label = table.split("confusion")[0].splitlines()
    rows = {line.split()[0]: line.split() for line in per_label if line.strip()}
    assert rows["supported"][5] == "100.0%"  # recall of supported
    assert rows["contradicted"][5] == "0.0%"
    assert "LLM evaluations:" in table


def test_judge_eval_reports_a_bad_set_by_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("JUDGE_MODEL", "judge-test")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x"\n')
    assert main(["judge-eval", "--set", str(bad)]) == 2
    assert f"{bad}:1:" in capsys.readouterr().err
