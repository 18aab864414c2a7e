"""Judge requests through the OpenAI Batch API: cheaper, and slow (up to the 24 h window).

One JSON Lines file of requests (``custom_id`` = the cache key, the body exactly as sent online)
is uploaded (``purpose="batch"``), one batch created for ``/v1/chat/completions``, and the batch
polled every ``poll_seconds`` until it is completed, failed, expired or cancelled, or until the
deadline (then it is cancelled, so it is not paid for twice). Whatever completed is read from
the output file and returned as chat completions, which the judge reads exactly like online
answers (a repair of an unreadable one happens online). Anything missing (not done by the
deadline, failed, or the server has no Batch API) is judged online by the caller.
``sleep`` and ``clock`` are injected, so tests do not wait.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import openai
from openai.types import Batch
from openai.types.chat import ChatCompletion
from pydantic import ValidationError

from sessions.errors import CredentialError

ENDPOINT: Final[Literal["/v1/chat/completions"]] = "/v1/chat/completions"
FINAL = frozenset({"completed", "failed", "expired", "cancelled"})


@dataclass(slots=True)
class BatchOutcome:
    completions: dict[str, ChatCompletion] = field(default_factory=dict)  # by custom_id
    batch_id: str | None = None
    status: str | None = None
    error: str | None = None  # the Batch API could not be used; everything goes online


def requests_jsonl(bodies: dict[str, dict[str, Any]]) -> bytes:
    lines = (
        json.dumps({"custom_id": key, "method": "POST", "url": ENDPOINT, "body": body})
        for key, body in bodies.items()
    )
    return ("\n".join(lines) + "\n").encode()


def run_batch(
    client: openai.OpenAI,
    bodies: dict[str, dict[str, Any]],
    *,
    poll_seconds: float,
    deadline_seconds: float,
    sleep: Callable[[float], None],
    clock: Callable[[], float],
    scrub: Callable[[str], str] = str,
) -> BatchOutcome:
    """Submit ``bodies`` (custom_id -> request body) as one batch and collect what completes."""
    deadline = clock() + deadline_seconds
    outcome = BatchOutcome()
    try:
        upload = client.files.create(
            file=("halluwatch-judge.jsonl", requests_jsonl(bodies)), purpose="batch"
        )
        batch = client.batches.create(
            input_file_id=upload.id, endpoint=ENDPOINT, completion_window="24h"
        )
        outcome.batch_id = batch.id
        batch = _wait(client, batch, poll_seconds, deadline, sleep, clock)
        outcome.status = batch.status
        if batch.output_file_id:
            content = client.files.content(batch.output_file_id).text
            outcome.completions = parse_output(content, set(bodies))
    except openai.AuthenticationError:
        raise CredentialError(
            f"the judge endpoint {client.base_url} rejected the API key (HTTP 401): "
            "check OPENAI_API_KEY"
        ) from None
    except openai.APIError as exc:
        outcome.error = scrub(f"Batch API: {exc}")[:500]
    return outcome


def _wait(
    client: openai.OpenAI,
    batch: Batch,
    poll_seconds: float,
    deadline: float,
    sleep: Callable[[float], None],
    clock: Callable[[], float],
) -> Batch:
    while batch.status not in FINAL:
        remaining = deadline - clock()
        if remaining <= 0:
            try:
                return client.batches.cancel(batch.id)
            except openai.APIStatusError:
                return batch  # cannot cancel: read what there is
        sleep(min(poll_seconds, remaining))
        batch = client.batches.retrieve(batch.id)
    return batch


def parse_output(content: str, wanted: set[str]) -> dict[str, ChatCompletion]:
    """The successful lines of a batch output file, by custom_id (others are judged online)."""
    completions: dict[str, ChatCompletion] = {}
    for line in content.splitlines():
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            response = record.get("response") or {}
            if record.get("custom_id") not in wanted or response.get("status_code") != 200:
                continue
            completions[record["custom_id"]] = ChatCompletion.model_validate(response["body"])
        except (json.JSONDecodeError, AttributeError, KeyError, ValidationError):
            continue  # a broken line: that reply is judged online
    return completions
