"""The judge against a real OpenAI-compatible HTTP server on loopback: requests, cache, budget,
retries, repair, unscored results and credentials."""

from __future__ import annotations

import json
import socket
import time

import pytest
from judge_support import (
    API_KEY,
    config,
    evidence_grader,
    make_judge,
    refund_items,
)
from openai_server import Completion, openai_server

from detectors.judge import Judge, JudgeSettings, MemoryCache
from detectors.judge.cache import DirectoryCache
from detectors.judge.prompt import RESPONSE_FORMAT, TEMPLATE_VERSION
from sessions.errors import CredentialError


def test_a_reply_is_judged_with_the_prompt_and_raw_answer_kept() -> None:
    with openai_server(evidence_grader) as server:
        judge = make_judge(server.base_url)
        (judgement,) = judge.judge(refund_items())
        (request,) = server.chat_requests()

    assert judgement.status == "scored"
    assert [(c.claim, c.label) for c in judgement.claims] == [
        ("$120", "contradicted"),
        ("ORD-7781", "supported"),
    ]
    contradicted = judgement.claims[0]
    assert (contradicted.evidence_source, contradicted.evidence_event) == ("tool_output", 3)
    assert (contradicted.evidence_name, contradicted.evidence_quote) == ("get_order", "$100")
    assert judgement.score == 0.5
    assert judgement.reason == "2 facts checked against the evidence"
    assert (judgement.model, judgement.template) == ("judge-test", TEMPLATE_VERSION)
    assert judgement.raw is not None and json.loads(judgement.raw)["claims"][0]["claim"] == "$120"
    assert judgement.prompt == request.body["messages"]
    assert request.body["temperature"] == 0
    assert request.body["model"] == "judge-test"
    assert request.body["response_format"] == RESPONSE_FORMAT
    assert RESPONSE_FORMAT["json_schema"]["strict"] is True
    assert request.headers["authorization"] == f"Bearer {API_KEY}"
    assert judgement.input_tokens > 100 and judgement.output_tokens > 10
    assert judgement.requests == 1 and not judgement.cached


def test_a_second_judging_with_the_same_cache_makes_no_request() -> None:
    cache = MemoryCache()
    with openai_server(evidence_grader) as server:
        first = make_judge(server.base_url, cache=cache).judge(refund_items(3))
        assert len(server.chat_requests()) == 3
        again_judge = make_judge(server.base_url, cache=cache)
        again = again_judge.judge(refund_items(3))
        assert len(server.chat_requests()) == 3, "cached judgements make no request"

    assert [j.cached for j in again] == [True, True, True]
    assert [(j.input_tokens, j.output_tokens, j.requests) for j in again] == [(0, 0, 0)] * 3
    assert [[c.to_dict() for c in j.claims] for j in again] == [
        [c.to_dict() for c in j.claims] for j in first
    ]
    assert [j.key for j in again] == [j.key for j in first]
    totals = again_judge.totals()
    assert (totals["requests"], totals["cache_hits"], totals["input_tokens"]) == (0, 3, 0)


def test_the_cache_key_changes_with_model_evidence_and_reply() -> None:
    cache = MemoryCache()
    with openai_server(evidence_grader) as server:
        make_judge(server.base_url, cache=cache).judge(refund_items(1))
        make_judge(server.base_url, config(model="other-model"), cache=cache).judge(refund_items(1))
        assert len(server.chat_requests()) == 2
    assert len(cache.entries) == 2


def test_a_directory_cache_survives_the_process(tmp_path) -> None:
    with openai_server(evidence_grader) as server:
        make_judge(server.base_url, cache=DirectoryCache(tmp_path)).judge(refund_items(2))
        again = make_judge(server.base_url, cache=DirectoryCache(tmp_path)).judge(refund_items(2))
        assert len(server.chat_requests()) == 2
    assert all(j.cached and j.status == "scored" for j in again)
    assert len(list(tmp_path.glob("*/*.json"))) == 2


def test_the_budget_stops_judging_at_the_cap_and_the_run_goes_on() -> None:
    with openai_server(evidence_grader) as server:
        probe = make_judge(server.base_url).judge(refund_items(1))[0]
        per_reply = probe.input_tokens + probe.output_tokens
        judge = make_judge(server.base_url, config(budget_tokens=2 * per_reply))
        judgements = judge.judge(refund_items(5))
        assert len(server.chat_requests()) == 1 + 2

    assert [j.status for j in judgements] == ["scored"] * 2 + ["over_budget"] * 3
    assert all(j.requests == 0 and j.claims == [] for j in judgements[2:])
    totals = judge.totals()
    assert totals["over_budget"] is True
    assert totals["by_status"] == {"scored": 2, "over_budget": 3}
    assert totals["input_tokens"] + totals["output_tokens"] >= 2 * per_reply


