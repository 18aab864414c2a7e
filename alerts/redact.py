"""Take personal data and secrets out of what an alert quotes from sessions.

An alert leaves the company's perimeter (Slack, e-mail, a webhook), so everything in it that came
from a session passes a ``Redactor`` first: e-mail addresses, API keys and tokens, card numbers,
the team's own patterns, and the literal values of the secrets in this process's environment.
Each match becomes ``[redacted:<kind>]``, so a reader still sees that something was there.

Card numbers must pass the Luhn check and start like a card network's number (2-6), so order
numbers, timestamps and tracking numbers of the same length survive.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

from alerts.models import Alert, Example
from sessions.errors import ConfigError

# An env var whose name contains one of these words holds a secret.
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|WEBHOOK", re.IGNORECASE)
# Shorter values ("true", "1", "us-east-1") would redact ordinary words all over the alert.
MIN_SECRET_LENGTH = 8

# Order matters: specific token shapes before the generic `key=...` rule, so they keep their kind.
# A `secret` group, where present, is the part replaced (the `Bearer ` or `token=` before it stays).
BUILTIN_PATTERNS: tuple[tuple[str, str], ...] = (
    ("openai_key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
    ("slack_token", r"\bxox[abpr]-[A-Za-z0-9-]{10,}"),
    ("slack_webhook", r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+"),
    ("aws_key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    ("github_token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})"),
    ("bearer_token", r"(?i)\bbearer\s+(?P<secret>[A-Za-z0-9._~+/-]{16,}=*)"),
    (
        "secret",
        r"(?i)[\w-]*(?:key|token|secret|passw(?:or)?d)[\"']?\s*[=:]\s*[\"']?"
        r"(?P<secret>[A-Za-z0-9+/_.-]{16,}={0,2})",
    ),
    ("email", r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b"),
)
CARD = re.compile(r"(?<![\d-])[2-6]\d{3}(?:[ -]?\d){9,15}(?![\d-])")


def luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        n = int(ch)
        if i % 2:
            n = n * 2 - 9 if n > 4 else n * 2
        total += n
    return total % 10 == 0


def env_secrets(environ: Mapping[str, str] | None = None, names: Iterable[str] = ()) -> list[str]:
    """The values of env vars that look secret by name, plus those of ``names`` (the vars the
    channels read, whatever they are called)."""
    env = os.environ if environ is None else environ
    wanted = set(names) | {name for name in env if SECRET_NAME.search(name)}
    return [env[name] for name in sorted(wanted) if env.get(name)]


class Redactor:
    """Replaces secrets and personal data in text with ``[redacted:<kind>]``.

    ``patterns`` maps a kind to a regex (the team's own: customer ids, phone numbers...);
    ``secrets`` are literal values, replaced wherever they occur (values shorter than
    ``MIN_SECRET_LENGTH`` are ignored).
    """

    def __init__(self, patterns: Mapping[str, str] | None, secrets: Iterable[str]) -> None:
        self.patterns: list[tuple[str, re.Pattern[str]]] = [
            (kind, re.compile(rx)) for kind, rx in BUILTIN_PATTERNS
        ]
        for kind, rx in (patterns or {}).items():
            self.patterns.append((kind, compile_pattern(kind, rx)))
        # Longest first, so a secret that contains another is replaced whole.
        values = sorted({s for s in secrets if len(s) >= MIN_SECRET_LENGTH}, key=len, reverse=True)
        self.secrets = re.compile("|".join(map(re.escape, values))) if values else None

    def text(self, text: str) -> str:
        if self.secrets is not None:
            text = self.secrets.sub("[redacted:env_secret]", text)
        for kind, pattern in self.patterns:
            text = pattern.sub(functools.partial(_replace, kind=kind), text)
        return CARD.sub(_card, text)

    def value(self, value: Any) -> Any:
        """``value`` with every string in it redacted (dicts and lists walked; keys kept)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {k: self.value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(v) for v in value]
        return value

    def redact_alert(self, alert: Alert) -> Alert:
        """``alert`` with its text and examples redacted. The names routing relies on (key,
        agent, version, kind, team) come from the config and the metadata, and stay."""
        return dataclasses.replace(
            alert,
            title=self.text(alert.title),
            summary=self.text(alert.summary),
            recommended_fix=self.value(alert.recommended_fix),
            examples=[
                Example(
                    session_id=self.text(e.session_id),
                    agent_version=e.agent_version,
                    value=self.text(e.value),
                    explanation=self.text(e.explanation),
                    events=self.value(e.events),
                )
                for e in alert.examples
            ],
        )


class LogRedaction(logging.Filter):
    """Redacts a log record's message and traceback before any handler writes them (a console,
    a file, Prefect's API): a run's error line quotes the exception's message, which may hold a
    secret (a webhook URL in a connection error)."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        redacted = self.redactor.text(message)
        if redacted != message:
            record.msg, record.args = redacted, None
        if record.exc_info and not record.exc_text:
            # Formatters write `exc_text` when it is set instead of formatting the exception.
            trace = logging.Formatter().formatException(record.exc_info)
            record.exc_text = self.redactor.text(trace)
        return True


def compile_pattern(kind: str, rx: str) -> re.Pattern[str]:
    try:
        return re.compile(rx)
    except re.error as exc:
        raise ConfigError(f"alerts.redact.{kind}: invalid regex {rx!r}: {exc}") from exc


def _replace(match: re.Match[str], kind: str) -> str:
    if "secret" not in match.re.groupindex or match.group("secret") is None:
        return f"[redacted:{kind}]"
    start, end = match.span("secret")
    whole = match.group(0)
    offset = match.start()
    return whole[: start - offset] + f"[redacted:{kind}]" + whole[end - offset :]


def _card(match: re.Match[str]) -> str:
    digits = re.sub(r"\D", "", match.group(0))
    if 13 <= len(digits) <= 19 and luhn_ok(digits):
        return "[redacted:card]"
    return match.group(0)
