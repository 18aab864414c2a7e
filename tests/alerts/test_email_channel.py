from __future__ import annotations

import email
import email.policy
from collections.abc import Iterator
from email.message import EmailMessage
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, Envelope, LoginPassword

from alerts.channels import EmailChannel
from alerts.charts import PNG_SIGNATURE
from alerts.models import Example
from alerts.render import Renderer
from sessions.errors import DeliveryError
from tests.alerts.loopback import free_port, make_alert

USER, PASSWORD = "halluwatch", "s3cret-pass"


class Inbox:
    def __init__(self) -> None:
        self.envelopes: list[Envelope] = []
        self.logins: list[tuple[bytes, bytes]] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Envelope) -> str:
        self.envelopes.append(envelope)
        return "250 OK"

    def authenticate(
        self, server: Any, session: Any, envelope: Any, mechanism: str, auth_data: Any
    ) -> AuthResult:
        assert isinstance(auth_data, LoginPassword)
        self.logins.append((auth_data.login, auth_data.password))
        ok = (auth_data.login, auth_data.password) == (USER.encode(), PASSWORD.encode())
        return AuthResult(success=ok, handled=False)  # handled=False: the server answers 535


@pytest.fixture
def smtp() -> Iterator[tuple[Inbox, int]]:
    inbox = Inbox()
    port = free_port()
    controller = Controller(
        inbox,
        hostname="127.0.0.1",
        port=port,
        authenticator=inbox.authenticate,
        auth_require_tls=False,
    )
    controller.start()
    try:
        yield inbox, port
    finally:
        controller.stop()


def channel(port: int, **overrides: Any) -> EmailChannel:
    settings: dict[str, Any] = {
        "renderer": Renderer(),
        "host": "127.0.0.1",
        "port": port,
        "security": "none",
        "sender": "halluwatch@example.com",
        "recipients": ["support-team@example.com", "oncall@example.com"],
        "username": USER,
        "password": PASSWORD,
        "timeout_s": 5,
    }
    settings.update(overrides)
    return EmailChannel("team-mail", **settings)


def test_email_arrives_with_text_html_and_the_inline_chart(smtp: tuple[Inbox, int]) -> None:
    inbox, port = smtp
    alert = make_alert(examples=[Example("s1", "v7", "<b>Order ORD-1</b> shipped", "invented")])
    channel(port).send([alert])
    (envelope,) = inbox.envelopes
    assert inbox.logins == [(USER.encode(), PASSWORD.encode())]
    assert envelope.mail_from == "halluwatch@example.com"
    assert envelope.rcpt_tos == ["support-team@example.com", "oncall@example.com"]
    assert isinstance(envelope.content, bytes)
    msg = email.message_from_bytes(envelope.content, policy=email.policy.default)
    assert isinstance(msg, EmailMessage)
    assert msg["Subject"] == "[halluwatch] high: support-bot v7 invents order ids"
    assert msg["X-Halluwatch-Id"] == alert.id
    assert msg.get_content_type() == "multipart/alternative"
    text_part, related = msg.iter_parts()
    assert text_part.get_content_type() == "text/plain"
    assert "<b>Order ORD-1</b> shipped" in text_part.get_content()
    assert related.get_content_type() == "multipart/related"
    html_part, image = related.iter_parts()
    html = html_part.get_content()
    assert "&lt;b&gt;Order ORD-1&lt;/b&gt; shipped" in html and "<b>Order" not in html
    assert image.get_content_type() == "image/png"
    assert image.get_content().startswith(PNG_SIGNATURE)
    cid = image["Content-ID"].strip("<>")
    assert f'<img src="cid:{cid}"' in html
    assert image.get_content_disposition() == "inline"


def test_rejected_password_is_not_retryable_and_not_echoed(smtp: tuple[Inbox, int]) -> None:
    inbox, port = smtp
    with pytest.raises(DeliveryError) as caught:
        channel(port, password="wrong-pass").send([make_alert()])
    assert caught.value.retryable is False
    assert "535" in str(caught.value) and "wrong-pass" not in str(caught.value)
    assert inbox.envelopes == []


def test_starttls_against_a_server_without_it_fails_plainly(smtp: tuple[Inbox, int]) -> None:
    _, port = smtp
    with pytest.raises(DeliveryError, match="does not support STARTTLS") as caught:
        channel(port, security="starttls").send([make_alert()])
    assert caught.value.retryable is False


def test_digest_without_credentials_and_without_figures(smtp: tuple[Inbox, int]) -> None:
    inbox, port = smtp
    alerts = [make_alert(), make_alert(key="b", value=None, severity="critical")]
    channel(port, username=None, password=None).send(alerts)
    (envelope,) = inbox.envelopes
    assert inbox.logins == []
    assert isinstance(envelope.content, bytes)
    msg = email.message_from_bytes(envelope.content, policy=email.policy.default)
    assert msg["Subject"] == "[halluwatch] 2 alerts (highest: critical)"
    images = [p for p in msg.walk() if p.get_content_type() == "image/png"]
    assert len(images) == 1  # only the alert with a value gets a chart


def test_unreachable_server_is_retryable() -> None:
    with pytest.raises(DeliveryError) as caught:
        channel(free_port()).send([make_alert()])
    assert caught.value.retryable is True and "connect" in str(caught.value)
