from __future__ import annotations

import base64
import hashlib
import hmac

import pytest

from alerts.channels import WebhookChannel
from alerts.channels.webhook import decode_secret
from alerts.render import Renderer, message_id
from sessions.errors import DeliveryError
from tests.alerts.loopback import PeerServer, Received, Reply, SleepRecorder, make_alert, peer

SECRET = "whsec_" + base64.b64encode(b"sixteen byte key").decode()
PATH = "/hooks/halluwatch?token=urlsecret"
OK = {PATH: Reply(204, b"")}


def verify(request: Received, secret: str) -> bool:
    """Standard Webhooks verification, written from the spec rather than from the channel."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    msg_id = request.headers["webhook-id"]
    timestamp = request.headers["webhook-timestamp"]
    signed = f"{msg_id}.{timestamp}.{request.body.decode()}".encode()
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    offered = [s.split(",", 1) for s in request.headers["webhook-signature"].split()]
    return any(v == "v1" and hmac.compare_digest(sig, expected) for v, sig in offered)


def channel_for(server: PeerServer, max_attempts: int = 4) -> WebhookChannel:
    channel = WebhookChannel(
        "team-hook",
        renderer=Renderer(),
        url=server.base_url + PATH,
        signing_key=decode_secret(SECRET, "HOOK_SECRET"),
        max_attempts=max_attempts,
    )
    channel.sleep = SleepRecorder()
    channel.clock = lambda: 1_790_000_000.0
    return channel


def test_signed_payload_verifies_and_a_500_is_retried_with_the_same_id() -> None:
    alert = make_alert()
    with peer(OK) as server:
        server.queue(PATH, Reply(500, b"boom"))
        channel = channel_for(server)
        channel.send([alert])
    first, second = server.received
    assert all(verify(r, SECRET) for r in server.received)
    assert first.headers["webhook-id"] == second.headers["webhook-id"] == alert.id
    assert second.headers["idempotency-key"] == alert.id
    assert second.headers["webhook-timestamp"] == "1790000000"
    assert second.json()["type"] == "halluwatch.alerts" and second.json()["version"] == 1
    assert second.json()["alerts"][0]["id"] == alert.id
    assert channel.sleep.calls == [1.0]  # type: ignore[attr-defined]
    assert channel.last_attempts == 2


def test_a_tampered_body_does_not_verify() -> None:
    with peer(OK) as server:
        channel_for(server).send([make_alert()])
    (request,) = server.received
    tampered = Received(request.method, request.path, request.headers, request.body + b" ")
    assert verify(request, SECRET) and not verify(tampered, SECRET)


def test_a_digest_is_one_request_keyed_by_the_hash_of_its_ids() -> None:
    alerts = [make_alert(), make_alert(key="other")]
    with peer(OK) as server:
        channel_for(server).send(alerts)
    (request,) = server.received
    assert request.headers["webhook-id"] == message_id(alerts)
    assert request.json()["count"] == 2


def test_400_is_not_retried_and_the_url_stays_out_of_the_error() -> None:
    with peer({PATH: Reply(400, b"bad")}) as server:
        channel = channel_for(server)
        with pytest.raises(DeliveryError) as caught:
            channel.send([make_alert()])
    assert len(server.received) == 1 and caught.value.retryable is False
    assert str(caught.value) == "webhook channel 'team-hook': HTTP 400"
    assert "urlsecret" not in repr(channel)


def test_backoff_grows_and_honours_retry_after_then_gives_up_retryable() -> None:
    with peer({PATH: Reply(503, b"")}) as server:
        server.queue(PATH, Reply(429, b"", {"Retry-After": "7"}))
        channel = channel_for(server, max_attempts=4)
        with pytest.raises(DeliveryError) as caught:
            channel.send([make_alert()])
    assert len(server.received) == 4
    assert channel.sleep.calls == [7.0, 2.0, 4.0]  # type: ignore[attr-defined]
    assert caught.value.retryable is True
    assert "HTTP 503 after 4 attempts" in str(caught.value)


def test_connection_refused_is_retried_and_reported_without_the_url() -> None:
    with peer(OK) as server:
        channel = channel_for(server, max_attempts=3)
    with pytest.raises(DeliveryError) as caught:
        channel.send([make_alert()])
    assert caught.value.retryable is True
    assert "ConnectionError" in str(caught.value) and "urlsecret" not in str(caught.value)
    assert channel.sleep.calls == [1.0, 2.0]  # type: ignore[attr-defined]


def test_unsigned_without_a_secret() -> None:
    with peer(OK) as server:
        WebhookChannel("plain", renderer=Renderer(), url=server.base_url + PATH).send(
            [make_alert()]
        )
    (request,) = server.received
    assert "webhook-signature" not in request.headers and "webhook-id" in request.headers