def test_a_dollar_budget_uses_the_configured_prices() -> None:
    prices = {"input_usd_per_mtok": 1_000_000.0, "output_usd_per_mtok": 0.0}  # $1 a token
    with openai_server(evidence_grader) as server:
        judge = make_judge(server.base_url, config(budget_usd=1.0, **prices))
        judgements = judge.judge(refund_items(3))
        assert len(server.chat_requests()) == 1
    assert [j.status for j in judgements] == ["scored", "over_budget", "over_budget"]
    assert judgements[0].cost_usd == judgements[0].input_tokens
    assert judge.totals()["cost_usd"] == judgements[0].input_tokens


def test_cost_is_null_when_prices_are_unknown() -> None:
    with openai_server(evidence_grader) as server:
        judge = make_judge(server.base_url)
        (judgement,) = judge.judge(refund_items())
    assert judgement.cost_usd is None and judge.totals()["cost_usd"] is None


def test_429_and_500_are_retried_honouring_the_server_delay_then_succeed() -> None:
    with openai_server(evidence_grader) as server:
        server.script(
            (429, {"retry-after-ms": "1"}, {"error": {"message": "rate limited"}}),
            (500, {"retry-after-ms": "1"}, {"error": {"message": "internal"}}),
        )
        started = time.monotonic()
        (judgement,) = make_judge(server.base_url).judge(refund_items())
        elapsed = time.monotonic() - started
        assert len(server.chat_requests()) == 3
    assert judgement.status == "scored" and len(judgement.claims) == 2
    # Without the 1 ms hint the SDK backs off 0.375-0.5 s per retry.
    assert elapsed < 0.7


def test_errors_after_the_retries_leave_that_reply_unscored_and_the_run_goes_on() -> None:
    with openai_server(evidence_grader) as server:
        server.script(*[(503, {"retry-after-ms": "1"}, {"error": {"message": "overloaded"}})] * 2)
        judge = make_judge(server.base_url, config(max_retries=1))
        first, second = judge.judge(refund_items(2))
        assert len(server.chat_requests()) == 3
    assert (first.status, first.unscored_reason) == ("unscored", "http_503")
    assert "overloaded" in first.reason and first.claims == [] and first.score is None
    assert second.status == "scored"
    assert judge.totals()["unscored_reasons"] == {"http_503": 1}


def test_a_refused_connection_is_unscored_with_the_reason() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed when the block ends: nothing listens there
    judge = make_judge(f"http://127.0.0.1:{port}/v1", config(max_retries=0))
    (judgement,) = judge.judge(refund_items())
    assert (judgement.status, judgement.unscored_reason) == ("unscored", "connection_error")
    assert f"127.0.0.1:{port}" in judgement.reason


def test_garbage_twice_is_unscored_after_one_repair_request() -> None:
    with openai_server(evidence_grader) as server:
        server.script("Sure! Here are the claims: refund wrong.", '{"claims": [')
        judge = make_judge(server.base_url)
        (judgement,) = judge.judge(refund_items())
        first, repair = server.chat_requests()

    assert (judgement.status, judgement.unscored_reason) == ("unscored", "invalid_json")
    assert judgement.claims == [] and judgement.score is None
    assert "first answer: not valid JSON" in judgement.reason
    assert judgement.raw == '{"claims": ['
    assert judgement.requests == 2
    sent = repair.body["messages"]
    assert sent[:2] == first.body["messages"]
    assert sent[2] == {"role": "assistant", "content": "Sure! Here are the claims: refund wrong."}
    assert sent[3]["role"] == "user" and "not valid JSON" in sent[3]["content"]
    assert judgement.prompt == sent
    assert judge.totals()["unscored_reasons"] == {"invalid_json": 1}


def test_one_repair_can_rescue_an_answer() -> None:
    with openai_server(evidence_grader) as server:
        server.script(Completion('{"claims": [{"claim": "x"', finish_reason="length"))
        (judgement,) = make_judge(server.base_url).judge(refund_items())
        _, repair = server.chat_requests()
    assert judgement.status == "scored" and judgement.requests == 2
    assert "cut off at the length limit" in repair.body["messages"][3]["content"]
    assert "shorter" in repair.body["messages"][3]["content"]


