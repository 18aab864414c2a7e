"""Generic webhooks: the versioned JSON payload, signed per Standard Webhooks.

Headers on every attempt: ``webhook-id`` (the idempotency key: the alert id, or a hash of the
ids of a digest; the same on retries), ``webhook-timestamp`` (unix seconds of this attempt),
``webhook-signature`` (``v1,`` + base64 HMAC-SHA256 of ``{id}.{timestamp}.{body}``, when a secret
is set) and ``Idempotency-Key`` (= webhook-id). 5xx, 429, timeouts and connection errors are
retried with exponential backoff (429 honours a numeric Retry-After); other statuses are not.
Errors name the channel and the status: requests' own messages carry the URL, so they are
dropped.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import time
from collections.abc import Callable, Sequence

import requests

from alerts.models import Alert
from alerts.render import Renderer
from sessions.errors import CredentialError, DeliveryError

SECRET_PREFIX = "whsec_"
BACKOFF_BASE_S = 1.0
BACKOFF_MAX_S = 30.0


def decode_secret(secret: str, env_name: str) -> bytes:
    """The HMAC key: base64 after ``whsec_``, else the string's own bytes."""
    if not secret.startswith(SECRET_PREFIX):
        return secret.encode()
    try:
        return base64.b64decode(secret[len(SECRET_PREFIX) :], validate=True)
    except (binascii.Error, ValueError):
        raise CredentialError(
            f"{env_name} starts with {SECRET_PREFIX} but the rest is not valid base64"
        ) from None


def sign(key: bytes, msg_id: str, timestamp: int, body: bytes) -> str:
    """The ``webhook-signature`` header value for one attempt."""
    signed = f"{msg_id}.{timestamp}.".encode() + body
    digest = hmac.new(key, signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


class WebhookChannel:
    def __init__(
        self,
        name: str,
        *,
        renderer: Renderer,
        url: str,
        signing_key: bytes | None = None,
        timeout_s: float = 10,
        max_attempts: int = 4,
    ) -> None:
        self.name = name
        self.renderer = renderer
        self.timeout_s = timeout_s
        self.max_attempts = max_attempts
        self.sleep: Callable[[float], None] = time.sleep
        self.clock: Callable[[], float] = time.time
        self.last_attempts = 0  # attempts made by the last send(), for the delivery record
        self._url = url
        self._key = signing_key
        self._session = requests.Session()

    def __repr__(self) -> str:
        return f"WebhookChannel(name={self.name!r}, signed={self._key is not None})"

    def send(self, alerts: Sequence[Alert]) -> None:
        payload = self.renderer.webhook_payload(alerts)
        msg_id = str(payload["id"])
        body = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()
        problem = ""
        for attempt in range(1, self.max_attempts + 1):
            self.last_attempts = attempt
            delay = min(BACKOFF_BASE_S * 2 ** (attempt - 1), BACKOFF_MAX_S)
            try:
                response = self._session.post(
                    self._url,
                    data=body,
                    headers=self._headers(msg_id, body),
                    timeout=self.timeout_s,
                )
            except (requests.Timeout, requests.ConnectionError) as exc:
                problem = f"no response ({type(exc).__name__})"
            except requests.RequestException as exc:
                raise self._error(f"request failed ({type(exc).__name__})", False) from None
            else:
                status = response.status_code
                response.close()
                if 200 <= status < 300:
                    return
                if status != 429 and status < 500:
                    raise self._error(f"HTTP {status}", False)
                problem = f"HTTP {status}"
                delay = max(delay, _retry_after(response.headers.get("Retry-After")))
            if attempt < self.max_attempts:
                self.sleep(delay)
        raise self._error(f"{problem} after {self.max_attempts} attempts", True)

    def _headers(self, msg_id: str, body: bytes) -> dict[str, str]:
        timestamp = int(self.clock())
        headers = {
            "Content-Type": "application/json",
            "User-Agent": "halluwatch",
            "webhook-id": msg_id,
            "webhook-timestamp": str(timestamp),
            "Idempotency-Key": msg_id,
        }
        if self._key is not None:
            headers["webhook-signature"] = sign(self._key, msg_id, timestamp, body)
        return headers

    def _error(self, detail: str, retryable: bool) -> DeliveryError:
        return DeliveryError(f"webhook channel {self.name!r}: {detail}", retryable=retryable)


def _retry_after(value: str | None) -> float:
    """Seconds from a numeric Retry-After (an HTTP date is ignored), capped at the backoff cap."""
    try:
        return min(max(float(value or 0), 0.0), BACKOFF_MAX_S)
    except ValueError:
        return 0.0
