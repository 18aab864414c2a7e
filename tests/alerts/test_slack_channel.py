from __future__ import annotations

import json

import pytest

from alerts.channels import SlackChannel
from alerts.render import Renderer
from sessions.errors import DeliveryError
from tests.alerts.loopback import Reply, SleepRecorder, make_alert, peer

HOOK = "/services/T000/B000/secretpart"
API = "/api/chat.postMessage"
TOKEN = "xoxb-test-token-123"
DEFAULTS = {HOOK: Reply(200, b"ok"), API: Reply(200, b'{"ok": true, "ts": "1.2"}')}


def webhook_channel(base_url: str) -> SlackChannel:
    channel = SlackChannel("team-slack", renderer=Renderer(), webhook_url=base_url + HOOK)
    channel.sleep = SleepRecorder()
    return channel


def bot_channel(base_url: str) -> tuple[SlackChannel, SleepRecorder]:
    channel = SlackChannel(
        "team-bot", renderer=Renderer(), token=TOKEN, channel="C123", api_url=base_url + "/api/"
    )
    recorder = SleepRecorder()
    channel.sleep = recorder
    return channel, recorder


def test_incoming_webhook_posts_blocks_and_fallback_text() -> None:
    with peer(DEFAULTS) as server:
        webhook_channel(server.base_url).send([make_alert()])
    (request,) = server.received
    assert request.path == HOOK
    body = request.json()
    assert body["text"] == "[high] support-bot v7 invents order ids"
    assert body["blocks"][0]["type"] == "header"
    assert body["blocks"] == Renderer().slack_blocks([make_alert()], max_examples=3)


@pytest.mark.parametrize(("status", "body", "retryable"), [(404, b"no_service", False),
                                                          (500, b"oops", True)])  # fmt: skip
def test_webhook_failure_names_status_not_url(status: int, body: bytes, retryable: bool) -> None:
    with peer({HOOK: Reply(status, body)}) as server:
        channel = webhook_channel(server.base_url)
        with pytest.raises(DeliveryError) as caught:
            channel.send([make_alert()])
    message = str(caught.value)
    assert f"HTTP {status}" in message and "team-slack" in message
    assert caught.value.retryable is retryable
    assert "secretpart" not in message and server.base_url not in message
    assert "secretpart" not in repr(channel)
    if status == 404:
        assert "no_service" in message


def test_webhook_429_is_retried_after_retry_after() -> None:
    with peer(DEFAULTS) as server:
        server.queue(HOOK, Reply(429, b"rate_limited", {"Retry-After": "0"}))
        channel = webhook_channel(server.base_url)
        channel.send([make_alert()])
    assert len(server.received) == 2
    assert channel.sleep.calls == [0.0]  # type: ignore[attr-defined]


def test_bot_token_posts_to_chat_post_message_and_honours_429() -> None:
    with peer(DEFAULTS) as server:
        server.queue(
            API, Reply(429, b'{"ok": false, "error": "ratelimited"}', {"Retry-After": "0"})
        )
        channel, recorder = bot_channel(server.base_url)
        channel.send([make_alert(), make_alert(key="second")])
    assert [r.path for r in server.received] == [API, API]  # the 429, then the retry
    assert recorder.calls == [0.0]
    request = server.received[-1]
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    body = json.loads(request.body)
    assert body["channel"] == "C123"
    assert body["text"] == "halluwatch: 2 alerts (highest: high)"
    assert sum(block["type"] == "header" for block in body["blocks"]) == 2


def test_bot_error_is_not_retried_and_keeps_the_token_out() -> None:
    reply = Reply(200, b'{"ok": false, "error": "channel_not_found"}')
    with peer({API: reply}) as server:
        channel, _ = bot_channel(server.base_url)
        with pytest.raises(DeliveryError) as caught:
            channel.send([make_alert()])
    assert caught.value.retryable is False
    assert "channel_not_found" in str(caught.value) and TOKEN not in str(caught.value)
    assert TOKEN not in repr(channel)
    assert len(server.received) == 1


def test_unreachable_slack_is_retryable() -> None:
    with peer(DEFAULTS) as server:
        url = server.base_url
    channel = webhook_channel(url)  # the server is gone: connection refused
    with pytest.raises(DeliveryError) as caught:
        channel.send([make_alert()])
    assert caught.value.retryable is True and "secretpart" not in str(caught.value)
