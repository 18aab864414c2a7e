"""Batch mode against the loopback server's Batch API, with a fake clock (nothing waits)."""

from __future__ import annotations

import json
from typing import Any

from judge_support import config, evidence_grader, make_judge, refund_items
from openai_server import openai_server


class FakeTime:
    """``sleep`` advances ``clock`` instead of waiting."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    def clock(self) -> float:
        return self.now


def _batch_config(**batch: Any) -> Any:
    return config(batch={"enabled": True, "poll_seconds": 30, "deadline_minutes": 60, **batch})


def test_batch_mode_submits_a_file_and_a_batch_polls_and_reads_the_results() -> None:
    fake = FakeTime()
    with openai_server(evidence_grader, batch_ready_after=3) as server:
        judge = make_judge(server.base_url, _batch_config(), sleep=fake.sleep, clock=fake.clock)
        judgements = judge.judge(refund_items(3))
        paths = server.paths()
        upload = server.requests[0]
        create = server.requests[1]
        uploaded = server.files["file-1"].decode().splitlines()
        (batch,) = server.batches.values()

    assert paths == [
        "POST /v1/files",
        "POST /v1/batches",
        *[f"GET /v1/batches/{batch.id}"] * 3,
        f"GET /v1/files/{batch.output_file_id}/content",
    ], "no chat request: everything came from the batch"
    assert fake.sleeps == [30, 30, 30]
    assert b'name="purpose"\r\n\r\nbatch' in upload.body
    assert create.body == {
        "input_file_id": "file-1",
        "endpoint": "/v1/chat/completions",
        "completion_window": "24h",
    }
    lines = [json.loads(line) for line in uploaded]
    assert [line["custom_id"] for line in lines] == [j.key for j in judgements]
    assert {line["url"] for line in lines} == {"/v1/chat/completions"}
    assert lines[0]["body"]["messages"] == judgements[0].prompt
    assert lines[0]["body"]["temperature"] == 0

    assert [j.status for j in judgements] == ["scored"] * 3
    assert [j.claims[0].evidence_quote for j in judgements] == ["$100", "$101", "$102"]
    assert all(j.input_tokens > 0 and j.requests == 1 for j in judgements)
    totals = judge.totals()
    assert totals["batch"] == {"submitted": 3, "completed": 3, "judged_online_after": 0}
    assert totals["requests"] == 3


def test_items_not_done_by_the_deadline_are_judged_online() -> None:
    fake = FakeTime()
    with openai_server(evidence_grader, batch_ready_after=None) as server:
        cfg = _batch_config(deadline_minutes=1)
        judgements = make_judge(server.base_url, cfg, sleep=fake.sleep, clock=fake.clock).judge(
            refund_items(2)
        )
        paths = server.paths()

    assert fake.sleeps == [30, 30]
    assert paths[-4:-2] == ["GET /v1/batches/batch-2", "POST /v1/batches/batch-2/cancel"]
    assert paths[-2:] == ["POST /v1/chat/completions"] * 2
    assert [j.status for j in judgements] == ["scored", "scored"]


def test_a_partly_done_batch_sends_only_the_rest_online() -> None:
    fake = FakeTime()
    with openai_server(evidence_grader, batch_ready_after=1, batch_lines_done=1) as server:
        judge = make_judge(server.base_url, _batch_config(), sleep=fake.sleep, clock=fake.clock)
        judgements = judge.judge(refund_items(3))
        online = server.chat_requests()

    assert len(online) == 2
    assert [r.body["messages"] for r in online] == [j.prompt for j in judgements[1:]]
    assert [j.status for j in judgements] == ["scored"] * 3
    assert judge.totals()["batch"] == {"submitted": 3, "completed": 1, "judged_online_after": 2}


def test_an_unreadable_batch_answer_is_repaired_online() -> None:
    fake = FakeTime()
    with openai_server(evidence_grader, batch_ready_after=1) as server:
        server.script("this is not JSON")  # taken by the batch's only line
        judge = make_judge(server.base_url, _batch_config(), sleep=fake.sleep, clock=fake.clock)
        (judgement,) = judge.judge(refund_items(1))
        (repair,) = server.chat_requests()

    assert repair.body["messages"][2] == {"role": "assistant", "content": "this is not JSON"}
    assert judgement.status == "scored" and judgement.requests == 2


def test_a_server_without_a_batch_api_falls_back_to_online() -> None:
    fake = FakeTime()
    with openai_server(evidence_grader, batch_api=False) as server:
        judge = make_judge(server.base_url, _batch_config(), sleep=fake.sleep, clock=fake.clock)
        (judgement,) = judge.judge(refund_items(1))
        assert server.paths() == ["POST /v1/files", "POST /v1/chat/completions"]
    assert judgement.status == "scored"
    assert judge.totals()["batch"] == {
        "submitted": 1,
        "completed": 0,
        "judged_online_after": 1,
        "errors": 1,
    }
    assert "Batch API" in judge.totals()["batch_error"]