@pytest.mark.parametrize(
    ("answer", "code"),
    [
        (Completion(None, refusal="I can't help with that."), "refusal"),
        ('{"claims": [{"claim": "x", "label": "true"}], "reason": ""}', "schema_mismatch"),
        ("", "empty"),
    ],
)
def test_unusable_answers_are_unscored_never_supported(answer: object, code: str) -> None:
    with openai_server(evidence_grader) as server:
        server.script(answer, answer)
        (judgement,) = make_judge(server.base_url).judge(refund_items())
    assert (judgement.status, judgement.unscored_reason) == ("unscored", code)
    assert judgement.claims == [] and judgement.score is None


def _answer(**claim: object) -> str:
    base = {"claim": "refund of $120", "label": "supported", "evidence_id": "E2",
            "evidence_quote": "$120", "numeric_mismatch": False}  # fmt: skip
    return json.dumps({"claims": [{**base, **claim}], "reason": "r"})


@pytest.mark.parametrize(
    ("claim", "note"),
    [
        ({}, "judge said supported but its quote is not in E2"),
        ({"label": "contradicted", "evidence_id": "E9"}, "cited no evidence item that was sent"),
        ({"label": "partial", "evidence_id": None}, "cited no evidence item that was sent"),
    ],
)
def test_a_quote_not_in_the_cited_evidence_is_downgraded(claim: dict, note: str) -> None:
    with openai_server() as server:
        server.script(_answer(**claim))
        (judgement,) = make_judge(server.base_url).judge(refund_items())
    (graded,) = judgement.claims
    assert graded.label == "unsupported" and graded.judge_label != "unsupported"
    assert graded.evidence_id is None and graded.evidence_event is None
    assert note in (graded.note or "") and judgement.notes == [graded.note]


def test_a_quote_matches_regardless_of_case_and_white_space() -> None:
    with openai_server() as server:
        server.script(_answer(label="contradicted", evidence_quote='"REFUND":   "$100"'))
        (judgement,) = make_judge(server.base_url).judge(refund_items())
    assert judgement.claims[0].label == "contradicted"
    assert judgement.claims[0].evidence_event == 3


def test_a_rejected_key_raises_credential_error_without_the_key() -> None:
    echo = {
        "error": {"message": f"Incorrect API key provided: {API_KEY}", "code": "invalid_api_key"}
    }
    with openai_server(evidence_grader) as server:
        server.script(*[(401, {}, echo)] * 3)
        judge = make_judge(server.base_url, config(concurrency=4))
        with pytest.raises(CredentialError) as raised:
            judge.judge(refund_items(3))
        assert len(server.chat_requests()) <= 3  # no retries of a rejected key
    message = str(raised.value)
    assert API_KEY not in message and API_KEY[-8:] not in message
    assert "401" in message and "OPENAI_API_KEY" in message


def test_concurrent_judging_keeps_the_order_ofrefund_items() -> None:
    items = refund_items(8)
    with openai_server(evidence_grader) as server:
        judge = make_judge(server.base_url, config(concurrency=4))
        judgements = judge.judge(items)
        assert len(server.chat_requests()) == 8
    assert [j.item for j in judgements] == items
    assert [j.claims[0].evidence_quote for j in judgements] == [f"${100 + k}" for k in range(8)]
    assert judge.totals()["by_status"] == {"scored": 8}


def test_the_same_reply_and_evidence_twice_in_a_run_is_judged_once() -> None:
    item = refund_items(1)[0]
    with openai_server(evidence_grader) as server:
        judge = make_judge(server.base_url)
        judgements = judge.judge([item, item])
        assert len(server.chat_requests()) == 1
    assert [j.cached for j in judgements] == [False, True]
    assert judge.totals()["cache_hits"] == 1


def test_totals_count_everything_for_the_manifest() -> None:
    with openai_server(evidence_grader) as server:
        server.script("garbage", "garbage")
        judge = make_judge(server.base_url)
        judge.judge(refund_items(3))
    totals = judge.totals()
    assert totals["model"] == "judge-test" and totals["template"] == TEMPLATE_VERSION
    assert totals["requests"] == 4
    assert totals["by_status"] == {"unscored": 1, "scored": 2}
    assert (totals["judged_replies"], totals["unscored"]) == (2, 1)
    assert totals["unscored_reasons"] == {"invalid_json": 1}
    assert totals["claims"] == {"contradicted": 2, "supported": 2}
    assert totals["over_budget"] is False and totals["cost_usd"] is None


def test_a_client_can_be_passed_in() -> None:
    import openai

    with openai_server(evidence_grader) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="sk-other")
        no_credentials = JudgeSettings(openai_api_key=None, openai_base_url=None, judge_model=None)
        judge = Judge(config(), no_credentials, client=client)
        (judgement,) = judge.judge(refund_items())
        (request,) = server.chat_requests()
    assert judgement.status == "scored"
    assert request.headers["authorization"] == "Bearer sk-other"
