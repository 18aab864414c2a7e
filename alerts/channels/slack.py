"""Slack: an incoming webhook (``WebhookClient``) or a bot token (``chat.postMessage``).

Neither the webhook URL nor the token appears in an error or a log line: errors name the channel,
the HTTP status and Slack's short error code. slack_sdk gets its own logger at WARNING, because
at DEBUG it logs request URLs and headers.
"""

from __future__ import annotations

import contextlib
import logging
import re
import time
from collections.abc import Callable, Sequence
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler
from slack_sdk.http_retry.handler import RetryHandler
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState
from slack_sdk.web import WebClient
from slack_sdk.webhook import WebhookClient

from alerts.models import Alert
from alerts.render import Renderer
from sessions.errors import DeliveryError

_sdk_logger = logging.getLogger("halluwatch.slack_sdk")
_sdk_logger.setLevel(logging.WARNING)

_ERROR_CODE = re.compile(r"[a-z_]{1,64}")
# chat.postMessage errors that another attempt will not fix
_PERMANENT = {
    "invalid_auth", "not_authed", "account_inactive", "token_revoked", "channel_not_found",
    "not_in_channel", "is_archived", "invalid_blocks", "missing_scope", "msg_too_long",
}  # fmt: skip


class SleepingRateLimitHandler(RateLimitErrorRetryHandler):
    """slack_sdk's 429 handler, honouring Retry-After through an injectable ``sleep``."""

    def __init__(self, sleep: Callable[[float], None], max_retry_count: int = 2) -> None:
        super().__init__(max_retry_count=max_retry_count)
        self._sleep = sleep

    def prepare_for_next_attempt(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> None:
        if response is None:
            raise error or RuntimeError("rate-limit retry without a response")
        state.next_attempt_requested = True
        retry_after = 1.0
        for name, values in response.headers.items():
            if name.lower() == "retry-after" and values:
                with contextlib.suppress(ValueError):
                    retry_after = float(values[0])
        self._sleep(min(max(retry_after, 0.0), 60.0))
        state.increment_current_attempt()


class SlackChannel:
    def __init__(
        self,
        name: str,
        *,
        renderer: Renderer,
        max_examples: int = 3,
        webhook_url: str | None = None,
        token: str | None = None,
        channel: str | None = None,
        api_url: str | None = None,
    ) -> None:
        if (webhook_url is None) == (token is None):
            raise ValueError("give exactly one of webhook_url and token")
        if token is not None and not channel:
            raise ValueError("a bot token needs a channel")
        self.name = name
        self.renderer = renderer
        self.max_examples = max_examples
        self.sleep: Callable[[float], None] = time.sleep
        self._channel = channel
        handlers: list[RetryHandler] = [SleepingRateLimitHandler(lambda s: self.sleep(s))]
        self._webhook: WebhookClient | None = None
        self._client: WebClient | None = None
        if webhook_url is not None:
            self._webhook = WebhookClient(
                webhook_url, timeout=30, logger=_sdk_logger, retry_handlers=handlers
            )
        else:
            kwargs: dict[str, Any] = {"base_url": api_url} if api_url else {}
            self._client = WebClient(
                token=token, timeout=30, logger=_sdk_logger, retry_handlers=handlers, **kwargs
            )

    def __repr__(self) -> str:
        mode = "webhook" if self._webhook is not None else f"bot, channel={self._channel!r}"
        return f"SlackChannel(name={self.name!r}, {mode})"

    def send(self, alerts: Sequence[Alert]) -> None:
        blocks = self.renderer.slack_blocks(alerts, max_examples=self.max_examples)
        text = self.renderer.slack_text(alerts)
        if self._webhook is not None:
            self._send_webhook(self._webhook, blocks, text)
        else:
            assert self._client is not None
            self._post_message(self._client, blocks, text)

    def _send_webhook(self, client: WebhookClient, blocks: list[dict[str, Any]], text: str) -> None:
        try:
            response = client.send(text=text, blocks=blocks)
        except OSError as exc:  # URLError, timeouts, refused connections
            raise self._error(f"no response ({type(exc).__name__})", retryable=True) from None
        if response.status_code == 200 and response.body == "ok":
            return
        code = _code(response.body)
        status = response.status_code
        raise self._error(f"HTTP {status}{code}", retryable=status == 429 or status >= 500)

    def _post_message(self, client: WebClient, blocks: list[dict[str, Any]], text: str) -> None:
        try:
            client.chat_postMessage(channel=self._channel or "", blocks=blocks, text=text)
        except SlackApiError as exc:
            status = exc.response.status_code
            error = exc.response.get("error") if isinstance(exc.response.data, dict) else None
            retryable = (status == 429 or status >= 500 or error == "ratelimited") and (
                error not in _PERMANENT
            )
            detail = f"HTTP {status}{_code(error)}"
            raise self._error(detail, retryable=retryable) from None
        except OSError as exc:
            raise self._error(f"no response ({type(exc).__name__})", retryable=True) from None

    def _error(self, detail: str, *, retryable: bool) -> DeliveryError:
        return DeliveryError(f"slack channel {self.name!r}: {detail}", retryable=retryable)


def _code(body: object) -> str:
    """Slack's short error code (``channel_not_found``) when the body is one, else nothing."""
    if isinstance(body, str) and _ERROR_CODE.fullmatch(body.strip()):
        return f", error {body.strip()}"
    return ""
